//! Reading a CLI's version, and the tri-state floor check.

use panehost_ipc::runtime::floor_status;
use std::cmp::Ordering;

/// How a version compares with its floor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FloorStatus {
    /// At or above the floor (or no floor is declared and the version is known).
    AtOrAbove,
    /// Below the floor: the adapter's flags are not known to hold.
    Below,
    /// The version could not be read or understood.
    Indeterminate,
}

impl FloorStatus {
    /// The status's name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            FloorStatus::AtOrAbove => floor_status::AT_OR_ABOVE,
            FloorStatus::Below => floor_status::BELOW,
            FloorStatus::Indeterminate => floor_status::INDETERMINATE,
        }
    }
}

/// The first dotted number (`1.2.3`, at least two parts) in `text`.
pub fn parse_version(text: &str) -> Option<Vec<u64>> {
    let bytes = text.as_bytes();
    let mut index = 0;
    while index < bytes.len() {
        let starts = index == 0 || !(bytes[index - 1].is_ascii_digit() || bytes[index - 1] == b'.');
        if bytes[index].is_ascii_digit() && starts {
            let rest = &text[index..];
            let candidate: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
            let parts: Vec<u64> =
                candidate.split('.').filter(|part| !part.is_empty()).map_while(|part| part.parse().ok()).collect();
            if parts.len() >= 2 {
                return Some(parts);
            }
            index += candidate.len().max(1);
        } else {
            index += 1;
        }
    }
    None
}

/// Compares two dotted versions, a missing part counting as 0 (`1.2` is
/// `1.2.0`).
pub fn compare(left: &[u64], right: &[u64]) -> Ordering {
    let length = left.len().max(right.len());
    let padded = |parts: &[u64]| (0..length).map(|i| parts.get(i).copied().unwrap_or(0)).collect::<Vec<_>>();
    padded(left).cmp(&padded(right))
}

/// Compares `version` (a CLI's output) with `floor` (dotted numbers).
pub fn floor_status(version: Option<&str>, floor: Option<&str>) -> FloorStatus {
    let Some(version) = version.and_then(parse_version) else { return FloorStatus::Indeterminate };
    let Some(floor) = floor else { return FloorStatus::AtOrAbove };
    let Some(floor) = parse_version(floor) else { return FloorStatus::Indeterminate };
    match compare(&version, &floor) {
        Ordering::Less => FloorStatus::Below,
        _ => FloorStatus::AtOrAbove,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_found_in_what_clis_print() {
        assert_eq!(parse_version("2.1.197 (Claude Code)"), Some(vec![2, 1, 197]));
        assert_eq!(parse_version("codex-cli 0.171.0"), Some(vec![0, 171, 0]));
        assert_eq!(parse_version("GitHub Copilot CLI 1.0.102."), Some(vec![1, 0, 102]));
        assert_eq!(parse_version("v20.20.2"), Some(vec![20, 20, 2]));
        assert_eq!(parse_version("x86_64 build 1.2"), Some(vec![1, 2]));
        assert_eq!(parse_version("no version here 7"), None);
    }

    #[test]
    fn refused_ranges_hold_from_their_start_to_before_their_end() {
        use crate::descriptor::RefusedVersions;
        let range = |before: Option<&str>| RefusedVersions {
            from: "1.52.0".into(),
            before: before.map(str::to_owned),
            reason: "why".into(),
        };
        let open = range(None);
        assert!(open.contains("kimi, version 1.52.0"));
        assert!(open.contains("1.52"));
        assert!(open.contains("10.0.0"));
        assert!(!open.contains("1.51.99"));
        assert!(!open.contains("no version"));
        let closed = range(Some("1.53"));
        assert!(closed.contains("1.52.7"));
        assert!(!closed.contains("1.53.0"));
        assert_eq!(closed.describe(), "1.52.0 to before 1.53");
        assert_eq!(open.describe(), "from 1.52.0");
    }

    #[test]
    fn the_floor_check_has_three_outcomes() {
        assert_eq!(floor_status(Some("2.1.197 (Claude Code)"), Some("2.1.197")), FloorStatus::AtOrAbove);
        assert_eq!(floor_status(Some("2.1.200"), Some("2.1.197")), FloorStatus::AtOrAbove);
        assert_eq!(floor_status(Some("2.0.999"), Some("2.1.197")), FloorStatus::Below);
        assert_eq!(floor_status(Some("garbage"), Some("2.1.197")), FloorStatus::Indeterminate);
        assert_eq!(floor_status(None, Some("1.0")), FloorStatus::Indeterminate);
        assert_eq!(floor_status(Some("1.0"), None), FloorStatus::AtOrAbove);
    }
}
