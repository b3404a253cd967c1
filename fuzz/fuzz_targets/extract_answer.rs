#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fieldstore_fuzz_targets::extract_answer(data));
