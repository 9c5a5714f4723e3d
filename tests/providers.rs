//! The LLM provider clients against a scripted HTTP server on 127.0.0.1
//! that the tests start: wire format, retries, timeouts and errors.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

use ptc_lisp::agent::anthropic::{AnthropicConfig, AnthropicProvider};
use ptc_lisp::agent::http::HttpOptions;
use ptc_lisp::agent::openai::{OpenAiConfig, OpenAiProvider};
use ptc_lisp::agent::{
    provider_from_spec, ChatMessage, ChatRequest, LlmProvider, ProviderError, ProviderOptions,
};

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    pub(crate) method: String,
    pub(crate) path: String,
    /// Names lowercased.
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: String,
}

impl Recorded {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn json(&self) -> Json {
        serde_json::from_str(&self.body).expect("the client sent JSON")
    }
}

/// What the server does with one connection.
pub(crate) enum Reply {
    Send {
        status: u16,
        headers: Vec<(&'static str, &'static str)>,
        body: String,
    },
    /// Read the request, then say nothing for a while.
    Silent,
}

pub(crate) fn reply(status: u16, body: impl Into<String>) -> Reply {
    Reply::Send {
        status,
        headers: vec![],
        body: body.into(),
    }
}

/// A tiny HTTP/1.1 server: one scripted reply per connection, in order.
/// It stops by itself once the replies are used up, or after 120 seconds
/// (a bound for a test that leaves replies unused; a busy machine can
/// take longer than 10 s between two requests of one agent run).
pub(crate) struct TestServer {
    pub(crate) base: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl TestServer {
    pub(crate) fn start(replies: Vec<Reply>) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&requests);
        std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(120);
            let mut replies = replies.into_iter();
            while Instant::now() < deadline {
                let stream = match listener.accept() {
                    Ok((stream, _)) => stream,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(2));
                        continue;
                    }
                    Err(_) => return,
                };
                let Some(reply) = replies.next() else { return };
                serve(stream, reply, &seen);
            }
        });
        TestServer { base, requests }
    }

    pub(crate) fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

fn serve(mut stream: TcpStream, reply: Reply, seen: &Mutex<Vec<Recorded>>) {
    stream.set_nonblocking(false).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let Some(request) = read_request(&stream) else {
        return;
    };
    seen.lock().unwrap().push(request);
    match reply {
        Reply::Send {
            status,
            headers,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {status} Scripted\r\ncontent-type: application/json\r\n\
                 content-length: {}\r\nconnection: close\r\n",
                body.len()
            );
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(body.as_bytes());
        }
        Reply::Silent => {
            // Hold the connection open without answering, off the accept
            // loop, and let it go after a bounded time.
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_secs(3));
                drop(stream);
            });
        }
    }
}

fn read_request(stream: &TcpStream) -> Option<Recorded> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Recorded {
        method,
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

fn fast_http() -> HttpOptions {
    HttpOptions {
        timeout: Duration::from_secs(5),
        connect_timeout: Duration::from_secs(2),
        max_attempts: 4,
        backoff_base: Duration::from_millis(10),
        backoff_max: Duration::from_millis(40),
        retry_after_max: Duration::from_secs(1),
        ..HttpOptions::default()
    }
}

fn openai(base: &str, key: Option<&str>, http: HttpOptions) -> OpenAiProvider {
    OpenAiProvider::new(
        "gpt-test",
        OpenAiConfig {
            base_url: Some(format!("{base}/v1/")),
            api_key: key.map(str::to_string),
            max_tokens: None,
            http,
        },
    )
    .unwrap()
}

fn anthropic(base: &str, http: HttpOptions) -> AnthropicProvider {
    AnthropicProvider::new(
        "claude-test",
        AnthropicConfig {
            base_url: Some(base.to_string()),
            api_key: Some("ak-test".into()),
            max_tokens: None,
            http,
        },
    )
    .unwrap()
}

pub(crate) fn openai_ok(content: &str) -> String {
    json!({"id": "c1", "model": "gpt-test-0613",
           "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop"}],
           "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}})
    .to_string()
}

fn hello() -> ChatRequest {
    ChatRequest::new(vec![
        ChatMessage::system("You write PTC-Lisp."),
        ChatMessage::user("Add 1 and 2."),
    ])
}

#[test]
fn openai_success_sends_the_chat_completions_shape() {
    let server = TestServer::start(vec![reply(200, openai_ok("```clojure\n(+ 1 2)\n```"))]);
    let provider = openai(&server.base, Some("sk-test"), fast_http());
    let mut request = hello();
    request.max_tokens = Some(50);
    request.temperature = Some(0.2);
    let response = provider.complete(&request).unwrap();

    assert_eq!(response.content, "```clojure\n(+ 1 2)\n```");
    let usage = response.usage.unwrap();
    assert_eq!((usage.input_tokens, usage.output_tokens), (12, 5));
    assert_eq!(response.model.as_deref(), Some("gpt-test-0613"));

    let sent = server.requests();
    assert_eq!(sent.len(), 1);
    let r = &sent[0];
    assert_eq!(r.method, "POST");
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(r.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(
        r.json(),
        json!({"model": "gpt-test",
               "messages": [{"role": "system", "content": "You write PTC-Lisp."},
                            {"role": "user", "content": "Add 1 and 2."}],
               "max_tokens": 50, "temperature": 0.2})
    );
}

#[test]
fn openai_without_a_key_sends_no_authorization() {
    let server = TestServer::start(vec![reply(200, openai_ok("(+ 1 2)"))]);
    let provider = openai(&server.base, None, fast_http());
    provider.complete(&hello()).unwrap();
    let sent = server.requests();
    assert_eq!(sent[0].header("authorization"), None);
    assert_eq!(sent[0].json().get("max_tokens"), None);
}

#[test]
fn openai_from_spec_uses_explicit_options() {
    let server = TestServer::start(vec![reply(200, openai_ok("ok"))]);
    let provider = provider_from_spec(
        "openai:llama3.2",
        ProviderOptions {
            base_url: Some(server.base.clone()),
            api_key: Some("local".into()),
            max_tokens: Some(99),
            http: fast_http(),
        },
    )
    .unwrap();
    assert_eq!(provider.name(), "openai:llama3.2");
    assert_eq!(provider.complete(&hello()).unwrap().content, "ok");
    let r = &server.requests()[0];
    assert_eq!(r.path, "/chat/completions");
    assert_eq!(r.header("authorization"), Some("Bearer local"));
    assert_eq!(r.json()["model"], "llama3.2");
    assert_eq!(r.json()["max_tokens"], 99);
}

#[test]
fn anthropic_success_sends_the_messages_shape() {
    let body = json!({"id": "m1", "type": "message", "role": "assistant", "model": "claude-test-1",
                      "content": [{"type": "text", "text": "```clojure\n"},
                                  {"type": "text", "text": "(+ 1 2)\n```"}],
                      "stop_reason": "end_turn",
                      "usage": {"input_tokens": 30, "output_tokens": 9}});
    let server = TestServer::start(vec![reply(200, body.to_string())]);
    let provider = anthropic(&format!("{}/", server.base), fast_http());
    let request = ChatRequest::new(vec![
        ChatMessage::system("You write PTC-Lisp."),
        ChatMessage::user("Mission: add."),
        ChatMessage::user("Turns left: 3"),
        ChatMessage::assistant("(+ 1 2)"),
        ChatMessage::user("Result: 3"),
    ]);
    let response = provider.complete(&request).unwrap();
    assert_eq!(response.content, "```clojure\n(+ 1 2)\n```");
    let usage = response.usage.unwrap();
    assert_eq!((usage.input_tokens, usage.output_tokens), (30, 9));
    assert_eq!(response.model.as_deref(), Some("claude-test-1"));

    let r = &server.requests()[0];
    assert_eq!(r.method, "POST");
    assert_eq!(r.path, "/v1/messages");
    assert_eq!(r.header("x-api-key"), Some("ak-test"));
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.header("authorization"), None);
    assert_eq!(
        r.json(),
        json!({"model": "claude-test",
               "system": "You write PTC-Lisp.",
               "messages": [{"role": "user", "content": "Mission: add.\n\nTurns left: 3"},
                            {"role": "assistant", "content": "(+ 1 2)"},
                            {"role": "user", "content": "Result: 3"}],
               "max_tokens": 4096})
    );
}

#[test]
fn rate_limit_then_success_honours_retry_after() {
    let server = TestServer::start(vec![
        Reply::Send {
            status: 429,
            headers: vec![("retry-after", "0")],
            body: r#"{"error": {"message": "Rate limit reached"}}"#.into(),
        },
        reply(200, openai_ok("fine")),
    ]);
    // Backoff alone would wait 5 s; `Retry-After: 0` must win.
    let http = HttpOptions {
        backoff_base: Duration::from_secs(5),
        backoff_max: Duration::from_secs(5),
        ..fast_http()
    };
    let provider = openai(&server.base, Some("k"), http);
    let started = Instant::now();
    let response = provider.complete(&hello()).unwrap();
    assert_eq!(response.content, "fine");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn server_errors_are_retried_until_attempts_run_out() {
    let error = r#"{"error": {"message": "The server had an error"}}"#;
    let server = TestServer::start((0..3).map(|_| reply(500, error)).collect());
    let http = HttpOptions {
        max_attempts: 3,
        ..fast_http()
    };
    let provider = openai(&server.base, Some("k"), http);
    let err = provider.complete(&hello()).unwrap_err();
    assert_eq!(server.requests().len(), 3);
    match &err {
        ProviderError::RetriesExhausted { attempts, last } => {
            assert_eq!(*attempts, 3);
            assert_eq!(
                **last,
                ProviderError::Http {
                    status: 500,
                    message: "The server had an error".into()
                }
            );
        }
        other => panic!("expected RetriesExhausted, got {other:?}"),
    }
    assert_eq!(
        err.to_string(),
        "Gave up after 3 attempts; the last error: The provider answered HTTP 500: \
         The server had an error"
    );
}

#[test]
fn anthropic_overload_is_retried_too() {
    let ok = json!({"content": [{"type": "text", "text": "(+ 1 1)"}]}).to_string();
    let server = TestServer::start(vec![
        reply(
            529,
            r#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#,
        ),
        reply(200, ok),
    ]);
    let provider = anthropic(&server.base, fast_http());
    let response = provider.complete(&hello()).unwrap();
    assert_eq!(response.content, "(+ 1 1)");
    assert_eq!(response.usage, None);
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn unauthorized_is_not_retried_and_shows_the_api_message() {
    let server = TestServer::start(vec![
        reply(
            401,
            r#"{"error": {"message": "Incorrect API key provided: sk-bad", "type": "invalid_request_error"}}"#,
        ),
        reply(200, openai_ok("must not be reached")),
    ]);
    let provider = openai(&server.base, Some("sk-bad"), fast_http());
    let err = provider.complete(&hello()).unwrap_err();
    assert_eq!(
        err,
        ProviderError::Http {
            status: 401,
            message: "Incorrect API key provided: sk-bad".into()
        }
    );
    assert_eq!(
        err.to_string(),
        "The provider answered HTTP 401: Incorrect API key provided: sk-bad"
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn plain_text_error_bodies_are_quoted() {
    let server = TestServer::start(vec![reply(404, "404 page not found\n")]);
    let err = openai(&server.base, None, fast_http())
        .complete(&hello())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "The provider answered HTTP 404: 404 page not found"
    );
}

#[test]
fn malformed_bodies_are_reported() {
    let server = TestServer::start(vec![
        reply(200, "<html>not json</html>"),
        reply(200, r#"{"object": "chat.completion", "choices": []}"#),
        reply(200, r#"{"type": "message"}"#),
    ]);
    let provider = openai(&server.base, None, fast_http());
    let err = provider.complete(&hello()).unwrap_err();
    assert!(matches!(err, ProviderError::Malformed(_)), "{err:?}");
    assert!(
        err.to_string()
            .starts_with("The provider's answer is malformed: the body is not JSON"),
        "{err}"
    );
    assert!(err.to_string().ends_with("<html>not json</html>"), "{err}");

    let err = provider.complete(&hello()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "The provider's answer is malformed: `choices[0].message` is missing"
    );

    let err = anthropic(&server.base, fast_http())
        .complete(&hello())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "The provider's answer is malformed: `content` is missing"
    );
    assert_eq!(
        server.requests().len(),
        3,
        "malformed answers are not retried"
    );
}

#[test]
fn a_silent_server_times_out_within_the_configured_time() {
    let server = TestServer::start(vec![Reply::Silent, Reply::Silent]);
    let http = HttpOptions {
        timeout: Duration::from_millis(300),
        ..fast_http()
    };
    let provider = openai(&server.base, None, http);
    let started = Instant::now();
    let err = provider.complete(&hello()).unwrap_err();
    let elapsed = started.elapsed();
    assert!(matches!(err, ProviderError::Timeout(_)), "{err:?}");
    assert!(err.to_string().contains("within 300 ms"), "{err}");
    assert!(elapsed >= Duration::from_millis(250), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(2), "{elapsed:?}");
    assert_eq!(server.requests().len(), 1, "timeouts are not retried");
}

#[test]
fn connection_refused_is_retried_then_reported() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let base = format!("http://127.0.0.1:{port}");
    let http = HttpOptions {
        max_attempts: 2,
        ..fast_http()
    };
    let err = openai(&base, None, http).complete(&hello()).unwrap_err();
    match &err {
        ProviderError::RetriesExhausted { attempts: 2, last } => {
            assert!(matches!(**last, ProviderError::Connection(_)), "{last:?}");
        }
        other => panic!("expected RetriesExhausted, got {other:?}"),
    }

    let once = HttpOptions {
        max_attempts: 1,
        ..fast_http()
    };
    let err = openai(&base, None, once).complete(&hello()).unwrap_err();
    assert!(matches!(err, ProviderError::Connection(_)), "{err:?}");
    assert!(
        err.to_string()
            .starts_with("Could not reach the provider: `http://127.0.0.1:"),
        "{err}"
    );
}
