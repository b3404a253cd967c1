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
    pub cookie: u64,
}

/// `DAOS_TX_NONE`: no transaction (every call is its own).
pub const DAOS_TX_NONE: daos_handle_t = daos_handle_t { cookie: 0 };

/// `daos_obj_id_t`: 128-bit object id; DAOS owns the high 32 bits (type, class).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct daos_obj_id_t {
    pub lo: u64,
    pub hi: u64,
}

/// `d_iov_t`: one buffer.
#[repr(C)]
pub struct d_iov_t {
    pub iov_buf: *mut c_void,
    pub iov_buf_len: usize,
    pub iov_len: usize,
}

/// `d_sg_list_t`: a scatter/gather list of buffers.
#[repr(C)]
pub struct d_sg_list_t {
    pub sg_nr: u32,
    pub sg_nr_out: u32,
    pub sg_iovs: *mut d_iov_t,
}

/// `daos_key_desc_t`: the length of one key a listing returned.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct daos_key_desc_t {
    pub kd_key_len: u64,
    pub kd_val_type: u32,
}

/// `DAOS_ANCHOR_BUF_MAX`.
pub const DAOS_ANCHOR_BUF_MAX: usize = 104;
/// `daos_anchor_type_t` values.
pub const DAOS_ANCHOR_TYPE_ZERO: u16 = 0;
pub const DAOS_ANCHOR_TYPE_KEY: u16 = 2;
pub const DAOS_ANCHOR_TYPE_EOF: u16 = 3;

/// `daos_anchor_t`: where a listing resumes; zeroed before the first call.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct daos_anchor_t {
    pub da_type: u16,
    pub da_shard: u16,
    pub da_flags: u32,
    pub da_sub_anchors: u64,
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
    pub rg_idx: u64,
    pub rg_len: u64,
}

/// `daos_array_iod_t`: the ranges of one array read or write.
#[repr(C)]
pub struct daos_array_iod_t {
    pub arr_nr: u64,
    pub arr_rgs: *mut daos_range_t,
    pub arr_nr_short_read: u64,
    pub arr_nr_read: u64,
}

/// `daos_oclass_id_t`.
pub type daos_oclass_id_t = u32;

/// `enum daos_otype_t` values used.
pub const DAOS_OT_KV_HASHED: u32 = 8;
pub const DAOS_OT_ARRAY: u32 = 11;
pub const DAOS_OT_ARRAY_BYTE: u32 = 13;
/// Where the type and the redundancy (class) sit in `daos_obj_id_t::hi` (`OID_FMT_*`).
pub const OID_FMT_TYPE_SHIFT: u32 = 56;
pub const OID_FMT_CLASS_SHIFT: u32 = 48;

/// `OBJ_CLASS_DEF(redun, groups)`.
const fn class(redundancy: u32, groups: u32) -> daos_oclass_id_t {
    (redundancy << OC_REDUN_SHIFT) | groups
}
/// `OC_REDUN_SHIFT`.
pub const OC_REDUN_SHIFT: u32 = 24;
const OR_RP_1: u32 = 1;
const OR_RP_2: u32 = 8;
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

/// Container open flags (`DAOS_COO_*`).
pub const DAOS_COO_RO: u32 = 1 << 0;
pub const DAOS_COO_RW: u32 = 1 << 1;
/// Object open modes (`DAOS_OO_*`).
pub const DAOS_OO_RO: u32 = 1 << 1;
pub const DAOS_OO_RW: u32 = 1 << 2;

/// Conditional KV operations (`DAOS_COND_*`).
pub const DAOS_COND_KEY_REMOVE: u64 = 1 << 0;
pub const DAOS_COND_KEY_INSERT: u64 = 1 << 1;
pub const DAOS_COND_KEY_UPDATE: u64 = 1 << 2;
pub const DAOS_COND_KEY_GET: u64 = 1 << 3;

/// `DAOS_PROP_LABEL_MAX_LEN`.
pub const DAOS_PROP_LABEL_MAX_LEN: usize = 127;

/// `daos_label_is_valid` (without its UUID exclusion, which callers avoid by never using
/// `-`): 1 to 127 characters of `[A-Za-z0-9._:-]`.
pub fn label_is_valid(label: &str) -> bool {
    (1..=DAOS_PROP_LABEL_MAX_LEN).contains(&label.len())
        && label.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'))
}

/// DAOS error numbers (`enum daos_errno`); functions return them negated.
pub mod errno {
    pub const DER_NO_PERM: i32 = 1001;
    pub const DER_NO_HDL: i32 = 1002;
    pub const DER_INVAL: i32 = 1003;
    pub const DER_EXIST: i32 = 1004;
    pub const DER_NONEXIST: i32 = 1005;
    pub const DER_UNREACH: i32 = 1006;
    pub const DER_NOSPACE: i32 = 1007;
    pub const DER_NOMEM: i32 = 1009;
    pub const DER_NOSYS: i32 = 1010;
    pub const DER_TIMEDOUT: i32 = 1011;
    pub const DER_BUSY: i32 = 1012;
    pub const DER_MISC: i32 = 1025;
    pub const DER_IO: i32 = 2001;
    pub const DER_KEY2BIG: i32 = 2012;
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
