//! `reconnect`: a client dropped and reconnected mid-turn loses no byte and
//! sees none twice.
//!
//! In a fresh pane, a `PaneFollower` follows the pane from its end offset
//! `O` through a proxy. `SLOW` is submitted on the runner's own connection;
//! once the answer streams, the proxy cuts the follower's connection. The
//! follower reconnects by itself (a `reconnect` from the last offset it
//! handed on) and reads on while the answer keeps streaming. Then the bytes
//! it handed on must equal the pane's output read afresh with `events`
//! from `O`, byte for byte, and every output must have continued exactly
//! where the previous one ended.
//!
//! A CLI that draws its answer only once it is whole shows nothing of it
//! while the model streams: then the cut lands while the fixture still
//! streams `SLOW` (mid-turn), the follower reads on until the answer is
//! drawn, and the record says so.

use crate::close;
use crate::interrupt::start_slow;
use crate::outcome::{pause, Outcome};
use crate::pane::{self, look};
use crate::run::Ctx;
use panehost_client::{ClientOptions, FollowItem, FollowOptions, PaneFollower};
use panehost_ipc::{Event, PaneId, StreamStart};
use panehost_tests::proxy::Proxy;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// How long a CLI that draws its answer whole may take to draw it, after
/// the cut: the fixture streams `SLOW` for about a minute.
const ANSWER_DRAWN_WAIT: Duration = Duration::from_secs(90);

/// What the follower handed on.
#[derive(Debug, Default)]
struct Followed {
    from: u64,
    bytes: Vec<u8>,
    /// Each stream start, with the offset handed on before it.
    starts: Vec<(u64, StreamStart)>,
    /// Outputs that did not continue where the last one ended, resyncs,
    /// errors.
    anomalies: Vec<String>,
    ended: bool,
}

impl Followed {
    fn offset(&self) -> u64 {
        self.from + self.bytes.len() as u64
    }
}

pub async fn run(ctx: &Ctx<'_>) -> Outcome {
    let summary = match pane::start(ctx, None).await {
        Ok(summary) => summary,
        Err(error) => return Outcome::fail(format!("start: {error}")),
    };
    let verdict = follow_through_a_cut(ctx, &summary.id).await;
    let _ = ctx.client.interrupt(&summary.id).await;
    let closed = close::close_and_check(ctx, &summary).await;
    let detail = match &verdict {
        Ok(text) | Err(text) => format!("pane {}: {text}; {}", summary.id, closed.detail),
    };
    if verdict.is_ok() && closed.passed() {
        Outcome::pass(detail)
    } else {
        Outcome::fail(detail)
    }
}

async fn follow_through_a_cut(ctx: &Ctx<'_>, pane: &PaneId) -> Result<String, String> {
    pane::wait_settled(&ctx.client, pane, Duration::from_secs(50)).await?;
    let from = look(&ctx.client, pane).await?.0.offset;
    let proxy_path = ctx.home.parent().unwrap_or(&ctx.home).join(format!("proxy-{pane}.sock"));
    let proxy = Proxy::start(&proxy_path, &ctx.host.socket)?;
    // A small buffer, so that the answer cannot all be waiting on the
    // client's side when the connection is cut.
    let options = FollowOptions {
        client: ClientOptions { event_buffer: 4, ..ClientOptions::named("panehost-live follower") },
        ..FollowOptions::default()
    };
    let mut follower = PaneFollower::connect(&proxy.path, &options, pane.clone(), Some(from))
        .await
        .map_err(|e| format!("follower: {e}"))?;
    let followed = Arc::new(Mutex::new(Followed { from, ..Followed::default() }));
    let (stop, mut stopped) = oneshot::channel::<()>();
    let shared = Arc::clone(&followed);
    let reader = tokio::spawn(async move {
        loop {
            let item = tokio::select! {
                item = follower.next() => item,
                _ = &mut stopped => break,
            };
            let mut f = shared.lock().unwrap_or_else(|p| p.into_inner());
            match item {
                Ok(Some(FollowItem::Start(start))) => {
                    let at = f.offset();
                    f.starts.push((at, start));
                }
                Ok(Some(FollowItem::Event(Event::Output { offset, data }))) => {
                    if offset != f.offset() {
                        let expected = f.offset();
                        f.anomalies.push(format!("output at {offset} where {expected} was next"));
                    }
                    f.bytes.extend_from_slice(data.as_slice());
                }
                Ok(Some(FollowItem::Event(Event::Resync { skipped_from, snapshot }))) => {
                    f.anomalies.push(format!("resync: bytes {skipped_from}..{} skipped", snapshot.offset));
                }
                Ok(Some(FollowItem::Event(Event::Ended { reason }))) => {
                    f.anomalies.push(format!("the stream ended ({reason})"));
                    f.ended = true;
                    break;
                }
                Ok(Some(FollowItem::Event(_))) => {}
                Ok(None) => {
                    f.ended = true;
                    break;
                }
                Err(error) => {
                    f.anomalies.push(format!("follower: {error}"));
                    break;
                }
            }
        }
    });

    let outcome = async {
        let slow = start_slow(ctx, "reconnect", pane).await?;
        let mut notes = Vec::new();
        if !slow.visible {
            // A CLI that draws its answer only once it is whole (Reasonix
            // does) shows none of it while the model streams: the cut then
            // lands mid-turn, while the fixture still streams the answer,
            // and the answer is drawn through the reconnected follower.
            let streaming = ctx.endpoint.matching_since(slow.mark, "SLOW").iter().any(|r| r.end.is_none());
            if !streaming {
                return Err("the answer to SLOW never showed on the screen, and the model had finished streaming \
                            it, so the cut could not land mid-turn"
                    .to_owned());
            }
            notes.push("the answer was not drawn while the model streamed it (the CLI draws it whole): the cut landed mid-turn, while it streamed".to_owned());
        }
        if !slow.note.is_empty() {
            notes.push(format!("(submitting SLOW: {})", slow.note));
        }
        let cut_at = followed.lock().unwrap_or_else(|p| p.into_inner()).offset();
        proxy.sever_all();
        let cut_time = Instant::now();
        // Wait for the follower's own reconnect, then read on for 3 s of
        // the answer.
        loop {
            let starts = followed.lock().unwrap_or_else(|p| p.into_inner()).starts.len();
            if starts >= 2 {
                break;
            }
            if cut_time.elapsed() > Duration::from_secs(15) {
                return Err(format!("the follower did not reconnect within 15 s of the cut at offset {cut_at}"));
            }
            pause(100).await;
        }
        let reconnected_after = cut_time.elapsed().as_millis();
        if slow.visible {
            pause(3000).await;
        } else {
            // Read on until the answer is drawn, through the new connection.
            match pane::wait_for(&ctx.client, pane, "slow answer", ANSWER_DRAWN_WAIT).await {
                Ok(_) => notes.push("it was drawn after the cut".to_owned()),
                Err(why) => notes.push(format!("it was not drawn within {} s: {why}", ANSWER_DRAWN_WAIT.as_secs())),
            }
            pause(1000).await;
        }
        Ok::<(u64, u128, Vec<String>), String>((cut_at, reconnected_after, notes))
    }
    .await;
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(5), reader).await;
    drop(proxy);
    let (cut_at, reconnected_after, notes) = outcome?;

    let (received, mut problems, starts) = {
        let f = followed.lock().unwrap_or_else(|p| p.into_inner());
        (f.bytes.clone(), f.anomalies.clone(), f.starts.clone())
    };
    let expected = pane::output(&ctx.client, pane, from, from + received.len() as u64).await?;
    match starts.first() {
        Some((_, StreamStart::Replay { from: start })) if *start == from => {}
        other => problems.push(format!("the first stream start is {other:?}, not a replay from {from}")),
    }
    for (at, start) in starts.iter().skip(1) {
        match start {
            StreamStart::Replay { from: start } if start == at => {}
            other => {
                problems.push(format!("after handing on {at} bytes' offset the follower restarted with {other:?}"))
            }
        }
    }
    let after_cut = received.len() as u64 - (cut_at - from).min(received.len() as u64);
    if after_cut == 0 {
        problems.push("no output arrived after the cut".into());
    }
    let same = expected.len() >= received.len() && expected[..received.len()] == received[..];
    if !same {
        let first_difference = received.iter().zip(expected.iter()).position(|(a, b)| a != b);
        problems.push(format!(
            "the {} bytes handed on differ from the pane's output from {from} ({} bytes read back; first difference at {:?})",
            received.len(),
            expected.len(),
            first_difference.map(|i| from + i as u64)
        ));
    }
    let restarts: Vec<String> = starts.iter().skip(1).map(|(at, s)| format!("{at}: {}", start_name(s))).collect();
    let summary = format!(
        "followed from offset {from} through a proxy; cut at {cut_at} while SLOW streamed; reconnected after {reconnected_after} ms (restarts: {}); {} bytes handed on, {after_cut} of them after the cut; equal to events from {from}: {same}{}",
        restarts.join(", "),
        received.len(),
        if notes.is_empty() { String::new() } else { format!("; {}", notes.join("; ")) }
    );
    if problems.is_empty() {
        Ok(summary)
    } else {
        Err(format!("{summary}; problems: {}", problems.join("; ")))
    }
}

fn start_name(start: &StreamStart) -> String {
    match start {
        StreamStart::Replay { from } => format!("replay from {from}"),
        StreamStart::Snapshot { snapshot, skipped_from } => {
            format!("snapshot at {} (skipped from {skipped_from:?})", snapshot.offset)
        }
        StreamStart::GenerationChanged { previous, snapshot } => {
            format!("generation changed from {previous} (snapshot at {})", snapshot.offset)
        }
    }
}
