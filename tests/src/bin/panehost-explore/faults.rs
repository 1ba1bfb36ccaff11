//! The faults: SIGKILL of the host and a new host on the same socket and
//! state directory (then the new host's list must hold exactly the panes
//! the explorer believes alive), and SIGKILL of a keeper (its panes' own
//! processes live on, held by the host; a later restart starts them
//! afresh).

use crate::checks;
use crate::host::{self, ExploreHost};
use crate::world::{lock, Life, World};
use panehost_client::{Client, ClientOptions};
use panehost_tests::procfs;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// Kills the host with SIGKILL, starts it again and checks its panes.
/// `Err` when no host could be started again (the schedule cannot go on).
pub async fn kill_host(world: &Arc<World>, host: &Mutex<ExploreHost>) -> Result<(), String> {
    // What the followers hold now, before the host that served it is gone.
    checks::compare_with_replays(world).await;
    world.life.going_down();
    lock(host).kill_hard()?;
    world.count("host kills", 1);
    let began = Instant::now();
    let pid = lock(host).spawn()?;
    let socket = world.life.socket.clone();
    host::wait_until_listening(&socket, Duration::from_secs(30)).await?;
    let options = ClientOptions {
        request_timeout: Some(Duration::from_secs(60)),
        ..ClientOptions::named("explore restart check")
    };
    let client = Client::connect(&socket, &options).await.map_err(|e| format!("the new host ({pid}): {e}"))?;
    let panes = client.list().await.map_err(|e| format!("list on the new host: {e}"))?;
    eprintln!(
        "[explore]   {:>6} ms host killed; the new host {pid} listed {} panes {:.2} s after the kill",
        world.began.elapsed().as_millis(),
        panes.len(),
        began.elapsed().as_secs_f64()
    );
    let mut book = world.book();
    let mut seen = BTreeSet::new();
    let mut strays = Vec::new();
    for pane in &panes {
        if !seen.insert(pane.id.clone()) {
            world.fail("restart", format!("{} is listed twice", pane.id));
            continue;
        }
        let Some(entry) = book.panes.get_mut(&pane.id) else {
            strays.push(pane.id.clone());
            continue;
        };
        match entry.life {
            Life::Closed | Life::Gone => {
                world.fail("restart", format!("{} was closed (or gone) but the new host lists it", pane.id))
            }
            Life::Alive | Life::Closing if entry.keeper_lost => {
                if pane.generation <= entry.generation || pane.restored_by != "fresh" {
                    if pane.restored_by != "keeper" || pane.generation != entry.generation {
                        world.fail(
                            "restart",
                            format!(
                                "{} (its keeper killed) came back as generation {} by {} (was {})",
                                pane.id, pane.generation, pane.restored_by, entry.generation
                            ),
                        );
                    }
                } else {
                    world.count("panes started afresh after their keeper was killed", 1);
                    entry.replaced = true;
                    entry.weaken_commands();
                    entry.generation = pane.generation;
                    entry.pid = pane.pid;
                    entry.keeper_lost = true;
                }
            }
            Life::Alive | Life::Closing => {
                if pane.generation != entry.generation || pane.restored_by != "keeper" {
                    world.fail(
                        "restart",
                        format!(
                            "{} came back as generation {} by {}, not from its keeper as generation {}",
                            pane.id, pane.generation, pane.restored_by, entry.generation
                        ),
                    );
                }
            }
        }
    }
    for (id, entry) in book.panes.iter_mut() {
        if seen.contains(id) {
            continue;
        }
        match entry.life {
            Life::Alive if !entry.keeper_lost => {
                world.fail("restart", format!("{id} was alive, but the new host does not list it (lost)"));
                entry.life = Life::Gone;
            }
            Life::Alive | Life::Closing => {
                world.count("panes not brought back (keeper killed, or closing)", 1);
                entry.life = Life::Gone;
            }
            Life::Closed | Life::Gone => {}
        }
    }
    let book_ref = &mut *book;
    for slot in book_ref.slots.iter_mut() {
        if slot.as_ref().is_some_and(|id| book_ref.panes.get(id).is_some_and(|entry| entry.life == Life::Gone)) {
            *slot = None;
        }
    }
    let unexplained = strays.iter().filter(|id| !book.strays.contains(id)).count() as u64;
    if unexplained > book.lost_starts {
        world.fail(
            "restart",
            format!("the new host lists panes no one started: {strays:?} ({} start(s) lost)", book.lost_starts),
        );
    }
    for id in strays {
        if !book.strays.contains(&id) {
            book.strays.push(id);
        }
    }
    drop(book);
    world.life.back_up();
    Ok(())
}

/// Kills one keeper of the host with SIGKILL (`pick` modulo how many
/// there are); marks its panes.
pub fn kill_keeper(world: &World, host: &Mutex<ExploreHost>, pick: u64) {
    let keepers = lock(host).dir.keepers();
    if keepers.is_empty() {
        world.count("keeper kills skipped (no keeper)", 1);
        return;
    }
    let keeper = keepers[(pick % keepers.len() as u64) as usize];
    world.keeper_kills.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let mut book = world.book();
    let mut marked = Vec::new();
    for (id, entry) in book.panes.iter_mut() {
        if procfs::stat(entry.pid).is_some_and(|stat| stat.ppid == keeper) {
            entry.keeper_lost = true;
            marked.push(id.clone());
        }
    }
    drop(book);
    match host::kill_pid(keeper) {
        Ok(()) => {
            world.count("keeper kills", 1);
            eprintln!("[explore]   keeper {keeper} killed; its panes: {marked:?}");
        }
        Err(problem) => world.count(&format!("keeper kills failed: {problem}"), 1),
    }
}
