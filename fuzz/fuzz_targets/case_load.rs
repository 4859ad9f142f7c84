#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| hcpspec::suites::hcp::fuzz::targets::case_load(data));
