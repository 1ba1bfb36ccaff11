//! The JSON Schema of the JSON encoding, derived from the wire types
//! themselves: every type carries `schemars::JsonSchema` beside its serde
//! derives, and schemars reads the same serde attributes (tagging, renames,
//! defaults) that decide what serde writes and accepts.
//!
//! The schema is committed as `docs/protocol.schema.json`; a test fails
//! when that file is not what [`protocol_schema`] makes, and
//! `cargo run -p panehost-ipc --example protocol_schema` writes it anew.

use crate::handshake::{HandshakeReply, Hello, PROTOCOL_REVISION, PROTOCOL_VERSION};
use crate::request::RequestFrame;
use crate::response::ServerMessage;
use schemars::generate::SchemaSettings;
use serde_json::{json, Value};

/// The committed schema's path, relative to the repository's root.
pub const SCHEMA_PATH: &str = "docs/protocol.schema.json";

/// The JSON Schema (draft 2020-12) of the four messages that cross the
/// socket in JSON: [`Hello`], [`HandshakeReply`], [`RequestFrame`] and
/// [`ServerMessage`]. The root accepts any of them; each, and every type
/// they reach, is also named under `$defs` (`#/$defs/RequestFrame`, ...),
/// to validate one message kind alone.
///
/// It describes what the decoder accepts: a field with a default may be
/// left out, an optional one may also be `null`. The host writes every
/// field.
pub fn protocol_schema() -> Value {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    let messages = [
        generator.subschema_for::<Hello>(),
        generator.subschema_for::<HandshakeReply>(),
        generator.subschema_for::<RequestFrame>(),
        generator.subschema_for::<ServerMessage>(),
    ];
    let definitions = generator.take_definitions(true);
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": format!("panehost protocol {PROTOCOL_VERSION}, revision {PROTOCOL_REVISION}: the JSON encoding"),
        "description": "A message of the panehost protocol in its JSON encoding (docs/PROTOCOL.md, sections 3 to 7): \
            a Hello or a HandshakeReply during the handshake, then RequestFrame (client to host) and ServerMessage \
            (host to client). Generated from the wire types of the panehost-ipc crate; do not edit.",
        "anyOf": messages,
        "$defs": definitions,
    })
}

/// [`protocol_schema`] as the committed file holds it: pretty-printed, with
/// a final newline.
pub fn protocol_schema_text() -> String {
    let mut text = serde_json::to_string_pretty(&protocol_schema()).expect("a JSON value always serializes");
    text.push('\n');
    text
}
