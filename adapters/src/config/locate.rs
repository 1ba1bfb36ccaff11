//! Lines for problems: byte offsets to line numbers, and where each key of
//! the document is first written.
//!
//! The values are read from a `toml::Table`, which keeps no positions. The
//! positions come from a second pass over the same text with the `toml`
//! deserializer, reading every key as a `toml::Spanned<String>`; values are
//! skipped. It works whatever the layout (`[runtime.x]` headers, dotted
//! keys, inline tables). Should that pass fail, problems simply have fewer
//! lines.

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::collections::HashMap;
use std::fmt;
use toml::Spanned;

/// Line numbers for offsets and keys of one text.
#[derive(Debug)]
pub(super) struct Locator {
    /// The offset at which each line starts.
    line_starts: Vec<usize>,
    /// Each key path (`runtime`, `mycli`, `base_args`) and the offset of the
    /// first place it is written.
    keys: HashMap<Vec<String>, usize>,
}

impl Locator {
    /// A locator of offsets only; [`index_keys`](Self::index_keys) adds the
    /// keys once the text is known to parse.
    pub(super) fn new(text: &str) -> Self {
        let line_starts = std::iter::once(0).chain(text.match_indices('\n').map(|(at, _)| at + 1)).collect();
        Locator { line_starts, keys: HashMap::new() }
    }

    /// Records where each key of `text` is first written.
    pub(super) fn index_keys(&mut self, text: &str) {
        let collect = Collect { prefix: Vec::new(), keys: &mut self.keys };
        // A failure leaves the keys found so far; problems then point at the
        // nearest enclosing key, or at no line.
        let _ = collect.deserialize(toml::Deserializer::new(text));
    }

    /// The line (from 1) holding the byte at `offset`.
    pub(super) fn line_of_offset(&self, offset: usize) -> usize {
        self.line_starts.partition_point(|&start| start <= offset).max(1)
    }

    /// The line where the key at `path` is first written.
    pub(super) fn line_of_key(&self, path: &[&str]) -> Option<usize> {
        let path: Vec<String> = path.iter().map(|part| (*part).to_owned()).collect();
        self.keys.get(&path).map(|&offset| self.line_of_offset(offset))
    }
}

/// Walks a value, recording the position of every key below `prefix`.
struct Collect<'k> {
    prefix: Vec<String>,
    keys: &'k mut HashMap<Vec<String>, usize>,
}

impl<'de> DeserializeSeed<'de> for Collect<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Collect<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a TOML value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut first = true;
        loop {
            let key = match map.next_key::<Spanned<String>>() {
                Ok(Some(key)) => key,
                Ok(None) => return Ok(()),
                // A date or time reaches a visitor as a one-entry map whose
                // key carries no position: it is a value, with no keys below.
                Err(_) if first => return Ok(()),
                Err(error) => return Err(error),
            };
            first = false;
            let mut path = self.prefix.clone();
            path.push(key.get_ref().clone());
            self.keys.entry(path.clone()).or_insert(key.span().start);
            map.next_value_seed(Collect { prefix: path, keys: &mut *self.keys })?;
        }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
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
}
