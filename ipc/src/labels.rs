//! Client labels: names and values a client attaches to a pane when it
//! starts it (an owner, a task id), returned wherever the pane is
//! described, and matched by `list`.
//!
//! Labels are the client's: the host stores them with the pane (in its
//! record too, so they survive a host restart) and never reads them.

use std::collections::BTreeMap;

/// A pane's labels, by name.
pub type Labels = BTreeMap<String, String>;

/// The most labels a pane may carry.
pub const MAX_LABELS: usize = 32;
/// The longest label name, in bytes.
pub const MAX_LABEL_NAME_LEN: usize = 64;
/// The longest label value, in bytes.
pub const MAX_LABEL_VALUE_LEN: usize = 256;

/// Labels a pane may not carry, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LabelsError {
    /// More than [`MAX_LABELS`].
    #[error("{count} labels are too many: at most {MAX_LABELS}")]
    TooMany {
        /// How many were given.
        count: usize,
    },
    /// A name that is empty, too long, or holds a character other than
    /// ASCII letters, digits, `.`, `_`, `-` and `/`.
    #[error(
        "label name {name:?} is not 1 to {MAX_LABEL_NAME_LEN} bytes of ASCII letters, digits, '.', '_', '-' and '/'"
    )]
    BadName {
        /// The name.
        name: String,
    },
    /// A value longer than [`MAX_LABEL_VALUE_LEN`] or holding a control
    /// character.
    #[error("the value of label {name:?} is longer than {MAX_LABEL_VALUE_LEN} bytes or holds a control character")]
    BadValue {
        /// The label's name.
        name: String,
    },
}

/// Checks labels against the bounds above.
///
/// # Errors
/// The first problem found, as a [`LabelsError`].
pub fn check_labels(labels: &Labels) -> Result<(), LabelsError> {
    if labels.len() > MAX_LABELS {
        return Err(LabelsError::TooMany { count: labels.len() });
    }
    for (name, value) in labels {
        let good_name = !name.is_empty()
            && name.len() <= MAX_LABEL_NAME_LEN
            && name.bytes().all(|byte| byte.is_ascii_alphanumeric() || b"._-/".contains(&byte));
        if !good_name {
            return Err(LabelsError::BadName { name: name.clone() });
        }
        if value.len() > MAX_LABEL_VALUE_LEN || value.chars().any(char::is_control) {
            return Err(LabelsError::BadValue { name: name.clone() });
        }
    }
    Ok(())
}

/// True when `labels` carries every label of `wanted` with the same value
/// (an empty `wanted` matches every pane).
pub fn labels_match(labels: &Labels, wanted: &Labels) -> bool {
    wanted.iter().all(|(name, value)| labels.get(name) == Some(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs.iter().map(|(name, value)| ((*name).to_owned(), (*value).to_owned())).collect()
    }

    #[test]
    fn labels_are_bounded_in_count_name_and_value() {
        assert_eq!(check_labels(&Labels::new()), Ok(()));
        let most: Labels = (0..MAX_LABELS).map(|n| (format!("l{n}"), "v".repeat(MAX_LABEL_VALUE_LEN))).collect();
        assert_eq!(check_labels(&most), Ok(()));
        let too_many: Labels = (0..=MAX_LABELS).map(|n| (format!("l{n}"), String::new())).collect();
        assert_eq!(check_labels(&too_many), Err(LabelsError::TooMany { count: MAX_LABELS + 1 }));
        let longest_name = "n".repeat(MAX_LABEL_NAME_LEN);
        assert_eq!(check_labels(&labels(&[(&longest_name, "")])), Ok(()));
        assert_eq!(check_labels(&labels(&[("team/owner.id-2_x", "Ada Lovelace ✓")])), Ok(()));
        for name in ["", "has space", "ünicode", "semi;colon", &"n".repeat(MAX_LABEL_NAME_LEN + 1)] {
            assert!(matches!(check_labels(&labels(&[(name, "v")])), Err(LabelsError::BadName { .. })), "{name:?}");
        }
        for value in ["line\nbreak", "\u{1b}[31m", &"v".repeat(MAX_LABEL_VALUE_LEN + 1)] {
            assert!(matches!(check_labels(&labels(&[("n", value)])), Err(LabelsError::BadValue { .. })), "{value:?}");
        }
    }

    #[test]
    fn a_filter_matches_panes_carrying_all_its_labels() {
        let pane = labels(&[("owner", "ada"), ("task", "42")]);
        assert!(labels_match(&pane, &Labels::new()));
        assert!(labels_match(&pane, &labels(&[("owner", "ada")])));
        assert!(labels_match(&pane, &pane));
        assert!(!labels_match(&pane, &labels(&[("owner", "bob")])));
        assert!(!labels_match(&pane, &labels(&[("owner", "ada"), ("other", "x")])));
    }
}
