//! Retries with exponential backoff and jitter, honouring Retry-After. A retry repeats only the
//! HTTP request: tools run after a reply is complete, so a retry can never run a tool again.

use crate::types::{LlmError, ModelReply, ProviderConfig};
use reqwest::header::{HeaderMap, RETRY_AFTER};
use std::future::Future;
use std::time::Duration;

/// The outcome of one try.
pub(crate) enum Attempt {
    Done(ModelReply),
    /// Worth another try, after the server's Retry-After if it gave one.
    Retry(LlmError, Option<Duration>),
    Fail(LlmError),
}

/// Retry-After as seconds or an HTTP date.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(
        at.duration_since(std::time::SystemTime::now())
            .unwrap_or_default(),
    )
}

pub(crate) async fn with_retries<F, Fut>(
    config: &ProviderConfig,
    mut attempt: F,
) -> Result<ModelReply, LlmError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Attempt>,
{
    let mut tries = 0u32;
    let mut backoff = config.initial_backoff;
    loop {
        tries += 1;
        match attempt().await {
            Attempt::Done(reply) => return Ok(reply),
            Attempt::Fail(error) => return Err(error),
            Attempt::Retry(error, asked) => {
                if tries > config.max_retries {
                    return Err(if tries == 1 {
                        error
                    } else {
                        LlmError::RetriesExhausted {
                            attempts: tries,
                            last: Box::new(error),
                        }
                    });
                }
                let jitter = backoff.mul_f64(rand::random::<f64>() * 0.25);
                let wait = asked.unwrap_or(backoff + jitter).min(config.max_backoff);
                tracing::warn!(%error, try_number = tries, wait_ms = wait.as_millis() as u64, "model request failed; retrying");
                tokio::time::sleep(wait).await;
                backoff = (backoff * 2).min(config.max_backoff);
            }
        }
    }
}
