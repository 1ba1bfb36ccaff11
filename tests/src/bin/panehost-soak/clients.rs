//! The client tasks: each holds one connection and runs random operations
//! against random panes until the run stops, reconnecting when the host
//! was killed under it and finishing closes the kill interrupted.

use crate::ledger::Verdict;
use crate::link::Link;
use crate::operations::{self, Operation, TaskState};
use crate::world::World;
use panehost_client::ClientOptions;
use panehost_tests::rng::Rng;
use std::sync::Arc;
use std::time::Duration;

/// How long any request of a client task may take, `ask` aside (which
/// waits for its turn's timeout, plus a margin).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The watchdog's margin over the longest an operation may take (an `ask`
/// waits for its turn's timeout, and then for its answer): an operation
/// still running after both is stalled, and the run fails saying which.
const STALL_MARGIN: Duration = Duration::from_secs(15);

/// What the watchdog records a stalled operation under.
pub const STALLED: &str = "watchdog: an operation stalled";

/// Runs one client task until the world stops.
pub async fn run(world: Arc<World>, index: u64) {
    let mut state = TaskState { rng: Rng::new(world.settings.seed, 1000 + index), unfinished_closes: Vec::new() };
    let options = ClientOptions {
        request_timeout: Some(REQUEST_TIMEOUT),
        event_buffer: 4096,
        ..ClientOptions::named(format!("panehost-soak client {index}"))
    };
    let mut link: Option<Link> = None;
    let mut connections = 0u64;
    while !world.stopping() {
        let current = match link.take() {
            Some(current) => current,
            None => match world.life.connect(&options).await {
                Ok(new) => {
                    connections += 1;
                    if connections > 1 {
                        world.ledger.count("client reconnects", 1);
                    }
                    new
                }
                Err(problem) => {
                    world.ledger.fail("client connect", problem);
                    if world.pause(Duration::from_secs(1)).await {
                        break;
                    }
                    continue;
                }
            },
        };
        let mut keep = true;
        if let Some(pane) = state.unfinished_closes.pop() {
            let (verdict, again) = operations::finish_close(&world, &current, pane).await;
            keep = matches!(verdict, Verdict::Ok | Verdict::Expected(_));
            world.ledger.record("close (again)", verdict);
            state.unfinished_closes.extend(again);
        } else {
            let operation = Operation::draw(&mut state.rng);
            let limit = world.settings.ask_timeout + REQUEST_TIMEOUT + STALL_MARGIN;
            match tokio::time::timeout(limit, operations::run(operation, &world, &current, &mut state)).await {
                Ok(Some((kind, verdict))) => {
                    keep = matches!(verdict, Verdict::Ok | Verdict::Expected(_));
                    world.ledger.record(kind, verdict);
                }
                Ok(None) => {}
                Err(_stalled) => {
                    let detail =
                        format!("{operation:?} of client task {index} still running after {} s", limit.as_secs());
                    world.ledger.fail(STALLED, detail);
                    keep = false;
                }
            }
        }
        // After a lost or failed request the connection may hold answers
        // nobody waits for: start the next operation on a new one.
        if keep && !current.client.is_closed() {
            link = Some(current);
        }
        let pace = world.settings.pace.as_millis() as u64;
        let pause = Duration::from_millis(state.rng.range(0, pace));
        if world.pause(pause).await {
            break;
        }
    }
    // Closes lost with the host are finished before the task ends, so the
    // book knows every pane's fate.
    while let Some(pane) = state.unfinished_closes.pop() {
        let Ok(current) = world.life.connect(&options).await else { break };
        let (verdict, again) = operations::finish_close(&world, &current, pane).await;
        world.ledger.record("close (again)", verdict);
        if let Some(pane) = again {
            world.ledger.fail("close (again)", format!("the close of {pane} could not be finished"));
        }
    }
}
