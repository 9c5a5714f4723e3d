//! The provider transport at its edges (issue 40), against HTTP servers
//! on 127.0.0.1 that the tests start: a `Retry-After` longer than a call
//! waits, an answer larger than the body limit as received and as
//! inflated (a gzip bomb), and error bodies of megabytes. Each ends with
//! a clear error, soon, through the library and through `ptc agent`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ptc_lisp::agent::http::HttpOptions;
use ptc_lisp::agent::{
    provider_from_spec, ChatMessage, ChatRequest, ProviderError, ProviderOptions,
};

use crate::util::text;

/// What the server answers to one connection.
enum Answer {
    /// A status with headers and a body in memory.
    Body(u16, Vec<(&'static str, String)>, Vec<u8>),
    /// A 200 announcing `n` bytes of JSON-looking text, streamed until
    /// the client stops reading.
    Endless(u64),
    /// An error status announcing `n` bytes of text, streamed until the
    /// client stops reading; the bytes written are counted in the cell.
    EndlessError(u16, u64, Arc<AtomicUsize>),
}

/// A server answering each connection with the next answer; it counts the
/// requests it read.
struct Server {
    base: String,
    requests: Arc<AtomicUsize>,
}

fn serve(answers: Vec<Answer>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let requests = Arc::new(AtomicUsize::new(0));
    let seen = requests.clone();
    std::thread::spawn(move || {
        for answer in answers {
            let Ok((stream, _)) = listener.accept() else {
                return;
            };
            if read_request(&stream) {
                seen.fetch_add(1, Ordering::SeqCst);
                answer_with(stream, answer);
            }
        }
    });
    Server { base, requests }
}

/// Read one request (head and `content-length` body); false on failure.
fn read_request(stream: &TcpStream) -> bool {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut reader = BufReader::new(stream);
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return false;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).is_ok()
}

fn answer_with(mut stream: TcpStream, answer: Answer) {
    match answer {
        Answer::Body(status, headers, body) => {
            let mut head = format!(
                "HTTP/1.1 {status} Test\r\ncontent-length: {}\r\nconnection: close\r\n",
                body.len()
            );
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
        }
        Answer::Endless(n) => {
            let head = format!(
                "HTTP/1.1 200 Test\r\ncontent-type: application/json\r\ncontent-length: {n}\r\n\
                 connection: close\r\n\r\n{{\"choices\": \""
            );
            let _ = stream.write_all(head.as_bytes());
            let chunk = vec![b'x'; 64 * 1024];
            let mut sent = 0u64;
            while sent < n && stream.write_all(&chunk).is_ok() {
                sent += chunk.len() as u64;
            }
        }
        Answer::EndlessError(status, n, written) => {
            let head = format!(
                "HTTP/1.1 {status} Test\r\ncontent-type: text/plain\r\ncontent-length: {n}\r\n\
                 connection: close\r\n\r\n"
            );
            let _ = stream.write_all(head.as_bytes());
            let chunk = vec![b'e'; 64 * 1024];
            let mut sent = 0u64;
            while sent < n && stream.write_all(&chunk).is_ok() {
                sent += chunk.len() as u64;
                written.fetch_add(chunk.len(), Ordering::SeqCst);
            }
        }
    }
}

fn json_answer(status: u16, headers: Vec<(&'static str, String)>, body: &str) -> Answer {
    let mut headers = headers;
    headers.push(("content-type", "application/json".into()));
    Answer::Body(status, headers, body.as_bytes().to_vec())
}

/// `n` zero bytes gzipped: about a thousandth of `n`.
fn gzip_bomb(n: usize) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let zeros = vec![b' '; 1 << 20];
    for _ in 0..n >> 20 {
        encoder.write_all(&zeros).unwrap();
    }
    encoder.finish().unwrap()
}

fn call(base: &str, http: HttpOptions) -> Result<String, ProviderError> {
    let provider = provider_from_spec(
        "openai:gpt-test",
        ProviderOptions {
            base_url: Some(format!("{base}/v1")),
            api_key: Some("k".into()),
            http,
            ..ProviderOptions::default()
        },
    )
    .unwrap();
    let request = ChatRequest::new(vec![ChatMessage::user("Add 1 and 2.")]);
    provider.complete(&request).map(|r| r.content)
}

fn quick() -> HttpOptions {
    HttpOptions {
        backoff_base: Duration::from_millis(10),
        backoff_max: Duration::from_millis(40),
        ..HttpOptions::default()
    }
}

/// `ptc agent` against `base`; its output and how long it took.
fn agent(base: &str) -> (std::process::Output, Duration) {
    let started = Instant::now();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ptc"))
        .args([
            "agent",
            "--llm",
            "openai:gpt-test",
            "--base-url",
            &format!("{base}/v1"),
            "--api-key",
            "k",
            "--no-compaction",
            "--mission",
            "Add 1 and 2.",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (out, started.elapsed())
}

#[test]
fn a_retry_after_longer_than_a_call_waits_fails_at_once_and_says_so() {
    let rate_limited = || {
        json_answer(
            429,
            vec![("retry-after", "100000".into())],
            r#"{"error": {"message": "Rate limit reached"}}"#,
        )
    };
    let server = serve(vec![rate_limited()]);
    let started = Instant::now();
    let err = call(&server.base, quick()).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(server.requests.load(Ordering::SeqCst), 1);
    assert_eq!(
        err.to_string(),
        "The provider answered HTTP 429: Rate limit reached (it asks to retry after \
         100000 s, longer than a call waits (60 s in all); not retried)"
    );

    // The same through the binary: exit 1, the reason on stderr, no wait.
    let server = serve(vec![rate_limited()]);
    let (out, took) = agent(&server.base);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(took < Duration::from_secs(10), "{took:?}");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("asks to retry after 100000 s, longer than a call waits (60 s in all)"),
        "{stderr}"
    );
}

#[test]
fn waits_add_up_to_at_most_the_calls_waiting_time() {
    // Each answer asks for 1 s: the first is waited for, the second no
    // longer fits in the 1.5 s a call may wait.
    let ask = || {
        json_answer(
            503,
            vec![("retry-after", "1".into())],
            r#"{"error": {"message": "Overloaded"}}"#,
        )
    };
    let server = serve(vec![ask(), ask(), ask()]);
    let http = HttpOptions {
        retry_after_max: Duration::from_millis(1500),
        ..quick()
    };
    let started = Instant::now();
    let err = call(&server.base, http).unwrap_err();
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_secs(6),
        "{took:?}"
    );
    assert_eq!(server.requests.load(Ordering::SeqCst), 2);
    assert!(
        err.to_string().ends_with(
            "Overloaded (it asks to retry after 1 s, longer than is left of the 1.5 s a call \
             waits in all (1 s waited); not retried)"
        ),
        "{err}"
    );
}

#[test]
fn an_answer_over_the_body_limit_is_an_error_naming_the_limit() {
    // 300 MB announced and streamed: reading stops at the limit.
    let server = serve(vec![Answer::Endless(300_000_000)]);
    let started = Instant::now();
    let err = call(&server.base, quick()).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let message = err.to_string();
    assert!(
        message.starts_with("The provider's answer is malformed: the answer from `")
            && message.ends_with(
                "/v1/chat/completions` is larger than the limit of 16777216 bytes (16 MiB) \
                 for an answer's body (`max_response_bytes`)"
            ),
        "{message}"
    );
    assert!(!err.is_retryable());

    // A smaller limit holds the same way, and so does the binary with its
    // default, in far less memory than the answer.
    let server = serve(vec![Answer::Endless(10_000_000)]);
    let http = HttpOptions {
        max_response_bytes: 1 << 20,
        ..quick()
    };
    let err = call(&server.base, http).unwrap_err().to_string();
    assert!(
        err.contains("larger than the limit of 1048576 bytes (1 MiB)"),
        "{err}"
    );

    let server = serve(vec![Answer::Endless(300_000_000)]);
    let (out, took) = agent(&server.base);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(took < Duration::from_secs(30), "{took:?}");
    assert!(
        text(&out.stderr).contains("is larger than the limit of 16777216 bytes (16 MiB)"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_gzip_bomb_stops_at_the_limit_after_decompression() {
    // 64 MiB of spaces in about 64 KiB of gzip: small as received, over
    // the 16 MiB limit once inflated.
    let bomb = gzip_bomb(64 << 20);
    assert!(bomb.len() < 1 << 20, "{}", bomb.len());
    let answer = || {
        Answer::Body(
            200,
            vec![
                ("content-type", "application/json".into()),
                ("content-encoding", "gzip".into()),
            ],
            bomb.clone(),
        )
    };
    let server = serve(vec![answer()]);
    let err = call(&server.base, quick()).unwrap_err().to_string();
    assert!(
        err.contains(
            "/v1/chat/completions`, decompressed, is larger than the limit of 16777216 bytes \
             (16 MiB) for an answer's body (`max_response_bytes`)"
        ),
        "{err}"
    );
    let server = serve(vec![answer()]);
    let (out, took) = agent(&server.base);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(took < Duration::from_secs(30), "{took:?}");
    assert!(
        text(&out.stderr).contains("decompressed, is larger than the limit"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn huge_error_bodies_give_a_short_error_line() {
    // A 5 MB message inside a JSON error, and a 5 MB plain-text body: the
    // error keeps 500 characters of either (of a JSON error cut at the
    // 64 KiB read, the text as it begins).
    let message = "m".repeat(5_000_000);
    let json = format!(r#"{{"error": {{"message": "{message}"}}}}"#);
    let server = serve(vec![json_answer(400, vec![], &json)]);
    let err = call(&server.base, quick()).unwrap_err().to_string();
    assert!(err.len() < 1000, "{}", err.len());
    assert!(
        err.starts_with(r#"The provider answered HTTP 400: {"error": {"message": "mmm"#),
        "{}",
        &err[..80]
    );
    let medium = format!(r#"{{"error": {{"message": "{}"}}}}"#, "m".repeat(20_000));
    let server = serve(vec![json_answer(400, vec![], &medium)]);
    let err = call(&server.base, quick()).unwrap_err().to_string();
    assert_eq!(
        err,
        format!("The provider answered HTTP 400: {}…", "m".repeat(500))
    );

    let server = serve(vec![Answer::Body(
        400,
        vec![("content-type", "text/plain".into())],
        vec![b'p'; 5_000_000],
    )]);
    let err = call(&server.base, quick()).unwrap_err().to_string();
    assert!(err.len() < 1000, "{}", err.len());

    let server = serve(vec![json_answer(400, vec![], &json)]);
    let (out, _) = agent(&server.base);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.len() < 3000, "{}", stderr.len());
    assert!(
        stderr.contains(r#"HTTP 400: {"error": {"message": "mmm"#),
        "{stderr}"
    );
}

/// An error answer of a gigabyte is not read whole: the call ends soon
/// with a short error while the server could write only a small part of
/// it (the 64 KiB read plus what the sockets buffer), through the library
/// and through `ptc agent`.
#[test]
fn an_endless_error_body_is_not_read_whole() {
    let written = Arc::new(AtomicUsize::new(0));
    let server = serve(vec![Answer::EndlessError(400, 1 << 30, written.clone())]);
    let started = Instant::now();
    let err = call(&server.base, quick()).unwrap_err().to_string();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert!(
        err.starts_with("The provider answered HTTP 400: eee"),
        "{}",
        &err[..80]
    );
    assert!(err.len() < 1000, "{}", err.len());
    // Give the server a moment to notice the closed connection.
    std::thread::sleep(Duration::from_millis(300));
    let sent = written.load(Ordering::SeqCst);
    assert!(sent < 64 << 20, "the server wrote {sent} bytes");

    let written = Arc::new(AtomicUsize::new(0));
    let server = serve(vec![Answer::EndlessError(400, 1 << 30, written.clone())]);
    let (out, took) = agent(&server.base);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(took < Duration::from_secs(30), "{took:?}");
    assert!(
        text(&out.stderr).len() < 3000,
        "{}",
        text(&out.stderr).len()
    );
    std::thread::sleep(Duration::from_millis(300));
    assert!(written.load(Ordering::SeqCst) < 64 << 20);
}

/// A model's refusal of megabytes (OpenAI's `refusal`, Anthropic's text
/// with `stop_reason: "refusal"`) is quoted to 2,000 characters.
#[test]
fn a_huge_refusal_gives_a_short_error() {
    let reason = "r".repeat(5_000_000);
    let openai = format!(
        r#"{{"choices": [{{"message": {{"role": "assistant", "content": null, "refusal": "{reason}"}}}}]}}"#
    );
    let server = serve(vec![json_answer(200, vec![], &openai)]);
    let err = call(&server.base, quick()).unwrap_err();
    let ProviderError::Refused(why) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(why.chars().count(), 2001, "cut to 2,000 and a `…`");
    assert!(err.to_string().len() < 2100);

    let anthropic = format!(
        r#"{{"content": [{{"type": "text", "text": "{reason}"}}], "stop_reason": "refusal"}}"#
    );
    let server = serve(vec![json_answer(200, vec![], &anthropic)]);
    let provider = provider_from_spec(
        "anthropic:claude-test",
        ProviderOptions {
            base_url: Some(server.base.clone()),
            api_key: Some("k".into()),
            http: quick(),
            ..ProviderOptions::default()
        },
    )
    .unwrap();
    let request = ChatRequest::new(vec![ChatMessage::user("Add 1 and 2.")]);
    let err = provider.complete(&request).unwrap_err();
    assert!(matches!(err, ProviderError::Refused(_)), "{err:?}");
    assert!(err.to_string().len() < 2100, "{}", err.to_string().len());
}
