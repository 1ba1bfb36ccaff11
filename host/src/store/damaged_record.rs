//! What is left of a pane record that cannot be read (torn by a full disk,
//! edited by hand): the few fields a pane taken back without its record
//! needs from it, found where they are still plain. Any text gives fields
//! within the ranges a record's check allows, or none.

use crate::limits::{MAX_RECORDED_COUNT, MAX_RECORDED_RUNTIME_ID_LEN};

/// The fields found in a damaged record.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct DamagedRecord {
    /// The first `"runtime"` value: 1 to 256 bytes, no escapes.
    pub runtime: Option<String>,
    /// The first `"generation"` value, from 1 to [`MAX_RECORDED_COUNT`].
    pub generation: Option<u64>,
}

impl DamagedRecord {
    /// The fields `text` (the start of the file) still shows.
    pub fn read(text: &str) -> DamagedRecord {
        DamagedRecord {
            runtime: string_field(text, "runtime"),
            generation: number_field(text, "generation").filter(|value| (1..=MAX_RECORDED_COUNT).contains(value)),
        }
    }
}

/// The first `"name":"value"` in `text` whose value is short and plain (no
/// escapes).
fn string_field(text: &str, name: &str) -> Option<String> {
    let rest = field_value(text, name)?.strip_prefix('"')?;
    let end = rest.find('"')?;
    let value = &rest[..end];
    (!value.is_empty() && value.len() <= MAX_RECORDED_RUNTIME_ID_LEN && !value.contains('\\')).then(|| value.to_owned())
}

/// The first `"name":number` in `text`.
fn number_field(text: &str, name: &str) -> Option<u64> {
    let rest = field_value(text, name)?;
    let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    rest[..digits].parse().ok()
}

/// What follows `"name":` (and blanks) the first time it appears.
fn field_value<'t>(text: &'t str, name: &str) -> Option<&'t str> {
    let key = format!("\"{name}\"");
    let at = text.find(&key)? + key.len();
    text[at..].trim_start().strip_prefix(':').map(str::trim_start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_read_from_a_torn_record() {
        let torn = r#"{"version":1,"id":"p0000000a","runtime":"shell","generation": 3,"pid":12,"start":{"runtime":"sh"#;
        assert_eq!(string_field(torn, "runtime").as_deref(), Some("shell"));
        assert_eq!(number_field(torn, "generation"), Some(3));
        assert_eq!(string_field(torn, "cwd"), None);
        assert_eq!(number_field(r#"{"generation":"#, "generation"), None);
        assert_eq!(string_field(r#"{"runtime":"a\"b"}"#, "runtime"), None, "an escape is not taken");
        assert_eq!(string_field(r#"{"runtime":"abc"#, "runtime"), None, "an unended value is not taken");
        let long = format!(r#"{{"runtime":"{}"}}"#, "x".repeat(MAX_RECORDED_RUNTIME_ID_LEN + 1));
        assert_eq!(string_field(&long, "runtime"), None);
    }

    #[test]
    fn out_of_range_generations_are_not_taken() {
        assert_eq!(DamagedRecord::read(r#"{"generation":0}"#).generation, None);
        assert_eq!(DamagedRecord::read(r#"{"generation":99999999999999999999999}"#).generation, None);
        assert_eq!(
            DamagedRecord::read(r#"{"generation":7,"runtime":"codex"}"#),
            DamagedRecord { runtime: Some("codex".into()), generation: Some(7) }
        );
        assert_eq!(DamagedRecord::read(""), DamagedRecord::default());
    }
}
