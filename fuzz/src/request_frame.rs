//! A client's request frame, in either encoding: the host decodes it with
//! no allocation beyond the frame's limit, never panics, and a frame that
//! decodes encodes back to a frame that decodes to the same request.

use panehost_ipc::{decode_request, encode};

/// The first byte picks the encoding; the rest is the frame's payload.
pub fn request_frame(data: &[u8]) {
    let Some((encoding, payload)) = super::encoding_and_rest(data) else { return };
    if payload.len() > panehost_ipc::MAX_CLIENT_FRAME_LEN {
        return;
    }
    match decode_request(encoding, payload) {
        Ok(frame) => {
            let again = encode(encoding, &frame).expect("a decoded request encodes");
            assert_eq!(decode_request(encoding, &again).expect("what was encoded decodes"), frame);
        }
        Err(error) => {
            // The message is what the host sends back: it must be writable.
            let _ = error.to_string();
        }
    }
}
