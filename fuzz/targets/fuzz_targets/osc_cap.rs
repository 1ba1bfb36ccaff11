#![no_main]

// vt100's own panics are contained (the two models may differ after one);
// a disagreement of the two models is a crash.
libfuzzer_sys::fuzz_target!(
    init: { panehost_host::contained::install_panic_hook() },
    |data: &[u8]| panehost_fuzz::osc_cap(data)
);
