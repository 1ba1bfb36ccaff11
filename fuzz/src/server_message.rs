//! A frame from the host, as a client decodes it (a fake or corrupt peer
//! must not crash a client either): never a panic, never an allocation
//! beyond the frame's limit, and what decodes round-trips.

use panehost_ipc::{decode, encode, ServerMessage};

/// The first byte picks the encoding; the rest is the frame's payload.
pub fn server_message(data: &[u8]) {
    let Some((encoding, payload)) = super::encoding_and_rest(data) else { return };
    if let Ok(message) = decode::<ServerMessage>(encoding, payload) {
        let again = encode(encoding, &message).expect("a decoded message encodes");
        assert_eq!(decode::<ServerMessage>(encoding, &again).expect("what was encoded decodes"), message);
    }
}
