#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| hcpspec::fuzz::targets::authorize(data));
