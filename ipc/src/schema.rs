//! The JSON Schema of the JSON encoding, derived from the wire types
//! themselves: every type carries `schemars::JsonSchema` beside its serde
//! derives, and schemars reads the same serde attributes (tagging, renames,
//! defaults) that decide what serde writes and accepts.
//!
//! The schema is committed as `docs/protocol.schema.json`; a test fails
//! when that file is not what [`protocol_schema`] makes, and
//! `cargo run -p panehost-ipc --example protocol_schema` writes it anew.

use crate::event::STREAMS;
use crate::handshake::{HandshakeReply, Hello, PROTOCOL_REVISION, PROTOCOL_VERSION};
use crate::request::{RequestFrame, ANSWERS};
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
///
/// Beyond what serde's attributes say, it carries:
///
/// - every open vocabulary ([`crate::vocabulary`]) as a named definition
///   marked `"x-open-vocabulary": true`, listing its known values and
///   accepting any other string;
/// - on each variant of `Request`, `"x-answer"`: the `Response` variant
///   that answers it ([`ANSWERS`]); on each variant of `Event`,
///   `"x-streams"`: the subscriptions it travels on, `pane` and/or
///   `watch` ([`STREAMS`]);
/// - beside every integer's `format` (`uint8` to `uint64`, which standard
///   validators may ignore as unknown formats), its `minimum` and
///   `maximum`, so a validator that knows no such format still checks
///   the range.
pub fn protocol_schema() -> Value {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    let messages = [
        generator.subschema_for::<Hello>(),
        generator.subschema_for::<HandshakeReply>(),
        generator.subschema_for::<RequestFrame>(),
        generator.subschema_for::<ServerMessage>(),
    ];
    let mut definitions = Value::Object(generator.take_definitions(true));
    annotate_variants(&mut definitions, "Request", "x-answer", |name| {
        ANSWERS.iter().find(|(request, _)| *request == name).map(|(_, answer)| json!(answer))
    });
    annotate_variants(&mut definitions, "Event", "x-streams", |name| {
        STREAMS.iter().find(|(event, _)| *event == name).map(|(_, streams)| json!(streams))
    });
    bound_integer_formats(&mut definitions);
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

/// Adds `keyword` to each variant of the externally tagged enum
/// `definition`, with the value `value_of` gives for the variant's name.
///
/// # Panics
/// When a variant has no value: the tables of this crate must name every
/// variant (a test of theirs checks the order too).
fn annotate_variants(
    definitions: &mut Value,
    definition: &str,
    keyword: &str,
    value_of: impl Fn(&str) -> Option<Value>,
) {
    let variants = definitions[definition]["oneOf"].as_array_mut().expect("an externally tagged enum is a oneOf");
    for variant in variants {
        let name = match variant["const"].as_str() {
            Some(name) => name.to_owned(),
            None => variant["required"][0].as_str().expect("an object variant names its key").to_owned(),
        };
        let value = value_of(&name).unwrap_or_else(|| panic!("no {keyword} for the {definition} variant {name}"));
        variant.as_object_mut().expect("a variant is a schema object").insert(keyword.to_owned(), value);
    }
}

/// The largest value of each integer format schemars names.
const FORMAT_MAXIMA: [(&str, u64); 4] =
    [("uint8", u8::MAX as u64), ("uint16", u16::MAX as u64), ("uint32", u32::MAX as u64), ("uint64", u64::MAX)];

/// Gives every schema with an integer `format` its `maximum` (schemars
/// writes one for `uint8` and `uint16` only), so that a validator that
/// ignores the format still checks the range.
fn bound_integer_formats(value: &mut Value) {
    match value {
        Value::Object(object) => {
            let maximum = object
                .get("format")
                .and_then(Value::as_str)
                .and_then(|format| FORMAT_MAXIMA.iter().find(|(name, _)| *name == format))
                .map(|(_, maximum)| *maximum);
            if let Some(maximum) = maximum {
                object.entry("minimum").or_insert(json!(0));
                object.entry("maximum").or_insert(json!(maximum));
            }
            object.values_mut().for_each(bound_integer_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(bound_integer_formats),
        _ => {}
    }
}

/// [`protocol_schema`] as the committed file holds it: pretty-printed, with
/// a final newline.
pub fn protocol_schema_text() -> String {
    let mut text = serde_json::to_string_pretty(&protocol_schema()).expect("a JSON value always serializes");
    text.push('\n');
    text
}
