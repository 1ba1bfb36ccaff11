//! What the bridge does with one line of input: skip it, forward it to the
//! host as a request frame, or answer it itself with an error in the
//! host's shape.
//!
//! Every line it forwards is a JSON object with one `id` that is a
//! non-negative integer and no key named twice in any object, so that the
//! host answers it with that id and the bridge can tell when every request
//! has been answered. Anything else is answered here:
//!
//! | line | code | id in the answer |
//! |---|---|---|
//! | longer than a frame | `FRAME_TOO_LARGE` | the id the line begins with (`{"id":N,`), else null |
//! | not JSON | `MALFORMED_REQUEST` | likewise |
//! | not an object | `MALFORMED_REQUEST` | null |
//! | a key twice in one object | `MALFORMED_REQUEST` | the id, when it is given once and valid |
//! | no id | `MALFORMED_REQUEST` | null |
//! | an id that is not a non-negative integer | `MALFORMED_REQUEST` | the id's value when it is a whole number (`3.0`), else null |

use super::input_lines::InputLine;
use super::request_shape::{self, IdField, RequestShape};
use panehost_ipc::{ErrorBody, ErrorCode, ServerMessage, MAX_CLIENT_FRAME_LEN};
use serde_json::Value;

/// Longest line read whole: a frame of [`MAX_CLIENT_FRAME_LEN`] bytes with
/// room for whitespace around it (a carriage return, indentation), which
/// is not sent. A longer line is refused without being held.
pub(super) const MAX_LINE_LEN: usize = MAX_CLIENT_FRAME_LEN + 64;

/// Most characters of a refused id quoted in the error's message.
const QUOTED_ID_MAX: usize = 64;

/// What to do with an input line.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum LineAction {
    /// Nothing (a blank line).
    Skip,
    /// Send `payload` to the host; its answer will carry `id`.
    Forward {
        /// The request frame, as the line gave it.
        payload: Vec<u8>,
        /// The request's id.
        id: u64,
    },
    /// Print this line instead of forwarding.
    Answer(String),
}

/// Decides what to do with an input line.
pub(super) fn decide(line: InputLine) -> LineAction {
    let line = match line {
        InputLine::Line(line) => line,
        InputLine::Overlong { length, head } => return too_large(length, &head),
    };
    let trimmed = line.trim_ascii();
    if trimmed.is_empty() {
        return LineAction::Skip;
    }
    if trimmed.len() > MAX_CLIENT_FRAME_LEN {
        return too_large(trimmed.len() as u64, trimmed);
    }
    let shape = match request_shape::read(trimmed) {
        Ok(shape) => shape,
        Err(error) => {
            return malformed(leading_id(trimmed), format!("not JSON: {error}"));
        }
    };
    let (id, duplicate_key) = match shape {
        RequestShape::NotObject => {
            return malformed(None, r#"a request is a JSON object, such as {"id":1,"request":{"list":{}}}"#.into())
        }
        RequestShape::Object { id, duplicate_key } => (id, duplicate_key),
    };
    let id = match id {
        IdField::Once(value) => value,
        IdField::Missing => return malformed(None, "the request has no id".into()),
        IdField::Repeated => return malformed(None, "the key `id` appears more than once".into()),
    };
    if let Some(key) = duplicate_key {
        let message = format!("the key `{}` appears twice in one object; each key may appear once", quote(&key));
        return malformed(id.as_u64(), message);
    }
    let Some(id_number) = id.as_u64() else {
        let message = format!(
            "the id must be a non-negative integer below 2^64 (written without a fraction or an exponent), not {}",
            quote(&id.to_string())
        );
        return malformed(whole_number(&id), message);
    };
    let payload = if trimmed.len() == line.len() { line } else { trimmed.to_vec() };
    LineAction::Forward { payload, id: id_number }
}

fn too_large(length: u64, head: &[u8]) -> LineAction {
    let message = format!("the request is {length} bytes; a frame holds at most {MAX_CLIENT_FRAME_LEN}");
    LineAction::Answer(local_error(leading_id(head), ErrorCode::FrameTooLarge, message))
}

fn malformed(id: Option<u64>, message: String) -> LineAction {
    LineAction::Answer(local_error(id, ErrorCode::MalformedRequest, message))
}

/// An error line in the shape the host uses.
fn local_error(id: Option<u64>, code: ErrorCode, message: String) -> String {
    let message = ServerMessage::Error { id, error: ErrorBody::new(code, message) };
    serde_json::to_string(&message).unwrap_or_default()
}

/// The id a line begins with, as in `{"id":7,` or `{ "id" : 7 }`: what an
/// answer can echo when the rest of the line cannot be read.
fn leading_id(line: &[u8]) -> Option<u64> {
    let rest = line.trim_ascii_start().strip_prefix(b"{")?;
    let rest = rest.trim_ascii_start().strip_prefix(br#""id""#)?;
    let rest = rest.trim_ascii_start().strip_prefix(b":")?.trim_ascii_start();
    let digits = rest.iter().take_while(|byte| byte.is_ascii_digit()).count();
    let after = rest[digits..].trim_ascii_start();
    if digits == 0 || (digits > 1 && rest[0] == b'0') || !matches!(after.first(), Some(b',' | b'}')) {
        return None;
    }
    std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()
}

/// A JSON number with a whole, non-negative value that fits in 64 bits,
/// written as a fraction or with an exponent (`3.0`, `3e0`).
fn whole_number(value: &Value) -> Option<u64> {
    let number = value.as_f64()?;
    // 2^64 as an f64; every whole f64 below it fits in a u64.
    let in_range = (0.0..18_446_744_073_709_551_616.0).contains(&number);
    (in_range && number.fract() == 0.0).then_some(number as u64)
}

/// `text`, cut to [`QUOTED_ID_MAX`] characters.
fn quote(text: &str) -> String {
    match text.char_indices().nth(QUOTED_ID_MAX) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decide_bytes(line: &[u8]) -> LineAction {
        decide(InputLine::Line(line.to_vec()))
    }

    /// The id, code and message of a local answer.
    fn answered(action: LineAction) -> (Value, String, String) {
        let LineAction::Answer(answer) = action else { panic!("expected a local answer, got {action:?}") };
        let value: Value = serde_json::from_str(&answer).unwrap();
        let error = &value["error"];
        let code = error["error"]["code"].as_str().unwrap().to_owned();
        (error["id"].clone(), code, error["error"]["message"].as_str().unwrap().to_owned())
    }

    #[test]
    fn requests_are_forwarded_as_given_with_their_id() {
        let action = decide_bytes(b"  {\"id\":7,\"request\":{\"list\":{}}}\r");
        let expected = LineAction::Forward { payload: br#"{"id":7,"request":{"list":{}}}"#.to_vec(), id: 7 };
        assert_eq!(action, expected);
        // The host judges the request itself.
        let action = decide_bytes(br#"{"id":0,"request":{"teleport":{}}}"#);
        assert!(matches!(action, LineAction::Forward { id: 0, .. }), "{action:?}");
        let action = decide_bytes(br#"{"request":{"list":{}},"id":18446744073709551615}"#);
        assert!(matches!(action, LineAction::Forward { id: u64::MAX, .. }), "{action:?}");
        assert_eq!(decide_bytes(b" \r"), LineAction::Skip);
        assert_eq!(decide_bytes(b""), LineAction::Skip);
    }

    #[test]
    fn the_largest_frame_is_forwarded_and_one_byte_more_is_refused() {
        let frame = |len: usize| {
            let mut line = br#"{"id":9,"request":{"list":{}}"#.to_vec();
            line.resize(len - 1, b' ');
            line.push(b'}');
            line
        };
        let largest = frame(MAX_CLIENT_FRAME_LEN);
        assert!(matches!(decide_bytes(&largest), LineAction::Forward { id: 9, .. }));
        let (id, code, message) = answered(decide_bytes(&frame(MAX_CLIENT_FRAME_LEN + 1)));
        assert_eq!((id, code.as_str()), (Value::from(9), "FRAME_TOO_LARGE"));
        assert!(message.contains(&(MAX_CLIENT_FRAME_LEN + 1).to_string()), "{message}");
        // Whitespace around a frame is not part of it.
        let mut padded = b"   ".to_vec();
        padded.extend(&largest);
        padded.extend(b" \r");
        assert!(matches!(decide_bytes(&padded), LineAction::Forward { id: 9, .. }));
        let overlong = InputLine::Overlong { length: 20_000_000, head: br#"{"id":12,"request":"#.to_vec() };
        let (id, code, message) = answered(decide(overlong));
        assert_eq!((id, code.as_str()), (Value::from(12), "FRAME_TOO_LARGE"));
        assert!(message.contains("20000000"), "{message}");
        let overlong = InputLine::Overlong { length: 20_000_000, head: b"[[[[".to_vec() };
        assert_eq!(answered(decide(overlong)).0, Value::Null);
    }

    #[test]
    fn lines_that_are_not_requests_are_answered_here() {
        let (id, code, message) = answered(decide_bytes(b"hello"));
        assert_eq!((id, code.as_str()), (Value::Null, "MALFORMED_REQUEST"));
        assert!(message.starts_with("not JSON"), "{message}");
        // Cut short: the id it began with is echoed.
        assert_eq!(answered(decide_bytes(br#"{"id":5,"request":{"li"#)).0, Value::from(5));
        let (id, _, message) = answered(decide_bytes(b"[1,2]"));
        assert_eq!(id, Value::Null);
        assert!(message.contains("JSON object"), "{message}");
        let (id, _, message) = answered(decide_bytes(br#"{"request":{"list":{}}}"#));
        assert_eq!(id, Value::Null);
        assert!(message.contains("no id"), "{message}");
    }

    #[test]
    fn keys_named_twice_are_refused() {
        let (id, code, message) = answered(decide_bytes(br#"{"id":1,"id":2,"request":{"list":{}}}"#));
        assert_eq!((id, code.as_str()), (Value::Null, "MALFORMED_REQUEST"));
        assert!(message.contains("`id` appears more than once"), "{message}");
        let line = br#"{"id":3,"request":{"start":{"runtime":"shell","env":{"A":"1","A":"2"}}}}"#;
        let (id, code, message) = answered(decide_bytes(line));
        assert_eq!((id, code.as_str()), (Value::from(3), "MALFORMED_REQUEST"));
        assert!(message.contains("`A` appears twice"), "{message}");
    }

    #[test]
    fn ids_that_are_not_non_negative_integers_are_refused_echoing_what_can_be() {
        for (id, echoed) in [
            ("3.0", Value::from(3)),
            ("3e0", Value::from(3)),
            ("-0.0", Value::from(0)),
            ("3.5", Value::Null),
            ("-1", Value::Null),
            ("18446744073709551616", Value::Null),
            ("1e300", Value::Null),
            (r#""7""#, Value::Null),
            ("null", Value::Null),
            ("true", Value::Null),
            ("[7]", Value::Null),
            (r#"{"n":7}"#, Value::Null),
        ] {
            let line = format!(r#"{{"id":{id},"request":{{"list":{{}}}}}}"#);
            let (answered_id, code, message) = answered(decide_bytes(line.as_bytes()));
            assert_eq!((&answered_id, code.as_str()), (&echoed, "MALFORMED_REQUEST"), "{line}");
            assert!(message.contains("non-negative integer"), "{message}");
        }
        let long = format!(r#"{{"id":"{}"}}"#, "x".repeat(1000));
        let (_, _, message) = answered(decide_bytes(long.as_bytes()));
        assert!(message.len() < 300 && message.ends_with("..."), "{message}");
    }

    #[test]
    fn the_leading_id_is_read_only_when_the_line_begins_with_it() {
        assert_eq!(leading_id(br#"{"id":7,"request""#), Some(7));
        assert_eq!(leading_id(br#" { "id" : 7 }"#), Some(7));
        assert_eq!(leading_id(br#"{"id":0,"#), Some(0));
        for line in [
            &br#"{"id":7.0,"#[..],
            br#"{"id":07,"#,
            br#"{"id":-7,"#,
            br#"{"id":7"#,
            br#"{"request":{},"id":7}"#,
            br#"{"id":99999999999999999999,"#,
            b"",
        ] {
            assert_eq!(leading_id(line), None, "{}", String::from_utf8_lossy(line));
        }
    }
}
