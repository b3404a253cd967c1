//! The part of the libdaos C API that fieldstore uses: types, constants and error codes,
//! declared from DAOS' public headers (`daos_types.h`, `daos_obj.h`, `daos_kv.h`,
//! `daos_array.h`, `daos_cont.h`, `daos_obj_class.h`, `daos_errno.h`, gurt's `types.h`).
//!
//! Nothing here links to libdaos. Two crates share these declarations: `fieldstore-daos`,
//! which loads libdaos at run time, and `fieldstore-daos-emulation`, which exports the same
//! functions for the tests. Function prototypes are in `fieldstore-daos`'s `ffi` module.
#![allow(non_camel_case_types)]

use std::ffi::c_void;

/// `daos_handle_t`: a pool, container or object handle (0 is invalid).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct daos_handle_t {
    /// The generic handle value, opaque to callers (0: no handle, `DAOS_HDL_INVAL`).
    pub cookie: u64,
}

/// `DAOS_TX_NONE`: no transaction (every call is its own).
pub const DAOS_TX_NONE: daos_handle_t = daos_handle_t { cookie: 0 };

/// `daos_obj_id_t`: 128-bit object id; DAOS owns the high 32 bits (type, class).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct daos_obj_id_t {
    /// The least significant (low) 64 bits, all the user's.
    pub lo: u64,
    /// The most significant (high) 64 bits: the low 32 are the user's, the high 32 DAOS' (type, class, groups).
    pub hi: u64,
}

/// `d_iov_t`: one buffer.
#[repr(C)]
pub struct d_iov_t {
    /// The buffer's address.
    pub iov_buf: *mut c_void,
    /// The buffer's length in bytes.
    pub iov_buf_len: usize,
    /// The length of the data in the buffer, in bytes.
    pub iov_len: usize,
}

/// `d_sg_list_t`: a scatter/gather list of buffers.
#[repr(C)]
pub struct d_sg_list_t {
    /// The number of buffers in `sg_iovs`.
    pub sg_nr: u32,
    /// The number of buffers a call filled (set by libdaos on output).
    pub sg_nr_out: u32,
    /// The first of `sg_nr` buffers.
    pub sg_iovs: *mut d_iov_t,
}

/// `daos_key_desc_t`: the length of one key a listing returned.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct daos_key_desc_t {
    /// The key's length in bytes (with `-DER_KEY2BIG`: the room the first key needs).
    pub kd_key_len: u64,
    /// Internal flag of the enumeration type; callers ignore it.
    pub kd_val_type: u32,
}

/// `DAOS_ANCHOR_BUF_MAX`: the size of an anchor's internal buffer (`daos_anchor_t::da_buf`), 104 bytes.
pub const DAOS_ANCHOR_BUF_MAX: usize = 104;
/// `DAOS_ANCHOR_TYPE_ZERO` (`daos_anchor_type_t`): a zeroed anchor; the listing starts at the beginning.
pub const DAOS_ANCHOR_TYPE_ZERO: u16 = 0;
/// `DAOS_ANCHOR_TYPE_KEY` (`daos_anchor_type_t`): the listing resumes after the key kept in `da_buf`.
pub const DAOS_ANCHOR_TYPE_KEY: u16 = 2;
/// `DAOS_ANCHOR_TYPE_EOF` (`daos_anchor_type_t`): the listing is complete (`daos_anchor_is_eof`).
pub const DAOS_ANCHOR_TYPE_EOF: u16 = 3;

/// `daos_anchor_t`: where a listing resumes; zeroed before the first call.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct daos_anchor_t {
    /// Where the listing stands: a `daos_anchor_type_t` value (`DAOS_ANCHOR_TYPE_*`).
    pub da_type: u16,
    /// Internal to DAOS: the shard being listed.
    pub da_shard: u16,
    /// Flags of the listing (`enum daos_anchor_flags`).
    pub da_flags: u32,
    /// The offset reached in each shard of an erasure-coded object.
    pub da_sub_anchors: u64,
    /// Internal to DAOS: where to resume; callers leave it unchanged between calls.
    pub da_buf: [u8; DAOS_ANCHOR_BUF_MAX],
}

impl Default for daos_anchor_t {
    fn default() -> Self {
        daos_anchor_t { da_type: DAOS_ANCHOR_TYPE_ZERO, da_shard: 0, da_flags: 0, da_sub_anchors: 0, da_buf: [0; DAOS_ANCHOR_BUF_MAX] }
    }
}

impl daos_anchor_t {
    /// `daos_anchor_is_eof`.
    pub fn is_eof(&self) -> bool {
        self.da_type == DAOS_ANCHOR_TYPE_EOF
    }
}

/// `daos_range_t`: records `rg_idx .. rg_idx + rg_len` of an array.
#[repr(C)]
pub struct daos_range_t {
    /// The index of the first record in the range.
    pub rg_idx: u64,
    /// The number of records in the range.
    pub rg_len: u64,
}

/// `daos_array_iod_t`: the ranges of one array read or write.
#[repr(C)]
pub struct daos_array_iod_t {
    /// The number of ranges in `arr_rgs`.
    pub arr_nr: u64,
    /// The first of `arr_nr` ranges, each a starting index and a length.
    pub arr_rgs: *mut daos_range_t,
    /// (Reads only) records short-fetched from the largest dkeys: if nonzero, check with `daos_array_get_size`.
    pub arr_nr_short_read: u64,
    /// (Reads only) the number of records actually read from the array.
    pub arr_nr_read: u64,
}

/// `daos_oclass_id_t`: an object class id, `OBJ_CLASS_DEF(redundancy, groups)`.
pub type daos_oclass_id_t = u32;

/// `DAOS_OT_KV_HASHED` (`enum daos_otype_t`): a flat KV (no akey) with hashed dkeys.
pub const DAOS_OT_KV_HASHED: u32 = 8;
/// `DAOS_OT_ARRAY` (`enum daos_otype_t`): an array with its attributes (cell and chunk sizes) stored in the object.
pub const DAOS_OT_ARRAY: u32 = 11;
/// `DAOS_OT_ARRAY_BYTE` (`enum daos_otype_t`): a byte array with no metadata (as DFS uses); the opener supplies the sizes.
pub const DAOS_OT_ARRAY_BYTE: u32 = 13;
/// `OID_FMT_TYPE_SHIFT`: the bit shift of the object type (8 bits) in `daos_obj_id_t::hi`.
pub const OID_FMT_TYPE_SHIFT: u32 = 56;
/// `OID_FMT_CLASS_SHIFT`: the bit shift of the object class's redundancy (8 bits) in `daos_obj_id_t::hi`.
pub const OID_FMT_CLASS_SHIFT: u32 = 48;

/// `OBJ_CLASS_DEF(redun, groups)`.
const fn class(redundancy: u32, groups: u32) -> daos_oclass_id_t {
    (redundancy << OC_REDUN_SHIFT) | groups
}
/// `OC_REDUN_SHIFT`: the bit shift of the redundancy method (`enum daos_obj_redun`) in a class id.
pub const OC_REDUN_SHIFT: u32 = 24;
/// `OR_RP_1`: no data protection (a single replica).
const OR_RP_1: u32 = 1;
/// `OR_RP_2`: two-way replication.
const OR_RP_2: u32 = 8;
/// `OR_RS_2P1`: Reed-Solomon erasure coding, 2 data cells and 1 parity cell.
const OR_RS_2P1: u32 = 32;
/// `MAX_NUM_GROUPS`: as many groups as there are targets.
const MAX_NUM_GROUPS: u32 = (1 << 16) - 1;

/// The object classes fieldstore lets users choose, by their DAOS names.
pub const OBJECT_CLASSES: [(&str, daos_oclass_id_t); 5] = [
    ("OC_S1", class(OR_RP_1, 1)),
    ("OC_S2", class(OR_RP_1, 2)),
    ("OC_SX", class(OR_RP_1, MAX_NUM_GROUPS)),
    ("OC_RP_2G1", class(OR_RP_2, 1)),
    ("OC_EC_2P1G1", class(OR_RS_2P1, 1)),
];

/// `DAOS_COO_RO` (container open flag): opens the container for reading only.
pub const DAOS_COO_RO: u32 = 1 << 0;
/// `DAOS_COO_RW` (container open flag): opens the container for reading and writing.
pub const DAOS_COO_RW: u32 = 1 << 1;
/// `DAOS_OO_RO` (object open mode): shared read.
pub const DAOS_OO_RO: u32 = 1 << 1;
/// `DAOS_OO_RW` (object open mode): shared read and write, no cache for writes.
pub const DAOS_OO_RW: u32 = 1 << 2;

/// `DAOS_COND_KEY_REMOVE` (conditional KV operation): remove the key if it exists, fail otherwise.
pub const DAOS_COND_KEY_REMOVE: u64 = 1 << 0;
/// `DAOS_COND_KEY_INSERT` (conditional KV operation): insert the key if it does not exist, fail otherwise.
pub const DAOS_COND_KEY_INSERT: u64 = 1 << 1;
/// `DAOS_COND_KEY_UPDATE` (conditional KV operation): update the key if it exists, fail otherwise.
pub const DAOS_COND_KEY_UPDATE: u64 = 1 << 2;
/// `DAOS_COND_KEY_GET` (conditional KV operation): get the key if it exists, fail otherwise.
pub const DAOS_COND_KEY_GET: u64 = 1 << 3;

/// `DAOS_PROP_LABEL_MAX_LEN`: the longest pool or container label, 127 bytes (without the NUL).
pub const DAOS_PROP_LABEL_MAX_LEN: usize = 127;

/// `daos_label_is_valid` (without its UUID exclusion, which callers avoid by never using
/// `-`): 1 to 127 characters of `[A-Za-z0-9._:-]`.
pub fn label_is_valid(label: &str) -> bool {
    (1..=DAOS_PROP_LABEL_MAX_LEN).contains(&label.len())
        && label.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'))
}

/// DAOS error numbers (`enum daos_errno`); functions return them negated.
pub mod errno {
    /// No permission: operation not permitted (-1001).
    pub const DER_NO_PERM: i32 = 1001;
    /// Invalid handle (-1002).
    pub const DER_NO_HDL: i32 = 1002;
    /// Invalid parameters (-1003).
    pub const DER_INVAL: i32 = 1003;
    /// The entity already exists (-1004).
    pub const DER_EXIST: i32 = 1004;
    /// The entity does not exist (-1005).
    pub const DER_NONEXIST: i32 = 1005;
    /// Unreachable node (-1006).
    pub const DER_UNREACH: i32 = 1006;
    /// No space on the storage target (-1007).
    pub const DER_NOSPACE: i32 = 1007;
    /// Out of memory (-1009).
    pub const DER_NOMEM: i32 = 1009;
    /// Function not implemented (-1010).
    pub const DER_NOSYS: i32 = 1010;
    /// Timed out (-1011).
    pub const DER_TIMEDOUT: i32 = 1011;
    /// Device or resource busy (-1012).
    pub const DER_BUSY: i32 = 1012;
    /// Miscellaneous error (-1025).
    pub const DER_MISC: i32 = 1025;
    /// Generic I/O error (-2001).
    pub const DER_IO: i32 = 2001;
    /// Key is too large, e.g. for a listing's buffer (-2012).
    pub const DER_KEY2BIG: i32 = 2012;
    /// Record is too large, e.g. for a get's buffer (-2013).
    pub const DER_REC2BIG: i32 = 2013;

    /// The name and `d_errdesc` text of an error number (positive or negated).
    pub fn describe(rc: i32) -> (&'static str, &'static str) {
        match rc.abs() {
            DER_NO_PERM => ("DER_NO_PERM", "Operation not permitted"),
            DER_NO_HDL => ("DER_NO_HDL", "Invalid handle"),
            DER_INVAL => ("DER_INVAL", "Invalid parameters"),
            DER_EXIST => ("DER_EXIST", "Entity already exists"),
            DER_NONEXIST => ("DER_NONEXIST", "The specified entity does not exist"),
            DER_UNREACH => ("DER_UNREACH", "Unreachable node"),
            DER_NOSPACE => ("DER_NOSPACE", "No space on storage target"),
            DER_NOMEM => ("DER_NOMEM", "Out of memory"),
            DER_NOSYS => ("DER_NOSYS", "Function not implemented"),
            DER_TIMEDOUT => ("DER_TIMEDOUT", "Time out"),
            DER_BUSY => ("DER_BUSY", "Device or resource busy"),
            DER_MISC => ("DER_MISC", "Miscellaneous error"),
            DER_IO => ("DER_IO", "Generic I/O error"),
            DER_KEY2BIG => ("DER_KEY2BIG", "Key is too large"),
            DER_REC2BIG => ("DER_REC2BIG", "Record is too large"),
            _ => ("DER_UNKNOWN", "Unknown error"),
        }
    }
}
