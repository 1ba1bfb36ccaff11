//! The crash in the middle of the run: the followers' bytes checked
//! against the host that is about to die, then SIGKILL, a new host on the
//! same socket and state directory, every pane back, every follower back.

use crate::followers::Followers;
use crate::health::{FdModel, Sample};
use crate::host::{wait_until_listening, SoakHost};
use crate::panes::Life;
use crate::verify::{verify_followers, Tally, VerifiedRanges};
use crate::world::World;
use panehost_client::{Client, ClientOptions};
use std::collections::HashSet;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long the new host may take to listen.
const LISTEN_TIMEOUT: Duration = Duration::from_secs(60);
/// How long the new host may take to answer its first `list` (it answers
/// once every pane is back).
const RESTORE_TIMEOUT: Duration = Duration::from_secs(120);
/// How long the followers may take to resume on the new host.
const FOLLOWERS_BACK_TIMEOUT: Duration = Duration::from_secs(90);

/// What the crash and restart took and found.
#[derive(Debug)]
pub struct CrashReport {
    /// The followers' bytes checked against the host before it died.
    pub before: Tally,
    /// From the kill until the new host listened.
    pub until_listening: Duration,
    /// From the kill until the new host answered `list`.
    pub until_restored: Duration,
    /// Panes the new host listed.
    pub panes_listed: usize,
    /// The host measured once the followers were back.
    pub sample: Sample,
}

/// Checks the followers, kills the host, starts it again and waits until
/// its panes and the followers are back.
pub async fn crash_and_restart(
    world: &World,
    host: &Mutex<SoakHost>,
    followers: &Followers,
    verified: &tokio::sync::Mutex<VerifiedRanges>,
    model: &FdModel,
) -> Result<CrashReport, String> {
    // Held through the kill and the restart: no pass runs meanwhile.
    let mut verified = verified.lock().await;
    crate::progress("checking the followers' bytes against the host before killing it");
    let before = verify_followers(world, followers, &mut verified).await;
    crate::progress("killing the host with SIGKILL");
    world.life.going_down();
    let killed_at = Instant::now();
    lock(host).kill_hard()?;
    let pid = lock(host).spawn()?;
    crate::progress(&format!("restarted the host (pid {pid}) on the same socket and state directory"));
    wait_until_listening(&world.life.socket, LISTEN_TIMEOUT).await?;
    let until_listening = killed_at.elapsed();
    let options =
        ClientOptions { request_timeout: Some(RESTORE_TIMEOUT), ..ClientOptions::named("panehost-soak restart") };
    let client = Client::connect(&world.life.socket, &options)
        .await
        .map_err(|e| format!("cannot connect to the restarted host: {e}"))?;
    let panes = client.list().await.map_err(|e| format!("the restarted host did not answer list: {e}"))?;
    let until_restored = killed_at.elapsed();
    let listed: HashSet<_> = panes.iter().map(|pane| pane.id.clone()).collect();
    for entry in world.book.entries() {
        if entry.life == Life::Alive && !listed.contains(&entry.id) {
            world
                .ledger
                .fail("restart", format!("{} ({}) is not listed by the restarted host", entry.id, entry.kind.label()));
        }
    }
    for pane in &panes {
        if let Err(complaint) = world.book.observe(pane, world.book.get(&pane.id).map(|e| e.max_end).unwrap_or(0)) {
            world.ledger.fail("restart", complaint);
        }
    }
    drop(client);
    world.life.back_up();
    crate::progress(&format!(
        "the new host listened after {:.1} s and listed {} panes after {:.1} s",
        until_listening.as_secs_f64(),
        panes.len(),
        until_restored.as_secs_f64()
    ));
    if !followers.wait_all_connected(world.life.kills(), FOLLOWERS_BACK_TIMEOUT).await {
        world
            .ledger
            .fail("restart", format!("not every follower was back on the new host within {FOLLOWERS_BACK_TIMEOUT:?}"));
    }
    drop(verified);
    let dir = lock(host).dir.clone();
    let sample = crate::health::sample_settled(
        "after restart",
        &dir,
        pid,
        panes.len(),
        || world.life.open_connections(),
        model,
        Duration::from_secs(10),
    )
    .await;
    Ok(CrashReport { before, until_listening, until_restored, panes_listed: panes.len(), sample })
}

fn lock(host: &Mutex<SoakHost>) -> std::sync::MutexGuard<'_, SoakHost> {
    host.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
