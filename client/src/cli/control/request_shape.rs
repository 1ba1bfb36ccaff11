//! The shape of a request line, read in one pass over its JSON: whether it
//! is an object, what its `id` is, and whether any object in it, at any
//! depth, names a key twice.
//!
//! `serde_json` keeps the last of two equal keys, so `{"id":1,"id":2}`
//! would read as id 2 here while the host, which refuses it, cannot tell
//! which id to answer. The bridge refuses such a line itself.

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;

/// What a request line's JSON looks like.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum RequestShape {
    /// Not an object (an array, a number, ...).
    NotObject,
    /// An object.
    Object {
        /// Its `id`.
        id: IdField,
        /// The first key named twice in one object, at any depth.
        duplicate_key: Option<String>,
    },
}

/// The `id` of a request object.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum IdField {
    /// No `id` key.
    Missing,
    /// One `id`, of any JSON type.
    Once(Value),
    /// Two or more `id` keys.
    Repeated,
}

/// Reads the shape of `line`.
///
/// # Errors
/// Fails when `line` is not one JSON value (or nests deeper than
/// `serde_json`'s recursion limit).
pub(super) fn read(line: &[u8]) -> serde_json::Result<RequestShape> {
    let mut deserializer = serde_json::Deserializer::from_slice(line);
    let shape = deserializer.deserialize_any(TopLevel)?;
    deserializer.end()?;
    Ok(shape)
}

/// The request itself: an object, whose `id` is kept and whose other
/// values are walked for repeated keys.
struct TopLevel;

impl<'de> Visitor<'de> for TopLevel {
    type Value = RequestShape;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<RequestShape, E> {
        Ok(RequestShape::NotObject)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<RequestShape, E> {
        Ok(RequestShape::NotObject)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<RequestShape, E> {
        Ok(RequestShape::NotObject)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<RequestShape, E> {
        Ok(RequestShape::NotObject)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<RequestShape, E> {
        Ok(RequestShape::NotObject)
    }

    fn visit_unit<E: de::Error>(self) -> Result<RequestShape, E> {
        Ok(RequestShape::NotObject)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RequestShape, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(RequestShape::NotObject)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RequestShape, A::Error> {
        let duplicate_key = RefCell::new(None);
        let mut keys = HashSet::new();
        let mut id = IdField::Missing;
        while let Some(key) = map.next_key::<String>()? {
            if key == "id" {
                // Any JSON value: judged by the caller, echoed if it can be.
                let value = map.next_value::<Value>()?;
                id = match id {
                    IdField::Missing => IdField::Once(value),
                    IdField::Once(_) | IdField::Repeated => IdField::Repeated,
                };
            } else {
                map.next_value_seed(Walk { duplicate_key: &duplicate_key })?;
            }
            if !keys.insert(key.clone()) {
                note_duplicate(&duplicate_key, key);
            }
        }
        Ok(RequestShape::Object { id, duplicate_key: duplicate_key.into_inner() })
    }
}

fn note_duplicate(found: &RefCell<Option<String>>, key: String) {
    found.borrow_mut().get_or_insert(key);
}

/// Any value inside the request, walked for repeated keys and discarded.
struct Walk<'a> {
    duplicate_key: &'a RefCell<Option<String>>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Walk { duplicate_key: self.duplicate_key })?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            map.next_value_seed(Walk { duplicate_key: self.duplicate_key })?;
            if !keys.insert(key.clone()) {
                note_duplicate(self.duplicate_key, key);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(id: IdField, duplicate_key: Option<&str>) -> RequestShape {
        RequestShape::Object { id, duplicate_key: duplicate_key.map(str::to_owned) }
    }

    #[test]
    fn an_object_gives_its_id_of_any_type() {
        let shape = read(br#"{"id":7,"request":{"list":{}}}"#).unwrap();
        assert_eq!(shape, object(IdField::Once(Value::from(7)), None));
        let shape = read(br#"{"request":{"list":{}},"id":3.0}"#).unwrap();
        assert_eq!(shape, object(IdField::Once(Value::from(3.0)), None));
        let shape = read(br#"{"id":"7"}"#).unwrap();
        assert_eq!(shape, object(IdField::Once(Value::from("7")), None));
        assert_eq!(read(br#"{"request":{}}"#).unwrap(), object(IdField::Missing, None));
        assert_eq!(read(b"{}").unwrap(), object(IdField::Missing, None));
    }

    #[test]
    fn anything_but_an_object_is_not_a_request() {
        for line in [&b"[1,{\"a\":1}]"[..], b"5", b"-1.5", b"\"x\"", b"null", b"true"] {
            assert_eq!(read(line).unwrap(), RequestShape::NotObject, "{}", String::from_utf8_lossy(line));
        }
    }

    #[test]
    fn a_key_named_twice_is_found_at_any_depth() {
        assert_eq!(read(br#"{"id":1,"id":2}"#).unwrap(), object(IdField::Repeated, Some("id")));
        let shape = read(br#"{"id":1,"request":{"list":{}},"request":{"close":{}}}"#).unwrap();
        assert_eq!(shape, object(IdField::Once(Value::from(1)), Some("request")));
        let deep = br#"{"id":4,"request":{"start":{"env":{"A":"1","B":"2","A":"3"}}}}"#;
        assert_eq!(read(deep).unwrap(), object(IdField::Once(Value::from(4)), Some("A")));
        let in_array = br#"{"id":5,"x":[{"k":1},{"k":1,"k":2}]}"#;
        assert_eq!(read(in_array).unwrap(), object(IdField::Once(Value::from(5)), Some("k")));
        // The same key in two objects is no repeat; escapes are read first.
        assert_eq!(read(br#"{"id":6,"a":{"k":1},"b":{"k":1}}"#).unwrap(), object(IdField::Once(Value::from(6)), None));
        assert_eq!(read(br#"{"id":6,"k":1,"\u006b":2}"#).unwrap(), object(IdField::Once(Value::from(6)), Some("k")));
    }

    #[test]
    fn what_is_not_one_json_value_is_an_error() {
        for line in [&b"hello"[..], b"{\"id\":1", b"{} {}", b"{\"id\":1,}"] {
            assert!(read(line).is_err(), "{}", String::from_utf8_lossy(line));
        }
        let deep = format!(r#"{{"id":1,"request":{}{}}}"#, "[".repeat(200), "]".repeat(200));
        assert!(read(deep.as_bytes()).is_err(), "deeper than the recursion limit");
        // Skipped, not walked (serde_json skips without recursing).
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert_eq!(read(deep.as_bytes()).unwrap(), RequestShape::NotObject);
    }
}
