//! Anchored patterns for resume references.

use regex::Regex;

/// Longest reference accepted, whatever the pattern says.
pub const MAX_REFERENCE_LEN: usize = 256;

/// A pattern a whole reference must match. It is compiled anchored at both
/// ends (`^(?:pattern)$`), so no prefix or suffix of a hostile string can
/// slip through, and references longer than [`MAX_REFERENCE_LEN`] or
/// containing control characters are refused before it is consulted.
#[derive(Debug, Clone)]
pub struct ReferencePattern {
    source: String,
    regex: Regex,
}

impl PartialEq for ReferencePattern {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl Eq for ReferencePattern {}

/// Lowercase UUID, the form most CLIs use for session ids.
pub const UUID: &str = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";

impl ReferencePattern {
    /// Compiles `source`, anchored.
    ///
    /// # Errors
    /// Returns the regex error for an invalid pattern.
    pub fn new(source: &str) -> Result<Self, regex::Error> {
        let regex = Regex::new(&format!("^(?:{source})$"))?;
        Ok(ReferencePattern { source: source.to_owned(), regex })
    }

    /// A pattern known to be valid (the built-in ones).
    ///
    /// # Panics
    /// Panics if `source` is not a valid pattern; only for constants.
    pub fn constant(source: &str) -> Self {
        ReferencePattern::new(source).expect("built-in reference patterns are valid")
    }

    /// The pattern as written (without the anchors).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// True when the whole reference is acceptable.
    pub fn accepts(&self, reference: &str) -> bool {
        !reference.is_empty()
            && reference.len() <= MAX_REFERENCE_LEN
            && !reference.starts_with('-')
            && !reference.chars().any(char::is_control)
            && self.regex.is_match(reference)
    }
}
