//! One client that stops reading must not slow the child or any other
//! client, nor grow the host beyond the pane's ring.

mod support;

use panehost_ipc::{Encoding, Event, Request};
use support::*;

#[test]
fn a_stalled_client_costs_the_host_less_than_its_ring_and_later_resyncs() {
    let ring_bytes = 1024 * 1024;
    let host = TestHost::start_with_env(&[("PANEHOST_RING_BYTES", &ring_bytes.to_string())]);
    let mut drainer = host.connect(Encoding::Bincode);
    let mut stalled = host.connect(Encoding::Bincode);
    let pane = drainer.start(start_params("fixture", &[])).id;
    let drain_sub = drainer.subscribe(&pane, Some(0)).subscription;
    let mut drained = Transcript::from(0);
    drainer.follow_until_text(drain_sub, &mut drained, "fixture> ");
    let stalled_sub = stalled.subscribe(&pane, Some(0)).subscription;
    let rss_before = host.rss_kib();

    // 24 MiB of output while `stalled` reads nothing at all.
    let flood = 24 * 1024 * 1024;
    drainer.type_line(&pane, &format!("/flood {flood}"));
    drainer.follow_until(drain_sub, &mut drained, |t| t.text().ends_with("flood done\r\nfixture> "));
    let flood_lines = flood / 42;
    assert!(drained.end() >= (flood + flood_lines) as u64, "the drainer got every byte");
    let rss_after = host.rss_kib();
    let growth_kib = rss_after.saturating_sub(rss_before);
    assert!(growth_kib < 16 * 1024, "host grew by {growth_kib} KiB for a {} KiB ring", ring_bytes / 1024);

    // The stalled client wakes up: it gets what its socket held, then a resync,
    // then the live tail, ending exactly at the pane's end.
    let mut late = Transcript::from(0);
    stalled.follow_until(stalled_sub, &mut late, |t| t.end() == drained.end());
    assert!(late.events.iter().any(|event| matches!(event, Event::Resync { .. })), "a resync replaced the lost bytes");
    drainer.ok(Request::Close { pane });
    host.stop();
}
