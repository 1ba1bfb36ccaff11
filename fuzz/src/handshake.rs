//! The first frame of a connection (always JSON): the host reads a hello,
//! a client reads the host's reply. Neither panics.

use panehost_ipc::{HandshakeReply, Hello};

/// The bytes are the frame's payload.
pub fn handshake(data: &[u8]) {
    if data.len() > panehost_ipc::MAX_HANDSHAKE_FRAME_LEN {
        return;
    }
    if let Ok(hello) = serde_json::from_slice::<Hello>(data) {
        let again = serde_json::to_vec(&hello).expect("a hello encodes");
        assert_eq!(serde_json::from_slice::<Hello>(&again).expect("and decodes"), hello);
    }
    let _ = serde_json::from_slice::<HandshakeReply>(data);
}
