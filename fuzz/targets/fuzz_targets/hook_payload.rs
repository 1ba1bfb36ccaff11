#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| panehost_fuzz::hook_payload(data));
