#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| panehost_fuzz::vt100_at_pane_sizes(data));
