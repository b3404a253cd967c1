//! Seed inputs for each target, made by fieldstore's own encoders so that they follow today's
//! formats: the fuzzers start from them (`scripts/fuzz.sh` writes them with `fuzz-seeds`), and
//! the corpus test replays them with the corpus.

use fieldstore_core::indexing::PendingIndexes;
use fieldstore_core::{FieldLocation, Key};
use fieldstore_object_catalogue::index_log;
use fieldstore_posix::embedded;
use fieldstore_posix::toc::{self, SegmentPlace};

/// Each target's seeds, by target name.
pub fn seeds() -> Vec<(&'static str, Vec<Vec<u8>>)> {
    let texts = |items: &[&str]| items.iter().map(|t| t.as_bytes().to_vec()).collect::<Vec<_>>();
    let index = pending_index();
    let index = index.iter().next().expect("one index");
    let segment = toc::encode_segment(&index.entries);
    let record = toc::index_record(0, &SegmentPlace { file: "toc".into(), offset: 0, length: segment.len() as u64 }, index);
    let raw = |bytes: Vec<u8>| [&[0u8][..], &bytes].concat();
    let toc_file = [
        toc::identity_frame("seed"),
        toc::index_frame(&record),
        toc::recovered_frame(&record, &segment),
        toc::flush_frame(&[record.clone(), record.clone()]),
        toc::mask_frame(&["toc@0".into()]),
    ]
    .concat();
    let commit = toc::encode_commit("host.1.2.0", &[(record.clone(), segment.clone())]);
    let data_file = [b"GRIB field bytes".to_vec(), embedded::encode("data", 16, 0, &commit)].concat();
    let identity_kind = toc::identity_frame("")[fieldstore_core::codec::HEADER - 1];
    let records = [index_log::index_record("index-1", index), index_log::mask_record(["index-0"].into_iter())];
    let (plain, checksummed) = (index_log::Sealing::Plain, index_log::Sealing::Checksummed);
    vec![
        ("schema", vec![fieldstore_core::schema::DEFAULT_SCHEMA.as_bytes().to_vec(), b"[ class, stream\n  [ type\n    [ step, param ]]]\n".to_vec()]),
        (
            "request",
            texts(&[
                "class=od,expver=0001,stream=oper,date=20231201,time=1200,type=fc,levtype=sfc,step=0/to/12/by/6,param=167",
                "retrieve,class=od,date=20231201/20231202,levelist=500/850,param=2t/130,number=1/to/10",
                "class=od,step=0/to/2h/by/30m,levelist=0.1/to/0.3/by/0.1,time=0/to/18/by/6,date=-1",
            ]),
        ),
        (
            "config",
            texts(&[
                "catalogue: { type: posix, root: /tmp/a }\nstore: { type: posix, root: /tmp/a }\n",
                "schema: schema\ncatalogue: { type: rados, pool: fieldstore, namespace_prefix: x, timeout_seconds: 5 }\nstore: { type: daos, pool: p }\n",
            ]),
        ),
        ("archive_frames", vec![archive_body(1), archive_body(7), archive_body(200)]),
        (
            "remote_call",
            texts(&[
                r#"{"op":"resolve","request":"class=od,expver=0001","options":{"depth":3,"include_superseded":false,"in_request_order":true,"storage_order":false},"action":"retrieve"}"#,
                r#"{"op":"overlay","source":{"class":"od","expver":"1"},"target":{"class":"od","expver":"2"},"options":{"remove":false,"force":false,"variable_keys":["expver"]}}"#,
                r#"{"op":"hide_datasets","datasets":[{"class":"od"}],"doit":true}"#,
            ]),
        ),
        ("remote_answer", vec![resolve_answer(false), resolve_answer(true)]),
        ("extract_answer", vec![extraction_answer()]),
        ("packing_record", packing_records()),
        ("kept_packings", kept_packings()),
        ("ccsds_stream", ccsds_streams()),
        ("key", texts(&["class=od,expver=0001,stream=oper\nclass=od,expver=0001,stream=enfo", "a=_\nb=..", "c=x/y\nc=x%2Fy"])),
        ("grib_scan", vec![grib2(20), grib1(&[0, 0, 20]), [grib2(24), vec![0, b'\n']].concat(), grib1(&[0x80, 0, 1])]),
        ("toc", vec![raw(toc_file), [&[1u8, identity_kind, 4, 0][..], b"seed"].concat()]),
        ("index_segment", vec![raw(segment)]),
        ("embedded_commits", vec![raw(data_file), [&[1u8, 1, 6, 0][..], b"commit", &[0, 3, 0], b"abc"].concat()]),
        (
            "object_log",
            vec![
                raw(index_log::encode_batch(&records, plain)),
                raw(index_log::encode_batch(&records, checksummed)),
                raw(index_log::encode_entries(index, plain)),
                raw(index_log::encode_entries(index, checksummed)),
            ],
        ),
    ]
}

fn pending_index() -> PendingIndexes {
    let mut index = PendingIndexes::default();
    let collocation = Key::from_pairs([("type", "fc"), ("levtype", "sfc")]);
    for (step, offset) in [("0", 0), ("6", 100)] {
        let location = FieldLocation { uri: "data".into(), offset, length: 100, crc32c: Some(7) };
        index.insert(&collocation, &Key::from_pairs([("step", step), ("param", "167")]), location);
    }
    index
}

/// A GRIB2 message of `length` bytes: header, zeros, end marker.
fn grib2(length: u64) -> Vec<u8> {
    let mut m = b"GRIB\0\0\0\x02".to_vec();
    m.extend_from_slice(&length.to_be_bytes());
    m.resize(length as usize - 4, 0);
    m.extend_from_slice(b"7777");
    m
}

/// A GRIB1 message whose 3-byte length field is `length` (its top bit marks ECMWF's encoding
/// of long messages), 20 bytes long.
fn grib1(length: &[u8; 3]) -> Vec<u8> {
    let mut m = b"GRIB".to_vec();
    m.extend_from_slice(length);
    m.push(1);
    m.extend_from_slice(&[0, 0, 8, 0, 0, 0, 0, 0]);
    m.extend_from_slice(b"7777");
    m
}

/// An archive body of two fields and its end, its first byte the decoder's piece size.
/// A resolve's answer of three fields in two runs (another collocation), one overlaid from
/// another data set if `overlaid`, with an explanation-free report.
fn resolve_answer(overlaid: bool) -> Vec<u8> {
    use fieldstore_core::api::{encode_matches, FieldEntry, Matches};
    use std::sync::Arc;
    let dataset = Arc::new(Key::from_pairs([("class", "od"), ("expver", "0001")]));
    let field = |collocation: &Arc<Key>, step: &str, offset: u64| FieldEntry {
        dataset: dataset.clone(),
        collocation: collocation.clone(),
        element: Key::from_pairs([("step", step), ("param", "167")]),
        location: FieldLocation { uri: format!("data{}", offset % 2).into(), offset, length: 100, crc32c: Some(7) },
        superseded: offset == 0,
        archived_in: overlaid.then(|| Arc::new(Key::from_pairs([("class", "od"), ("expver", "0002")]))),
    };
    let (fc, an) = (Arc::new(Key::from_pairs([("type", "fc")])), Arc::new(Key::from_pairs([("type", "an")])));
    let mut matches = Matches::default();
    matches.datasets = vec![Key::clone(&dataset)];
    matches.fields = vec![field(&fc, "0", 0), field(&fc, "6", 100), field(&an, "0", 201)];
    matches.not_found = vec!["step=12".into()];
    encode_matches(matches, &|_| {}).expect("an answer encodes")
}

/// An answer to [`crate::remote::extraction_call`]: two fields of the first request, one of
/// the second, a point missing.
fn extraction_answer() -> Vec<u8> {
    use fieldstore_core::api::FieldEntry;
    use fieldstore_extract::{Extraction, FieldExtraction};
    use std::sync::Arc;
    let field = |param: &str, values: Vec<Vec<f64>>| {
        let masks = values.iter().map(|v| v.iter().map(|x| !x.is_nan()).collect()).collect();
        let field = FieldEntry {
            dataset: Arc::new(Key::from_pairs([("class", "od")])),
            collocation: Arc::new(Key::from_pairs([("type", "fc")])),
            element: Key::from_pairs([("param", param)]),
            location: FieldLocation { uri: "data#0123".into(), offset: 0, length: 100, crc32c: None },
            superseded: false,
            archived_in: None,
        };
        FieldExtraction { field, extraction: Extraction { values, masks, bytes_read: 8, decoded_whole: false } }
    };
    let first = vec![field("1", vec![vec![1.0, f64::NAN], vec![2.5]]), field("2", vec![vec![0.0, -1.0], vec![3.0]])];
    fieldstore_extract::remote::encode_answer(vec![first, vec![field("3", vec![vec![7.0]])]]).expect("an answer encodes")
}

/// Records of a simple, a constant and a CCSDS field's packing, from ecCodes' samples.
fn packing_records() -> Vec<Vec<u8>> {
    let field = |packing: &str, bits: &str| {
        let message = fieldstore_grib::sample_message("regular_ll_sfc_grib2", &[("bitsPerValue", bits)]).expect("a sample");
        let message = fieldstore_grib::fill_values(&message, bits.parse().expect("bits")).expect("values");
        let message = fieldstore_grib::modify(&message, &[("packingType".into(), packing.into())]).expect("packed");
        fieldstore_extract::Packing::of(&message).expect("a packing").encode()
    };
    let constant = fieldstore_grib::sample_message("regular_ll_sfc_grib1", &[]).expect("a sample");
    vec![field("grid_simple", "12"), field("grid_ccsds", "16"), fieldstore_extract::Packing::of(&constant).expect("a packing").encode()]
}

/// CCSDS streams of 6,114 values as ecCodes codes them, each after the 6 bytes that give its
/// coding (16 bits, blocks of 32, RSIs of 64 blocks, preprocessed; 12 bits, blocks of 8, RSIs
/// of 3, not) and its count of values.
fn ccsds_streams() -> Vec<Vec<u8>> {
    let stream = |bits: &str, block: &str, rsi: &str, flags: &str| {
        let message = fieldstore_grib::sample_message("reduced_gg_pl_32_grib2", &[("bitsPerValue", bits)]).expect("a sample");
        let coding = [("packingType", "grid_ccsds"), ("ccsdsBlockSize", block), ("ccsdsRsi", rsi), ("ccsdsFlags", flags)];
        let message = fieldstore_grib::modify(&message, &coding.map(|(k, v)| (k.to_string(), v.to_string()))).expect("packed");
        // Coded again with the coding set.
        let message = fieldstore_grib::fill_values(&message, bits.parse().expect("bits")).expect("values");
        let handle = fieldstore_grib::Handle::from_message(&message).expect("a message");
        let (at, length) = (handle.get_long("offsetBeforeData").expect("data"), handle.get_long("section7Length").expect("length") - 5);
        let values = u16::try_from(handle.get_long("numberOfCodedValues").expect("values")).expect("a small field");
        let head =
            [bits.parse::<u8>().expect("bits") - 1, [8, 16, 32, 64].iter().position(|b| b.to_string() == block).expect("a block") as u8];
        let head = [head[0], head[1], rsi.parse::<u8>().expect("rsi") - 1, flags.parse::<u8>().expect("flags")];
        [&head[..], &(values - 1).to_be_bytes(), &message[at as usize..(at + length) as usize]].concat()
    };
    vec![stream("16", "32", "64", "14"), stream("12", "8", "3", "6")]
}

/// Side objects of kept packings: raw, and (first byte 2) the same to be closed by the target.
fn kept_packings() -> Vec<Vec<u8>> {
    let entries: Vec<(fieldstore_core::FieldLocation, std::sync::Arc<fieldstore_extract::Packing>)> = packing_records()
        .iter()
        .enumerate()
        .map(|(i, record)| {
            let packing = fieldstore_extract::Packing::decode(record).expect("a record");
            let location = fieldstore_core::FieldLocation {
                uri: "od:0001/an.x.data".into(),
                offset: 4096 * i as u64,
                length: packing.length,
                crc32c: Some(7),
            };
            (location, std::sync::Arc::new(packing))
        })
        .collect();
    let whole = fieldstore_extract::kept::encode_kept(&entries);
    // Version 2: the count and directory (closed by the target with their CRC-32C), the records.
    let directory_end = 9 + entries.iter().map(|(location, _)| 31 + location.uri.len()).sum::<usize>();
    let (directory, records) = (&whole[5..directory_end], &whole[directory_end + 4..]);
    let length = u16::try_from(directory.len()).expect("a small directory").to_be_bytes();
    // Version 1, closed by the target: the count, then each location, its record's length and
    // the record (version 2's directory entry is the location, that length and a CRC-32C).
    let mut version_1 = vec![1u8];
    version_1.extend(&directory[..4]);
    let (mut entries_at, mut records_at) = (4, 0);
    for (location, _) in &entries {
        let entry = &directory[entries_at..entries_at + 31 + location.uri.len()];
        let record_length = u32::from_be_bytes(entry[entry.len() - 8..entry.len() - 4].try_into().expect("4 bytes")) as usize;
        version_1.extend(&entry[..entry.len() - 4]);
        version_1.extend(&records[records_at..records_at + record_length]);
        (entries_at, records_at) = (entries_at + entry.len(), records_at + record_length);
    }
    let mut closed = [&b"FSPI"[..], &version_1].concat();
    closed.extend(fieldstore_core::checksum::crc32c(&closed).to_be_bytes());
    let read = fieldstore_extract::kept::decode_kept(&closed).expect("the version 1 seed reads");
    assert_eq!(read.len(), entries.len(), "the version 1 seed holds every entry");
    vec![[&[0u8][..], &whole].concat(), version_1, [&[2u8][..], &length, directory, records].concat()]
}

fn archive_body(piece: u8) -> Vec<u8> {
    let mut body = vec![piece];
    let key = fieldstore_core::Key::parse("class=od,expver=0001,step=6").expect("a key");
    fieldstore_remote::protocol::encode_field(&key, b"GRIB bytes 7777", &mut body).expect("a field encodes");
    fieldstore_remote::protocol::encode_field(&key, b"", &mut body).expect("a field encodes");
    fieldstore_remote::protocol::encode_end(&mut body);
    body
}
