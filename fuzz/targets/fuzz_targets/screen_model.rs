#![no_main]

// The terminal model's panics are contained by the host (and logged);
// only a panic that escapes the containment aborts, as a crash.
libfuzzer_sys::fuzz_target!(
    init: { panehost_host::contained::install_panic_hook() },
    |data: &[u8]| panehost_fuzz::screen_model(data)
);
