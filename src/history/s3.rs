//! The S3-compatible archive backend: objects written with presigned PUT
//! requests (rusty-s3 signs, our HTTP client sends). Credentials come
//! from `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and
//! `AWS_SESSION_TOKEN`; the endpoint and region from the configuration
//! or `AWS_ENDPOINT_URL` and `AWS_REGION`.
//!
//! S3 has no append: `events.jsonl` is read once (what earlier runs of
//! the session wrote), kept in memory and written whole after each event.

use std::collections::HashMap;
use std::time::Duration;

use rusty_s3::{Bucket, Credentials, S3Action, UrlStyle};

use super::archive::{check_key, Store};

/// The most bytes of an object read back (the session's `events.jsonl`,
/// which is appended to), as received and after decompression.
pub const MAX_OBJECT_BYTES: u64 = 64 * 1024 * 1024;

/// Where and how to reach the bucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S3Location {
    pub bucket: String,
    /// A key prefix (no leading or trailing `/`), may be empty.
    pub prefix: String,
    /// `https://s3.REGION.amazonaws.com` when `None`.
    pub endpoint: Option<String>,
    pub region: String,
}

impl S3Location {
    /// Parse `s3://bucket/prefix`; the endpoint and region come from
    /// `AWS_ENDPOINT_URL` and `AWS_REGION` (default `us-east-1`).
    pub fn parse(url: &str) -> Result<S3Location, String> {
        let rest = url
            .strip_prefix("s3://")
            .ok_or_else(|| format!("`{url}` is not an s3://bucket/prefix address"))?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(format!("`{url}` names no bucket"));
        }
        Ok(S3Location {
            bucket: bucket.to_string(),
            prefix: prefix.trim_matches('/').to_string(),
            endpoint: std::env::var("AWS_ENDPOINT_URL")
                .ok()
                .filter(|s| !s.is_empty()),
            region: std::env::var("AWS_REGION")
                .ok()
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "us-east-1".into()),
        })
    }
}

/// Writes objects to one bucket.
pub struct S3Store {
    location: S3Location,
    bucket: Bucket,
    credentials: Option<Credentials>,
    agent: ureq::Agent,
    appended: HashMap<String, Vec<u8>>,
}

impl std::fmt::Debug for S3Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Store")
            .field("location", &self.location)
            .finish_non_exhaustive()
    }
}

impl S3Store {
    /// A store for `location`, with credentials from the environment
    /// (anonymous requests when there are none).
    pub fn new(location: S3Location) -> Result<S3Store, String> {
        let endpoint = location
            .endpoint
            .clone()
            .unwrap_or_else(|| format!("https://s3.{}.amazonaws.com", location.region));
        let url =
            url::Url::parse(&endpoint).map_err(|e| format!("bad S3 endpoint `{endpoint}`: {e}"))?;
        let bucket = Bucket::new(
            url,
            UrlStyle::Path,
            location.bucket.clone(),
            location.region.clone(),
        )
        .map_err(|e| format!("bad S3 bucket `{}` at `{endpoint}`: {e:?}", location.bucket))?;
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(30)))
            .build()
            .new_agent();
        Ok(S3Store {
            location,
            bucket,
            credentials: Credentials::from_env(),
            agent,
            appended: HashMap::new(),
        })
    }

    /// The object's key under the prefix; a key that would leave the
    /// prefix is refused ([`check_key`]).
    fn object_key(&self, key: &str) -> Result<String, String> {
        check_key(key)?;
        Ok(if self.location.prefix.is_empty() {
            key.to_string()
        } else {
            format!("{}/{key}", self.location.prefix)
        })
    }

    fn put_object(&self, key: &str, bytes: &[u8]) -> Result<String, String> {
        let object = self.object_key(key)?;
        let url = self
            .bucket
            .put_object(self.credentials.as_ref(), &object)
            .sign(Duration::from_secs(300));
        let response =
            self.agent.put(url.as_str()).send(bytes).map_err(|e| {
                format!("cannot upload s3://{}/{object}: {e}", self.location.bucket)
            })?;
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            return Err(format!(
                "cannot upload s3://{}/{object}: HTTP {status}",
                self.location.bucket
            ));
        }
        Ok(format!("s3://{}/{object}", self.location.bucket))
    }

    /// The object's bytes if it exists; `None` when it does not, or when
    /// the credentials may not read it (403: then nothing is known of it).
    fn get_if_readable(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
        match self.read(key)? {
            (200, bytes) => Ok(Some(bytes)),
            (403 | 404, _) => Ok(None),
            (status, _) => Err(self.read_error(key, &format!("HTTP {status}"))),
        }
    }

    /// Read an object back (for checks and tests).
    pub fn get(&self, key: &str) -> Result<Vec<u8>, String> {
        match self.read(key)? {
            (200, bytes) => Ok(bytes),
            (status, _) => Err(self.read_error(key, &format!("HTTP {status}"))),
        }
    }

    /// GET an object: its status and, for 200, its bytes.
    fn read(&self, key: &str) -> Result<(u16, Vec<u8>), String> {
        let object = self.object_key(key)?;
        let url = self
            .bucket
            .get_object(self.credentials.as_ref(), &object)
            .sign(Duration::from_secs(300));
        let mut response = self
            .agent
            .get(url.as_str())
            .call()
            .map_err(|e| self.read_error(key, &e.to_string()))?;
        let status = response.status().as_u16();
        if status != 200 {
            return Ok((status, Vec::new()));
        }
        // At most the limit, as received and as inflated (a gzip bomb
        // stops there).
        let reader = response
            .body_mut()
            .with_config()
            .limit(MAX_OBJECT_BYTES)
            .reader();
        let bytes = crate::input::read_bytes(
            reader,
            MAX_OBJECT_BYTES,
            "the object",
            "for an archived object read back",
        )
        .map_err(|e| match e {
            crate::input::InputError::Io(e) => {
                self.read_error(key, &ureq::Error::from(e).to_string())
            }
            other => self.read_error(key, &other.to_string()),
        })?;
        Ok((status, bytes))
    }

    fn read_error(&self, key: &str, why: &str) -> String {
        format!(
            "cannot read s3://{}/{}: {why}",
            self.location.bucket,
            self.object_key(key).unwrap_or_else(|_| key.to_string())
        )
    }

    /// Create the bucket (for tests against a fresh server).
    pub fn create_bucket(&self) -> Result<(), String> {
        let credentials = self
            .credentials
            .as_ref()
            .ok_or("creating a bucket needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")?;
        let url = self
            .bucket
            .create_bucket(credentials)
            .sign(Duration::from_secs(300));
        let response = self
            .agent
            .put(url.as_str())
            .send_empty()
            .map_err(|e| format!("cannot create bucket {}: {e}", self.location.bucket))?;
        match response.status().as_u16() {
            200..=299 | 409 => Ok(()),
            status => Err(format!(
                "cannot create bucket {}: HTTP {status}",
                self.location.bucket
            )),
        }
    }
}

impl Store for S3Store {
    fn adapter(&self) -> &'static str {
        "s3"
    }

    fn put(&mut self, key: &str, bytes: &[u8]) -> Result<String, String> {
        self.put_object(key, bytes)
    }

    fn append(&mut self, key: &str, line: &[u8]) -> Result<String, String> {
        let mut whole = match self.appended.remove(key) {
            Some(whole) => whole,
            None => self.get_if_readable(key)?.unwrap_or_default(),
        };
        whole.extend_from_slice(line);
        let result = self.put_object(key, &whole);
        self.appended.insert(key.to_string(), whole);
        result
    }

    /// A HEAD request; 403 (no permission to list or read) counts as
    /// absent, as nothing better is known.
    fn exists(&mut self, key: &str) -> Result<bool, String> {
        let object = self.object_key(key)?;
        let url = self
            .bucket
            .head_object(self.credentials.as_ref(), &object)
            .sign(Duration::from_secs(300));
        let response = self.agent.head(url.as_str()).call().map_err(|e| {
            format!(
                "cannot look for s3://{}/{object}: {e}",
                self.location.bucket
            )
        })?;
        match response.status().as_u16() {
            200..=299 => Ok(true),
            403 | 404 => Ok(false),
            status => Err(format!(
                "cannot look for s3://{}/{object}: HTTP {status}",
                self.location.bucket
            )),
        }
    }
}
