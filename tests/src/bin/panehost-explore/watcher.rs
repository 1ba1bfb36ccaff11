//! The activity watcher: a `watch` held for the whole schedule (opened
//! again after every kill of the host), checking that every pane's
//! `activity` moves only along the state machine below, and that each
//! pane's news begin with `pane_started` (or the list) and end with
//! `pane_ended`.
//!
//! The machine, for a shell pane with shell integration:
//!
//! ```text
//!   unknown --turn starts--> busy --turn ends--> idle --turn starts--> busy
//!   unknown --a turn ends (the first prompt)--> idle
//!   idle, busy --the process exited--> unknown (terminal)
//! ```
//!
//! `awaiting_input` and `awaiting_approval` never occur (they come from an
//! agent's hooks only). A
//! `pane_activity` states a change, so it never repeats the value before
//! it, except for the first news of a pane after the list or its
//! `pane_started`, which may repeat what they showed. The same holds for
//! `pane_changed` and the size and title it states.

use crate::life::Failed;
use crate::world::World;
use panehost_client::ClientOptions;
use panehost_ipc::{Event, PaneId, PaneSummary, Size};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// Whether `from` may become `to`; `exited` when the watch said the
/// process exited.
pub fn allowed(from: &str, to: &str, exited: bool) -> bool {
    match (from, to) {
        (_, "awaiting_input") | ("awaiting_input", _) => false,
        ("unknown", "idle" | "busy") => !exited,
        ("idle", "busy") | ("busy", "idle") => !exited,
        ("idle" | "busy", "unknown") => exited,
        _ => false,
    }
}

/// What the watcher knows of one pane.
#[derive(Debug)]
struct Known {
    activity: String,
    exited: bool,
    /// No news yet since the list or `pane_started`.
    first: bool,
    /// The size and title last stated.
    look: (Size, String),
    /// No `pane_changed` yet since the list or `pane_started`.
    first_look: bool,
}

impl Known {
    /// A pane as the list or its `pane_started` showed it.
    fn listed(pane: &PaneSummary) -> Known {
        Known {
            activity: pane.activity.clone(),
            exited: false,
            first: true,
            look: (pane.size, pane.title.clone()),
            first_look: true,
        }
    }
}

/// Watches until the world stops.
pub async fn run(world: Arc<World>) {
    let options = ClientOptions {
        request_timeout: Some(Duration::from_secs(30)),
        event_buffer: 4096,
        ..ClientOptions::named("explore activity watcher")
    };
    while !world.stopping() {
        let (client, epoch) = match world.life.connect(&options).await {
            Ok(opened) => opened,
            Err(problem) => {
                world.fail("watch", problem);
                return;
            }
        };
        let (panes, mut stream) = match client.watch().await {
            Ok(watching) => watching,
            Err(error) => match world.life.classify(epoch, error) {
                Failed::Lost => continue,
                Failed::Host(body) => {
                    world.fail("watch", format!("watch answered {body}"));
                    return;
                }
                Failed::Broken(problem) => {
                    world.fail("watch", problem);
                    return;
                }
            },
        };
        let mut known: HashMap<PaneId, Known> =
            panes.into_iter().map(|pane| (pane.id.clone(), Known::listed(&pane))).collect();
        loop {
            let event = tokio::select! {
                _ = world.stopped() => return,
                event = stream.next() => event,
            };
            let Some(event) = event else {
                if world.stopping() {
                    // The end: the host is being stopped (both were ready
                    // at once, and the stream was looked at first).
                    return;
                }
                if epoch >= world.life.kills() {
                    world.fail("watch", "the watch's connection closed with no kill of the host");
                    return;
                }
                break;
            };
            match event {
                Event::PaneStarted { pane } => {
                    if known.get(&pane.id).is_some_and(|k| !k.first) {
                        world.fail("watch", format!("{}: pane_started after other news of it", pane.id));
                    }
                    known.insert(pane.id.clone(), Known::listed(&pane));
                }
                Event::PaneActivity { pane, activity } => {
                    world.count("activity changes watched", 1);
                    match known.get_mut(&pane) {
                        None => world.fail("watch", format!("{pane}: pane_activity {activity} before pane_started")),
                        Some(k) => {
                            let repeat = k.first && k.activity == activity;
                            if !repeat && !allowed(&k.activity, &activity, k.exited) {
                                world.fail(
                                    "activity",
                                    format!(
                                        "{pane}: {} -> {activity}{}",
                                        k.activity,
                                        if k.exited { " after pane_exited" } else { "" }
                                    ),
                                );
                            }
                            k.activity = activity;
                            k.first = false;
                        }
                    }
                }
                Event::PaneExited { pane, .. } => match known.get_mut(&pane) {
                    None => world.fail("watch", format!("{pane}: pane_exited before pane_started")),
                    Some(k) => {
                        k.exited = true;
                        k.first = false;
                    }
                },
                Event::PaneChanged { pane, size, title } => {
                    world.count("size or title changes watched", 1);
                    match known.get_mut(&pane) {
                        None => world.fail("watch", format!("{pane}: pane_changed before pane_started")),
                        Some(k) => {
                            let look = (size, title);
                            if !k.first_look && k.look == look {
                                world.fail("watch", format!("{pane}: pane_changed without a change: {look:?}"));
                            }
                            k.look = look;
                            k.first_look = false;
                        }
                    }
                }
                Event::PaneEnded { pane, reason } => {
                    if known.remove(&pane).is_none() {
                        world.fail("watch", format!("{pane}: pane_ended ({reason}) of a pane it did not know"));
                    }
                }
                Event::PaneList { panes, missed } => {
                    world.count("watch lists after falling behind", 1);
                    world.count("watch events missed", missed);
                    known = panes.into_iter().map(|pane| (pane.id.clone(), Known::listed(&pane))).collect();
                }
                Event::Ended { reason } => {
                    world.fail("watch", format!("the watch ended ({reason}) while the host ran"));
                    return;
                }
                other => world.fail("watch", format!("an event that is not a watch's: {other:?}")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::allowed;

    #[test]
    fn the_machine() {
        assert!(allowed("unknown", "idle", false));
        assert!(allowed("unknown", "busy", false));
        assert!(allowed("idle", "busy", false));
        assert!(allowed("busy", "idle", false));
        assert!(allowed("busy", "unknown", true));
        assert!(!allowed("busy", "unknown", false));
        assert!(!allowed("idle", "idle", false));
        assert!(!allowed("idle", "awaiting_input", false));
        assert!(!allowed("busy", "awaiting_approval", false));
        assert!(!allowed("unknown", "busy", true));
    }
}
