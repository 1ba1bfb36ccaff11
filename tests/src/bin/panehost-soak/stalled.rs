//! Stalled subscribers: connections that subscribe to a busy pane from
//! its first byte and never read another frame, held for a while and then
//! dropped, so that the host has to stop writing to them without slowing
//! anyone else down.

use crate::ledger::Verdict;
use crate::panes::PaneKind;
use crate::raw;
use crate::world::World;
use panehost_ipc::{Encoding, Request};
use panehost_tests::rng::Rng;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::UnixStream;

/// How long connecting, the handshake and the subscription may take.
const SUBSCRIBE_TIMEOUT: Duration = Duration::from_secs(20);

/// Runs one stalled-subscriber slot until the world stops: subscribe,
/// hold unread for 3 to 20 seconds, drop, again.
pub async fn run(world: Arc<World>, index: u64) {
    let mut rng = Rng::new(world.settings.seed, 4000 + index);
    while !world.stopping() {
        if !world.life.wait_up(crate::link::HOST_BACK_TIMEOUT).await {
            world.ledger.fail("stalled subscriber", "the host was not back up");
            break;
        }
        let busy = world.book.pick(&mut rng, |entry| entry.kind == PaneKind::Burst && !entry.exited);
        let Some(pane) = busy.or_else(|| world.book.pick(&mut rng, |entry| entry.kind.prints_numbered_lines())) else {
            if world.pause(Duration::from_secs(1)).await {
                break;
            }
            continue;
        };
        let epoch = world.life.kills();
        let open = world.life.hold_connection();
        let encoding = if rng.percent(50) { Encoding::Json } else { Encoding::Bincode };
        let subscribed = tokio::time::timeout(SUBSCRIBE_TIMEOUT, subscribe_unread(&world, encoding, &pane.id))
            .await
            .unwrap_or_else(|_| Err(format!("subscribing took over {SUBSCRIBE_TIMEOUT:?}")));
        let killed_meanwhile = world.life.kills() != epoch || !world.life.is_up();
        match subscribed {
            Ok(stream) => {
                world.ledger.record("stalled subscriber", Verdict::Ok);
                let stop = world.pause(Duration::from_millis(rng.range(3_000, 20_000))).await;
                drop(stream);
                drop(open);
                if stop {
                    break;
                }
            }
            Err(_) if killed_meanwhile => world.ledger.record("stalled subscriber", Verdict::LostToRestart),
            Err(problem) => world.ledger.record("stalled subscriber", Verdict::Failed(problem)),
        }
    }
}

/// Connects, subscribes to `pane` from offset 0 and returns the connection
/// without reading past the handshake.
async fn subscribe_unread(
    world: &World,
    encoding: Encoding,
    pane: &panehost_ipc::PaneId,
) -> Result<UnixStream, String> {
    let mut stream = UnixStream::connect(&world.life.socket).await.map_err(|e| format!("cannot connect: {e}"))?;
    raw::handshake(&mut stream, encoding, "panehost-soak stalled").await?;
    raw::send_request(&mut stream, encoding, 1, Request::Events { pane: pane.clone(), from: Some(0) }).await?;
    Ok(stream)
}
