//! The gateway's bounds on its clients: how long a request's head may take,
//! how long a connection may idle, and how many connections it holds.
//!
//! Whoever can reach the port can open connections, the token or not, so
//! every connection costs a descriptor before anyone knows who it is. The
//! bounds keep a client that sends half a request, or a thousand of them,
//! from locking out the token holder: a head must arrive within
//! [`HEADER_READ_TIMEOUT`], and when a cap is reached the oldest connection
//! that has not shown the token is closed to make room (see
//! [`super::connection_table`]).

use std::time::Duration;

/// How long a connection waiting for a request's head may take to send it
/// whole: a new connection, or a kept-alive one after its last answer (so
/// this is the keep-alive timeout too). Then it is closed. The page sends
/// each request at once.
pub(super) const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a connection may move no byte, either way, while its request
/// is answered (a client that stopped reading its answer, or stopped
/// sending a body) before it is closed. Longer than the longest silent
/// wait of an answer: `/api/panes` tries a lost host for 10 seconds, twice.
/// WebSockets are exempt: an attached terminal may be quiet for hours, and
/// the bridge pings it. `/api/watch` is not: it sends an empty line every
/// [`super::watch_relay::HEARTBEAT`].
pub(super) const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// Largest request head (the request line and the headers) a connection
/// may send, in bytes: the most the gateway buffers of one connection's
/// input. A browser's heads are a few KiB; 32 KiB is what common servers
/// allow. A longer head is answered `431 Request Header Fields Too Large`
/// and the connection closed. With [`MAX_CONNECTIONS`], it bounds what all
/// the heads being read can take: 128 MiB.
pub(super) const MAX_REQUEST_HEAD: usize = 32 * 1024;

/// Most connections the gateway holds at once (fewer when the descriptor
/// limit is lower, see [`Caps::for_descriptor_limit`]).
pub(super) const MAX_CONNECTIONS: usize = 4096;

/// Most connections one peer address holds at once. A browser uses a few
/// for the page and one per open terminal. Every local process shares the
/// loopback address: what keeps one of them from locking out the others
/// is that, at the cap, the peer's oldest connection without the token is
/// closed for the new one.
pub(super) const MAX_CONNECTIONS_PER_PEER: usize = 256;

/// The fewest connections the gateway holds, however low the descriptor
/// limit: the page needs a few.
pub(super) const MIN_CONNECTIONS: usize = 8;

/// Descriptors kept for everything but client connections: the runtime,
/// standard streams, the shared host connection, the page's files, and
/// connections being closed to make room.
pub(super) const RESERVED_DESCRIPTORS: u64 = 256;

/// Descriptors one connection may cost: its socket, and for a WebSocket
/// the host connection of its subscription and that of an interrupt.
pub(super) const DESCRIPTORS_PER_CONNECTION: u64 = 3;

/// Evicted connections that may still be closing (their descriptors not
/// yet freed) before a new connection is refused rather than admitted.
pub(super) const MAX_CLOSING: usize = 64;

/// Connections the kernel queues for the gateway before it accepts them
/// (the kernel caps it at `net.core.somaxconn`). Beyond it a client's
/// connection attempt is dropped and retried a second later: a burst of
/// connections must not delay the token holder's by seconds. The usual 128
/// is overrun by a few hundred connections at once.
pub(super) const LISTEN_BACKLOG: u32 = 1024;

/// Pause after a failed `accept` (out of descriptors, say) before the
/// next, so that a failing accept does not spin.
pub(super) const ACCEPT_ERROR_PAUSE: Duration = Duration::from_millis(100);

/// The caps in force for one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Caps {
    /// Connections held at once.
    pub(super) total: usize,
    /// Connections held at once from one peer address.
    pub(super) per_peer: usize,
}

impl Caps {
    /// The caps that fit a soft descriptor limit of `limit` (`None`:
    /// unlimited): [`MAX_CONNECTIONS`] and [`MAX_CONNECTIONS_PER_PEER`],
    /// lowered so that every connection at its dearest, with
    /// [`RESERVED_DESCRIPTORS`] besides, stays below the limit.
    pub(super) fn for_descriptor_limit(limit: Option<u64>) -> Caps {
        let affordable = match limit {
            None => MAX_CONNECTIONS,
            Some(limit) => {
                let connections = limit.saturating_sub(RESERVED_DESCRIPTORS) / DESCRIPTORS_PER_CONNECTION;
                usize::try_from(connections).unwrap_or(usize::MAX)
            }
        };
        let total = affordable.clamp(MIN_CONNECTIONS, MAX_CONNECTIONS);
        Caps { total, per_peer: MAX_CONNECTIONS_PER_PEER.min(total) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_fit_the_descriptor_limit() {
        let unlimited = Caps::for_descriptor_limit(None);
        assert_eq!(unlimited, Caps { total: MAX_CONNECTIONS, per_peer: MAX_CONNECTIONS_PER_PEER });
        assert_eq!(Caps::for_descriptor_limit(Some(1 << 20)), unlimited);
        // The usual soft limit: (1024 - 256) / 3.
        assert_eq!(Caps::for_descriptor_limit(Some(1024)), Caps { total: 256, per_peer: 256 });
        let tight = Caps::for_descriptor_limit(Some(400));
        assert_eq!(tight, Caps { total: 48, per_peer: 48 });
        assert!(tight.total as u64 * DESCRIPTORS_PER_CONNECTION + RESERVED_DESCRIPTORS <= 400);
        // Below what the reserve needs: the page still gets a few.
        assert_eq!(Caps::for_descriptor_limit(Some(10)), Caps { total: MIN_CONNECTIONS, per_peer: MIN_CONNECTIONS });
    }
}
