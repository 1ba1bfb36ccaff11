//! A host killed with SIGKILL in the middle of a flood, with several panes
//! and several clients on each: every client, through the client library,
//! comes back on its own; every byte it is handed sits at its true offset;
//! nothing repeats; the flood goes on where the program was; and the only
//! bytes a client misses are those the dead host had read and not yet
//! delivered, which it is told of.

mod support;

use panehost_client::{Client, ClientOptions, FollowItem, FollowOptions, PaneFollower};
use panehost_ipc::{Event, PaneId, SendParams, StreamStart};
use std::path::PathBuf;
use support::*;
use tokio::sync::watch;

const PANES: usize = 3;
const FOLLOWERS_PER_PANE: usize = 2;
/// Flood bytes per pane: enough that no flood can end before the host is
/// killed (the kill comes once every pane has shown `KILL_AFTER`).
const FLOOD_BYTES: u64 = 42 * 285_715;
const KILL_AFTER: u64 = 256 * 1024;
/// One flood line as the terminal delivers it: 42 bytes with `\r` added.
const LINE_BYTES: u64 = 43;
const DONE: &str = "flood done\r\nfixture> ";

/// A run of output a follower was handed with no gap inside it.
#[derive(Debug)]
struct Run {
    from: u64,
    bytes: Vec<u8>,
}

impl Run {
    fn end(&self) -> u64 {
        self.from + self.bytes.len() as u64
    }
}

/// Everything one follower was handed.
#[derive(Debug, Default)]
struct Seen {
    runs: Vec<Run>,
    /// Each announced gap: the offset the follower had reached, and the
    /// offset output resumed at.
    gaps: Vec<(u64, u64)>,
    starts: Vec<String>,
}

impl Seen {
    fn end(&self) -> u64 {
        self.runs.last().map_or(0, Run::end)
    }

    fn text_tail(&self) -> String {
        let last = self.runs.last().map(|run| &run.bytes[run.bytes.len().saturating_sub(64)..]).unwrap_or(&[]);
        String::from_utf8_lossy(last).into_owned()
    }

    fn total(&self) -> u64 {
        self.runs.iter().map(|run| run.bytes.len() as u64).sum()
    }

    /// Output continues a run, or starts a new one after an announced gap.
    fn output(&mut self, offset: u64, data: &[u8]) {
        match self.runs.last_mut() {
            Some(run) if run.end() == offset => run.bytes.extend_from_slice(data),
            Some(run) => panic!("output at {offset} after {} with no gap announced", run.end()),
            None => self.runs.push(Run { from: offset, bytes: data.to_vec() }),
        }
    }

    fn gap(&mut self, reached: u64, resumes_at: u64) {
        assert!(resumes_at >= reached, "a gap never goes back: {reached} -> {resumes_at}");
        self.gaps.push((reached, resumes_at));
        self.runs.push(Run { from: resumes_at, bytes: Vec::new() });
    }
}

/// Follows a pane until its flood is done, reporting progress.
async fn follow(socket: PathBuf, pane: PaneId, progress: watch::Sender<u64>) -> Seen {
    let options = FollowOptions {
        client: ClientOptions { event_buffer: 8, ..ClientOptions::default() },
        ..FollowOptions::default()
    };
    let mut follower = PaneFollower::connect(&socket, &options, pane, Some(0)).await.expect("a follower");
    let mut seen = Seen::default();
    loop {
        let item = tokio::time::timeout(WAIT, follower.next())
            .await
            .expect("the follower went quiet")
            .expect("the follower failed")
            .expect("the follower ended");
        match item {
            FollowItem::Start(StreamStart::Replay { from }) => {
                seen.starts.push(format!("replay {from}"));
                assert_eq!(from, seen.end(), "a replay resumes exactly where the follower was");
            }
            FollowItem::Start(StreamStart::Snapshot { snapshot, skipped_from }) => {
                seen.starts.push(format!("snapshot {} skipped_from {skipped_from:?}", snapshot.offset));
                assert_eq!(skipped_from, Some(seen.end()), "the gap is announced from where the follower was");
                seen.gap(seen.end(), snapshot.offset);
            }
            FollowItem::Start(other) => panic!("the pane was not replaced: {other:?}"),
            FollowItem::Event(Event::Output { offset, data }) => seen.output(offset, data.as_slice()),
            FollowItem::Event(Event::Resync { skipped_from, snapshot }) => {
                assert_eq!(skipped_from, seen.end());
                seen.gap(skipped_from, snapshot.offset);
            }
            FollowItem::Event(Event::TurnStarted { .. } | Event::TurnCompleted { .. } | Event::Resized { .. }) => {}
            FollowItem::Event(other) => panic!("unexpected {other:?}"),
        }
        progress.send_replace(seen.total());
        if seen.text_tail().ends_with(DONE) {
            return seen;
        }
    }
}

/// The numbers of the complete flood lines in a run, checking that each
/// line is exactly what the flood writes.
fn flood_line_numbers(run: &Run) -> Vec<u64> {
    let text = String::from_utf8_lossy(&run.bytes);
    let mut numbers = Vec::new();
    let mut lines = text.split("\r\n").peekable();
    let mut first = true;
    while let Some(line) = lines.next() {
        let last = lines.peek().is_none();
        let (partial_edge, rest) = (first || last, line.strip_prefix("flood "));
        first = false;
        match rest {
            Some(rest) if rest.len() == 35 && rest.ends_with(" abcdefghijklmnopqrstuvwxyz") => {
                numbers.push(rest[..8].parse().expect("an eight-digit number"));
            }
            // A run begins and ends anywhere: its first and last lines may
            // be cut, and the prompt and command surround the flood.
            _ if partial_edge
                || !line.contains("flood ")
                || line == "flood done"
                || line.ends_with(&format!("/flood {FLOOD_BYTES}")) => {}
            _ => panic!("a corrupt flood line: {line:?}"),
        }
    }
    numbers
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_killed_mid_flood_comes_back_and_its_clients_lose_only_what_they_are_told_of() {
    let mut host = TestHost::start();
    let socket = host.socket.clone();
    let client = Client::connect(&socket, &ClientOptions::default()).await.unwrap();
    let mut panes = Vec::new();
    for _ in 0..PANES {
        panes.push(client.start(start_params("fixture", &[])).await.unwrap());
    }

    let mut followers = Vec::new();
    let mut progress = Vec::new();
    for pane in &panes {
        for _ in 0..FOLLOWERS_PER_PANE {
            let (sender, receiver) = watch::channel(0u64);
            progress.push(receiver);
            followers.push(tokio::spawn(follow(socket.clone(), pane.id.clone(), sender)));
        }
    }
    // Each pane shows its prompt before the flood is asked for.
    for pane in &panes {
        let mut screen = client.inspect(&pane.id).await.unwrap().screen.text;
        let deadline = tokio::time::Instant::now() + WAIT;
        while !screen.contains("fixture> ") {
            assert!(tokio::time::Instant::now() < deadline, "no prompt: {screen:?}");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            screen = client.inspect(&pane.id).await.unwrap().screen.text;
        }
        let flood = SendParams {
            pane: pane.id.clone(),
            text: format!("/flood {FLOOD_BYTES}"),
            enter: true,
            ..Default::default()
        };
        client.send(flood).await.unwrap();
    }
    drop(client);

    // Kill the host once every follower is well into its flood.
    for receiver in &mut progress {
        tokio::time::timeout(WAIT, receiver.wait_for(|total| *total >= KILL_AFTER))
            .await
            .expect("a follower never got far into the flood")
            .unwrap();
    }
    let at_kill: Vec<u64> = progress.iter().map(|receiver| *receiver.borrow()).collect();
    tokio::task::block_in_place(|| {
        host.kill_hard();
        for pane in &panes {
            assert!(process_exists(pane.pid), "pane {} outlives the host", pane.id);
        }
        host.restart();
    });

    let mut seen = Vec::new();
    for follower in followers {
        seen.push(tokio::time::timeout(WAIT * 3, follower).await.expect("a follower never finished").unwrap());
    }

    // The panes are the same panes: same id, generation and process.
    let client = Client::connect(&socket, &ClientOptions::default()).await.unwrap();
    let listed = client.list().await.unwrap();
    for pane in &panes {
        let after = listed.iter().find(|listed| listed.id == pane.id).expect("the pane is back");
        assert_eq!((after.generation, after.pid, after.restored_by.as_str()), (1, pane.pid, "keeper"), "{after:?}");
    }

    let last_line = FLOOD_BYTES / 42;
    for (index, seen) in seen.iter().enumerate() {
        let pane = &panes[index / FOLLOWERS_PER_PANE];
        let context = format!("follower {index} of pane {}: starts {:?}, gaps {:?}", pane.id, seen.starts, seen.gaps);
        assert!(at_kill[index] < FLOOD_BYTES, "the flood was still running at the kill: {context}");
        assert!(seen.starts.len() >= 2, "it reconnected: {context}");
        eprintln!("{context}; {} bytes handed on", seen.total());
        // No line twice, none out of order, none corrupt, and the flood
        // reached its end: the program went on where it was.
        let numbers: Vec<u64> = seen.runs.iter().flat_map(flood_line_numbers).collect();
        assert!(numbers.windows(2).all(|pair| pair[0] < pair[1]), "lines in order, none repeated: {context}");
        assert_eq!(numbers.last().copied(), Some(last_line), "{context}");
        // Lines are missing only across announced gaps, and no more than
        // the gap's bytes could hold.
        let mut missing_within_runs = 0;
        for run in &seen.runs {
            let numbers = flood_line_numbers(run);
            missing_within_runs += numbers.windows(2).filter(|pair| pair[1] != pair[0] + 1).count();
        }
        assert_eq!(missing_within_runs, 0, "inside a run nothing is missing: {context}");
        for pair in seen.runs.windows(2) {
            let (Some(before), Some(after)) =
                (flood_line_numbers(&pair[0]).last().copied(), flood_line_numbers(&pair[1]).first().copied())
            else {
                continue;
            };
            let missing_bytes = (after - before - 1) * LINE_BYTES;
            let gap_bytes = pair[1].from - pair[0].end();
            assert!(
                missing_bytes <= gap_bytes + 2 * LINE_BYTES,
                "missing {missing_bytes} bytes across a gap of {gap_bytes}: {context}"
            );
        }
    }
    // Two followers of one pane were handed the same bytes wherever both
    // have them: an offset means one thing.
    for (pane_index, pane) in panes.iter().enumerate() {
        let (first, second) = (&seen[pane_index * 2], &seen[pane_index * 2 + 1]);
        for run in &first.runs {
            for other in &second.runs {
                let (from, to) = (run.from.max(other.from), run.end().min(other.end()));
                if from < to {
                    let mine = &run.bytes[(from - run.from) as usize..(to - run.from) as usize];
                    let theirs = &other.bytes[(from - other.from) as usize..(to - other.from) as usize];
                    assert!(mine == theirs, "pane {}: offsets {from}..{to} differ between followers", pane.id);
                }
            }
        }
        client.close(&pane.id).await.unwrap();
    }
    drop(client);
    tokio::task::block_in_place(|| drop(host.stop()));
}
