//! Wall-clock times in the canary's reports, in UTC.

use std::time::{SystemTime, UNIX_EPOCH};

/// A moment as `2026-11-30T09:41:07Z` and as `20261130T094107Z` (for file
/// names).
pub fn utc_stamps(moment: SystemTime) -> (String, String) {
    let seconds = moment.duration_since(UNIX_EPOCH).map(|elapsed| elapsed.as_secs()).unwrap_or(0);
    let (days, of_day) = (seconds / 86_400, seconds % 86_400);
    let (year, month, day) = civil_date(days);
    let (hour, minute, second) = (of_day / 3600, of_day % 3600 / 60, of_day % 60);
    (
        format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}Z"),
        format!("{year:04}{month:02}{day:02}T{hour:02}{minute:02}{second:02}Z"),
    )
}

/// The proleptic Gregorian date `days` after 1970-01-01.
fn civil_date(days: u64) -> (u64, u64, u64) {
    let shifted = days + 719_468;
    let era = shifted / 146_097;
    let day_of_era = shifted % 146_097;
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 { month_index + 3 } else { month_index - 9 };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn known_moments_format() {
        assert_eq!(utc_stamps(UNIX_EPOCH).0, "1970-01-01T00:00:00Z");
        let moment = UNIX_EPOCH + Duration::from_secs(1_796_031_667);
        assert_eq!(utc_stamps(moment), ("2026-11-30T09:41:07Z".into(), "20261130T094107Z".into()));
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(utc_stamps(leap).0, "2000-02-29T00:00:00Z");
    }
}
