//! Lengths written inside a payload are bounded by the frame limit before
//! anything is allocated: a frame of a few bytes that claims a string of
//! 2^62 bytes is a malformed frame, not an allocation.

use panehost_ipc::{decode, decode_request, Encoding, ServerMessage, MAX_CLIENT_FRAME_LEN};

/// A `start` (variant 0) whose `runtime` string claims 2^62 bytes: id 1,
/// variant 0, then the varint `fd` + 8 bytes little-endian.
const HUGE_RUNTIME: [u8; 11] = [0x01, 0x00, 0xfd, 0, 0, 0, 0, 0, 0, 0, 0x40];

/// A `send` (variant 1) to pane "p" whose text claims 2^40 bytes.
const HUGE_SEND: [u8; 14] = [0x01, 0x01, 0x01, b'p', 0xfd, 0, 0, 0, 0, 0, 0x01, 0, 0, 0];

#[test]
fn a_request_claiming_a_huge_string_is_malformed_not_allocated() {
    for payload in [&HUGE_RUNTIME[..], &HUGE_SEND[..]] {
        let err = decode_request(Encoding::Bincode, payload).unwrap_err();
        assert_eq!(err.id, Some(1), "the id is still read");
        assert!(err.to_string().contains("bincode"), "{err}");
    }
}

#[test]
fn a_length_just_over_the_client_limit_is_refused_and_one_within_it_needs_its_bytes() {
    // id 1, send, pane "p", text of MAX_CLIENT_FRAME_LEN + 1 bytes claimed.
    let mut over = vec![0x01, 0x01, 0x01, b'p', 0xfc];
    over.extend_from_slice(&(MAX_CLIENT_FRAME_LEN as u32 + 1).to_le_bytes());
    assert!(decode_request(Encoding::Bincode, &over).is_err());
    // A claim within the limit with the bytes missing is an ordinary
    // malformed frame.
    let mut short = vec![0x01, 0x01, 0x01, b'p', 0x10];
    short.extend_from_slice(b"abc");
    assert!(decode_request(Encoding::Bincode, &short).is_err());
}

#[test]
fn a_server_message_claiming_a_huge_list_is_malformed_not_allocated() {
    // response (0), id 1, panes (7), a list that claims 2^62 entries.
    let payload = [0x00, 0x01, 0x07, 0xfd, 0, 0, 0, 0, 0, 0, 0, 0x40];
    assert!(decode::<ServerMessage>(Encoding::Bincode, &payload).is_err());
    // output event: event (2), subscription 1, output (0), offset 0, data of 2^62 bytes.
    let payload = [0x02, 0x01, 0x00, 0x00, 0xfd, 0, 0, 0, 0, 0, 0, 0x40];
    assert!(decode::<ServerMessage>(Encoding::Bincode, &payload).is_err());
}
