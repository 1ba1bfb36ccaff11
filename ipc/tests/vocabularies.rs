//! The schema's open vocabularies, answers and streams are this crate's
//! constant lists: each vocabulary a `$defs` entry of the shared shape with
//! exactly the values of its list, each string field of a vocabulary
//! referring to it, every request variant with its answer and every event
//! variant with its streams, in the enums' order; and every integer bounded
//! for a validator that ignores the `uint*` formats.

use panehost_ipc::event::{stream, STREAMS};
use panehost_ipc::request::ANSWERS;
use panehost_ipc::schema::protocol_schema;
use panehost_ipc::{limitation, vocabulary, ErrorCode, Event, Request, Response};
use serde_json::{json, Value};
use support::variant_names;

mod support;

#[test]
fn every_vocabulary_is_a_definition_of_the_shared_shape_with_its_values() {
    let schema = protocol_schema();
    for vocabulary in vocabulary::ALL {
        let definition = &schema["$defs"][vocabulary.name];
        assert_eq!(
            definition,
            &json!({
                "description": vocabulary.description,
                "x-open-vocabulary": true,
                "anyOf": [
                    { "type": "string", "enum": vocabulary.values },
                    { "type": "string" },
                ],
            }),
            "$defs/{}",
            vocabulary.name
        );
    }
    let marked: Vec<&str> = schema["$defs"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, definition)| definition.get("x-open-vocabulary").is_some())
        .map(|(name, _)| name.as_str())
        .collect();
    let mut listed: Vec<&str> = vocabulary::ALL.iter().map(|vocabulary| vocabulary.name).collect();
    listed.sort_unstable();
    assert_eq!(marked, listed, "the schema's open vocabularies and vocabulary::ALL");
}

#[test]
fn the_vocabularies_are_the_constants_the_host_sends() {
    let names: Vec<&str> = ErrorCode::ALL.iter().map(|code| code.as_str()).collect();
    assert_eq!(vocabulary::by_name("ErrorCode").unwrap().values, names.as_slice());
    assert_eq!(vocabulary::by_name("LimitationCode").unwrap().values, limitation::ALL);
    for (name, values) in [
        ("Activity", panehost_ipc::turn::activity::ALL),
        ("CompletionSource", panehost_ipc::turn::completion::ALL),
        ("TurnSource", panehost_ipc::turn::source::ALL),
        ("UsageKind", panehost_ipc::turn::usage_kind::ALL),
        ("RestoredBy", panehost_ipc::pane::restored_by::ALL),
        ("EndReason", panehost_ipc::event::end_reason::ALL),
        ("ReleaseReason", panehost_ipc::terminal::release_reason::ALL),
        ("Readiness", panehost_ipc::runtime::readiness::ALL),
        ("ReadinessGate", panehost_ipc::runtime::readiness_gate::ALL),
        ("SignIn", panehost_ipc::runtime::sign_in::ALL),
        ("LoginForm", panehost_ipc::runtime::login_form::ALL),
        ("Evidence", panehost_ipc::runtime::evidence::ALL),
        ("FloorStatus", panehost_ipc::runtime::floor_status::ALL),
        ("ResumeMode", panehost_ipc::runtime::resume_mode::ALL),
        ("PermissionProfile", panehost_ipc::runtime::permission_profile::ALL),
        ("InterruptOutcome", panehost_ipc::response::interrupt_outcome::ALL),
        ("InterruptAction", panehost_ipc::response::interrupt_action::ALL),
        ("SweepMethod", panehost_ipc::response::sweep_method::ALL),
        ("NotifyEvent", panehost_ipc::request::notify_event::ALL),
    ] {
        assert_eq!(vocabulary::by_name(name).map(|v| v.values), Some(values), "{name}");
    }
    assert_eq!(vocabulary::ALL.len(), 21, "a vocabulary added here is checked above too");
    // What the crate itself writes is in its vocabulary.
    assert!(vocabulary::by_name("UsageKind").unwrap().knows(&panehost_ipc::Usage::unavailable().kind));
}

/// Every string field whose name marks it as one of a vocabulary refers to
/// that vocabulary wherever it appears in the schema.
#[test]
fn the_fields_of_a_vocabulary_refer_to_it() {
    let schema = protocol_schema();
    let fields = [
        ("ErrorBody", "code", "ErrorCode"),
        ("ErrorBody", "limitation", "LimitationCode"),
        ("PaneSummary", "activity", "Activity"),
        ("PaneSummary", "completion", "CompletionSource"),
        ("PaneSummary", "restored_by", "RestoredBy"),
        ("RuntimeInfo", "completion", "CompletionSource"),
        ("RuntimeInfo", "limitations", "LimitationCode"),
        ("RuntimeInfo", "readiness", "Readiness"),
        ("RuntimeInfo", "readiness_gate", "ReadinessGate"),
        ("RuntimeInfo", "sign_in", "SignIn"),
        ("RuntimeInfo", "login", "LoginForm"),
        ("RuntimeInfo", "evidence", "Evidence"),
        ("RuntimeInfo", "floor_status", "FloorStatus"),
        ("RuntimeInfo", "resume_modes", "ResumeMode"),
        ("RuntimeInfo", "permission_profiles", "PermissionProfile"),
        ("StartParams", "permission_profile", "PermissionProfile"),
        ("TurnReport", "source", "TurnSource"),
        ("Usage", "kind", "UsageKind"),
        ("TerminalRelease", "reason", "ReleaseReason"),
        ("InterruptReport", "outcome", "InterruptOutcome"),
        ("InterruptStep", "action", "InterruptAction"),
        ("PaneSweep", "method", "SweepMethod"),
    ];
    for (definition, field, vocabulary) in fields {
        let property = &schema["$defs"][definition]["properties"][field];
        let text = property.to_string();
        assert!(
            text.contains(&format!("\"#/$defs/{vocabulary}\"")),
            "{definition}.{field} does not refer to {vocabulary}: {property}"
        );
    }
    // The fields inside enum variants: every `source` of an event, `ended`'s
    // reason, `pane_activity`'s activity, a refusal's code, notify's event.
    let text = |definition: &str| schema["$defs"][definition].to_string();
    assert_eq!(text("Event").matches("\"#/$defs/TurnSource\"").count(), 4, "the four turn events' source");
    assert_eq!(text("Event").matches("\"#/$defs/EndReason\"").count(), 1);
    assert_eq!(text("Event").matches("\"#/$defs/Activity\"").count(), 1);
    assert_eq!(text("HandshakeReply").matches("\"#/$defs/ErrorCode\"").count(), 1);
    assert_eq!(text("Request").matches("\"#/$defs/NotifyEvent\"").count(), 1);
}

#[test]
fn every_request_names_its_answer_in_order() {
    let requests = variant_names::<Request>();
    let listed: Vec<&str> = ANSWERS.iter().map(|(request, _)| *request).collect();
    assert_eq!(listed, requests, "request::ANSWERS lists every Request variant, in order");
    let responses = variant_names::<Response>();
    for (request, answer) in ANSWERS {
        assert!(responses.contains(answer), "{request} is answered by {answer}, which is no Response variant");
    }
    for response in &responses {
        assert!(ANSWERS.iter().any(|(_, answer)| answer == response), "no request is answered by {response}");
    }
    let schema = protocol_schema();
    let variants = schema["$defs"]["Request"]["oneOf"].as_array().unwrap();
    assert_eq!(variants.len(), ANSWERS.len());
    for variant in variants {
        let name = variant["required"][0].as_str().unwrap();
        let answer = ANSWERS.iter().find(|(request, _)| *request == name).unwrap().1;
        assert_eq!(variant["x-answer"], json!(answer), "{name}'s x-answer");
    }
}

#[test]
fn every_event_names_its_streams_in_order() {
    let events = variant_names::<Event>();
    let listed: Vec<&str> = STREAMS.iter().map(|(event, _)| *event).collect();
    assert_eq!(listed, events, "event::STREAMS lists every Event variant, in order");
    for (event, streams) in STREAMS {
        assert!(!streams.is_empty(), "{event} travels on no stream");
        assert!(streams.iter().all(|s| [stream::PANE, stream::WATCH].contains(s)), "{event}: {streams:?}");
        // The watch's own events are named so; a pane stream's never are.
        assert_eq!(event.starts_with("pane_"), !streams.contains(&stream::PANE), "{event}");
    }
    let schema = protocol_schema();
    for variant in schema["$defs"]["Event"]["oneOf"].as_array().unwrap() {
        let name = variant["required"][0].as_str().unwrap();
        let streams = STREAMS.iter().find(|(event, _)| *event == name).unwrap().1;
        assert_eq!(variant["x-streams"], json!(streams), "{name}'s x-streams");
    }
}

/// Every integer with a `uint*` format also carries `minimum` and the
/// format's `maximum`, so a validator that ignores unknown formats (as
/// the JSON Schema specification lets it) still checks the range.
#[test]
fn every_integer_format_has_its_range() {
    fn check(value: &Value, at: &str, found: &mut usize) {
        match value {
            Value::Object(object) => {
                if let Some(format) = object.get("format").and_then(Value::as_str) {
                    let maximum = match format {
                        "uint8" => u64::from(u8::MAX),
                        "uint16" => u64::from(u16::MAX),
                        "uint32" => u64::from(u32::MAX),
                        "uint64" => u64::MAX,
                        other => panic!("{at}: an unexpected format {other}"),
                    };
                    assert_eq!(object.get("minimum"), Some(&json!(0)), "{at}");
                    assert_eq!(object.get("maximum"), Some(&json!(maximum)), "{at}");
                    *found += 1;
                }
                for (key, inner) in object {
                    check(inner, &format!("{at}/{key}"), found);
                }
            }
            Value::Array(items) => {
                for (index, inner) in items.iter().enumerate() {
                    check(inner, &format!("{at}/{index}"), found);
                }
            }
            _ => {}
        }
    }
    let mut found = 0;
    check(&protocol_schema(), "", &mut found);
    assert!(found > 50, "only {found} integer formats");
}
