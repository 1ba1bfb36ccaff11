//! Raw bytes that travel well in both encodings.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde::de::{Error as _, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A byte string: PTY output or input.
///
/// In bincode it is a length-prefixed byte sequence. In JSON it is a string
/// holding the bytes in standard base64 (RFC 4648, with padding), because
/// terminal output is not always valid UTF-8 and may be split anywhere.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ByteBuf(pub Vec<u8>);

impl ByteBuf {
    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.0
    }

    /// Takes the bytes out.
    pub fn into_vec(self) -> Vec<u8> {
        self.0
    }

    /// Number of bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there are no bytes.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for ByteBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ByteBuf({:?})", String::from_utf8_lossy(&self.0))
    }
}

impl From<Vec<u8>> for ByteBuf {
    fn from(bytes: Vec<u8>) -> Self {
        ByteBuf(bytes)
    }
}

impl From<&[u8]> for ByteBuf {
    fn from(bytes: &[u8]) -> Self {
        ByteBuf(bytes.to_vec())
    }
}

impl From<&str> for ByteBuf {
    fn from(text: &str) -> Self {
        ByteBuf(text.as_bytes().to_vec())
    }
}

impl Serialize for ByteBuf {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            serializer.serialize_str(&STANDARD.encode(&self.0))
        } else {
            serializer.serialize_bytes(&self.0)
        }
    }
}

impl<'de> Deserialize<'de> for ByteBuf {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if deserializer.is_human_readable() {
            let text = String::deserialize(deserializer)?;
            STANDARD
                .decode(text.as_bytes())
                .map(ByteBuf)
                .map_err(|err| D::Error::custom(format!("invalid base64: {err}")))
        } else {
            deserializer.deserialize_byte_buf(ByteBufVisitor)
        }
    }
}

/// In JSON a byte string is a string of standard base64 with its padding,
/// the only form its `Deserialize` accepts.
impl schemars::JsonSchema for ByteBuf {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ByteBuf".into()
    }

    fn json_schema(_generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "Bytes as standard base64 (RFC 4648, with `=` padding).",
            "type": "string",
            "contentEncoding": "base64",
            // Whole groups of four, then a last group with its padding
            // whose unused bits are zero (the decoder refuses others).
            "pattern": "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?$",
        })
    }
}

struct ByteBufVisitor;

impl<'de> Visitor<'de> for ByteBufVisitor {
    type Value = ByteBuf;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a byte string")
    }

    fn visit_bytes<E: serde::de::Error>(self, bytes: &[u8]) -> Result<ByteBuf, E> {
        Ok(ByteBuf(bytes.to_vec()))
    }

    fn visit_byte_buf<E: serde::de::Error>(self, bytes: Vec<u8>) -> Result<ByteBuf, E> {
        Ok(ByteBuf(bytes))
    }
}
