//! How long a grant lasts, as a person types it (`15m`, `1h`, `2h 30m`) and reads it back.

/// The longest a timed grant may last: longer than this is standing permission, which a
/// remembered decision or a rule says more honestly.
pub const MAX_GRANT_SECS: u64 = 7 * 24 * 3600;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    #[error("'{0}' is not a duration (e.g. 15m, 1h, 2h 30m)")]
    Unreadable(String),
    #[error("a grant lasts at least one second")]
    Zero,
    #[error("a grant lasts at most 7 days; for longer, remember the decision or add a rule")]
    TooLong,
}

/// Reads `15m`, `1h`, `90s`, `2h 30m` (humantime's forms) as whole seconds.
pub fn parse_grant_duration(text: &str) -> Result<u64, DurationError> {
    let parsed = humantime::parse_duration(text.trim())
        .map_err(|_| DurationError::Unreadable(text.to_string()))?;
    let secs = parsed.as_secs();
    if secs == 0 {
        return Err(DurationError::Zero);
    }
    if secs > MAX_GRANT_SECS {
        return Err(DurationError::TooLong);
    }
    Ok(secs)
}

/// A remaining time, coarse enough to read at a glance: `45 s`, `12 min`, `1 h 5 min`, `2 d 3 h`.
pub fn describe_secs(secs: i64) -> String {
    let secs = secs.max(0);
    match secs {
        0..60 => format!("{secs} s"),
        60..3600 => format!("{} min", (secs + 59) / 60),
        3600..86400 => match (secs / 3600, (secs % 3600) / 60) {
            (h, 0) => format!("{h} h"),
            (h, m) => format!("{h} h {m} min"),
        },
        _ => match (secs / 86400, (secs % 86400) / 3600) {
            (d, 0) => format!("{d} d"),
            (d, h) => format!("{d} d {h} h"),
        },
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_forms_people_type_are_read_and_nonsense_is_refused() {
        assert_eq!(parse_grant_duration("15m").unwrap(), 900);
        assert_eq!(parse_grant_duration("1h").unwrap(), 3600);
        assert_eq!(parse_grant_duration(" 2h 30m ").unwrap(), 9000);
        assert_eq!(parse_grant_duration("90s").unwrap(), 90);
        assert_eq!(
            parse_grant_duration("soon"),
            Err(DurationError::Unreadable("soon".into()))
        );
        assert_eq!(
            parse_grant_duration("30"),
            Err(DurationError::Unreadable("30".into()))
        );
        assert_eq!(parse_grant_duration("0s"), Err(DurationError::Zero));
        assert_eq!(parse_grant_duration("8d"), Err(DurationError::TooLong));
    }

    #[test]
    fn remaining_time_reads_at_a_glance() {
        assert_eq!(describe_secs(-5), "0 s");
        assert_eq!(describe_secs(45), "45 s");
        assert_eq!(describe_secs(61), "2 min");
        assert_eq!(describe_secs(3600), "1 h");
        assert_eq!(describe_secs(3900), "1 h 5 min");
        assert_eq!(describe_secs(2 * 86400 + 3 * 3600), "2 d 3 h");
    }
}
