//! Redaction before export (seed 004, "Security and Redaction" and
//! "Redaction before archival"): a corpus of realistic (fake) secrets that
//! must vanish, near-misses that must pass untouched, messages and JSON
//! redacted as copies, user patterns from the configuration, and property
//! tests mixing generated secrets into prose, JSON and code, through
//! [`Redactor`] and through the archive on disk.
//!
//! What counts as a secret, and what does not, is written at the top of
//! `src/history/redact.rs`; in short: known key shapes, private key
//! blocks, JWTs, bearer/basic credentials, URL passwords, and any value
//! given a secret's name (`api_key=`, `"password": "..."`). Hashes, UUIDs,
//! hex ids, base64 data and the words "token" or "password" without a
//! value are not.

use std::path::Path;

pub mod corpus;

use proptest::prelude::*;
use ptc_lisp::history::archive::{Archive, DirStore, SummaryRecord};
use ptc_lisp::history::config::{self, Overrides};
use ptc_lisp::history::redact::{Redactor, REDACTED};
use ptc_lisp::history::Message;
use serde_json::json;

// ----------------------------------------------------------------------
// The corpus.

const OPENAI_LEGACY: &str = "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";
const OPENAI_PROJECT: &str = "sk-proj-Xq3vN8LmT0pR2sY5wZ7aB9cD1eF4gH6jK8mN0pQ2rS4tU6vW8xY0zA2bC4dE6fG8hJ0kL2mN4pQ6rS8tU0vW2xY4zA6bC8dE0fG2hJ4kL6mN8pQ0rS2tU4vW6xY8zA0bC2dE4fG6hJ8kL0_mN2p-Q4rS6tU8vW0xY2zA4bC6dE8fG0hJ2kL4mN6pQ8rS0tA";
const OPENAI_SERVICE: &str =
    "sk-svcacct-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh3iJk6lMn9oPq2rSt5u";
const ANTHROPIC: &str = "sk-ant-api03-R2D2c3poBB8xK9mLqT4vW7zY1aE5hJ0nP3sU6wX9bF2iL5oR8tV1yC4gK7mQ0uZ3dH6jN9pS2wA5eI8lO1rU4xB7fM0qT3vY6zC9gJ2nR5-AA";
const AWS_KEY_ID: &str = "AKIAIOSFODNN7EXAMPLE";
const AWS_TEMP_KEY_ID: &str = "ASIAY34FZKBOKMUTVV7A";
const AWS_SECRET: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const AWS_SESSION_TOKEN: &str = "FwoGZXIvYXdzEBYaDHqa0AP1/pL9+Zs7dCKxAVHm2GmCkUf0kA4qN3o8eF1rT6yV";
const GITHUB_PAT_CLASSIC: &str = "ghp_R7vX2kP9mQ4tL8wZ1nB5cF3hJ6sD0gY2aE4i";
const GITHUB_OAUTH: &str = "gho_16C7e42F292c6912E7710c838347Ae178B4a";
const GITHUB_FINE_GRAINED: &str =
    "github_pat_11ABCDEFG0aBcDeFgHiJkLm_NoPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ012345678";
const SLACK_BOT: &str = "xoxb-2048613957-4096123857-Kd8fH2jL9mN3pQ5rS7tV1wX4";
const SLACK_USER: &str = "xoxp-1234567890-0987654321-1122334455-a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6";
const JWT: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
const OPAQUE_BEARER: &str = "9f8e7d6c5b4a39281706f5e4d3c2b1a0";

const RSA_BODY: [&str; 3] = [
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK",
    "LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo9z+40R",
];
const OPENSSH_BODY: [&str; 3] = [
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
    "QyNTUxOQAAACDn4dDbnJYTvwXHmZ5aPH5CHOPPOjdMcr1J8E5TIsQe3QAAAJgCgGDYAoBg",
    "2AAAAAtzc2gtZWQyNTUxOQAAACDn4dDbnJYTvwXHmZ5aPH5CHOPPOjdMcr1J8E5TIsQe3Q==",
];
const EC_BODY: [&str; 2] = [
    "MHcCAQEEIBYj3pWJ7RzSm9kxw0eSPDaKK1JQbfg8kdTAw0yAJ0kWoAoGCCqGSM49",
    "AwEHoUQDQgAE3k8v0bQ6tDnWTvmF6j5gpjHBDhnS0J2A3WjH+4R1fX3yl0q8Dp==",
];

fn pem(kind: &str, body: &[&str]) -> String {
    let label = if kind.is_empty() {
        "PRIVATE KEY".to_string()
    } else {
        format!("{kind} PRIVATE KEY")
    };
    format!(
        "-----BEGIN {label}-----\n{}\n-----END {label}-----",
        body.join("\n")
    )
}

/// (what, text, the secrets that must vanish, what must stay).
fn corpus() -> Vec<(&'static str, String, Vec<String>, Vec<&'static str>)> {
    let s = |x: &str| x.to_string();
    vec![
        (
            "openai legacy key in prose",
            format!("use {OPENAI_LEGACY} for the call"),
            vec![s(OPENAI_LEGACY)],
            vec!["use ", " for the call"],
        ),
        (
            "openai project key in an env file",
            format!("OPENAI_API_KEY={OPENAI_PROJECT}\nDEBUG=1"),
            vec![s(OPENAI_PROJECT), s("Xq3vN8LmT0pR")],
            vec!["OPENAI_API_KEY=", "DEBUG=1"],
        ),
        (
            "openai service account key in quotes",
            format!("client = OpenAI(api_key='{OPENAI_SERVICE}')"),
            vec![s(OPENAI_SERVICE)],
            vec!["client = OpenAI(api_key='", "')"],
        ),
        (
            "anthropic key",
            format!("export ANTHROPIC_API_KEY=\"{ANTHROPIC}\""),
            vec![s(ANTHROPIC), s("R2D2c3poBB8x")],
            vec!["export ANTHROPIC_API_KEY=\""],
        ),
        (
            "aws access key id in a credentials file",
            format!(
                "[default]\naws_access_key_id = {AWS_KEY_ID}\naws_secret_access_key = {AWS_SECRET}\nregion = us-east-1"
            ),
            vec![s(AWS_KEY_ID), s(AWS_SECRET), s("bPxRfiCY")],
            vec!["[default]", "aws_access_key_id = ", "aws_secret_access_key = ", "region = us-east-1"],
        ),
        (
            "aws keys as environment variables",
            format!(
                "AWS_ACCESS_KEY_ID={AWS_TEMP_KEY_ID} AWS_SECRET_ACCESS_KEY={AWS_SECRET} AWS_SESSION_TOKEN={AWS_SESSION_TOKEN} aws s3 ls"
            ),
            vec![s(AWS_TEMP_KEY_ID), s(AWS_SECRET), s(AWS_SESSION_TOKEN)],
            vec!["AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY=", "AWS_SESSION_TOKEN=", " aws s3 ls"],
        ),
        (
            "aws sts output (JSON text)",
            format!(
                "{{\n  \"Credentials\": {{\n    \"AccessKeyId\": \"{AWS_TEMP_KEY_ID}\",\n    \"SecretAccessKey\": \"{AWS_SECRET}\",\n    \"SessionToken\": \"{AWS_SESSION_TOKEN}\"\n  }}\n}}"
            ),
            vec![s(AWS_TEMP_KEY_ID), s(AWS_SECRET), s(AWS_SESSION_TOKEN)],
            vec!["\"AccessKeyId\": \"", "\"SecretAccessKey\": \"<REDACTED>\"", "\"SessionToken\": \"<REDACTED>\""],
        ),
        (
            "github classic and oauth tokens",
            format!("git clone https://{GITHUB_PAT_CLASSIC}@github.com/o/r.git; GH_TOKEN {GITHUB_OAUTH}"),
            vec![s(GITHUB_PAT_CLASSIC), s(GITHUB_OAUTH)],
            vec!["git clone https://", "@github.com/o/r.git", "GH_TOKEN "],
        ),
        (
            "github fine-grained token",
            format!("token: {GITHUB_FINE_GRAINED}"),
            vec![s(GITHUB_FINE_GRAINED), s("11ABCDEFG0aB")],
            vec!["token: "],
        ),
        (
            "slack tokens",
            format!("SLACK_BOT_TOKEN={SLACK_BOT}\nuser {SLACK_USER} posted"),
            vec![s(SLACK_BOT), s(SLACK_USER)],
            vec!["SLACK_BOT_TOKEN=", "user ", " posted"],
        ),
        (
            "bearer header with a JWT",
            format!("curl -H 'Authorization: Bearer {JWT}' https://api.example.com"),
            vec![s(JWT), s("SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")],
            vec!["curl -H 'Authorization: Bearer ", "' https://api.example.com"],
        ),
        (
            "bearer header with an opaque token",
            format!("Authorization: Bearer {OPAQUE_BEARER}\nAccept: */*"),
            vec![s(OPAQUE_BEARER)],
            vec!["Authorization: Bearer <REDACTED>", "Accept: */*"],
        ),
        (
            "JWT alone",
            format!("the session cookie was {JWT}."),
            vec![s(JWT)],
            vec!["the session cookie was "],
        ),
        (
            "basic auth header",
            "Authorization: Basic dXNlcjpodW50ZXIyMjI=".into(),
            vec![s("dXNlcjpodW50ZXIyMjI=")],
            vec!["Authorization: Basic <REDACTED>"],
        ),
        (
            "api_key= (seed 004)",
            "api_key=sk-abc123".into(),
            vec![s("sk-abc123")],
            vec!["api_key=<REDACTED>"],
        ),
        (
            "api-key header and apiKey field",
            "X-Api-Key: 7c4a8d09ca3762af61e59520943dc264\nconst apiKey = \"AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY\";".into(),
            vec![s("7c4a8d09ca3762af61e59520943dc264"), s("AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY")],
            vec!["X-Api-Key: <REDACTED>", "const apiKey = \"<REDACTED>\";"],
        ),
        (
            "token= in a query string",
            "GET /hook?user=ann&token=Zk9mQ2xRbT0&page=2".into(),
            vec![s("Zk9mQ2xRbT0")],
            vec!["GET /hook?user=ann&token=<REDACTED>&page=2"],
        ),
        (
            "password= and password:",
            "login --password=hunter2222 then\nPassword: correct-horse-battery".into(),
            vec![s("hunter2222"), s("correct-horse-battery")],
            vec!["login --password=<REDACTED> then", "Password: <REDACTED>"],
        ),
        (
            "JSON password with spaces",
            r#"{"user": "ann", "password": "correct horse battery staple", "remember": true}"#.into(),
            vec![s("correct horse battery staple"), s("horse"), s("staple")],
            vec![r#"{"user": "ann", "password": "<REDACTED>", "remember": true}"#],
        ),
        (
            "JSON inside a JSON string (escaped quotes)",
            r#"{"arguments": "{\"db_password\": \"p4ss-W0rd!\", \"host\": \"db\"}"}"#.into(),
            vec![s("p4ss-W0rd!")],
            vec![r#"\"db_password\": \"<REDACTED>\""#, r#"\"host\": \"db\""#],
        ),
        (
            "YAML secrets",
            "database:\n  password: 's3cr3t pass'\n  client_secret: 8f14e45fceea167a\n  passphrase: \"open sesame 42\"".into(),
            vec![s("s3cr3t pass"), s("8f14e45fceea167a"), s("open sesame 42")],
            vec!["  password: '<REDACTED>'", "  client_secret: <REDACTED>", "  passphrase: \"<REDACTED>\""],
        ),
        (
            "PTC-Lisp map with a password",
            r#"(tool/login {:user "ann" :password "hunter2222"})"#.into(),
            vec![s("hunter2222")],
            vec![r#"(tool/login {:user "ann" :password "<REDACTED>"})"#],
        ),
        (
            "ODBC connection string",
            "Server=db;Uid=sa;Pwd=Sup3r$ecret;Encrypt=yes".into(),
            vec![s("Sup3r$ecret")],
            vec!["Server=db;Uid=sa;Pwd=<REDACTED>;Encrypt=yes"],
        ),
        (
            "RSA private key",
            format!("key:\n{}\ndone", pem("RSA", &RSA_BODY)),
            RSA_BODY.iter().map(|l| l.to_string()).collect(),
            vec!["key:\n", "\ndone"],
        ),
        (
            "OpenSSH private key",
            pem("OPENSSH", &OPENSSH_BODY),
            OPENSSH_BODY.iter().map(|l| l.to_string()).collect(),
            vec![],
        ),
        (
            "EC private key",
            pem("EC", &EC_BODY),
            EC_BODY.iter().map(|l| l.to_string()).collect(),
            vec![],
        ),
        (
            "PKCS#8 private key, encrypted and not",
            format!("{}\n{}", pem("", &EC_BODY), pem("ENCRYPTED", &RSA_BODY)),
            EC_BODY.iter().chain(&RSA_BODY).map(|l| l.to_string()).collect(),
            vec![],
        ),
        (
            "PGP private key block",
            format!(
                "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{}\n-----END PGP PRIVATE KEY BLOCK-----",
                RSA_BODY.join("\n")
            ),
            RSA_BODY.iter().map(|l| l.to_string()).collect(),
            vec![],
        ),
        (
            "private key in a JSON string (escaped newlines)",
            format!(
                r#"{{"private_key": "-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----\n", "type": "service_account"}}"#,
                RSA_BODY.join(r"\n")
            ),
            RSA_BODY.iter().map(|l| l.to_string()).collect(),
            vec![r#""type": "service_account""#],
        ),
        (
            "private key cut short",
            format!(
                "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,3F17F5316E2BAC89\n\n{}\n{}\n[output truncated]",
                RSA_BODY[0], RSA_BODY[1]
            ),
            vec![s(RSA_BODY[0]), s(RSA_BODY[1]), s("3F17F5316E2BAC89")],
            vec!["[output truncated]"],
        ),
        (
            "URL with credentials",
            "DATABASE_URL=postgres://admin:S3cr3t!Pass@db.internal:5432/app and https://ann:hunter2@example.com/x".into(),
            vec![s("S3cr3t!Pass"), s("hunter2")],
            vec!["postgres://admin:<REDACTED>@db.internal:5432/app", "https://ann:<REDACTED>@example.com/x"],
        ),
        (
            "URL password containing @",
            "redis://default:p@ss@cache:6379/0".into(),
            vec![s("p@ss")],
            vec!["redis://default:<REDACTED>@cache:6379/0"],
        ),
    ]
}

#[test]
fn corpus_of_secrets_is_redacted() {
    let r = Redactor::default();
    // The samples have their real shapes.
    assert_eq!(AWS_KEY_ID.len(), 20);
    assert_eq!(AWS_TEMP_KEY_ID.len(), 20);
    assert_eq!(AWS_SECRET.len(), 40);
    assert_eq!(GITHUB_PAT_CLASSIC.len(), 40);
    assert_eq!(GITHUB_OAUTH.len(), 40);
    assert_eq!(GITHUB_FINE_GRAINED.len(), 93);
    assert_eq!(JWT.split('.').count(), 3);
    for (what, text, secrets, kept) in corpus() {
        let out = r.redact(&text);
        for secret in &secrets {
            assert!(
                !out.contains(secret.as_str()),
                "{what}: `{secret}` survives in\n{out}"
            );
        }
        assert!(out.contains(REDACTED), "{what}: nothing redacted in\n{out}");
        for k in kept {
            assert!(out.contains(k), "{what}: `{k}` was lost in\n{out}");
        }
        assert!(r.finds_secret(&text), "{what}: finds_secret");
        assert!(!r.finds_secret(&out), "{what}: still a secret in\n{out}");
        assert_eq!(r.redact(&out), out, "{what}: redaction is idempotent");
    }
}

#[test]
fn redaction_keeps_names_and_separators() {
    let r = Redactor::default();
    for (text, expected) in [
        ("api_key=sk-abc123", "api_key=<REDACTED>"),
        ("API_KEY = abc123xyz", "API_KEY = <REDACTED>"),
        ("token: abc123", "token: <REDACTED>"),
        ("access_token=ya29.a0AfH6SMBx", "access_token=<REDACTED>"),
        ("secret_key='abc123xyz'", "secret_key='<REDACTED>'"),
        ("\"password\":\"hunter22\"", "\"password\":\"<REDACTED>\""),
        // The whole value, to the end of its line (issue 38).
        ("my password: hunter22 ok", "my password: <REDACTED>"),
        (
            "Authorization: Bearer abcDEF123456ghi",
            "Authorization: Bearer <REDACTED>",
        ),
        ("bearer abcdefghijk12345", "bearer <REDACTED>"),
        // A scheme's word after a secret's name, bracketed or not: the
        // token after it goes, not the word.
        (
            "token\t= (bearer a~~aA_-0_a_aa~~+~aAa ",
            "token\t= (bearer <REDACTED> ",
        ),
        (
            "token = bearer abcDEF123456ghi",
            "token = bearer <REDACTED>",
        ),
    ] {
        assert_eq!(r.redact(text), expected, "{text}");
    }
}

#[test]
fn near_misses_are_left_alone() {
    let r = Redactor::default();
    let texts = [
        // Hashes, ids and digests.
        "commit 3fbf9e4a1c2d5e6f7a8b9c0d1e2f3a4b5c6d7e8f merged",
        "fixed in 3fbf9e4 and dc2531c",
        "request id 550e8400-e29b-41d4-a716-446655440000",
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "object 0x7ffd5fbff8a0, id 9f86d081884c7d65",
        "md5 d41d8cd98f00b204e9800998ecf8427e",
        // Base64 data.
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
        // The words without a value.
        "the password field is required",
        "enter your password and press return",
        "token count: 512",
        "tokens: 512 of 128000",
        "max_tokens=1024, input_tokens: 300, \"output_tokens\": 99",
        "token_count = 4096",
        "a bearer token is sent with each request",
        "Bearer authentication is the usual scheme.",
        "the secret of good code is small functions",
        "api keys are rotated every 90 days",
        "estimated_tokens=1200 budget=126500",
        // Code without a literal secret.
        "(let [token (tool/get-token)] (tool/fetch {:token token}))",
        "fn token(&self) -> &str { &self.token }",
        "pub token_count: usize,",
        "if tokens > budget { compact(&mut history) }",
        "(defn check [password] (count password))",
        // `sk-` inside words, kebab-case, paths and numbers.
        "see the task-list on the desk-top; risk-free",
        "sk-learn-compatible-transformer-pipeline",
        "/home/ann/ask-me-anything/src/main.rs:42",
        "cd $HOME && PWD=/home/ann/project OLDPWD=/tmp make",
        "3.14159 2718281828 1e-9 -42",
        "ghp_short and xoxb-1 and AKIA1234",
        "https://example.com:8443/path?q=1 and git@github.com:org/repo.git",
        "see https://mastodon.social/@ann for updates",
    ];
    for text in texts {
        assert_eq!(r.redact(text), text, "false positive");
        assert!(!r.finds_secret(text), "finds_secret: {text}");
    }
}

#[test]
fn message_copy_is_redacted_everywhere_and_the_original_kept() {
    let r = Redactor::default();
    let mut m = Message::tool_call([(
        "call_1",
        "http_get",
        r#"{"url": "https://api.example.com", "headers": {"Authorization": "Bearer abcDEF123456ghiJKL"}}"#,
    )]);
    m.content = format!("calling with {GITHUB_PAT_CLASSIC}").into();
    m.extra
        .insert("api_key".into(), json!("plain-looking-value"));
    m.extra.insert(
        "provider_data".into(),
        json!({"nested": [{"token": "abc"}, format!("key {OPENAI_LEGACY}")]}),
    );
    let mut m = m.protected();
    m.meta
        .as_mut()
        .unwrap()
        .extra
        .insert("note".into(), json!(format!("password: hunter2222")));
    let original = m.clone();

    let copy = r.message(&m);
    assert_eq!(m, original, "the original message is unchanged");
    let text = serde_json::to_string(&copy).unwrap();
    for secret in [
        GITHUB_PAT_CLASSIC,
        "abcDEF123456ghiJKL",
        "plain-looking-value",
        OPENAI_LEGACY,
        "hunter2222",
    ] {
        assert!(!text.contains(secret), "`{secret}` survives in {text}");
    }
    // A string under a secret's name goes whatever it looks like, even
    // when short.
    assert_eq!(copy.extra["api_key"], json!(REDACTED));
    assert_eq!(
        copy.extra["provider_data"]["nested"][0]["token"],
        json!(REDACTED)
    );
    // Everything else is as it was.
    assert_eq!(copy.role, m.role);
    assert!(copy.is_protected());
    assert_eq!(copy.tool_call_ids().collect::<Vec<_>>(), vec!["call_1"]);
    assert_eq!(copy.content.as_str(), Some("calling with <REDACTED>"));
    // Redacting the copy again changes nothing.
    assert_eq!(r.message(&copy), copy);
}

#[test]
fn json_is_redacted_by_value_and_by_key() {
    let r = Redactor::default();
    let value = json!({
        "event": "compact.summary_created",
        "tokens_before": 120000,
        "max_tokens": 1024,
        "summary": format!("the user pasted {AWS_KEY_ID}"),
        "password": "x",
        "clientSecret": "abc",
        "auth": {"refresh_token": "1//0gLmn", "expires_in": 3600},
        "empty_token": "",
        "token_count": "512",
        "items": [OPENAI_PROJECT, "ok"],
    });
    let out = r.json(&value);
    assert_eq!(
        out,
        json!({
            "event": "compact.summary_created",
            "tokens_before": 120000,
            "max_tokens": 1024,
            "summary": "the user pasted <REDACTED>",
            "password": REDACTED,
            "clientSecret": REDACTED,
            "auth": {"refresh_token": REDACTED, "expires_in": 3600},
            "empty_token": "",
            "token_count": "512",
            "items": [REDACTED, "ok"],
        })
    );
    assert_eq!(r.json(&out), out, "idempotent");
}

#[test]
fn user_patterns_apply_after_the_defaults() {
    let r = Redactor::new(&[r"(employee-)\d{6}".into(), r"ACME-[A-Z0-9]{8}".into()]).unwrap();
    assert_eq!(
        r.redact("employee-123456 used ACME-7F3K9Q2Z and api_key=abc123"),
        "employee-<REDACTED> used <REDACTED> and api_key=<REDACTED>"
    );
    let names = r.pattern_names();
    assert_eq!(&names[names.len() - 2..], &["user-1", "user-2"]);
    assert!(Redactor::default().pattern_names().len() >= 8);
    let err = Redactor::new(&["ok".into(), "(unclosed".into()]).unwrap_err();
    assert_eq!(err.pattern, "(unclosed");
}

#[test]
fn user_patterns_from_the_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ptc.toml");
    std::fs::write(&path, "[redaction]\npatterns = ['(ticket-)\\d{4,}']\n").unwrap();
    let loaded = config::load_with_env(Some(&path), Overrides::default(), &[]).unwrap();
    let r = loaded.config.redactor().unwrap().unwrap();
    assert_eq!(
        r.redact("ticket-88231 token=abc123"),
        "ticket-<REDACTED> token=<REDACTED>"
    );
    // A pattern that does not compile is a configuration error naming
    // the field.
    std::fs::write(&path, "[redaction]\npatterns = ['[a-']\n").unwrap();
    let err = config::load_with_env(Some(&path), Overrides::default(), &[])
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("redaction.patterns = \"[a-\""), "{err}");
}

// ----------------------------------------------------------------------
// Properties.

const CASES: u32 = 1_000;
/// The archive writes and syncs files: fewer cases.
const ARCHIVE_CASES: u32 = 128;

/// A secret as it appears in text (`shown`) and the parts of it that
/// must not survive (`secrets`).
#[derive(Debug, Clone)]
struct Secret {
    shown: String,
    secrets: Vec<String>,
}

fn secret(shown: String, secret: String) -> Secret {
    Secret {
        shown,
        secrets: vec![secret],
    }
}

fn plain(s: String) -> Secret {
    secret(s.clone(), s)
}

/// Characters of a named value without quotes: no space and none of the
/// delimiters `"',;&\` (a value with those cannot be told from what
/// follows it unless it is quoted). At least 8 characters: the check is
/// that a secret's text is gone, and a 3-character secret can occur by
/// chance in a hash of the filler (short values are redacted all the
/// same; the corpus tests show it).
const VALUE: &str = "[A-Za-z0-9!@#$%^*()_+=./:~-]{8,30}";

fn secrets() -> impl Strategy<Value = Secret> {
    let names = prop::sample::select(vec![
        "api_key",
        "API_KEY",
        "apiKey",
        "x-api-key",
        "token",
        "access_token",
        "AWS_SESSION_TOKEN",
        "password",
        "db_password",
        "client_secret",
        "secret_key",
        "passphrase",
        "credentials",
    ]);
    prop_oneof![
        (
            prop::sample::select(vec!["", "proj-", "svcacct-", "admin-"]),
            "[A-Za-z0-9_-]{40,120}[A-Za-z0-9]"
        )
            .prop_map(|(kind, body)| plain(format!("sk-{kind}{body}"))),
        "[A-Za-z0-9_-]{80,95}".prop_map(|b| plain(format!("sk-ant-api03-{b}AA"))),
        (prop::sample::select(vec!["AKIA", "ASIA"]), "[A-Z0-9]{16}")
            .prop_map(|(p, b)| plain(format!("{p}{b}"))),
        (
            prop::sample::select(vec![
                "aws_secret_access_key = ",
                "AWS_SECRET_ACCESS_KEY=",
                "\"SecretAccessKey\": \"",
                "secret_access_key: ",
            ]),
            "[A-Za-z0-9/+]{40}"
        )
            .prop_map(|(p, v)| {
                let end = if p.ends_with('"') { "\"" } else { "" };
                secret(format!("{p}{v}{end}"), v)
            }),
        (
            prop::sample::select(vec!["ghp", "gho", "ghu", "ghs", "ghr"]),
            "[A-Za-z0-9]{36}"
        )
            .prop_map(|(p, b)| plain(format!("{p}_{b}"))),
        ("[A-Za-z0-9]{22}", "[A-Za-z0-9]{59}")
            .prop_map(|(a, b)| plain(format!("github_pat_{a}_{b}"))),
        (
            prop::sample::select(vec!["xoxb", "xoxp", "xoxa"]),
            "[0-9]{10,13}-[0-9]{10,13}-[A-Za-z0-9]{24,32}"
        )
            .prop_map(|(p, b)| plain(format!("{p}-{b}"))),
        (
            prop::sample::select(vec!["Authorization: Bearer ", "bearer ", "BEARER "]),
            "[A-Za-z0-9._~+/-]{19,60}[A-Za-z0-9]"
        )
            .prop_map(|(p, t)| secret(format!("{p}{t}"), t)),
        (
            "[A-Za-z0-9_-]{10,40}",
            "[A-Za-z0-9_-]{10,80}",
            "[A-Za-z0-9_-]{20,43}"
        )
            .prop_map(|(h, p, s)| plain(format!("eyJ{h}.eyJ{p}.{s}"))),
        (
            names.clone(),
            prop::sample::select(vec!["=", ": ", " = ", ":"]),
            VALUE
        )
            .prop_map(|(n, sep, v)| secret(format!("{n}{sep}{v}"), v)),
        (
            names,
            prop::sample::select(vec!["\"", "'"]),
            "[A-Za-z0-9!@#$%^*()_+=./:~ -]{7,30}[A-Za-z0-9]"
        )
            .prop_map(|(n, q, v)| {
                let shown = if q == "\"" {
                    format!("\"{n}\": \"{v}\"")
                } else {
                    format!("{n}: '{v}'")
                };
                secret(shown, v)
            }),
        (
            prop::sample::select(vec!["RSA ", "EC ", "OPENSSH ", "DSA ", "ENCRYPTED ", ""]),
            prop::collection::vec("[A-Za-z0-9+/]{64}", 1..6),
            "[A-Za-z0-9+/]{8,60}",
            any::<bool>(),
        )
            .prop_map(|(kind, lines, last, complete)| {
                let last = format!("{last}==");
                let mut shown = format!("-----BEGIN {kind}PRIVATE KEY-----\n");
                for l in &lines {
                    shown.push_str(l);
                    shown.push('\n');
                }
                shown.push_str(&last);
                if complete {
                    shown.push_str(&format!("\n-----END {kind}PRIVATE KEY-----"));
                }
                let mut secrets = lines;
                secrets.push(last);
                Secret { shown, secrets }
            }),
        (
            prop::sample::select(vec!["https", "postgres", "redis", "mongodb+srv"]),
            "[a-z]{3,10}",
            "[A-Za-z0-9!$%*+._~-]{6,24}",
            "[a-z]{3,10}\\.[a-z]{2,5}",
        )
            .prop_map(|(scheme, user, pass, host)| {
                secret(format!("{scheme}://{user}:{pass}@{host}/db"), pass)
            }),
    ]
}

/// Words of prose, JSON and code, some of them near-misses on purpose.
fn filler() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(vec![
            "the", "token", "tokens", "password", "secret", "key", "Bearer", "bearer",
            "api", "task-list", "desk-top", "sk", "sk-", "AKIA", "eyJ", "ghp", "-----BEGIN",
            "summary:", "note", "error:", "src/lib.rs:12", "ok", "=", ":", "{", "}", "\"",
            "(let [token (tool/get-token)]", "max_tokens=1024", "token count: 512",
        ]).prop_map(str::to_string),
        1 => "[0-9a-f]{40}",
        1 => "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        1 => "sha256:[0-9a-f]{64}",
        1 => "[A-Za-z0-9+/]{20,80}={0,2}",
        1 => "[a-z ]{1,30}",
        1 => (
            prop::sample::select(vec!["user", "path", "count", "status", "model"]),
            "[a-z0-9 ]{0,12}"
        )
            .prop_map(|(k, v)| json!({ k: v }).to_string()),
    ]
}

const SEPARATORS: &[&str] = &[
    " ", "\n", ". ", ", ", " (", ") ", "\t", "; ", " \"", "\" ", "\n\n",
];

/// Text mixing filler and secrets, and the secrets in it.
fn mixed() -> impl Strategy<Value = (String, Vec<String>)> {
    prop::collection::vec(
        (
            prop_oneof![3 => filler().prop_map(|f| (f, None)), 1 => secrets().prop_map(|s| (s.shown.clone(), Some(s)))],
            prop::sample::select(SEPARATORS),
        ),
        1..30,
    )
    .prop_map(|parts| {
        let mut text = String::new();
        let mut found = Vec::new();
        for ((shown, s), sep) in parts {
            text.push_str(&shown);
            text.push_str(sep);
            if let Some(s) = s {
                found.extend(s.secrets);
            }
        }
        (text, found)
    })
}

fn assert_clean(r: &Redactor, out: &str, secrets: &[String]) -> Result<(), TestCaseError> {
    for s in secrets {
        prop_assert!(!out.contains(s.as_str()), "`{}` survives in\n{}", s, out);
    }
    prop_assert!(!r.finds_secret(out), "a pattern still matches in\n{}", out);
    Ok(())
}

/// Every string in a JSON value.
fn strings(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
        serde_json::Value::Object(m) => m.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

fn files_under(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn no_generated_secret_survives_redaction((text, secrets) in mixed()) {
        let r = Redactor::default();
        let out = r.redact(&text);
        assert_clean(&r, &out, &secrets)?;
        if !secrets.is_empty() {
            prop_assert!(out.contains(REDACTED));
        }
        prop_assert_eq!(r.redact(&out), out.clone(), "idempotent");
    }

    #[test]
    fn redaction_of_messages_and_json_is_a_clean_copy(
        (content, s1) in mixed(),
        (args, s2) in mixed(),
        (extra, s3) in mixed(),
    ) {
        let r = Redactor::default();
        let arguments = json!({"query": args}).to_string();
        let mut m = Message::tool_call([("call_1", "search", arguments.as_str())]);
        m.content = content.clone().into();
        m.extra.insert("provider_data".into(), json!({"log": [extra.clone()]}));
        let original = m.clone();
        let copy = r.message(&m);
        prop_assert_eq!(&m, &original, "the original is unchanged");
        let all: Vec<String> = s1.iter().chain(&s2).chain(&s3).cloned().collect();
        let mut texts = Vec::new();
        strings(&serde_json::to_value(&copy).unwrap(), &mut texts);
        for t in &texts {
            assert_clean(&r, t, &all)?;
        }
        // The tool call's arguments are a JSON string; what is left of
        // them is checked as text above.
        prop_assert_eq!(r.message(&copy), copy.clone(), "idempotent");

        let value = json!({"content": content, "nested": [{"args": args}, extra]});
        let out = r.json(&value);
        let mut texts = Vec::new();
        strings(&out, &mut texts);
        for t in &texts {
            assert_clean(&r, t, &all)?;
        }
        prop_assert_eq!(r.json(&out), out, "idempotent");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(ARCHIVE_CASES))]

    #[test]
    fn archived_files_hold_no_generated_secret(
        turns in prop::collection::vec(mixed(), 1..6),
        (summary, s_summary) in mixed(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut archive = Archive::new(
            Box::new(DirStore::new(dir.path())),
            "session-1",
            Some(Redactor::default()),
        );
        let mut history = vec![Message::system("You are a coding agent.")];
        let mut all: Vec<String> = s_summary.clone();
        for (i, (text, secrets)) in turns.iter().enumerate() {
            all.extend(secrets.iter().cloned());
            let id = format!("call_{i}");
            let arguments = json!({"cmd": text}).to_string();
            history.push(Message::user(text.clone()));
            history.push(Message::tool_call([(id.as_str(), "shell", arguments.as_str())]));
            history.push(Message::tool_result(id.clone(), text.clone()));
        }
        let before = history.clone();
        let record = SummaryRecord {
            session_id: "session-1".into(),
            step: 0,
            version: Some(1),
            strategy: "task_state".into(),
            summarizer: "digest".into(),
            summary: Some(summary.clone()),
            tokens_before: 1000,
            tokens_after: 100,
            pruned_messages: history.len() - 1,
            note: Some(summary),
        };
        let saved = archive.save_round(&history, &record).unwrap();
        prop_assert_eq!(saved.len(), 2);
        prop_assert_eq!(&history, &before, "copy on export: the history is unchanged");

        let mut files = Vec::new();
        files_under(dir.path(), &mut files);
        prop_assert_eq!(files.len(), 2);
        let r = Redactor::default();
        for file in files {
            let bytes = std::fs::read(&file).unwrap();
            let text = String::from_utf8(bytes).unwrap();
            for s in &all {
                prop_assert!(
                    !text.contains(s.as_str()),
                    "`{}` survives in {}:\n{}", s, file.display(), text
                );
            }
            // Every string in every JSON document, as the reader sees it.
            let docs: Vec<serde_json::Value> = if file.extension().is_some_and(|e| e == "jsonl") {
                text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
            } else {
                vec![serde_json::from_str(&text).unwrap()]
            };
            for doc in docs {
                let mut texts = Vec::new();
                strings(&doc, &mut texts);
                for t in &texts {
                    assert_clean(&r, t, &all)?;
                }
            }
        }
    }
}

// ----------------------------------------------------------------------
// The seed's scenarios, by name.

/// Seed 004, "Default redaction enabled": a configuration that says
/// nothing of redaction redacts API keys, passwords, tokens and private
/// keys.
#[test]
fn default_redaction_enabled() {
    let r = config::Config::default()
        .redactor()
        .unwrap()
        .expect("redaction is on by default");
    let rsa = pem("RSA", &RSA_BODY);
    for (text, secret) in [
        ("api_key=sk-abc123", "sk-abc123"),
        ("password: correct-horse-battery", "correct-horse-battery"),
        ("token = 7f3a9c2e11", "7f3a9c2e11"),
        (GITHUB_PAT_CLASSIC, GITHUB_PAT_CLASSIC),
        (rsa.as_str(), RSA_BODY[1]),
    ] {
        let out = r.redact(text);
        assert!(!out.contains(secret), "`{secret}` survives in {out}");
        assert!(out.contains(REDACTED), "{out}");
    }
}

/// Seed 004, "Redaction applied before export": the exported copy reads
/// `api_key=<REDACTED>`; the message in memory keeps its key.
#[test]
fn redaction_applied_before_export() {
    let r = Redactor::default();
    let m = Message::user("deploy with api_key=sk-abc123 now");
    let original = m.clone();
    let exported = r.message(&m);
    assert_eq!(
        exported.content.as_str(),
        Some("deploy with api_key=<REDACTED> now")
    );
    assert_eq!(m, original);
    assert_eq!(
        m.content.as_str(),
        Some("deploy with api_key=sk-abc123 now")
    );
}

/// Seed 004, "Redaction before archival": the seed's own example shapes
/// (`api-key: ...`, `password=...`) never reach the archive's files, and
/// the history that was archived is unchanged.
#[test]
fn redaction_before_archival() {
    let dir = tempfile::tempdir().unwrap();
    let mut archive = Archive::new(
        Box::new(DirStore::new(dir.path())),
        "s1",
        Some(Redactor::default()),
    );
    let history = vec![
        Message::system("You are a coding agent."),
        Message::user("the service needs API-KEY: q8Zr2LmN0pX4 and password=s3cr3t-Pa55"),
        Message::assistant("Configured with api_key = q8Zr2LmN0pX4."),
    ];
    let before = history.clone();
    let record = SummaryRecord {
        session_id: "s1".into(),
        step: 0,
        version: Some(1),
        strategy: "task_state".into(),
        summarizer: "digest".into(),
        summary: Some("set password=s3cr3t-Pa55 on the service".into()),
        tokens_before: 300,
        tokens_after: 40,
        pruned_messages: 2,
        note: None,
    };
    let saved = archive.save_round(&history, &record).unwrap();
    assert_eq!(saved.len(), 2);
    assert_eq!(history, before);
    let mut files = Vec::new();
    files_under(dir.path(), &mut files);
    assert_eq!(files.len(), 2, "{files:?}");
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for secret in ["q8Zr2LmN0pX4", "s3cr3t-Pa55"] {
            assert!(!text.contains(secret), "{}: {text}", file.display());
        }
        assert!(text.contains(REDACTED), "{}: {text}", file.display());
        assert!(
            text.contains("password=<REDACTED>"),
            "{}: {text}",
            file.display()
        );
    }
}
