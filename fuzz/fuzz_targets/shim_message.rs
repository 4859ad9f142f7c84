#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| hcpspec::mutate::targets::shim_message(data));
