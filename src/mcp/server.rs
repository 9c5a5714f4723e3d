//! A PTC-Lisp session served as an MCP server over stdio (`ptc
//! mcp-server`): an MCP client's model writes programs against the tools
//! and data the server holds, and gets back only what the programs print
//! and return.
//!
//! Three tools:
//!
//! - `run {program}`: run a program in the session, which persists across
//!   calls (definitions stay in `user/`). The answer is one text item,
//!   the printed lines and then the result in Clojure notation, and, when
//!   the result has a JSON form, `structuredContent`
//!   `{"result": ..., "printed": [...]}`. A failed program is an `isError`
//!   result with the message, location and hint the CLI gives.
//!   Its description carries the language reference and the `tool/` and
//!   `data/` names;
//! - `reset`: a fresh session (definitions gone; tools and data as at
//!   start);
//! - `describe`: what is defined, and the tools and data with their types.
//!
//! The session lives on a thread of its own, one call at a time; a
//! cancelled request interrupts its program.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CustomRequest, CustomResult,
    ErrorCode, Implementation, InitializeResult, ListToolsResult, PaginatedRequestParams,
    ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{json, Value as Json};
use tokio::sync::oneshot;

use super::request_limit::{OversizedRequests, MAX_REQUEST_BYTES, TOO_LARGE_METHOD};
use super::unreadable::{merge_output, ParseErrors};
use crate::compression::RenderContext;
use crate::session::report::{capped_result, error_report};
use crate::session::{Session, TurnOutcome};

/// Builds the session, at start and on `reset`.
pub type SessionFactory = Box<dyn FnMut() -> Result<Session, String> + Send>;

/// What `ptc mcp-server` serves.
pub struct ServeOptions {
    pub make_session: SessionFactory,
    /// The most bytes of a printed result; longer ones are cut with a
    /// marker.
    pub max_result_bytes: usize,
}

/// Serve MCP on standard input and output until the client closes the
/// connection. An error is returned when the first session cannot be
/// built or the connection cannot be set up.
pub fn serve_stdio(options: ServeOptions) -> Result<(), String> {
    let worker = Worker::start(options)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("ptc-mcp-server")
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the MCP runtime: {e}"))?;
    let description = worker.describe_blocking().map(|d| run_description(&d));
    let handler = PtcServer {
        worker,
        run_description: description.unwrap_or_default(),
    };
    runtime.block_on(async move {
        // Requests over the line limit are answered with an error instead
        // of dropped in silence (`request_limit`); lines that are not JSON
        // get a Parse error, and errors without an id `"id": null`
        // (`unreadable`). The protocol layer writes to a pipe that
        // `merge_output` copies to standard output with those answers.
        let (stdin, stdout) = rmcp::transport::stdio();
        let (answers, answered) = tokio::sync::mpsc::unbounded_channel();
        let (to_merge, from_protocol) = tokio::io::duplex(64 * 1024);
        let merged = tokio::spawn(merge_output(from_protocol, answered, stdout));
        let transport = rmcp::transport::async_rw::AsyncRwTransport::new_server(
            OversizedRequests::new(
                ParseErrors::new(stdin, MAX_REQUEST_BYTES, answers),
                MAX_REQUEST_BYTES,
            ),
            to_merge,
        )
        .with_max_line_length(MAX_REQUEST_BYTES);
        let served = async {
            let service = handler
                .serve(transport)
                .await
                .map_err(|e| format!("the MCP connection failed: {e}"))?;
            service
                .waiting()
                .await
                .map_err(|e| format!("the MCP server stopped: {e}"))?;
            Ok::<_, String>(())
        }
        .await;
        // The transport is gone: the merge ends once it has written what
        // is left (a closed standard output ends it at once).
        if let Ok(Ok(Err(e))) = tokio::time::timeout(Duration::from_secs(5), merged).await {
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                return Err(format!("cannot write the MCP answers: {e}"));
            }
        }
        served
    })?;
    // The runtime may hold a blocked read of standard input.
    runtime.shutdown_background();
    Ok(())
}

/// A request for the session thread.
enum Job {
    /// A program, with the number of its request.
    Run(u64, String, oneshot::Sender<Json>),
    Reset(oneshot::Sender<Json>),
    Describe(oneshot::Sender<Description>),
}

/// What `describe` says, as text and as data.
#[derive(Debug, Clone)]
struct Description {
    text: String,
    tools: Vec<(String, String, String)>,
    data: Vec<(String, String)>,
    definitions: Vec<String>,
}

/// The thread that owns the session.
struct Worker {
    jobs: mpsc::Sender<Job>,
    /// The session's interrupt flag.
    interrupt: Arc<AtomicBool>,
    /// The number of the program running now (0: none).
    running: Arc<AtomicU64>,
    /// The last number given to a program.
    numbered: AtomicU64,
}

impl Worker {
    /// Build the first session and start the thread that owns it.
    fn start(mut options: ServeOptions) -> Result<Worker, String> {
        let mut session = (options.make_session)()?;
        let interrupt = session.interrupt_handle();
        let running = Arc::new(AtomicU64::new(0));
        let (jobs, inbox) = mpsc::channel::<Job>();
        let (flag, now_running) = (interrupt.clone(), running.clone());
        std::thread::Builder::new()
            .name("ptc-session".into())
            .spawn(move || {
                for job in inbox {
                    do_job(&mut session, &mut options, &flag, &now_running, job);
                }
            })
            .map_err(|e| format!("cannot start the session thread: {e}"))?;
        Ok(Worker {
            jobs,
            interrupt,
            running,
            numbered: AtomicU64::new(0),
        })
    }

    fn describe_blocking(&self) -> Option<Description> {
        let (tx, rx) = oneshot::channel();
        self.jobs.send(Job::Describe(tx)).ok()?;
        rx.blocking_recv().ok()
    }

    /// Interrupt program `number` if it is running now (a cancelled
    /// request that is still queued is not run at all: it still gets its
    /// turn, but its answer is dropped by the protocol layer).
    fn interrupt(&self, number: u64) {
        if number != 0 && self.running.load(Ordering::SeqCst) == number {
            self.interrupt.store(true, Ordering::SeqCst);
        }
    }
}

/// Do one job on the session thread.
fn do_job(
    session: &mut Session,
    options: &mut ServeOptions,
    interrupt: &AtomicBool,
    running: &AtomicU64,
    job: Job,
) {
    match job {
        Job::Run(number, program, reply) => {
            interrupt.store(false, Ordering::SeqCst);
            running.store(number, Ordering::SeqCst);
            let answer = run_program(session, &program, options.max_result_bytes);
            // The server never renders its history: each program's text,
            // output and value would otherwise be kept for good.
            session.forget_turns();
            running.store(0, Ordering::SeqCst);
            let _ = reply.send(answer);
        }
        Job::Reset(reply) => {
            let answer = match (options.make_session)() {
                Ok(mut fresh) => {
                    fresh.set_interrupt_handle(session.interrupt_handle());
                    *session = fresh;
                    text_result(
                        "The session is fresh: no definitions; tools and data as at start.",
                        false,
                    )
                }
                Err(e) => text_result(
                    &format!("error: the session could not be rebuilt: {e}"),
                    true,
                ),
            };
            let _ = reply.send(answer);
        }
        Job::Describe(reply) => {
            let _ = reply.send(describe(session));
        }
    }
}

/// The MCP side: lists the tools and hands calls to the worker.
struct PtcServer {
    worker: Worker,
    run_description: String,
}

impl PtcServer {
    fn tools(&self) -> Json {
        json!([
            {"name": "run",
             "title": "Run a PTC-Lisp program",
             "description": self.run_description,
             "inputSchema": {"type": "object",
                             "properties": {"program": {"type": "string",
                                 "description": "PTC-Lisp source: one or more forms"}},
                             "required": ["program"]}},
            {"name": "reset",
             "title": "Reset the PTC-Lisp session",
             "description": "Start a fresh session: every definition is dropped; the tools and data stay.",
             "inputSchema": {"type": "object", "properties": {}}},
            {"name": "describe",
             "title": "Describe the PTC-Lisp session",
             "description": "What the session holds: the tool/ functions with their signatures, the data/ values with their types, and the definitions made so far (user/).",
             "inputSchema": {"type": "object", "properties": {}}}
        ])
    }

    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<Json, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        let (tx, rx) = oneshot::channel();
        let mut number = 0;
        let job = match request.name.as_ref() {
            "run" => match arguments.get("program").and_then(Json::as_str) {
                Some(program) if program.len() as u64 > crate::input::MAX_PROGRAM_BYTES => {
                    let e = crate::input::too_large(
                        "the program",
                        crate::input::MAX_PROGRAM_BYTES,
                        "for program text",
                    );
                    return Ok(text_result(
                        &format!("error: {} ({})", e.message(), e.code()),
                        true,
                    ));
                }
                Some(program) => {
                    number = self.worker.numbered.fetch_add(1, Ordering::SeqCst) + 1;
                    Job::Run(number, program.to_string(), tx)
                }
                None => {
                    return Ok(text_result(
                        "error: `run` needs `program`, the PTC-Lisp source to run (a string)",
                        true,
                    ))
                }
            },
            "reset" => Job::Reset(tx),
            "describe" => {
                let (dtx, drx) = oneshot::channel();
                if self.worker.jobs.send(Job::Describe(dtx)).is_err() {
                    return Err(stopped());
                }
                return drx
                    .await
                    .map(|d| describe_result(&d))
                    .map_err(|_| stopped());
            }
            other => {
                // An unknown tool is a protocol error (invalid params),
                // as the MCP specification's example has it.
                return Err(ErrorData::invalid_params(
                    format!("no tool `{other}`; the tools are `run`, `reset` and `describe`"),
                    Some(json!({"tool": other})),
                ));
            }
        };
        if self.worker.jobs.send(job).is_err() {
            return Err(stopped());
        }
        let mut rx = rx;
        tokio::select! {
            answer = &mut rx => answer.map_err(|_| stopped()),
            () = context.ct.cancelled() => {
                // The client gave up: stop the program, then answer anyway.
                self.worker.interrupt(number);
                rx.await.map_err(|_| stopped())
            }
        }
    }
}

impl ServerHandler for PtcServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = serde_json::from_value(json!({"tools": {}})).unwrap_or_default();
        InitializeResult::new(capabilities)
            .with_server_info(Implementation::new("ptc-lisp", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Run PTC-Lisp programs (a safe Clojure subset) against this server's tools and \
                 data with the `run` tool; definitions persist across calls. Loop and filter \
                 inside one program and return only the answer.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        serde_json::from_value(json!({"tools": self.tools()}))
            .map_err(|e| ErrorData::internal_error(format!("bad tool list: {e}"), None))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let answer = self.call(request, context).await?;
        let result: CallToolResult = serde_json::from_value(answer)
            .map_err(|e| ErrorData::internal_error(format!("bad result: {e}"), None))?;
        Ok(result.into())
    }

    /// What the protocol layer could not match to a request it knows:
    /// the stand-in for a request too large to read (`request_limit`),
    /// an Invalid Request error naming the limit; a request of a method
    /// this server has whose params do not fit it (`tools/call` without a
    /// `name`), Invalid Params; any other method, Method Not Found.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let params = request.params.unwrap_or_default();
        Err(match request.method.as_str() {
            TOO_LARGE_METHOD => too_large_error(params),
            "tools/call" => {
                let why = serde_json::from_value::<CallToolRequestParams>(params)
                    .err()
                    .map_or_else(|| "not valid".to_string(), |e| e.to_string());
                ErrorData::invalid_params(
                    format!(
                        "invalid params of `tools/call` ({why}): it needs `name`, the tool (a string), and may have `arguments` (an object)"
                    ),
                    None,
                )
            }
            method @ ("initialize" | "ping" | "tools/list") => ErrorData::invalid_params(
                format!("invalid params of `{method}`"),
                None,
            ),
            method => ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("no method `{method}`; this server has `initialize`, `ping`, `tools/list` and `tools/call`"),
                None,
            ),
        })
    }
}

/// The error for a request of `params.bytes` bytes, over the line limit.
fn too_large_error(params: Json) -> ErrorData {
    let limit = crate::input::too_large(
        &format!(
            "the request ({} bytes)",
            params["bytes"].as_u64().unwrap_or_default()
        ),
        MAX_REQUEST_BYTES as u64,
        "for one message; it was not read",
    );
    let mut message = limit.message().to_string();
    if params["method"] == "tools/call" {
        let _ = write!(
            message,
            " (a `run` program may have at most {})",
            crate::input::human_bytes(crate::input::MAX_PROGRAM_BYTES)
        );
    }
    ErrorData::invalid_request(message, Some(params))
}

/// The internal error (-32603) of a session thread that has stopped.
fn stopped() -> ErrorData {
    ErrorData::internal_error("the session thread has stopped", None)
}

/// A result of one text item.
fn text_result(text: &str, is_error: bool) -> Json {
    json!({"content": [{"type": "text", "text": text}], "isError": is_error})
}

/// Run a program and describe what it did.
fn run_program(session: &mut Session, program: &str, max_result_bytes: usize) -> Json {
    let turn = session.eval(program);
    let mut text = String::new();
    for line in &turn.prints {
        text.push_str(line);
        text.push('\n');
    }
    match &turn.outcome {
        TurnOutcome::Value { value } | TurnOutcome::Return { value } => {
            let (shown, whole) = capped_result(value, max_result_bytes);
            text.push_str(&shown);
            let mut result = text_result(&text, false);
            // A result cut for length has no structured form either.
            if let Some(json) =
                (whole && crate::value::has_json_form(value)).then(|| crate::value::to_json(value))
            {
                result["structuredContent"] = json!({"result": json, "printed": turn.prints});
            }
            result
        }
        TurnOutcome::Fail { value } => {
            let _ = write!(
                text,
                "error: program failed: {}",
                crate::value::pr_str(value)
            );
            text_result(&text, true)
        }
        TurnOutcome::Error { error } => {
            text.push_str(&error_report(error, program, None));
            text_result(&text, true)
        }
    }
}

/// What the session holds, in the notation of the model's prompt.
fn describe(session: &Session) -> Description {
    let ctx = RenderContext::for_session(session, "", 1);
    let mut text = String::new();
    crate::compression::write_tool_section(&mut text, &ctx);
    crate::compression::write_data_section(&mut text, &ctx);
    crate::compression::write_user_section(&mut text, session.memory(), session.turns());
    if text.is_empty() {
        text.push_str(";; no tools, no data, no definitions yet");
    }
    Description {
        text,
        tools: session
            .tool_specs()
            .into_iter()
            .map(|t| (t.name, t.signature.render(), t.description))
            .collect(),
        data: session
            .data()
            .iter()
            .map(|(name, value)| (name.clone(), crate::compression::format::type_label(value)))
            .collect(),
        definitions: session.memory().iter().map(|e| e.name.clone()).collect(),
    }
}

fn describe_result(d: &Description) -> Json {
    let mut result = text_result(&d.text, false);
    result["structuredContent"] = json!({
        "tools": d.tools.iter().map(|(name, signature, description)|
            json!({"name": name, "signature": signature, "description": description}))
            .collect::<Vec<_>>(),
        "data": d.data.iter().map(|(name, ty)| json!({"name": name, "type": ty})).collect::<Vec<_>>(),
        "definitions": d.definitions,
    });
    result
}

/// The description of the `run` tool: how to use it, the names it can
/// reach, and the language reference.
fn run_description(d: &Description) -> String {
    let mut out = String::from(
        "Run a PTC-Lisp program (a safe subset of Clojure) in a session that persists across \
         calls: def and defn stay defined for later calls. Call the host's tools from the \
         program and loop, filter and aggregate there, so only the answer comes back. The \
         answer is what the program printed (println) and then the value of its last \
         expression in Clojure notation; an error gives its message, location and a hint.\n\n\
         ## Names\n\
         - (tool/name ...) calls a tool: positional arguments in signature order, or one map \
         of named arguments: (tool/read_file {:path \"a.txt\"}).\n\
         - data/name reads input data (read-only).\n",
    );
    if d.tools.is_empty() {
        out.push_str("- This server has no tools.\n");
    } else {
        out.push_str("Tools:\n");
        for (name, signature, _) in &d.tools {
            let _ = writeln!(out, "  tool/{name}  {signature}");
        }
    }
    if !d.data.is_empty() {
        out.push_str("Data:\n");
        for (name, ty) in &d.data {
            let _ = writeln!(out, "  {}  {ty}", crate::session::data_reference(name));
        }
    }
    out.push_str("The `describe` tool shows the tools' descriptions and what is defined.\n\n");
    out.push_str(&crate::agent::prompt::language_reference());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_and_errors_read_like_the_cli() {
        let mut session = Session::new();
        let ok = run_program(
            &mut session,
            "(def x 2) (println \"x is\" x) {:y (* x 3)}",
            1000,
        );
        assert_eq!(ok["content"][0]["text"], "x is 2\n{:y 6}");
        assert_eq!(
            ok["structuredContent"],
            json!({"result": {"y": 6}, "printed": ["x is 2"]})
        );
        assert_eq!(ok["isError"], false);
        let err = run_program(&mut session, "(+ x\n  (fliter odd? [1]))", 1000);
        assert_eq!(err["isError"], true);
        let text = err["content"][0]["text"].as_str().unwrap();
        assert!(text.starts_with("error: 2:4: Undefined symbol `fliter` (undefined-error)\n  |   (fliter odd? [1]))\n  |    ^\nhint: did you mean `filter`?"), "{text}");
        let f = run_program(&mut session, "(fn [a] a)", 1000);
        assert!(f.get("structuredContent").is_none());
    }

    #[test]
    fn long_results_are_cut() {
        let mut session = Session::new();
        let r = run_program(&mut session, "(range 1000)", 20);
        let text = r["content"][0]["text"].as_str().unwrap();
        assert!(text.starts_with("[0 1 2 3 4 5 6 7 8 9 ..."), "{text}");
        assert!(text.contains("result cut at 20 bytes"));
        assert!(r.get("structuredContent").is_none());
    }
}
