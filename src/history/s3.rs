//! The S3-compatible archive backend: objects written with presigned PUT
//! requests (rusty-s3 signs, our HTTP client sends), with server-side
//! encryption when configured (SSE-S3, or SSE-KMS with a key id: the
//! headers are signed with the request). Credentials come as the AWS
//! tools find them: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and
//! `AWS_SESSION_TOKEN`, else the profile `AWS_PROFILE` (or `default`) of
//! the shared credentials file (`AWS_SHARED_CREDENTIALS_FILE`, else
//! `~/.aws/credentials`), then of the config file (`AWS_CONFIG_FILE`,
//! else `~/.aws/config`); the endpoint and region from the configuration
//! or `AWS_ENDPOINT_URL` and `AWS_REGION`.
//!
//! S3 has no append: `events.jsonl` is read once (what earlier runs of
//! the session wrote), kept in memory and written whole after each event.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusty_s3::{Bucket, Credentials, S3Action, UrlStyle};

use super::archive::Store;

/// Server-side encryption of the objects written.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ServerSideEncryption {
    /// The bucket's default.
    #[default]
    None,
    /// SSE-S3: keys managed by S3 (`AES256`).
    S3,
    /// SSE-KMS: a KMS key (id, ARN or alias), or the account's default
    /// key for S3 when `None`.
    Kms(Option<String>),
}

impl ServerSideEncryption {
    /// The request headers that ask for it.
    pub fn headers(&self) -> Vec<(&'static str, String)> {
        match self {
            ServerSideEncryption::None => Vec::new(),
            ServerSideEncryption::S3 => {
                vec![("x-amz-server-side-encryption", "AES256".into())]
            }
            ServerSideEncryption::Kms(key) => {
                let mut h = vec![("x-amz-server-side-encryption", "aws:kms".to_string())];
                if let Some(key) = key {
                    h.push(("x-amz-server-side-encryption-aws-kms-key-id", key.clone()));
                }
                h
            }
        }
    }
}

/// Where and how to reach the bucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S3Location {
    pub bucket: String,
    /// A key prefix (no leading or trailing `/`), may be empty.
    pub prefix: String,
    /// `https://s3.REGION.amazonaws.com` when `None`.
    pub endpoint: Option<String>,
    pub region: String,
    /// How objects are encrypted at rest.
    pub encryption: ServerSideEncryption,
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
            encryption: ServerSideEncryption::None,
        })
    }
}

/// Credentials as the AWS tools find them, with `var` reading the
/// environment: the `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` (and
/// `AWS_SESSION_TOKEN`) variables, else the profile `AWS_PROFILE` (or
/// `default`) in the shared credentials file, then in the config file
/// (where its section is `[profile NAME]`, `[default]` for the default).
/// `Ok(None)` when there are none (requests go unsigned); an error when
/// `AWS_PROFILE` names a profile that no file has, or a file cannot be
/// read.
pub fn find_credentials(
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Credentials>, String> {
    let var = |name: &str| var(name).filter(|v| !v.trim().is_empty());
    if let (Some(key), Some(secret)) = (var("AWS_ACCESS_KEY_ID"), var("AWS_SECRET_ACCESS_KEY")) {
        return Ok(Some(match var("AWS_SESSION_TOKEN") {
            Some(token) => Credentials::new_with_token(key, secret, token),
            None => Credentials::new(key, secret),
        }));
    }
    let named = var("AWS_PROFILE");
    let profile = named.clone().unwrap_or_else(|| "default".into());
    let home = var("HOME").map(PathBuf::from);
    let file = |variable: &str, name: &str| {
        var(variable)
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".aws").join(name)))
    };
    let sources = [
        (
            file("AWS_SHARED_CREDENTIALS_FILE", "credentials"),
            profile.clone(),
        ),
        (
            file("AWS_CONFIG_FILE", "config"),
            if profile == "default" {
                profile.clone()
            } else {
                format!("profile {profile}")
            },
        ),
    ];
    let mut searched = Vec::new();
    for (path, section) in sources {
        let Some(path) = path else { continue };
        let Some(entries) = read_profile(&path, &section)? else {
            searched.push(path.display().to_string());
            continue;
        };
        let get = |k: &str| {
            entries
                .iter()
                .find(|(name, _)| name == k)
                .map(|(_, v)| v.clone())
        };
        match (get("aws_access_key_id"), get("aws_secret_access_key")) {
            (Some(key), Some(secret)) => {
                return Ok(Some(match get("aws_session_token") {
                    Some(token) => Credentials::new_with_token(key, secret, token),
                    None => Credentials::new(key, secret),
                }))
            }
            _ => searched.push(path.display().to_string()),
        }
    }
    match named {
        Some(name) => Err(format!(
            "AWS_PROFILE is `{name}` but no credentials for it were found (searched {})",
            if searched.is_empty() {
                "nothing: HOME is not set".to_string()
            } else {
                searched.join(", ")
            }
        )),
        None => Ok(None),
    }
}

/// The `key = value` entries of `[section]` in the INI file at `path`;
/// `None` when the file or the section does not exist.
fn read_profile(path: &Path, section: &str) -> Result<Option<Vec<(String, String)>>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read `{}`: {e}", path.display())),
    };
    let mut found = None;
    let mut current = false;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = name.split_whitespace().collect::<Vec<_>>().join(" ") == section;
            if current {
                found.get_or_insert_with(Vec::new);
            }
            continue;
        }
        if let (true, Some((key, value))) = (current, line.split_once('=')) {
            found
                .get_or_insert_with(Vec::new)
                .push((key.trim().to_string(), value.trim().to_string()));
        }
    }
    Ok(found)
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
    /// A store for `location`, with credentials found as
    /// [`find_credentials`] says (anonymous requests when there are none).
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
            credentials: find_credentials(&|name| std::env::var(name).ok())?,
            agent,
            appended: HashMap::new(),
        })
    }

    fn object_key(&self, key: &str) -> String {
        if self.location.prefix.is_empty() {
            key.to_string()
        } else {
            format!("{}/{key}", self.location.prefix)
        }
    }

    fn put_object(&self, key: &str, bytes: &[u8]) -> Result<String, String> {
        let object = self.object_key(key);
        let encryption = self.location.encryption.headers();
        let mut action = self.bucket.put_object(self.credentials.as_ref(), &object);
        for (name, value) in &encryption {
            // Signed with the request, as S3 requires of these headers.
            action.headers_mut().insert(*name, value.clone());
        }
        let url = action.sign(Duration::from_secs(300));
        let mut request = self.agent.put(url.as_str());
        for (name, value) in &encryption {
            request = request.header(*name, value.as_str());
        }
        let response = request
            .send(bytes)
            .map_err(|e| format!("cannot upload s3://{}/{object}: {e}", self.location.bucket))?;
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            let mut response = response;
            let body = response
                .body_mut()
                .with_config()
                .limit(4096)
                .read_to_string()
                .unwrap_or_default();
            let code = xml_field(&body, "Code")
                .map(|c| format!(" ({c})"))
                .unwrap_or_default();
            return Err(format!(
                "cannot upload s3://{}/{object}: HTTP {status}{code}",
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
        let object = self.object_key(key);
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
        let bytes = response
            .body_mut()
            .read_to_vec()
            .map_err(|e| self.read_error(key, &e.to_string()))?;
        Ok((status, bytes))
    }

    fn read_error(&self, key: &str, why: &str) -> String {
        format!(
            "cannot read s3://{}/{}: {why}",
            self.location.bucket,
            self.object_key(key)
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
        let object = self.object_key(key);
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

/// The text of `<tag>...</tag>` in an S3 error body.
fn xml_field(body: &str, tag: &str) -> Option<String> {
    let start = body.find(&format!("<{tag}>"))? + tag.len() + 2;
    let end = body[start..].find(&format!("</{tag}>"))? + start;
    Some(body[start..end].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ptc-s3-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join(".aws")).unwrap();
        dir
    }

    fn found(vars: &[(&str, String)]) -> Result<Option<(String, String)>, String> {
        let lookup = |name: &str| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.clone())
        };
        find_credentials(&lookup).map(|c| c.map(|c| (c.key().into(), c.secret().into())))
    }

    #[test]
    fn credentials_come_from_the_environment_first_then_the_profile() {
        let home = temp("profiles");
        std::fs::write(
            home.join(".aws/credentials"),
            "[default]\naws_access_key_id = DEFKEY\naws_secret_access_key = defsecret\n\n\
             # a comment\n[work]\naws_access_key_id=WORKKEY\naws_secret_access_key=worksecret\n",
        )
        .unwrap();
        std::fs::write(
            home.join(".aws/config"),
            "[profile cfg]\nregion = eu-west-1\naws_access_key_id = CFGKEY\naws_secret_access_key = cfgsecret\n",
        )
        .unwrap();
        let h = ("HOME", home.display().to_string());
        let pair = |k: &str, s: &str| Some((k.to_string(), s.to_string()));
        assert_eq!(
            found(std::slice::from_ref(&h)),
            Ok(pair("DEFKEY", "defsecret"))
        );
        assert_eq!(
            found(&[h.clone(), ("AWS_PROFILE", "work".into())]),
            Ok(pair("WORKKEY", "worksecret"))
        );
        assert_eq!(
            found(&[h.clone(), ("AWS_PROFILE", "cfg".into())]),
            Ok(pair("CFGKEY", "cfgsecret"))
        );
        assert_eq!(
            found(&[
                h.clone(),
                ("AWS_ACCESS_KEY_ID", "ENVKEY".into()),
                ("AWS_SECRET_ACCESS_KEY", "envsecret".into())
            ]),
            Ok(pair("ENVKEY", "envsecret"))
        );
        let missing = found(&[h.clone(), ("AWS_PROFILE", "nope".into())]).unwrap_err();
        assert!(
            missing.starts_with("AWS_PROFILE is `nope` but no credentials"),
            "{missing}"
        );
        assert_eq!(found(&[("HOME", "/nonexistent".into())]), Ok(None));
        let _ = std::fs::remove_dir_all(home);
    }

    #[test]
    fn encryption_asks_with_the_standard_headers() {
        assert!(ServerSideEncryption::None.headers().is_empty());
        assert_eq!(
            ServerSideEncryption::S3.headers(),
            [("x-amz-server-side-encryption", "AES256".to_string())]
        );
        assert_eq!(
            ServerSideEncryption::Kms(Some("alias/ptc".into())).headers(),
            [
                ("x-amz-server-side-encryption", "aws:kms".to_string()),
                (
                    "x-amz-server-side-encryption-aws-kms-key-id",
                    "alias/ptc".to_string()
                )
            ]
        );
    }
}
