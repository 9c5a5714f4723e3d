//! Evaluation: analysis of forms, special forms, closures, loop/recur and
//! the resource limits.
//!
//! The evaluator does no I/O: data and tools come from a [`Host`], and
//! everything a program printed or called is returned in a [`RunOutput`].

mod analyze;
mod expr;
mod host;
mod limits;
mod machine;
mod pattern;
mod prim;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use crate::error::{Error, ErrorKind, Result};
use crate::reader;
use crate::value::{pr_str, ArcStr, Value};

pub(crate) use analyze::CLOJURE_NAMESPACES;
pub use host::{DataHost, Definition, Globals, Host, NoHost, ToolContext};
pub use limits::Limits;
pub(crate) use machine::{arity_error, EvalResult, Flow, Interp, Stop};
pub(crate) use prim::PrimOp;

/// The special forms a program can use (`def`, `if`, `let`, `fn`,
/// `return`, ...), in a stable order; refused forms such as `try` are not
/// listed. The agent's system prompt is generated from this list.
///
/// ```
/// let forms: Vec<&str> = ptc_lisp::eval::special_forms().collect();
/// assert!(forms.contains(&"defn") && forms.contains(&"return"));
/// assert!(!forms.contains(&"try"));
/// ```
pub fn special_forms() -> impl Iterator<Item = &'static str> {
    analyze::supported_special_forms()
}

/// A program read and analyzed, ready to run any number of times.
#[derive(Debug, Clone)]
pub struct Program {
    root: Arc<expr::Arity>,
}

impl Program {
    /// Read and analyze source text.
    pub fn compile(source: &str) -> Result<Program> {
        let forms = reader::read_program(source)?;
        Self::analyzed(&forms, None, Some(source))
    }

    /// Read and analyze source text whose literals must keep to the size
    /// limit of `limits` (`max_collection`): a literal over it is a
    /// `memory-exceeded` error with its location, as the value would be if
    /// the program built it.
    pub fn compile_with_limits(source: &str, limits: &Limits) -> Result<Program> {
        let forms = reader::read_program(source)?;
        reader::check_literal_sizes(&forms, limits.max_collection)?;
        Self::analyzed(&forms, None, Some(source))
    }

    /// Read and analyze source text to run in the user namespace
    /// `globals`, with the literal size limit of `limits`: a definition in
    /// `globals` shadows the builtin of the same name, as one made by the
    /// program itself does (specification §5.13). A session compiles its
    /// turns this way.
    pub fn compile_for(source: &str, limits: &Limits, globals: &Globals) -> Result<Program> {
        let forms = reader::read_program(source)?;
        reader::check_literal_sizes(&forms, limits.max_collection)?;
        Self::analyzed(&forms, Some(globals), Some(source))
    }

    /// Analyze forms that were already read, to run in the user namespace
    /// `globals` (see [`Program::compile_for`]).
    pub fn from_forms_for(forms: &[reader::Form], globals: &Globals) -> Result<Program> {
        Self::analyzed(forms, Some(globals), None)
    }

    /// Analyze forms that were already read from `source`, to run in the
    /// user namespace `globals`: as [`Program::compile_for`] without the
    /// reading (definitions keep their source as written).
    pub fn from_source_forms_for(
        forms: &[reader::Form],
        source: &str,
        globals: &Globals,
    ) -> Result<Program> {
        Self::analyzed(forms, Some(globals), Some(source))
    }

    /// Analyze forms that were already read. Only the program's own
    /// definitions shadow builtins (see [`Program::compile_for`]).
    pub fn from_forms(forms: &[reader::Form]) -> Result<Program> {
        Self::analyzed(forms, None, None)
    }

    /// Analyze `forms`, read from `text` when it is given (definitions
    /// then keep their source as written).
    fn analyzed(
        forms: &[reader::Form],
        globals: Option<&Globals>,
        text: Option<&str>,
    ) -> Result<Program> {
        let root = analyze::analyze_program(forms, globals, text)?;
        Ok(Program {
            root: Arc::new(root),
        })
    }
}

/// Run `f` (reading or analyzing a program) under the time limit of
/// `limits` counted from `started`, and the interrupt flag: analysis
/// counts its forms as work on the same meter as the run, so a program
/// whose expansion is huge ends with the `timeout` (or `interrupted`)
/// error instead of outlasting its limit before it starts.
pub fn under_limits<R>(
    limits: &Limits,
    started: std::time::Instant,
    interrupt: Option<Arc<AtomicBool>>,
    f: impl FnOnce() -> R,
) -> R {
    let meter = crate::meter::Meter {
        started,
        timeout: limits.timeout,
        max_expanded: limits.max_expanded,
        max_memory: limits.max_memory,
        interrupt,
    };
    let _on = meter.install();
    f()
}

/// How a program that did not fail with an error ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The value of the last expression.
    Value(Value),
    /// `(return v)` was called.
    Return(Value),
    /// `(fail v)` was called.
    Fail(Value),
}

impl Outcome {
    /// The value carried, whatever the ending.
    pub fn value(&self) -> &Value {
        match self {
            Outcome::Value(v) | Outcome::Return(v) | Outcome::Fail(v) => v,
        }
    }
}

/// One tool call made by a program (TC-006).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallRecord {
    pub name: String,
    /// The arguments as written in the call.
    pub args: Vec<Value>,
    pub result: Option<Value>,
    pub error: Option<String>,
    pub duration: Duration,
}

/// Everything one program run produced.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub result: Result<Outcome>,
    /// The user namespace after the run. On error it is the namespace the
    /// run started with: a failed program changes nothing.
    pub globals: Globals,
    /// One entry per `println` call, each truncated to the per-call limit.
    pub prints: Vec<String>,
    pub tool_calls: Vec<ToolCallRecord>,
    /// The return values of each user function called: the most recent
    /// value of each type, in the order the types were first returned.
    pub returns: Vec<(ArcStr, Vec<Value>)>,
    /// The names bound by `def`/`defn` during the run, in execution order
    /// (a name defined twice appears twice). Filled even when the run
    /// failed, although then the definitions were rolled back.
    pub defined: Vec<ArcStr>,
    /// Evaluation steps used.
    pub steps: u64,
}

/// Options of one run beyond the program itself.
#[derive(Clone, Default)]
pub struct RunOptions {
    pub limits: Limits,
    /// `*1`, `*2`, `*3`.
    pub history: [Value; 3],
    /// `*e`: the last error, as the host describes it (the REPL and
    /// sessions give a map of `:code`, `:message`, `:line`, `:column`,
    /// `:hint`); `nil` when there was none.
    pub last_error: Value,
    /// Set to true from another thread to stop the run.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// When the program's clock started; `None` is when `run` is called.
    /// A host that read and analyzed the program first passes the moment
    /// it began, so that time counts against the time limit too.
    pub started: Option<std::time::Instant>,
}

impl RunOptions {
    /// These options with a wall-clock limit of `secs` seconds.
    pub fn with_timeout_secs(mut self, secs: u64) -> Self {
        self.limits.timeout = Duration::from_secs(secs);
        self
    }
}

/// Run a compiled program against a host and a user namespace.
pub fn run(
    program: &Program,
    host: &dyn Host,
    globals: &Globals,
    options: RunOptions,
) -> RunOutput {
    let mut interp = Interp::new(
        host,
        globals.clone(),
        options.limits,
        options.history,
        options.interrupt,
    );
    interp.set_last_error(options.last_error);
    if let Some(at) = options.started {
        interp.start_clock_at(at);
    }
    let metered = interp.meter().install();
    let mut result = interp.run_root(&program.root);
    // A builtin stopped by the meter returned a meaningless value; the
    // next step reports the meter's error, but the last form may have no
    // next step.
    if let Some(e) = crate::meter::error() {
        result = Err(e.into());
    }
    let result = match result {
        Ok(v) => Ok(Outcome::Value(v)),
        Err(Flow::Stop(stop)) => match *stop {
            Stop::Return(v) => Ok(Outcome::Return(v)),
            Stop::Fail(v) => Ok(Outcome::Fail(v)),
            Stop::Error(e) => Err(e),
        },
        Err(Flow::Recur) => Err(Error::validation("`recur` escaped its loop")),
    };
    drop(metered);
    let steps = interp.steps();
    let returns = interp.definition_returns();
    RunOutput {
        globals: if result.is_ok() {
            interp.globals
        } else {
            globals.clone()
        },
        result,
        prints: interp.prints,
        tool_calls: interp.tool_calls,
        returns,
        defined: interp.defined,
        steps,
    }
}

/// Evaluate source text with no data, no tools and default limits; a
/// `(fail v)` becomes an error of kind [`ErrorKind::Failed`].
///
/// ```
/// let v = ptc_lisp::eval::eval_str("(->> [1 2 3 4] (filter even?) (map inc))").unwrap();
/// assert_eq!(ptc_lisp::value::pr_str(&v), "[3 5]");
/// ```
pub fn eval_str(source: &str) -> Result<Value> {
    let program = Program::compile_with_limits(source, &Limits::default())?;
    let out = run(
        &program,
        &NoHost,
        &Globals::default(),
        RunOptions::default(),
    );
    finish(out.result)
}

/// Turn an outcome into a plain value, making `fail` an error.
pub fn finish(result: Result<Outcome>) -> Result<Value> {
    match result? {
        Outcome::Value(v) | Outcome::Return(v) => Ok(v),
        Outcome::Fail(v) => Err(Error::new(
            ErrorKind::Failed,
            match v.as_str() {
                Some(s) => s.to_string(),
                None => pr_str(&v),
            },
        )),
    }
}
