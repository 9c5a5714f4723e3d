//! The HTTP transport shared by the provider clients: one JSON POST with
//! timeouts, retries with exponential backoff, `Retry-After`, and the
//! mapping of transport failures and API error bodies to
//! [`ProviderError`].
//!
//! Retry policy: HTTP 429 and 5xx answers and connection failures are
//! retried, up to [`HttpOptions::max_attempts`] attempts in all, waiting
//! `backoff_base * 2^(n-1)` (capped at `backoff_max`) before retry `n`, or
//! the server's `Retry-After` seconds (capped at `retry_after_max`) when
//! it sends one. Other 4xx answers and timeouts fail at once. Redirects are
//! not followed: a POST body cannot be replayed safely, and a redirect
//! almost always means a wrong base URL.
//!
//! A call may also have a limit of its own (a request's `timeout`): then
//! every attempt ends by it and no retry waits past it.

use std::time::{Duration, Instant};

use serde_json::Value as Json;

use super::provider::ProviderError;
use super::truncate;

/// Timeouts and retry settings of a provider client.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpOptions {
    /// The whole exchange, from connecting to the last byte of the body.
    pub timeout: Duration,
    /// Setting up the connection (including TLS).
    pub connect_timeout: Duration,
    /// Attempts in all, the first included (at least 1).
    pub max_attempts: u32,
    /// The wait before the first retry; it doubles for each further one.
    pub backoff_base: Duration,
    /// The longest wait computed by backoff.
    pub backoff_max: Duration,
    /// The longest wait a server's `Retry-After` may ask for.
    pub retry_after_max: Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(10),
            max_attempts: 4,
            backoff_base: Duration::from_millis(500),
            backoff_max: Duration::from_secs(8),
            retry_after_max: Duration::from_secs(60),
        }
    }
}

impl HttpOptions {
    /// The wait before retry number `retry` (1-based) when the server gave
    /// no `Retry-After`.
    pub fn backoff(&self, retry: u32) -> Duration {
        let factor = 2u32.saturating_pow(retry.saturating_sub(1));
        self.backoff_base
            .checked_mul(factor)
            .unwrap_or(self.backoff_max)
            .min(self.backoff_max)
    }

    fn wait_before(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        match retry_after {
            Some(d) => d.min(self.retry_after_max),
            None => self.backoff(retry),
        }
    }
}

/// A blocking client for JSON APIs, shared by the provider clients.
pub(crate) struct JsonClient {
    agent: ureq::Agent,
    options: HttpOptions,
}

/// One failed attempt: the error and the server's requested wait.
struct Failure {
    error: ProviderError,
    retry_after: Option<Duration>,
}

impl From<ProviderError> for Failure {
    fn from(error: ProviderError) -> Self {
        Failure {
            error,
            retry_after: None,
        }
    }
}

impl JsonClient {
    pub(crate) fn new(options: HttpOptions) -> Self {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_global(Some(options.timeout))
            .timeout_connect(Some(options.connect_timeout))
            .user_agent(concat!("ptc-lisp/", env!("CARGO_PKG_VERSION")))
            .build()
            .new_agent();
        JsonClient { agent, options }
    }

    /// POST `body` as JSON to `url` with extra `headers`, retrying as the
    /// module docs describe, within `limit` in all when there is one, and
    /// return the parsed JSON answer.
    pub(crate) fn post_json(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: &Json,
        limit: Option<Duration>,
    ) -> Result<Json, ProviderError> {
        let payload = serde_json::to_vec(body)
            .map_err(|e| ProviderError::Config(format!("Could not encode the request: {e}")))?;
        let deadline = limit.map(|l| Instant::now() + l);
        let max_attempts = self.options.max_attempts.max(1);
        let mut attempt = 1;
        loop {
            let out_of_time = || {
                ProviderError::Timeout(format!(
                    "no complete answer from `{url}` within {} (the request's time limit)",
                    fmt_duration(limit.unwrap_or_default())
                ))
            };
            let timeout = match deadline {
                Some(d) => match d.checked_duration_since(Instant::now()) {
                    Some(left) if !left.is_zero() => Some(left.min(self.options.timeout)),
                    _ => return Err(out_of_time()),
                },
                None => None,
            };
            let failure = match self.post_once(url, headers, &payload, timeout) {
                Ok(json) => return Ok(json),
                Err(failure) => failure,
            };
            if matches!(failure.error, ProviderError::Timeout(_))
                && deadline.is_some_and(|d| Instant::now() >= d)
            {
                return Err(out_of_time());
            }
            if !failure.error.is_retryable() {
                return Err(failure.error);
            }
            let wait = self.options.wait_before(attempt, failure.retry_after);
            let past_deadline = deadline.is_some_and(|d| Instant::now() + wait >= d);
            if attempt >= max_attempts || past_deadline {
                return Err(if attempt == 1 {
                    failure.error
                } else {
                    ProviderError::RetriesExhausted {
                        attempts: attempt,
                        last: Box::new(failure.error),
                    }
                });
            }
            std::thread::sleep(wait);
            attempt += 1;
        }
    }

    /// One attempt; `timeout`, when given, replaces the client's own
    /// limit of the whole exchange.
    fn post_once(
        &self,
        url: &str,
        headers: &[(&str, String)],
        payload: &[u8],
        timeout: Option<Duration>,
    ) -> Result<Json, Failure> {
        let mut request = self
            .agent
            .post(url)
            .header("content-type", "application/json");
        if let Some(timeout) = timeout {
            request = request.config().timeout_global(Some(timeout)).build();
        }
        for (name, value) in headers {
            request = request.header(*name, value.as_str());
        }
        let mut response = request
            .send(payload)
            .map_err(|e| transport_error(e, url, &self.options, timeout))?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let location = response
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let text = response
            .body_mut()
            .with_config()
            .lossy_utf8(true)
            .read_to_string()
            .map_err(|e| transport_error(e, url, &self.options, timeout))?;
        match status {
            200..=299 => serde_json::from_str(&text).map_err(|e| {
                ProviderError::Malformed(format!(
                    "the body is not JSON ({e}): {}",
                    truncate(text.trim(), 200)
                ))
                .into()
            }),
            300..=399 => Err(ProviderError::Http {
                status,
                message: format!(
                    "redirected to `{}`; set the base URL to the final address",
                    location.as_deref().unwrap_or("?")
                ),
            }
            .into()),
            _ => Err(Failure {
                error: ProviderError::Http {
                    status,
                    message: api_error_message(&text),
                },
                retry_after,
            }),
        }
    }
}

/// `Retry-After` as seconds (integral or decimal). The HTTP-date form is
/// ignored, and backoff applies instead.
fn parse_retry_after(value: &str) -> Option<Duration> {
    let secs: f64 = value.trim().parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(86_400.0)))
}

/// The API's own message from an error body: `error.message`, or `error`
/// when it is a string, or a top-level `message`; else the body text
/// truncated to 500 characters.
pub(crate) fn api_error_message(body: &str) -> String {
    if let Ok(json) = serde_json::from_str::<Json>(body) {
        let found = json
            .pointer("/error/message")
            .or_else(|| json.get("error").filter(|e| e.is_string()))
            .or_else(|| json.get("message"))
            .and_then(Json::as_str);
        if let Some(message) = found {
            return message.to_string();
        }
    }
    let body = body.trim();
    if body.is_empty() {
        "(the body is empty)".to_string()
    } else {
        truncate(body, 500)
    }
}

fn transport_error(
    error: ureq::Error,
    url: &str,
    options: &HttpOptions,
    timeout: Option<Duration>,
) -> Failure {
    let error = match error {
        ureq::Error::Timeout(ureq::Timeout::Connect) => ProviderError::Timeout(format!(
            "no connection to `{url}` within {}",
            fmt_duration(options.connect_timeout)
        )),
        ureq::Error::Timeout(_) => ProviderError::Timeout(format!(
            "no complete answer from `{url}` within {}",
            fmt_duration(timeout.unwrap_or(options.timeout))
        )),
        ureq::Error::Io(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
            ) =>
        {
            ProviderError::Timeout(format!("reading from `{url}`: {e}"))
        }
        ureq::Error::Io(e) => ProviderError::Connection(format!("`{url}`: {e}")),
        ureq::Error::HostNotFound => {
            ProviderError::Connection(format!("`{url}`: the host was not found"))
        }
        ureq::Error::BodyExceedsLimit(limit) => ProviderError::Malformed(format!(
            "the body from `{url}` is larger than {limit} bytes"
        )),
        ureq::Error::BadUri(reason) => {
            ProviderError::Config(format!("The URL `{url}` is invalid: {reason}"))
        }
        other => ProviderError::Connection(format!("`{url}`: {other}")),
    };
    error.into()
}

/// `250 ms`, `2 s`, `1.5 s`.
pub(crate) fn fmt_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

/// An `f32` as the `f64` with the same shortest decimal form, so `0.2`
/// goes on the wire as `0.2`, not `0.20000000298023224`.
pub(crate) fn wire_f32(x: f32) -> f64 {
    x.to_string().parse().unwrap_or(f64::from(x))
}

/// `base` + `path` with exactly one slash between them.
pub(crate) fn join_url(base: &str, path: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        let o = HttpOptions {
            backoff_base: Duration::from_millis(500),
            backoff_max: Duration::from_secs(3),
            ..Default::default()
        };
        let waits: Vec<u128> = (1..=5).map(|n| o.backoff(n).as_millis()).collect();
        assert_eq!(waits, vec![500, 1000, 2000, 3000, 3000]);
        assert_eq!(o.backoff(200), Duration::from_secs(3));
    }

    #[test]
    fn retry_after_is_honoured_and_capped() {
        let o = HttpOptions {
            retry_after_max: Duration::from_secs(5),
            ..Default::default()
        };
        assert_eq!(
            o.wait_before(1, parse_retry_after("2")),
            Duration::from_secs(2)
        );
        assert_eq!(
            o.wait_before(1, parse_retry_after("3600")),
            Duration::from_secs(5)
        );
        assert_eq!(parse_retry_after("0.25"), Some(Duration::from_millis(250)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("-1"), None);
    }

    #[test]
    fn error_messages_come_from_the_body() {
        assert_eq!(
            api_error_message(r#"{"error": {"message": "Invalid API key", "type": "auth"}}"#),
            "Invalid API key"
        );
        assert_eq!(
            api_error_message(r#"{"error": "model not found"}"#),
            "model not found"
        );
        assert_eq!(api_error_message("  Bad Gateway \n"), "Bad Gateway");
        assert_eq!(api_error_message(""), "(the body is empty)");
        let long = "x".repeat(600);
        assert_eq!(api_error_message(&long).chars().count(), 501);
    }

    #[test]
    fn urls_join_with_one_slash() {
        assert_eq!(
            join_url("http://h/v1/", "/chat/completions"),
            "http://h/v1/chat/completions"
        );
        assert_eq!(join_url("http://h", "v1/messages"), "http://h/v1/messages");
    }

    #[test]
    fn floats_keep_their_short_form() {
        assert_eq!(wire_f32(0.2), 0.2);
        assert_eq!(wire_f32(1.0), 1.0);
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(fmt_duration(Duration::from_millis(250)), "250 ms");
        assert_eq!(fmt_duration(Duration::from_secs(120)), "120 s");
        assert_eq!(fmt_duration(Duration::from_millis(1500)), "1.5 s");
    }
}

/// Where and how to reach a provider's HTTP API.
#[derive(Clone, Default)]
pub struct EndpointConfig {
    /// The API's base address; each client has its default. A trailing
    /// slash is fine.
    pub base_url: Option<String>,
    /// The API key, if the endpoint needs one.
    pub api_key: Option<String>,
    /// Used when a request sets no `max_tokens`.
    pub max_tokens: Option<u32>,
    pub http: HttpOptions,
}

impl std::fmt::Debug for EndpointConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EndpointConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("max_tokens", &self.max_tokens)
            .field("http", &self.http)
            .finish()
    }
}

impl EndpointConfig {
    /// Base URL and key from two environment variables (empty values count
    /// as unset).
    pub fn from_env(base_url_var: &str, api_key_var: &str) -> Self {
        EndpointConfig {
            base_url: env_var(base_url_var),
            api_key: env_var(api_key_var),
            ..Default::default()
        }
    }

    /// Let explicit options override what this config holds.
    pub fn apply(&mut self, options: &super::provider::ProviderOptions) {
        if options.base_url.is_some() {
            self.base_url.clone_from(&options.base_url);
        }
        if options.api_key.is_some() {
            self.api_key.clone_from(&options.api_key);
        }
        if options.max_tokens.is_some() {
            self.max_tokens = options.max_tokens;
        }
        self.http = options.http.clone();
    }
}

fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}
