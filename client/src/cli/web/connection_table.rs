//! The connections the gateway holds: who may come in, and who makes room.
//!
//! Each accepted connection asks [`ConnectionTable::admit`] for a place.
//! Within the caps ([`Caps`]) it gets one. At a cap, the oldest connection
//! that has not shown the token (of the same peer address at the
//! per-peer cap, of anyone at the total cap) is closed to make room, so
//! that connections which merely wait (half a request, an idle keep-alive)
//! can never keep the token holder out. Only when every place is held by a
//! connection that showed the token is the new one refused.
//!
//! A place is held by a [`ConnectionSlot`], which lives with the socket
//! (inside the stream the server reads) and gives the place back when the
//! socket is dropped, after a WebSocket's end too. A [`ConnectionHandle`]
//! goes with each request, so that the guard can mark the connection as
//! one that showed the token ([`ConnectionHandle::vouch`]), and tells the
//! connection's task when it has been chosen to make room.

use super::bounds::{Caps, MAX_CLOSING};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

/// Every connection the gateway holds, by peer address.
#[derive(Debug)]
pub(super) struct ConnectionTable {
    caps: Caps,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The serial number of the next connection admitted.
    next_serial: u64,
    /// Connections admitted and not yet dropped, the closing ones too.
    open: usize,
    /// Connections chosen to make room that have not been dropped yet.
    closing: usize,
    /// Per peer address with a connection open.
    peers: HashMap<IpAddr, Peer>,
    /// Connections that have not shown the token, oldest first: the ones
    /// that may be closed to make room.
    unvouched: BTreeMap<u64, (IpAddr, CancellationToken)>,
}

#[derive(Debug, Default)]
struct Peer {
    open: usize,
    closing: usize,
    /// This peer's entries of [`State::unvouched`].
    unvouched: BTreeSet<u64>,
}

/// Why a connection was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refusal {
    /// Its peer address holds its cap of connections, each with the token.
    PeerFull,
    /// The gateway holds its cap of connections, each with the token, or
    /// too many are still closing.
    TableFull,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Refusal::PeerFull => "this address holds its most connections, each with the token",
            Refusal::TableFull => "the gateway holds its most connections, each with the token",
        })
    }
}

/// A connection let in.
#[derive(Debug)]
pub(super) struct Admitted {
    /// Its place; dropping it gives the place back.
    pub(super) slot: ConnectionSlot,
    /// For its requests and its task.
    pub(super) handle: ConnectionHandle,
    /// True when another connection was chosen to make room for it.
    pub(super) made_room: bool,
}

impl ConnectionTable {
    /// An empty table with these caps.
    pub(super) fn new(caps: Caps) -> Arc<ConnectionTable> {
        Arc::new(ConnectionTable { caps, state: Mutex::new(State::default()) })
    }

    /// The caps it enforces.
    pub(super) fn caps(&self) -> Caps {
        self.caps
    }

    /// A place for a connection from `peer`, making room when a cap is
    /// reached; refused when no connection without the token is left to
    /// make room.
    pub(super) fn admit(self: &Arc<Self>, peer: IpAddr) -> Result<Admitted, Refusal> {
        let mut state = self.lock();
        if state.closing >= MAX_CLOSING {
            return Err(Refusal::TableFull);
        }
        let mut made_room = false;
        let peer_held = state.peers.get(&peer).map_or(0, |held| held.open - held.closing);
        if peer_held >= self.caps.per_peer {
            let oldest = state.peers.get(&peer).and_then(|held| held.unvouched.first().copied());
            let Some(oldest) = oldest else { return Err(Refusal::PeerFull) };
            state.evict(oldest);
            made_room = true;
        }
        if state.open - state.closing >= self.caps.total {
            let Some(&oldest) = state.unvouched.keys().next() else { return Err(Refusal::TableFull) };
            state.evict(oldest);
            made_room = true;
        }
        let serial = state.next_serial;
        state.next_serial += 1;
        state.open += 1;
        let held = state.peers.entry(peer).or_default();
        held.open += 1;
        held.unvouched.insert(serial);
        let evicted = CancellationToken::new();
        state.unvouched.insert(serial, (peer, evicted.clone()));
        let slot = ConnectionSlot { table: Arc::clone(self), serial, peer, evicted: evicted.clone() };
        let handle = ConnectionHandle { table: Arc::clone(self), serial, evicted };
        Ok(Admitted { slot, handle, made_room })
    }

    /// How many connections it holds, the closing ones too.
    #[cfg(test)]
    fn open(&self) -> usize {
        self.lock().open
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding the lock; a poisoned one is still consistent.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn vouch(&self, serial: u64) {
        let mut state = self.lock();
        if let Some((peer, _)) = state.unvouched.remove(&serial) {
            if let Some(held) = state.peers.get_mut(&peer) {
                held.unvouched.remove(&serial);
            }
        }
    }

    fn release(&self, serial: u64, peer: IpAddr, evicted: bool) {
        let mut state = self.lock();
        state.unvouched.remove(&serial);
        state.open -= 1;
        if evicted {
            state.closing -= 1;
        }
        if let Some(held) = state.peers.get_mut(&peer) {
            held.open -= 1;
            if evicted {
                held.closing -= 1;
            }
            held.unvouched.remove(&serial);
            if held.open == 0 {
                state.peers.remove(&peer);
            }
        }
    }
}

impl State {
    /// Chooses connection `serial` (one without the token) to make room:
    /// its task closes it, and it counts as gone from now on.
    fn evict(&mut self, serial: u64) {
        let Some((peer, evicted)) = self.unvouched.remove(&serial) else { return };
        if let Some(held) = self.peers.get_mut(&peer) {
            held.unvouched.remove(&serial);
            held.closing += 1;
        }
        self.closing += 1;
        evicted.cancel();
    }
}

/// One connection's place in the table, given back on drop.
#[derive(Debug)]
pub(super) struct ConnectionSlot {
    table: Arc<ConnectionTable>,
    serial: u64,
    peer: IpAddr,
    evicted: CancellationToken,
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        // Only eviction cancels the token, and it does so under the lock.
        self.table.release(self.serial, self.peer, self.evicted.is_cancelled());
    }
}

/// What a connection's requests and task know of its place.
#[derive(Debug, Clone)]
pub(super) struct ConnectionHandle {
    table: Arc<ConnectionTable>,
    serial: u64,
    evicted: CancellationToken,
}

impl ConnectionHandle {
    /// Marks the connection as one that showed the token: it is never
    /// closed to make room.
    pub(super) fn vouch(&self) {
        self.table.vouch(self.serial);
    }

    /// Completes when the connection has been chosen to make room.
    pub(super) fn evicted(&self) -> WaitForCancellationFutureOwned {
        self.evicted.clone().cancelled_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn address(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    fn table(total: usize, per_peer: usize) -> Arc<ConnectionTable> {
        ConnectionTable::new(Caps { total, per_peer })
    }

    #[test]
    fn within_the_caps_everyone_is_admitted_and_places_come_back() {
        let table = table(4, 2);
        let first = table.admit(address(1)).unwrap();
        let second = table.admit(address(2)).unwrap();
        assert!(!first.made_room && !second.made_room);
        assert_eq!(table.open(), 2);
        drop(first);
        drop(second);
        assert_eq!(table.open(), 0);
        assert!(table.lock().peers.is_empty(), "no peer kept once its connections are gone");
        assert!(table.lock().unvouched.is_empty());
    }

    #[test]
    fn at_the_peer_cap_the_peers_oldest_without_the_token_makes_room() {
        let table = table(10, 2);
        let oldest = table.admit(address(1)).unwrap();
        let vouched = table.admit(address(1)).unwrap();
        let elsewhere = table.admit(address(2)).unwrap();
        // The vouched connection is older than what follows; the oldest
        // without the token goes, and no other peer's connection.
        vouched.handle.vouch();
        let newest = table.admit(address(1)).unwrap();
        assert!(newest.made_room);
        assert!(oldest.handle.evicted.is_cancelled());
        assert!(!vouched.handle.evicted.is_cancelled());
        assert!(!elsewhere.handle.evicted.is_cancelled());
        // Until its socket is dropped, the evicted connection is counted as
        // closing, not as held: the next admission picks another.
        assert_eq!(table.open(), 4);
        let next = table.admit(address(1)).unwrap();
        assert!(newest.handle.evicted.is_cancelled());
        drop(oldest);
        drop(newest);
        assert_eq!(table.open(), 3);
        assert_eq!(table.lock().closing, 0);
        drop((vouched, elsewhere, next));
        assert_eq!(table.open(), 0);
    }

    #[test]
    fn at_the_total_cap_the_oldest_without_the_token_makes_room() {
        let table = table(3, 3);
        let a = table.admit(address(1)).unwrap();
        let b = table.admit(address(2)).unwrap();
        let c = table.admit(address(3)).unwrap();
        a.handle.vouch();
        let d = table.admit(address(4)).unwrap();
        assert!(d.made_room);
        assert!(b.handle.evicted.is_cancelled(), "the oldest without the token");
        assert!(!a.handle.evicted.is_cancelled() && !c.handle.evicted.is_cancelled());
        drop((a, b, c, d));
        assert_eq!(table.open(), 0);
    }

    #[test]
    fn when_every_place_has_the_token_a_new_connection_is_refused() {
        let table = table(3, 2);
        let held: Vec<Admitted> = (0..2).map(|_| table.admit(address(1)).unwrap()).collect();
        held.iter().for_each(|admitted| admitted.handle.vouch());
        assert_eq!(table.admit(address(1)).unwrap_err(), Refusal::PeerFull);
        let other = table.admit(address(2)).unwrap();
        other.handle.vouch();
        assert_eq!(table.admit(address(3)).unwrap_err(), Refusal::TableFull);
        assert_eq!(table.open(), 3, "a refusal takes no place");
        drop(held);
        assert!(table.admit(address(1)).is_ok());
    }

    #[test]
    fn too_many_closing_connections_refuse_new_ones() {
        let table = table(1, 1);
        let mut evicted = Vec::new();
        let mut current = table.admit(address(1)).unwrap();
        for _ in 0..MAX_CLOSING {
            let next = table.admit(address(1)).unwrap();
            evicted.push(std::mem::replace(&mut current, next));
        }
        assert_eq!(table.admit(address(1)).unwrap_err(), Refusal::TableFull);
        drop(evicted);
        assert!(table.admit(address(1)).is_ok(), "room once the evicted have closed");
    }

    #[test]
    fn a_vouched_or_dropped_connection_is_never_evicted_later() {
        let table = table(1, 1);
        let first = table.admit(address(1)).unwrap();
        let handle = first.handle.clone();
        drop(first);
        handle.vouch(); // after its drop: nothing to do
        let second = table.admit(address(1)).unwrap();
        assert!(!second.made_room);
        assert!(!handle.evicted.is_cancelled());
    }
}
