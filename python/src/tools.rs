//! Python callables as PTC-Lisp tools, called on a worker thread so that
//! the program's time limit holds while a tool runs.
//!
//! A program runs on the thread that called `Session.eval`, with the GIL
//! released. A tool call hands the call to the session's worker thread,
//! which holds a Python thread state, takes the GIL only for the call
//! (converting the arguments, calling, converting the result) and waits
//! for the next call with the GIL released. The program's thread waits
//! for the answer until the program's deadline or its interrupt flag.
//!
//! A tool still running at the deadline is abandoned: the turn ends with
//! the program's `timeout` error at once, the session gets a new worker
//! for its next call, and the abandoned thread is sent `TimeoutError` as
//! an asynchronous exception, which Python raises at the tool's next
//! bytecode (a tool blocked inside a C call, such as `time.sleep` or a
//! socket read, sees it when that call returns). Whatever the tool
//! returns then is discarded, and the thread ends.
//!
//! At interpreter exit (`atexit`) every idle worker is stopped and joined
//! before finalization starts, so no worker thread touches a finalizing
//! interpreter.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use ptc_lisp::session::{Param, ToolArgs};
use ptc_lisp::value::Value;

use crate::convert::{from_py, to_py, Options};

/// How often a waiting call looks at the program's interrupt flag.
const POLL: Duration = Duration::from_millis(20);

/// How long each side of a call polls for the other before it sleeps: a
/// thread woken from sleep costs 5-20 us, a poll that sees the answer
/// well under one, and programs often call tools in a loop. Both sides
/// spin only while the other is working on this session's calls.
const SPIN: Duration = Duration::from_micros(50);

/// The next message of `rx` if one comes within `SPIN` (spinning, then
/// yielding the core to other threads), else `None`.
fn spin_recv<T>(rx: &Receiver<T>) -> Option<Result<T, mpsc::TryRecvError>> {
    let start = Instant::now();
    let mut spins = 0u32;
    loop {
        match rx.try_recv() {
            Err(mpsc::TryRecvError::Empty) => {}
            other => return Some(other),
        }
        spins += 1;
        if spins < 64 {
            std::hint::spin_loop();
        } else if start.elapsed() > SPIN {
            return None;
        } else {
            std::thread::yield_now();
        }
    }
}

/// Set by the `atexit` hook: no new workers from then on.
static SHUTTING_DOWN: AtomicBool = AtomicBool::new(false);
/// Worker threads that have not yet left the interpreter.
static RUNNING: AtomicUsize = AtomicUsize::new(0);
static NEXT_ID: AtomicU64 = AtomicU64::new(1);
/// The stop channel of every worker not abandoned, by id.
static LIVE: Mutex<Vec<(u64, Sender<Msg>)>> = Mutex::new(Vec::new());

type Job = Box<dyn for<'py> FnOnce(Python<'py>) + Send>;

enum Msg {
    Call(Job),
    Stop,
}

/// The worker thread of one session, shared by its tools.
#[derive(Default)]
pub(crate) struct ToolRunner {
    worker: Mutex<Option<Worker>>,
}

struct Worker {
    id: u64,
    jobs: Sender<Msg>,
    /// The Python thread id (`_thread.get_ident()`), once known.
    ident: Arc<AtomicU64>,
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.jobs.send(Msg::Stop);
        if let Ok(mut live) = LIVE.lock() {
            live.retain(|(id, _)| *id != self.id);
        }
    }
}

/// A call in flight: set while the tool's Python code runs, read under
/// the GIL before raising into its thread.
struct InFlight {
    running: AtomicBool,
}

fn spawn_worker() -> Result<Worker, String> {
    if SHUTTING_DOWN.load(Ordering::SeqCst) {
        return Err("the Python interpreter is shutting down".into());
    }
    let (jobs, inbox) = mpsc::channel::<Msg>();
    let ident = Arc::new(AtomicU64::new(0));
    let thread_ident = ident.clone();
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    RUNNING.fetch_add(1, Ordering::SeqCst);
    let spawned = std::thread::Builder::new()
        .name("ptc-tool".into())
        .spawn(move || {
            let _ = Python::try_attach(|py| worker_loop(py, inbox, &thread_ident));
            RUNNING.fetch_sub(1, Ordering::SeqCst);
        });
    if let Err(e) = spawned {
        RUNNING.fetch_sub(1, Ordering::SeqCst);
        return Err(format!("cannot start the tool thread: {e}"));
    }
    if let Ok(mut live) = LIVE.lock() {
        live.push((id, jobs.clone()));
    }
    Ok(Worker { id, jobs, ident })
}

fn worker_loop(py: Python<'_>, mut inbox: Receiver<Msg>, ident: &AtomicU64) {
    // `_thread`, not `threading`: importing `threading` first on this
    // thread would make it `threading`'s main thread, and the interpreter
    // would wait for it at exit.
    if let Ok(n) = py
        .import("_thread")
        .and_then(|t| t.call_method0("get_ident"))
        .and_then(|n| n.extract::<u64>())
    {
        ident.store(n, Ordering::SeqCst);
    }
    loop {
        // The receiver moves into the wait and back (it is not `Sync`).
        let (msg, back) = py.detach(move || {
            let msg = match spin_recv(&inbox) {
                Some(m) => m.map_err(|_| mpsc::RecvError),
                None => inbox.recv(),
            };
            (msg, inbox)
        });
        inbox = back;
        match msg {
            Ok(Msg::Call(job)) => job(py),
            Ok(Msg::Stop) | Err(_) => break,
        }
    }
}

impl ToolRunner {
    /// Queue `job` on the worker (started if there is none); returns the
    /// worker's id and Python thread id.
    fn submit(&self, job: Job) -> Result<(u64, Arc<AtomicU64>), String> {
        let mut slot = self
            .worker
            .lock()
            .map_err(|_| "the tool thread's lock is poisoned".to_string())?;
        let mut job = Some(job);
        for _ in 0..2 {
            if slot.is_none() {
                *slot = Some(spawn_worker()?);
            }
            let worker = slot.as_ref().expect("a worker was just started");
            match worker.jobs.send(Msg::Call(job.take().expect("sent once"))) {
                Ok(()) => return Ok((worker.id, worker.ident.clone())),
                // The thread is gone (it could not attach): start another.
                Err(mpsc::SendError(Msg::Call(back))) => {
                    job = Some(back);
                    *slot = None;
                }
                Err(_) => unreachable!("only calls are sent here"),
            }
        }
        Err("the tool thread could not start (is the interpreter shutting down?)".into())
    }

    /// Give up on worker `id` (its call outlived the program): the next
    /// call starts a new one.
    fn abandon(&self, id: u64) {
        if let Ok(mut slot) = self.worker.lock() {
            if slot.as_ref().is_some_and(|w| w.id == id) {
                *slot = None;
            }
        }
    }
}

/// The handler of a Python tool: `func` called with keyword arguments
/// (see `call`), on the session's worker, within the program's deadline;
/// or, `inline`, on the program's own thread (no hand-over, but a call
/// that blocks cannot be cut short: the deadline is checked when it
/// returns).
pub(crate) fn handler(
    runner: Arc<ToolRunner>,
    func: Arc<Py<PyAny>>,
    names: Arc<KeywordNames>,
    options: Options,
    inline: bool,
) -> impl Fn(ToolArgs) -> Result<Value, String> + Send + Sync + 'static {
    move |args: ToolArgs| {
        if inline {
            return Python::attach(|py| call(py, &func, &names, &args, options));
        }
        let context = args.context().clone();
        let (reply, answer) = mpsc::sync_channel::<Result<Value, String>>(1);
        let flight = Arc::new(InFlight {
            running: AtomicBool::new(false),
        });
        let job_flight = flight.clone();
        let func = func.clone();
        let names = names.clone();
        let job: Job = Box::new(move |py: Python<'_>| {
            job_flight.running.store(true, Ordering::SeqCst);
            let result = call(py, &func, &names, &args, options);
            job_flight.running.store(false, Ordering::SeqCst);
            let _ = reply.send(result);
        });
        let (worker, ident) = runner.submit(job)?;
        match spin_recv(&answer) {
            Some(Ok(result)) => return result,
            Some(Err(_)) => return Err("the tool's thread ended without an answer".into()),
            None => {}
        }
        loop {
            let wait = context.remaining().map_or(POLL, |r| r.min(POLL));
            match answer.recv_timeout(wait) {
                Ok(result) => return result,
                Err(RecvTimeoutError::Disconnected) => {
                    return Err("the tool's thread ended without an answer".into())
                }
                Err(RecvTimeoutError::Timeout) => {
                    if context.expired() || context.interrupted() {
                        runner.abandon(worker);
                        interrupt_thread(ident, flight);
                        // `Tool::call` turns this into the program's
                        // timeout (or interrupt) error.
                        return Err("the tool did not finish in time".into());
                    }
                }
            }
        }
    }
}

/// Raise `TimeoutError` in the abandoned worker's thread, if its tool is
/// still running, from a short-lived thread (taking the GIL may wait for
/// the tool's bytecode to yield it; the program's thread does not wait).
fn interrupt_thread(ident: Arc<AtomicU64>, flight: Arc<InFlight>) {
    let _ = std::thread::Builder::new()
        .name("ptc-tool-timeout".into())
        .spawn(move || {
            let _ = Python::try_attach(|_py| {
                let id = ident.load(Ordering::SeqCst);
                // Under the GIL the worker cannot leave its call, so a set
                // flag means its thread (and id) is the one running it.
                if id != 0 && flight.running.load(Ordering::SeqCst) {
                    raise_timeout_in(id);
                }
            });
        });
}

#[allow(unsafe_code)]
fn raise_timeout_in(thread_id: u64) {
    // SAFETY: called with the GIL held (inside `Python::try_attach`);
    // `PyExc_TimeoutError` is an immortal type object of the interpreter,
    // and `PyThreadState_SetAsyncExc` takes a borrowed reference to it.
    // An id that matches no thread is ignored by CPython.
    unsafe {
        pyo3::ffi::PyThreadState_SetAsyncExc(
            thread_id as std::os::raw::c_long,
            pyo3::ffi::PyExc_TimeoutError,
        );
    }
}

/// The Python strings of a tool's parameter names, made (interned) once
/// when the tool is registered: a call's keyword arguments then reuse
/// them instead of making and hashing a new string per argument.
pub(crate) struct KeywordNames {
    names: Vec<(String, Py<PyString>)>,
}

impl KeywordNames {
    pub(crate) fn new(py: Python<'_>, params: &[Param]) -> Self {
        KeywordNames {
            names: params
                .iter()
                .map(|p| (p.name.clone(), PyString::intern(py, &p.name).unbind()))
                .collect(),
        }
    }

    /// The Python string `name`: the interned one of a parameter, else
    /// a new one.
    fn get<'py>(&self, py: Python<'py>, name: &str) -> Bound<'py, PyString> {
        match self.names.iter().find(|(n, _)| n == name) {
            Some((_, s)) => s.bind(py).clone(),
            None => PyString::new(py, name),
        }
    }
}

/// Call `func` with the named arguments as keyword arguments (a tool
/// that declares no parameters and got no map gets its arguments
/// positionally); the result converted back, or the exception as
/// `Type: message`.
fn call(
    py: Python<'_>,
    func: &Py<PyAny>,
    names: &KeywordNames,
    args: &ToolArgs,
    options: Options,
) -> Result<Value, String> {
    let result = if args.named().is_empty() && !args.positional().is_empty() {
        let items = args
            .positional()
            .iter()
            .map(|v| to_py(py, v, options))
            .collect::<PyResult<Vec<_>>>()
            .map_err(|e| describe(py, &e))?;
        let tuple = PyTuple::new(py, items).map_err(|e| describe(py, &e))?;
        func.call1(py, tuple)
    } else {
        let kwargs = PyDict::new(py);
        for (k, v) in args.named().iter() {
            let Some(name) = k.as_name() else {
                return Err(format!(
                    "the argument key {} is not a name, so it cannot be a Python keyword argument",
                    crate::convert::short_pr(k, 40)
                ));
            };
            let value = to_py(py, v, options).map_err(|e| describe(py, &e))?;
            kwargs
                .set_item(names.get(py, name), value)
                .map_err(|e| describe(py, &e))?;
        }
        func.call(py, (), Some(&kwargs))
    };
    match result {
        Ok(obj) => from_py(obj.bind(py), options, "the result").map_err(|e| describe(py, &e)),
        Err(e) => Err(describe(py, &e)),
    }
}

/// `ValueError: no such product` (the type alone when the message is
/// empty).
pub(crate) fn describe(py: Python<'_>, err: &PyErr) -> String {
    let type_name = err
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "Exception".into());
    let message = err
        .value(py)
        .str()
        .map(|s| s.to_string())
        .unwrap_or_default();
    if message.is_empty() {
        type_name
    } else {
        format!("{type_name}: {message}")
    }
}

pub(crate) fn register_shutdown(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let hook = wrap_pyfunction!(shutdown_workers, m)?;
    m.add_function(hook.clone())?;
    m.py().import("atexit")?.call_method1("register", (hook,))?;
    Ok(())
}

/// Stop every idle tool thread before the interpreter finalizes (waits at
/// most a second for them); registered with `atexit`.
#[pyfunction]
#[pyo3(name = "_shutdown_workers")]
fn shutdown_workers(py: Python<'_>) {
    SHUTTING_DOWN.store(true, Ordering::SeqCst);
    let live = LIVE
        .lock()
        .map(|mut l| std::mem::take(&mut *l))
        .unwrap_or_default();
    for (_, jobs) in &live {
        let _ = jobs.send(Msg::Stop);
    }
    py.detach(|| {
        let until = Instant::now() + Duration::from_secs(1);
        while RUNNING.load(Ordering::SeqCst) > 0 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
}
