//! Times as every table keeps them (RFC 3339, UTC): a moment some seconds from now, and reading
//! one back. One place for approval timeouts, grants and pairing codes.

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// `seconds` from now.
pub(crate) fn expiry_after(seconds: u64) -> String {
    let at =
        OffsetDateTime::now_utc() + time::Duration::seconds(seconds.min(i64::MAX as u64) as i64);
    at.format(&Rfc3339).unwrap_or_default()
}

pub(crate) fn parse_time(text: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(text, &Rfc3339).ok()
}
