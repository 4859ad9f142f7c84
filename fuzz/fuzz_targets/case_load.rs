#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| hcpspec::mutate::targets::case_load(data));
