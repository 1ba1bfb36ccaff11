//! Frame layout and size limits.
//!
//! ```text
//! +----------------------+---------------------------+
//! | length: u32, big end | payload: `length` bytes   |
//! +----------------------+---------------------------+
//! ```
//!
//! The length counts the payload only. Each direction has its own maximum;
//! a frame that claims more is refused before its payload is read, so a
//! peer can never make the other side allocate what a prefix merely claims
//! beyond that maximum.

use tokio_util::codec::LengthDelimitedCodec;

/// Largest frame the host accepts before the handshake has completed (the
/// `Hello` frame is small).
pub const MAX_HANDSHAKE_FRAME_LEN: usize = 4 * 1024;

/// Largest frame a client may send to the host (1 MiB). Input larger than
/// this is sent as several `send` requests.
pub const MAX_CLIENT_FRAME_LEN: usize = 1024 * 1024;

/// Largest frame the host sends to a client (16 MiB): big enough for a
/// screen snapshot with formatted contents at any supported size.
pub const MAX_SERVER_FRAME_LEN: usize = 16 * 1024 * 1024;

/// Builders for the codecs each side of a connection uses.
#[derive(Debug, Clone, Copy)]
pub struct FrameCodecs;

impl FrameCodecs {
    /// A codec that frames with a 4-byte big-endian length and refuses
    /// frames over `max_frame_len` bytes.
    pub fn with_max(max_frame_len: usize) -> LengthDelimitedCodec {
        LengthDelimitedCodec::builder().length_field_length(4).big_endian().max_frame_length(max_frame_len).new_codec()
    }

    /// The codec a client uses on its socket: it writes requests and reads
    /// host frames up to [`MAX_SERVER_FRAME_LEN`].
    pub fn client() -> LengthDelimitedCodec {
        Self::with_max(MAX_SERVER_FRAME_LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::{BufMut, Bytes, BytesMut};
    use tokio_util::codec::{Decoder, Encoder};

    #[test]
    fn golden_frame_layout() {
        let mut codec = FrameCodecs::with_max(16);
        let mut out = BytesMut::new();
        codec.encode(Bytes::from_static(b"abc"), &mut out).unwrap();
        assert_eq!(&out[..], &[0, 0, 0, 3, b'a', b'b', b'c']);
    }

    #[test]
    fn frame_split_across_reads_is_reassembled() {
        let mut codec = FrameCodecs::with_max(16);
        let mut buf = BytesMut::new();
        buf.put_slice(&[0, 0]);
        assert!(codec.decode(&mut buf).unwrap().is_none());
        buf.put_slice(&[0, 4, b'w', b'x']);
        assert!(codec.decode(&mut buf).unwrap().is_none());
        buf.put_slice(b"yz");
        assert_eq!(&codec.decode(&mut buf).unwrap().unwrap()[..], b"wxyz");
    }

    #[test]
    fn oversized_length_prefix_is_refused_before_payload() {
        let mut codec = FrameCodecs::with_max(16);
        let mut buf = BytesMut::new();
        buf.put_u32(u32::MAX);
        let err = codec.decode(&mut buf).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
        assert!(buf.capacity() < 1024, "must not reserve what the prefix claims");
    }
}
