#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| panehost_fuzz::pane_record(data));
