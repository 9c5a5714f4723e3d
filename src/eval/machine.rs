//! The evaluator proper: walks analyzed `Expr` trees over a value stack.
//!
//! Locals live in frames on one shared stack; closures carry the values
//! they captured. Every call and loop iteration is a step; the step
//! counter also drives the time and interrupt checks.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use smallvec::SmallVec;

use crate::builtins::{self, Registry};
use crate::error::{suggest, Error, ErrorKind, Span};
use crate::meter::{self, Meter};
use crate::stack;
use crate::value::{pr_str, ArcStr, Function, FunctionKind, Map, Set, Value};

use super::expr::{Arity, CaptureFrom, Expr, ForClause, Lambda, PrimCall, Recur, ToolName};
use super::host::{Definition, Globals, Host, ToolContext};
use super::limits::Limits;
use super::pattern::Pattern;
use super::ToolCallRecord;

/// Stack that must remain before evaluating a node; below it, a new
/// segment is allocated.
const RED_ZONE: usize = 512 * 1024;
/// Size of each extra stack segment.
const STACK_SEGMENT: usize = 2 * 1024 * 1024;

/// Non-local control flow. Private to the evaluator and builtins; never
/// part of the public error type. One word (`Recur` is the null
/// pointer), so an `EvalResult` of a value is two words, as small to
/// write and read as the value itself. (It is still returned through
/// memory: `Value` mixes integer and float payloads.)
#[derive(Debug)]
pub(crate) enum Flow {
    /// The new values are in `Interp::recur_values`, which keeps this
    /// type (and every `EvalResult`) small.
    Recur,
    /// An error, `return` or `fail`: rare, so boxed.
    Stop(Box<Stop>),
}

/// What ends evaluation other than `recur`.
#[derive(Debug)]
pub(crate) enum Stop {
    Error(Error),
    Return(Value),
    Fail(Value),
}

impl From<Error> for Flow {
    #[cold]
    fn from(e: Error) -> Self {
        Flow::Stop(Box::new(Stop::Error(e)))
    }
}

pub(crate) type EvalResult<T = Value> = Result<T, Flow>;

/// The compiled code of a closure, stored (type-erased) in `Function`.
pub(crate) struct ClosureCode {
    pub lambda: Arc<Lambda>,
    pub captured: Vec<Value>,
}

/// Where a frame's locals are and what runs in it. Two words, so it is
/// passed in registers.
#[derive(Clone, Copy)]
struct Frame<'a> {
    base: usize,
    callee: &'a Callee<'a>,
}

/// What runs in a frame: the call's arguments, the values it captured
/// and, for a closure (not the program itself), the closure, for calls of
/// a named `fn` by its own name.
#[derive(Clone, Copy)]
struct Callee<'a> {
    /// Where the caller keeps the arguments, read by `Expr::Arg`.
    args: &'a [Value],
    captures: &'a [Value],
    closure: Option<(&'a Arc<Function>, &'a ClosureCode)>,
}

/// The callee of the program's own frame.
const PROGRAM: Callee<'static> = Callee {
    args: &[],
    captures: &[],
    closure: None,
};

/// The state of one program run.
pub struct Interp<'h> {
    pub(crate) host: &'h dyn Host,
    pub(crate) globals: Globals,
    pub(crate) limits: Limits,
    pub(crate) registry: &'static Registry,
    stack: Vec<Value>,
    steps: u64,
    started: Instant,
    depth: usize,
    pub(crate) prints: Vec<String>,
    output_chars: usize,
    pub(crate) tool_calls: Vec<ToolCallRecord>,
    /// The return values of each named function called: the most recent
    /// value of each type (see `note_return`).
    returns: Vec<(Arc<Function>, SmallVec<[Value; 2]>)>,
    /// Where each function of `returns` is, by identity (the `Arc` kept
    /// there keeps the address from being reused).
    returns_index: rustc_hash::FxHashMap<usize, usize>,
    /// The function whose return was recorded last and its place in
    /// `returns`: a recursive function finds its entry without a lookup.
    last_return: (usize, usize),
    /// Names bound by `def`/`defn` during this run, in execution order.
    pub(crate) defined: Vec<ArcStr>,
    history: [Value; 3],
    /// `*e`: the error of the most recent failed turn, as a map.
    last_error: Value,
    interrupt: Option<Arc<AtomicBool>>,
    /// The values of the `recur` being taken (see `Flow::Recur`).
    recur_values: SmallVec<[Value; 4]>,
    /// The stack addresses between which `eval` may go on without a
    /// check: from the red zone's edge up to where they were found (see
    /// [`Interp::eval_checked`]). An address outside (another segment,
    /// another thread's stack, none found yet) is checked.
    stack_floor: usize,
    stack_top: usize,
    /// True in a branch of `pmap`/`pcalls`, whose own parallel calls then
    /// run in order (one level of threads is enough for I/O-bound work).
    in_branch: bool,
}

impl<'h> Interp<'h> {
    pub(crate) fn new(
        host: &'h dyn Host,
        globals: Globals,
        limits: Limits,
        history: [Value; 3],
        interrupt: Option<Arc<AtomicBool>>,
    ) -> Self {
        Interp {
            host,
            globals,
            limits,
            registry: builtins::registry(),
            stack: Vec::with_capacity(256),
            steps: 0,
            started: Instant::now(),
            depth: 0,
            prints: Vec::new(),
            output_chars: 0,
            tool_calls: Vec::new(),
            returns: Vec::new(),
            returns_index: rustc_hash::FxHashMap::default(),
            last_return: (0, 0),
            defined: Vec::new(),
            history,
            last_error: Value::Nil,
            interrupt,
            recur_values: SmallVec::new(),
            stack_floor: usize::MAX,
            stack_top: 0,
            in_branch: false,
        }
    }

    /// An interpreter for one parallel branch: the same host, limits,
    /// deadline and interrupt flag, a snapshot of the user namespace (its
    /// definitions are discarded), its own output (discarded too).
    fn fork(&self) -> Interp<'h> {
        let mut branch = Interp::new(
            self.host,
            self.globals.clone(),
            self.limits.clone(),
            self.history.clone(),
            self.interrupt.clone(),
        );
        branch.started = self.started;
        branch.last_error = self.last_error.clone();
        branch.depth = self.depth;
        branch.in_branch = true;
        branch
    }

    /// Call each function with its arguments, concurrently when there is
    /// more than one call (`pmap`, `pcalls`): at most twice as many
    /// threads as cores, results in call order. Each branch sees the user
    /// namespace as it was and its `def`s and `println` output are
    /// discarded; its tool calls and steps count for the program. The
    /// first failure in call order wins; `index_error` can reword errors
    /// with the failing call's index.
    pub(crate) fn call_parallel(
        &mut self,
        calls: Vec<(Value, Vec<Value>)>,
        index_error: impl Fn(usize, Error) -> Error,
    ) -> EvalResult<Vec<Value>> {
        if self.in_branch || calls.len() < 2 {
            let mut out = Vec::with_capacity(calls.len());
            for (i, (f, args)) in meter::metered(calls.into_iter().enumerate()) {
                let globals = self.globals.clone();
                let prints = self.prints.len();
                let result = self.call(&f, &args);
                self.globals = globals;
                self.prints.truncate(prints);
                out.push(result.map_err(|flow| reword(flow, i, &index_error))?);
            }
            return Ok(out);
        }
        let workers = std::thread::available_parallelism()
            .map_or(2, |n| n.get() * 2)
            .min(calls.len());
        let next = std::sync::atomic::AtomicUsize::new(0);
        // Set by the first worker whose meter trips (with its error):
        // the others stop taking calls, and the calls not taken are
        // never run.
        let stopped: std::sync::Mutex<Option<Error>> = std::sync::Mutex::new(None);
        let stopping = std::sync::atomic::AtomicBool::new(false);
        let slots: Vec<std::sync::Mutex<Option<Branch>>> =
            calls.iter().map(|_| std::sync::Mutex::new(None)).collect();
        let parent = &*self;
        let meter = self.meter();
        std::thread::scope(|scope| {
            for _ in 0..workers {
                let (calls, next, slots, meter) = (&calls, &next, &slots, &meter);
                let (stopped, stopping) = (&stopped, &stopping);
                let worker = move || {
                    let _metered = meter.install();
                    loop {
                        if stopping.load(Ordering::Relaxed) {
                            break;
                        }
                        if !meter::work(1) {
                            let mut first = stopped.lock().unwrap_or_else(|e| e.into_inner());
                            first.get_or_insert_with(|| {
                                meter::error().unwrap_or_else(|| {
                                    Error::new(ErrorKind::Interrupted, "Evaluation interrupted")
                                })
                            });
                            stopping.store(true, Ordering::Relaxed);
                            break;
                        }
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some((f, args)) = calls.get(i) else { break };
                        let mut branch = parent.fork();
                        let result = branch.call(f, args).and_then(|v| branch.meter_checked(v));
                        let done = Branch {
                            result,
                            tool_calls: branch.tool_calls,
                            steps: branch.steps,
                        };
                        *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(done);
                    }
                };
                let spawned = std::thread::Builder::new()
                    .name("ptc-pmap".into())
                    .stack_size(8 * 1024 * 1024)
                    .spawn_scoped(scope, worker);
                if spawned.is_err() {
                    // No thread to be had: the calls left run on the workers
                    // already started (or below, in order).
                    break;
                }
            }
        });
        let mut out = Vec::with_capacity(slots.len());
        let mut first_failure = None;
        for (i, slot) in slots.into_iter().enumerate() {
            let done = match slot.into_inner().unwrap_or_else(|e| e.into_inner()) {
                Some(done) => done,
                // Left when the meter tripped: never run.
                None if stopping.load(Ordering::Relaxed) => continue,
                // Never started (thread creation failed): run it here.
                None => {
                    let (f, args) = &calls[i];
                    let mut branch = self.fork();
                    let result = branch.call(f, args).and_then(|v| branch.meter_checked(v));
                    Branch {
                        result,
                        tool_calls: branch.tool_calls,
                        steps: branch.steps,
                    }
                }
            };
            self.steps += done.steps;
            self.tool_calls.extend(done.tool_calls);
            match done.result {
                Ok(v) => out.push(v),
                Err(flow) => {
                    first_failure.get_or_insert_with(|| reword(flow, i, &index_error));
                }
            }
        }
        if let Some(flow) = first_failure {
            return Err(flow);
        }
        if let Some(trip) = stopped.into_inner().unwrap_or_else(|e| e.into_inner()) {
            return Err(trip.into());
        }
        if self.tool_calls.len() > self.limits.max_tool_calls {
            return Err(Error::new(
                ErrorKind::ToolCallLimit,
                format!(
                    "Program made {} tool calls, over the limit of {}",
                    self.tool_calls.len(),
                    self.limits.max_tool_calls
                ),
            )
            .into());
        }
        self.check_limits()?;
        Ok(out)
    }

    pub(crate) fn steps(&self) -> u64 {
        self.steps
    }

    /// The return values of each user definition that is a function and
    /// was called (the latest of each type, in the order the types were
    /// first returned), sorted by name (for return-type labels).
    pub(crate) fn definition_returns(&self) -> Vec<(ArcStr, Vec<Value>)> {
        let mut out: Vec<(ArcStr, Vec<Value>)> = self
            .returns
            .iter()
            .filter_map(|(function, values)| {
                let name = function.name.as_ref()?;
                let def = self.globals.get(name)?;
                matches!(&def.value, Value::Fn(g) if Arc::ptr_eq(g, function))
                    .then(|| (name.clone(), values.to_vec()))
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// Set what `*e` gives.
    pub(crate) fn set_last_error(&mut self, error: Value) {
        self.last_error = error;
    }

    /// Start the program's clock at `at` instead of now (a host that read
    /// and analyzed the program first counts that time too).
    pub(crate) fn start_clock_at(&mut self, at: Instant) {
        self.started = at;
    }

    /// Run the program's root arity. Each top-level form is a step, so a
    /// program of a million definitions is bound by the step and time
    /// limits like a loop of a million iterations.
    pub(crate) fn run_root(&mut self, root: &Arity) -> EvalResult {
        self.check_time()?;
        let base = self.stack.len();
        self.stack
            .resize(base + root.frame_size as usize, Value::Nil);
        let frame = Frame {
            base,
            callee: &PROGRAM,
        };
        let result = match &root.body {
            Expr::Do(forms) => (|| {
                let (last, init) = forms.split_last().expect("do has forms");
                for form in init {
                    self.tick()?;
                    self.eval(form, frame)?;
                }
                self.tick()?;
                self.eval(last, frame)
            })(),
            body => self.tick().and_then(|()| self.eval(body, frame)),
        };
        self.stack.truncate(base);
        result
    }

    /// Count one step and, every so often, check time and interrupts.
    #[inline]
    pub(crate) fn tick(&mut self) -> EvalResult<()> {
        self.steps += 1;
        if self.steps & 1023 == 0 || self.steps > self.limits.max_steps || meter::tripped() {
            self.check_limits()?;
        }
        Ok(())
    }

    #[cold]
    fn check_limits(&self) -> EvalResult<()> {
        if self.steps > self.limits.max_steps {
            return Err(Error::new(
                ErrorKind::StepLimit,
                format!(
                    "Evaluation exceeded {} steps (function calls and loop iterations)",
                    self.limits.max_steps
                ),
            )
            .with_hint("look for a loop that never ends, or process less data per program")
            .into());
        }
        self.check_time()
    }

    pub(crate) fn check_time(&self) -> EvalResult<()> {
        self.check_time_at(Instant::now())
    }

    /// [`Self::check_time`] with the clock read by the caller (`now`).
    fn check_time_at(&self, now: Instant) -> EvalResult<()> {
        // The meter also watches the heap (and may have stopped a builtin).
        if !meter::check() {
            if let Some(e) = meter::error() {
                return Err(e.into());
            }
        }
        if now.saturating_duration_since(self.started) > self.limits.timeout {
            return Err(Error::new(
                ErrorKind::Timeout,
                format!(
                    "Program exceeded the time limit of {} ms",
                    self.limits.timeout.as_millis()
                ),
            )
            .into());
        }
        if let Some(flag) = &self.interrupt {
            if flag.load(Ordering::Relaxed) {
                return Err(Error::new(ErrorKind::Interrupted, "Evaluation interrupted").into());
            }
        }
        Ok(())
    }

    /// Fail if a collection or string of `len` items is over the limit.
    #[inline]
    pub(crate) fn check_size(&self, len: usize) -> EvalResult<()> {
        if len > self.limits.max_collection {
            return Err(Error::new(
                ErrorKind::MemoryLimit,
                format!(
                    "A value grew to {len} items or characters, over the limit of {}",
                    self.limits.max_collection
                ),
            )
            .into());
        }
        // Building `len` items was work: charge it, so the clock and the
        // heap are read while builtins build large values.
        if !meter::work(u32::try_from(len).unwrap_or(u32::MAX)) {
            if let Some(e) = meter::error() {
                return Err(e.into());
            }
        }
        Ok(())
    }

    /// Record one `println` call (TRN-008): truncated per call, counted
    /// against the output limit.
    pub(crate) fn print_line(&mut self, mut line: String) -> EvalResult<()> {
        // What a builtin stopped by the meter gave is never printed.
        if let Some(e) = meter::error() {
            return Err(e.into());
        }
        let chars = line.chars().count();
        self.output_chars += chars.min(self.limits.println_truncate);
        if self.output_chars > self.limits.max_output {
            return Err(Error::new(
                ErrorKind::OutputLimit,
                format!(
                    "Printed output exceeded {} characters",
                    self.limits.max_output
                ),
            )
            .with_hint("print summaries such as counts or the first few items")
            .into());
        }
        if chars > self.limits.println_truncate {
            line = line.chars().take(self.limits.println_truncate).collect();
            line.push_str("...");
        }
        self.prints.push(line);
        Ok(())
    }

    /// Evaluate one node. Deep nesting (of forms or of calls) grows the
    /// stack on the heap instead of overflowing it, so the depth limit,
    /// not the thread's stack size, decides how deep programs may go.
    /// The check is two comparisons of the stack's position with bounds
    /// found once per segment ([`Interp::eval_checked`]).
    /// Locals, captured values and constants, the leaves of most trees,
    /// are read here without entering `eval_node`.
    #[inline(always)]
    fn eval(&mut self, expr: &Expr, f: Frame<'_>) -> EvalResult {
        match expr {
            Expr::Local(slot) => return Ok(dup(&self.stack[f.base + *slot as usize])),
            Expr::Arg(i) => return Ok(dup(&f.callee.args[*i as usize])),
            Expr::Const(v) => return Ok(dup(v)),
            Expr::Capture(i) => return Ok(dup(&f.callee.captures[*i as usize])),
            _ => {}
        }
        let here = stack::position();
        if here < self.stack_floor || here > self.stack_top {
            return self.eval_checked(expr, f);
        }
        self.eval_node(expr, f)
    }

    /// Whether the test of an `if` holds. A comparison decides the branch
    /// without making a boolean value.
    #[inline(always)]
    fn eval_test(&mut self, test: &Expr, f: Frame<'_>) -> EvalResult<bool> {
        match test {
            Expr::Prim(call) if call.op.is_comparison() => self.prim_test(call, f),
            _ => Ok(truthy(self.eval(test, f)?)),
        }
    }

    /// An `if`: the branch its test chooses, a `recur` branch run here
    /// without entering `eval_node` for it.
    #[inline(always)]
    fn eval_if(
        &mut self,
        (test, then, otherwise): &(Expr, Expr, Expr),
        f: Frame<'_>,
    ) -> EvalResult {
        let branch = if self.eval_test(test, f)? {
            then
        } else {
            otherwise
        };
        match branch {
            Expr::Recur(node) => self.eval_recur(node, f),
            other => self.eval(other, f),
        }
    }

    /// A round of a `loop`'s or an arity's body. The usual body, an `if`
    /// with a `recur` in one branch, runs without entering `eval_node`
    /// for the `if` or the `recur`.
    #[inline(always)]
    fn eval_body(&mut self, body: &Expr, f: Frame<'_>) -> EvalResult {
        match body {
            Expr::If(parts) => self.eval_if(parts, f),
            _ => self.eval(body, f),
        }
    }

    /// [`Interp::eval`] for a value that is most often an integer: a
    /// call's argument, a `recur` value. An arithmetic integer tree is
    /// computed here, without entering `eval_node`; a tree that gives no
    /// integer is evaluated by the general path, which has no side effects
    /// to repeat.
    #[inline(always)]
    fn eval_arg(&mut self, expr: &Expr, f: Frame<'_>) -> EvalResult {
        if let Expr::Prim(call) = expr {
            if call.int_tree && !call.op.is_comparison() {
                if let Some(n) = self.int_arith(call, f) {
                    return Ok(Value::Int(n));
                }
            }
        }
        self.eval(expr, f)
    }

    /// [`Interp::eval`] where the stack's position is outside the known
    /// bounds: on a new segment when less than the red zone remains, and
    /// with the bounds of the segment it runs on while `expr` is
    /// evaluated (the caller's are restored after). When the stack's end
    /// is unknown, every evaluation comes here.
    #[inline(never)]
    fn eval_checked(&mut self, expr: &Expr, f: Frame<'_>) -> EvalResult {
        stack::maybe_grow(RED_ZONE, STACK_SEGMENT, || {
            let saved = (self.stack_floor, self.stack_top);
            let here = stack::position();
            (self.stack_floor, self.stack_top) = match stack::remaining() {
                Some(remaining) => (
                    here.saturating_sub(remaining).saturating_add(RED_ZONE),
                    here,
                ),
                None => (usize::MAX, 0),
            };
            let result = self.eval_node(expr, f);
            (self.stack_floor, self.stack_top) = saved;
            result
        })
    }

    fn eval_node(&mut self, expr: &Expr, f: Frame<'_>) -> EvalResult {
        match expr {
            Expr::Const(v) => Ok(dup(v)),
            Expr::Local(slot) => Ok(dup(&self.stack[f.base + *slot as usize])),
            Expr::Arg(i) => Ok(dup(&f.callee.args[*i as usize])),
            Expr::Capture(i) => Ok(dup(&f.callee.captures[*i as usize])),
            Expr::Global(g) => match g.builtin {
                // A shadowed builtin, while no definition exists.
                Some(native) if self.globals.get(&g.name).is_none() => Ok(Value::Native(native)),
                _ => self
                    .global(&g.name, g.fallback)
                    .map_err(|e| e.with_span(g.span).into()),
            },
            Expr::Data(name, span) => self.data(name).map_err(|e| with_span(e, *span)),
            Expr::ToolRef(name, span) => self.tool_ref(name).map_err(|e| with_span(e, *span)),
            Expr::History(0) => Ok(self.last_error.clone()),
            Expr::History(n) => Ok(self.history[*n as usize - 1].clone()),
            Expr::Vector(_) | Expr::Set(_) | Expr::Map(_) | Expr::ShapedMap(_) => {
                self.eval_collection(expr, f)
            }
            // Not `eval_if`: a `recur` branch taken in place here made W7
            // (no loop) 5.5% slower.
            Expr::If(parts) => {
                let (test, then, otherwise) = &**parts;
                if self.eval_test(test, f)? {
                    self.eval(then, f)
                } else {
                    self.eval(otherwise, f)
                }
            }
            Expr::Do(exprs) => {
                let (last, init) = exprs.split_last().expect("do has forms");
                for e in init {
                    self.eval(e, f)?;
                }
                self.eval(last, f)
            }
            Expr::Let(node) => {
                for (pattern, init) in &node.bindings {
                    let v = self.eval(init, f)?;
                    self.bind(pattern, v, f)?;
                }
                self.eval(&node.body, f)
            }
            Expr::Loop(node) => self.eval_loop(node, f),
            Expr::Recur(node) => self.eval_recur(node, f),
            Expr::Lambda(lambda) => Ok(self.make_closure(lambda, f)),
            Expr::CallNative(call) => self
                .with_args(&call.args, f, |this, args| this.call_native(call.id, args))
                .map_err(|e| with_span(e, call.span)),
            Expr::Prim(call) => {
                if call.int_tree {
                    // The machine result comes back in registers and is
                    // written into the returned value as tag and integer
                    // (see `int_compare`).
                    if call.op.is_comparison() {
                        if let Some(yes) = self.int_compare(call, f) {
                            return Ok(Value::Bool(yes));
                        }
                    } else if let Some(n) = self.int_arith(call, f) {
                        return Ok(Value::Int(n));
                    }
                }
                self.eval_prim(call, f)
            }
            Expr::Get(get) => self.eval_get(get, f),
            Expr::CallSelf(call) => match f.callee.closure {
                Some((function, code)) => self
                    .with_args(&call.args, f, |this, args| {
                        this.call_closure(function, code, args)
                    })
                    .map_err(|e| with_span(e, call.span)),
                // The analyzer makes self calls only inside named `fn`s.
                None => Err(Error::execution("A self call outside its function").into()),
            },
            Expr::Call(call) => {
                let func = self.eval(&call.func, f)?;
                self.with_args(&call.args, f, |this, args| this.call(&func, args))
                    .map_err(|e| with_span(e, call.span))
            }
            Expr::CallTool(call) => self.eval_call_tool(call, f),
            Expr::Def(def) => self.eval_def(def, f),
            Expr::And(exprs) => {
                let mut last = Value::Bool(true);
                for e in exprs {
                    last = self.eval(e, f)?;
                    if !last.truthy() {
                        return Ok(last);
                    }
                }
                Ok(last)
            }
            Expr::Or(exprs) => {
                let mut last = Value::Nil;
                for e in exprs {
                    last = self.eval(e, f)?;
                    if last.truthy() {
                        return Ok(last);
                    }
                }
                Ok(last)
            }
            Expr::Case(node) => self.eval_case(node, f),
            Expr::Where(node) => self.eval_where(node, f),
            Expr::For(node) => {
                let mut out = Vec::new();
                self.run_for(node, 0, f, &mut out)
                    .map_err(|e| with_span(e, node.span))?;
                Ok(if node.collect {
                    Value::vector(out)
                } else {
                    Value::Nil
                })
            }
            Expr::Return(e) => Err(Flow::Stop(Box::new(Stop::Return(self.eval(e, f)?)))),
            Expr::Fail(e) => Err(Flow::Stop(Box::new(Stop::Fail(self.eval(e, f)?)))),
        }
    }

    /// Evaluate call arguments left to right and pass them to `call`.
    /// Most calls have one to three arguments; those go in a plain array,
    /// which is cheaper to fill and drop than a growable buffer.
    #[inline]
    fn with_args(
        &mut self,
        args: &[Expr],
        f: Frame<'_>,
        call: impl FnOnce(&mut Self, &[Value]) -> EvalResult,
    ) -> EvalResult {
        match args {
            [] => call(self, &[]),
            [a] => {
                let [x] = [self.eval_arg(a, f)?];
                let result = call(self, std::slice::from_ref(&x));
                release(x);
                result
            }
            [a, b] => {
                let values = [self.eval_arg(a, f)?, self.eval_arg(b, f)?];
                let result = call(self, &values);
                let [x, y] = values;
                release(x);
                release(y);
                result
            }
            [a, b, c] => {
                let values = [self.eval(a, f)?, self.eval(b, f)?, self.eval(c, f)?];
                let result = call(self, &values);
                let [x, y, z] = values;
                release(x);
                release(y);
                release(z);
                result
            }
            _ => {
                let mut values: SmallVec<[Value; 6]> = SmallVec::with_capacity(args.len());
                for a in args {
                    values.push(self.eval(a, f)?);
                }
                call(self, &values)
            }
        }
    }

    /// `recur`: the new values, all evaluated before any is stored, go
    /// straight to their slots or, for destructuring bindings, to
    /// `recur_values`.
    #[inline(always)]
    fn eval_recur(&mut self, node: &Recur, f: Frame<'_>) -> EvalResult {
        match (node.args.as_slice(), node.slots.as_deref()) {
            ([a], Some([s])) => {
                let rx = self.eval_arg(a, f);
                self.set_local_from(f.base + *s as usize, rx)?;
            }
            ([a, b], Some([s, t])) => {
                let rx = self.eval_arg(a, f);
                if let Err(e) = rx {
                    return Err(e);
                }
                let ry = self.eval_arg(b, f);
                if let Err(e) = ry {
                    return Err(e);
                }
                self.set_local_from(f.base + *s as usize, rx)?;
                self.set_local_from(f.base + *t as usize, ry)?;
            }
            (args, slots) => {
                let mut values: SmallVec<[Value; 4]> = SmallVec::with_capacity(args.len());
                for a in args {
                    values.push(self.eval(a, f)?);
                }
                match slots {
                    Some(slots) => {
                        for (s, v) in slots.iter().zip(values) {
                            self.set_local(f.base + *s as usize, v);
                        }
                    }
                    None => self.recur_values = values,
                }
            }
        }
        Err(Flow::Recur)
    }

    /// Store the value of `r` in the frame slot at `index`; an integer
    /// is read in parts, not moved whole (see `prim_values`).
    #[inline(always)]
    fn set_local_from(&mut self, index: usize, r: EvalResult) -> EvalResult<()> {
        match int_result(&r) {
            Some(i) => {
                std::mem::forget(r);
                self.set_local_int(index, i);
            }
            None => self.set_local(index, r?),
        }
        Ok(())
    }

    /// Store the integer `i` in the frame slot at `index` of the stack:
    /// over an integer, only the number is written. A whole new value
    /// would be built on the stack and copied in 16 bytes at once, a load
    /// that cannot be served from the two narrower stores just made (a
    /// store-forwarding stall, W6's largest cost before).
    #[inline(always)]
    fn set_local_int(&mut self, index: usize, i: i64) {
        match &mut self.stack[index] {
            Value::Int(n) => *n = i,
            slot => release(std::mem::replace(slot, Value::Int(i))),
        }
    }

    /// Store `value` in the frame slot at `index` of the stack.
    #[inline(always)]
    fn set_local(&mut self, index: usize, value: Value) {
        release(std::mem::replace(&mut self.stack[index], value));
    }

    /// An arithmetic or comparison builtin: integers in place, anything
    /// else (and an overflow) through the builtin with the same values.
    /// Errors, also those of the arguments, carry the call's location, as
    /// for any builtin call.
    #[inline(always)]
    fn eval_prim(&mut self, call: &PrimCall, f: Frame<'_>) -> EvalResult {
        self.prim_values(call, f)
            .map_err(|e| with_span(e, call.span))
    }

    #[inline(always)]
    ///
    /// The results of the arguments are read where the evaluation left
    /// them (tag and integer apart) rather than moved as whole values:
    /// a 16-byte copy of what was just written in two parts stalls the
    /// processor (the store cannot be forwarded to the wider load).
    fn prim_values(&mut self, call: &PrimCall, f: Frame<'_>) -> EvalResult {
        match call.args.as_slice() {
            [a] => {
                let rx = self.eval(a, f);
                if let Some(i) = int_result(&rx) {
                    if let Some(n) = call.op.int1(i) {
                        std::mem::forget(rx);
                        return Ok(Value::Int(n));
                    }
                }
                let x = rx?;
                self.prim_fallback(call, &[x])
            }
            [a, b] => {
                let rx = self.eval(a, f);
                if let Err(e) = rx {
                    return Err(e);
                }
                let ry = self.eval(b, f);
                if let (Some(i), Some(j)) = (int_result(&rx), int_result(&ry)) {
                    let done = if call.op.is_comparison() {
                        call.op.compare(i, j).map(Value::Bool)
                    } else {
                        call.op.arith(i, j).map(Value::Int)
                    };
                    if let Some(v) = done {
                        // Integers: nothing to drop.
                        std::mem::forget(rx);
                        std::mem::forget(ry);
                        return Ok(v);
                    }
                }
                let (x, y) = (rx?, ry?);
                self.prim_fallback(call, &[x, y])
            }
            [a, b, c] => {
                let rx = self.eval(a, f);
                if let Err(e) = rx {
                    return Err(e);
                }
                let ry = self.eval(b, f);
                if let Err(e) = ry {
                    return Err(e);
                }
                let rz = self.eval(c, f);
                if let (Some(i), Some(j), Some(k)) =
                    (int_result(&rx), int_result(&ry), int_result(&rz))
                {
                    if let Some(n) = call.op.arith3(i, j, k) {
                        std::mem::forget(rx);
                        std::mem::forget(ry);
                        std::mem::forget(rz);
                        return Ok(Value::Int(n));
                    }
                }
                let (x, y, z) = (rx?, ry?, rz?);
                self.prim_fallback(call, &[x, y, z])
            }
            args => self.with_args(args, f, |this, args| this.call_native(call.id, args)),
        }
    }

    /// A lookup with a constant key: the key's value in the target, or
    /// the default (evaluated, as a call's argument is, whether or not it
    /// is needed). A local, parameter or captured target is read where it
    /// is, not copied.
    #[inline(never)]
    fn eval_get(&mut self, get: &super::expr::Get, f: Frame<'_>) -> EvalResult {
        let target = match &get.target {
            Expr::Local(slot) => Some(&self.stack[f.base + *slot as usize]),
            Expr::Arg(i) => Some(&f.callee.args[*i as usize]),
            Expr::Capture(i) => Some(&f.callee.captures[*i as usize]),
            _ => None,
        };
        let found = match (target, &get.default) {
            (Some(target), None) => builtins::get_found(target, &get.key),
            _ => None,
        };
        if let Some(v) = found {
            return Ok(v);
        }
        let target = self
            .eval(&get.target, f)
            .map_err(|e| with_span(e, get.span))?;
        let default = match &get.default {
            Some(d) => self.eval(d, f).map_err(|e| with_span(e, get.span))?,
            None => Value::Nil,
        };
        Ok(builtins::get(&target, &get.key, default))
    }

    /// A two-argument comparison as the test of an `if`: integers
    /// compared in place, anything else through the builtin.
    #[inline(always)]
    fn prim_test(&mut self, call: &PrimCall, f: Frame<'_>) -> EvalResult<bool> {
        if call.int_tree {
            if let Some(yes) = self.int_compare(call, f) {
                return Ok(yes);
            }
        }
        if let [a, b] = call.args.as_slice() {
            let rx = self.eval(a, f);
            if let Err(e) = rx {
                return Err(with_span(e, call.span));
            }
            let ry = self.eval(b, f);
            if let (Some(i), Some(j)) = (int_result(&rx), int_result(&ry)) {
                if let Some(yes) = call.op.compare(i, j) {
                    std::mem::forget(rx);
                    std::mem::forget(ry);
                    return Ok(yes);
                }
            }
            let x = rx.map_err(|e| with_span(e, call.span))?;
            let y = ry.map_err(|e| with_span(e, call.span))?;
            let v = self
                .prim_fallback(call, &[x, y])
                .map_err(|e| with_span(e, call.span))?;
            return Ok(truthy(v));
        }
        Ok(truthy(self.eval_prim(call, f)?))
    }

    /// A two-argument comparison whose integer tree
    /// ([`PrimCall::int_tree`]) is computed on machine integers (the
    /// arithmetic ones are [`Interp::int_arith`]). `None` when a leaf is
    /// not an integer, a step overflows or the call is no such comparison:
    /// the general path then gives the value or the error. A `bool` and an
    /// `Option<i64>` come back in registers, where a whole value would come
    /// back in memory, written in two parts and read in one.
    #[inline]
    fn int_compare(&self, call: &PrimCall, f: Frame<'_>) -> Option<bool> {
        match call.args.as_slice() {
            [a, b] => call
                .op
                .compare(self.int_operand(a, f)?, self.int_operand(b, f)?),
            _ => None,
        }
    }

    /// An arithmetic call of an integer tree on machine integers (the
    /// recursive part: operands that are leaves are read inline).
    #[inline(never)]
    fn int_arith(&self, call: &PrimCall, f: Frame<'_>) -> Option<i64> {
        match call.args.as_slice() {
            [a] => call.op.int1(self.int_operand(a, f)?),
            [a, b] => call
                .op
                .arith(self.int_operand(a, f)?, self.int_operand(b, f)?),
            [a, b, c] => call.op.arith3(
                self.int_operand(a, f)?,
                self.int_operand(b, f)?,
                self.int_operand(c, f)?,
            ),
            _ => None,
        }
    }

    /// An operand of an integer tree as a machine integer.
    #[inline(always)]
    fn int_operand(&self, e: &Expr, f: Frame<'_>) -> Option<i64> {
        let v = match e {
            Expr::Local(slot) => &self.stack[f.base + *slot as usize],
            Expr::Arg(i) => &f.callee.args[*i as usize],
            Expr::Capture(i) => &f.callee.captures[*i as usize],
            Expr::Const(v) => v,
            // The analyzer put only arithmetic trees here.
            Expr::Prim(inner) => return self.int_arith(inner, f),
            _ => return None,
        };
        match v {
            Value::Int(n) => Some(*n),
            _ => None,
        }
    }

    /// A call of `Expr::Prim` that has no inline integer result: on
    /// floats computed here as the builtin computes it, otherwise the
    /// builtin's.
    #[inline(never)]
    fn prim_fallback(&mut self, call: &PrimCall, args: &[Value]) -> EvalResult {
        if let Some(v) = call.op.on_floats(args) {
            return Ok(v);
        }
        self.call_native(call.id, args)
    }

    // The less frequent nodes live in their own functions so that the
    // frame of `eval_node`, entered once per node, stays small.

    #[inline(never)]
    fn eval_collection(&mut self, expr: &Expr, f: Frame<'_>) -> EvalResult {
        match expr {
            Expr::Vector(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    out.push(self.eval(item, f)?);
                }
                Ok(Value::vector(out))
            }
            Expr::Set(items) => {
                let mut out = Set::new();
                for item in items {
                    out.insert(self.eval(item, f)?);
                }
                Ok(Value::set(out))
            }
            Expr::Map(pairs) => {
                let mut out = Map::with_capacity(pairs.len());
                for (k, v) in pairs {
                    let k = self.eval(k, f)?;
                    let v = self.eval(v, f)?;
                    out.insert(k, v);
                }
                Ok(Value::map(out))
            }
            Expr::ShapedMap(m) => {
                // At most eight values: gathered on the stack, then moved
                // into the map's one allocation.
                let mut values = smallvec::SmallVec::<[Value; 8]>::new();
                for v in &m.values {
                    values.push(self.eval(v, f)?);
                }
                Ok(Value::map(Map::from_shape(m.shape.clone(), values)))
            }
            _ => unreachable!("only collections"),
        }
    }

    #[inline(never)]
    fn eval_loop(&mut self, node: &super::expr::Let, f: Frame<'_>) -> EvalResult {
        for (pattern, init) in &node.bindings {
            let v = self.eval(init, f)?;
            self.bind(pattern, v, f)?;
        }
        loop {
            match self.eval_body(&node.body, f) {
                Err(Flow::Recur) => {
                    self.tick()?;
                    // Empty when `recur` stored its values itself.
                    if !self.recur_values.is_empty() {
                        let values = std::mem::take(&mut self.recur_values);
                        for ((pattern, _), v) in node.bindings.iter().zip(values) {
                            self.bind(pattern, v, f)?;
                        }
                    }
                }
                other => return other,
            }
        }
    }

    #[inline(never)]
    fn eval_call_tool(&mut self, call: &super::expr::ToolCall, f: Frame<'_>) -> EvalResult {
        let name = match &call.name {
            ToolName::Fixed(n) => n.clone(),
            ToolName::Computed(e) => match &self.eval(e, f)? {
                Value::Str(s) | Value::Keyword(s) | Value::Symbol(s) => s.clone(),
                Value::ShortStr(s) => ArcStr::from(s.as_str()),
                other => {
                    return Err(Error::type_error(format!(
                        "`call` expects a tool name string, got {}",
                        other.describe()
                    ))
                    .with_span(call.span)
                    .into())
                }
            },
        };
        let mut args: SmallVec<[Value; 4]> = SmallVec::with_capacity(call.args.len());
        for a in &call.args {
            args.push(self.eval(a, f)?);
        }
        self.call_tool(&name, &args)
            .map_err(|e| with_span(e, call.span))
    }

    #[inline(never)]
    fn eval_def(&mut self, def: &super::expr::Def, f: Frame<'_>) -> EvalResult {
        if def.once && self.globals.get(&def.name).is_some() {
            return Ok(Value::Var(def.name.clone()));
        }
        let value = self.eval(&def.value, f)?;
        self.defined.push(def.name.clone());
        self.globals.define(
            def.name.clone(),
            Definition {
                value,
                doc: def.doc.clone(),
                source: Some(def.source.clone()),
            },
        );
        Ok(Value::Var(def.name.clone()))
    }

    #[inline(never)]
    fn eval_case(&mut self, node: &super::expr::Case, f: Frame<'_>) -> EvalResult {
        let subject = self.eval(&node.subject, f)?;
        match node.table.iter().find(|(v, _)| *v == subject) {
            Some((_, i)) => self.eval(&node.branches[*i], f),
            // The specification (§5.7): no match and no default is nil
            // (Clojure throws).
            None => match &node.default {
                Some(d) => self.eval(d, f),
                None => Ok(Value::Nil),
            },
        }
    }

    #[inline(never)]
    fn eval_where(&mut self, node: &super::expr::WhereExpr, f: Frame<'_>) -> EvalResult {
        let path = match self.eval(&node.path, f)? {
            Value::Vector(ref items) | Value::List(ref items) => items.iter().cloned().collect(),
            single => vec![single],
        };
        let operand = match &node.operand {
            Some(e) => self.eval(e, f)?,
            None => Value::Nil,
        };
        Ok(Value::Fn(Arc::new(Function::new(FunctionKind::Where {
            path,
            op: node.op,
            operand,
        }))))
    }

    /// `for`/`doseq` clause `i` onwards. Returns false when a `:while`
    /// ended the innermost binding's iteration.
    /// Run the clauses of a `for` from the `i`th on. Each clause nests
    /// one call deeper (a `for` of 20k bindings nests 20k deep), so every
    /// few clauses the stack may move onto a new segment.
    fn run_for(
        &mut self,
        node: &super::expr::For,
        i: usize,
        f: Frame<'_>,
        out: &mut Vec<Value>,
    ) -> EvalResult<bool> {
        if i % 8 == 7 {
            return stack::maybe_grow(RED_ZONE, STACK_SEGMENT, || {
                self.run_for_clause(node, i, f, out)
            });
        }
        self.run_for_clause(node, i, f, out)
    }

    fn run_for_clause(
        &mut self,
        node: &super::expr::For,
        i: usize,
        f: Frame<'_>,
        out: &mut Vec<Value>,
    ) -> EvalResult<bool> {
        let Some(clause) = node.clauses.get(i) else {
            let v = self.eval(&node.body, f)?;
            if node.collect {
                self.check_size(out.len() + 1)?;
                out.push(v);
            }
            return Ok(true);
        };
        match clause {
            ForClause::Bind(pattern, coll) => {
                let coll = self.eval(coll, f)?;
                let items = builtins::seq_items(&coll, "for")?;
                for item in items {
                    self.tick()?;
                    self.bind(pattern, item, f)?;
                    if !self.run_for(node, i + 1, f, out)? {
                        break;
                    }
                }
                Ok(true)
            }
            ForClause::Let(bindings) => {
                for (pattern, init) in bindings {
                    let v = self.eval(init, f)?;
                    self.bind(pattern, v, f)?;
                }
                self.run_for(node, i + 1, f, out)
            }
            ForClause::When(test) => {
                if self.eval(test, f)?.truthy() {
                    self.run_for(node, i + 1, f, out)
                } else {
                    Ok(true)
                }
            }
            ForClause::While(test) => {
                if self.eval(test, f)?.truthy() {
                    self.run_for(node, i + 1, f, out)
                } else {
                    Ok(false)
                }
            }
        }
    }

    fn make_closure(&self, lambda: &Arc<Lambda>, f: Frame<'_>) -> Value {
        let captured = lambda
            .captures
            .iter()
            .map(|c| match c {
                CaptureFrom::Local(s) => self.stack[f.base + *s as usize].clone(),
                CaptureFrom::Arg(i) => f.callee.args[*i as usize].clone(),
                CaptureFrom::Capture(i) => f.callee.captures[*i as usize].clone(),
            })
            .collect();
        Value::Fn(Arc::new(Function {
            name: lambda.name.clone(),
            kind: FunctionKind::Closure {
                params: lambda.params_text.clone(),
                code: Box::new(ClosureCode {
                    lambda: lambda.clone(),
                    captured,
                }),
            },
        }))
    }

    /// Destructure `value` into the slots of `pattern`.
    #[inline(always)]
    fn bind(&mut self, pattern: &Pattern, value: Value, f: Frame<'_>) -> EvalResult<()> {
        match pattern {
            Pattern::Bind(slot) => {
                self.set_local(f.base + *slot as usize, value);
                Ok(())
            }
            _ => self.destructure(pattern, value, f),
        }
    }

    #[inline(never)]
    fn destructure(&mut self, pattern: &Pattern, value: Value, f: Frame<'_>) -> EvalResult<()> {
        match pattern {
            Pattern::Bind(slot) => {
                self.stack[f.base + *slot as usize] = value;
            }
            // Only ever a parameter: its value stays with the caller.
            Pattern::Arg => {}
            Pattern::Seq { items, rest, all } => {
                // A vector is read in place, not copied first.
                let seq = builtins::seq_view(&value, "destructuring")?;
                for (i, p) in items.iter().enumerate() {
                    self.bind(p, seq.get(i).cloned().unwrap_or(Value::Nil), f)?;
                }
                if let Some(rest) = rest {
                    let remaining = if seq.len() > items.len() {
                        rest_value(rest, seq[items.len()..].to_vec())?
                    } else {
                        Value::Nil
                    };
                    self.bind(rest, remaining, f)?;
                }
                if let Some(slot) = all {
                    self.stack[f.base + *slot as usize] = value;
                }
            }
            Pattern::Map { entries, all } => {
                let map = match &value {
                    Value::Map(m) => Some(m),
                    Value::Nil => None,
                    other => {
                        return Err(Error::type_error(format!(
                            "Cannot destructure {} with a map pattern; expected a map",
                            other.describe()
                        ))
                        .into())
                    }
                };
                for entry in entries {
                    let found = map
                        .as_ref()
                        .and_then(|m| m.get_flexible(&entry.key))
                        .cloned();
                    let v = match (found, &entry.default) {
                        (Some(v), _) => v,
                        (None, Some(d)) => self.eval(d, f)?,
                        (None, None) => Value::Nil,
                    };
                    self.bind(&entry.pattern, v, f)?;
                }
                if let Some(slot) = all {
                    self.stack[f.base + *slot as usize] = value;
                }
            }
        }
        Ok(())
    }

    /// Call `func` as a predicate: whether its result counts as true.
    /// The result is looked at where the call returned it, never moved:
    /// a whole-value copy of what was just written as tag and payload
    /// apart stalls the processor (see [`Interp::set_local_int`]), and
    /// predicates run once per item in `filter`, `remove`, `some` and the
    /// like.
    pub(crate) fn call_truthy(&mut self, func: &Value, args: &[Value]) -> EvalResult<bool> {
        let result = self.call(func, args);
        let Ok(value) = &result else {
            return result.map(|_| false);
        };
        let (yes, scalar) = (value.truthy(), owns_nothing(value));
        if scalar {
            std::mem::forget(result);
        }
        Ok(yes)
    }

    /// Call any callable value.
    pub(crate) fn call(&mut self, func: &Value, args: &[Value]) -> EvalResult {
        // A builtin calling a builtin, a keyword or a map per item
        // (`group-by` with `identity`, `keep-indexed` with a map) never
        // ticks: count each call as work.
        if !meter::work(1) {
            if let Some(e) = meter::error() {
                return Err(e.into());
            }
        }
        match func {
            Value::Native(n) => self.call_native(n.id, args),
            Value::Fn(function) => self.call_function(function, args),
            Value::Keyword(_) => match args {
                [m] => Ok(builtins::get(m, func, Value::Nil)),
                [m, default] => Ok(builtins::get(m, func, default.clone())),
                _ => Err(arity_error(
                    &format!("The keyword {}", pr_str(func)),
                    args.len(),
                    "1 or 2",
                )
                .into()),
            },
            Value::Map(m) => match args {
                [k] => Ok(m.get(k).cloned().unwrap_or(Value::Nil)),
                [k, default] => Ok(m.get(k).cloned().unwrap_or_else(|| default.clone())),
                _ => Err(arity_error("A map called as a function", args.len(), "1 or 2").into()),
            },
            Value::Set(s) => match args {
                [x] => Ok(s.get(x).cloned().unwrap_or(Value::Nil)),
                _ => Err(arity_error("A set called as a function", args.len(), "1").into()),
            },
            Value::Vector(items) => match args {
                [Value::Int(i)] => Ok(usize::try_from(*i)
                    .ok()
                    .and_then(|i| items.get(i).cloned())
                    .unwrap_or(Value::Nil)),
                _ => Err(Error::type_error(
                    "A vector called as a function takes one integer index",
                )
                .into()),
            },
            Value::Var(name) => {
                let target = self.global(name, false)?;
                self.call(&target, args)
            }
            other => Err(Error::type_error(format!(
                "{} is not a function",
                capitalize(&other.describe())
            ))
            .into()),
        }
    }

    pub(crate) fn call_native(&mut self, id: u16, args: &[Value]) -> EvalResult {
        let b = self.registry.get(id);
        if args.len() < b.min_args || b.max_args.is_some_and(|m| args.len() > m) {
            return Err(arity_error(&format!("`{}`", b.name), args.len(), &b.arity_text()).into());
        }
        let out = (b.func)(self, args);
        // A builtin that stopped early because the meter tripped returns
        // a partial result: the meter's error replaces it here, so
        // nested builtins (with no call or loop between them to tick)
        // stop at once.
        if meter::tripped() {
            if let Some(e) = meter::error() {
                return Err(e.into());
            }
        }
        out
    }

    /// `v`, unless the meter tripped while it was computed (then `v` may
    /// be meaningless, and the meter's error takes its place).
    fn meter_checked(&self, v: Value) -> EvalResult {
        match meter::error() {
            Some(e) => Err(e.into()),
            None => Ok(v),
        }
    }

    /// The meter of this run: its deadline, interrupt flag and expansion
    /// limit, for the value layer and builtins (see [`crate::meter`]).
    pub(crate) fn meter(&self) -> Meter {
        Meter {
            started: self.started,
            timeout: self.limits.timeout,
            max_expanded: self.limits.max_expanded,
            max_memory: self.limits.max_memory,
            interrupt: self.interrupt.clone(),
        }
    }

    fn call_function(&mut self, function: &Arc<Function>, args: &[Value]) -> EvalResult {
        match &function.kind {
            FunctionKind::Closure { code, .. } => {
                // A closure restored from a serialized transcript carries
                // no code; calling it is an error, never a panic.
                let Some(code) = code.downcast_ref::<ClosureCode>() else {
                    return Err(Error::execution(format!(
                        "Function `{}` was restored from a transcript and cannot be called",
                        function.label()
                    ))
                    .into());
                };
                self.call_closure(function, code, args)
            }
            FunctionKind::Tool(name) => self.call_tool(name, args),
            _ => self.call_combinator(function, args),
        }
    }

    /// Call a function built by `comp`, `partial`, `fnil`, `juxt` and
    /// the like. Such functions nest (`(reduce comp (repeat 30000 inc))`
    /// is a chain 30,000 deep): each level counts toward the depth limit
    /// as a closure call does, and runs where the stack has room.
    fn call_combinator(&mut self, function: &Arc<Function>, args: &[Value]) -> EvalResult {
        if self.depth >= self.limits.max_depth {
            return Err(self.depth_error().into());
        }
        self.depth += 1;
        let result = stack::maybe_grow(RED_ZONE, STACK_SEGMENT, || {
            builtins::call_combinator(self, function, args)
        });
        self.depth -= 1;
        result
    }

    #[cold]
    fn depth_error(&self) -> Error {
        Error::new(
            ErrorKind::DepthLimit,
            format!(
                "Recursion deeper than {} nested calls",
                self.limits.max_depth
            ),
        )
        .with_hint("use `loop`/`recur` or `reduce` instead of deep recursion")
    }

    fn call_closure(
        &mut self,
        function: &Arc<Function>,
        code: &ClosureCode,
        args: &[Value],
    ) -> EvalResult {
        let lambda = &code.lambda;
        let Some(arity) = lambda.arities.iter().find(|a| a.accepts(args.len())) else {
            let name = lambda.name.as_deref().unwrap_or("fn");
            let expected: Vec<String> = lambda
                .arities
                .iter()
                .map(|a| {
                    if a.rest.is_some() {
                        format!("{}+", a.params.len())
                    } else {
                        a.params.len().to_string()
                    }
                })
                .collect();
            return Err(
                arity_error(&format!("`{name}`"), args.len(), &expected.join(" or ")).into(),
            );
        };
        self.tick()?;
        if self.depth >= self.limits.max_depth {
            return Err(self.depth_error().into());
        }
        self.depth += 1;
        let base = self.stack.len();
        self.stack
            .resize_with(base + arity.frame_size as usize, || Value::Nil);
        let callee = Callee {
            args,
            captures: &code.captured,
            closure: Some((function, code)),
        };
        let frame = Frame {
            base,
            callee: &callee,
        };
        let result = self.run_arity(function, arity, args, frame);
        while self.stack.len() > base {
            if let Some(v) = self.stack.pop() {
                release(v);
            }
        }
        self.depth -= 1;
        if let (Ok(v), Some(_)) = (&result, &function.name) {
            self.note_return(function, v);
        }
        result
    }

    /// Record `value` as returned by `function` (see `returns`).
    #[inline]
    fn note_return(&mut self, function: &Arc<Function>, value: &Value) {
        let key = Arc::as_ptr(function) as usize;
        let index = if self.last_return.0 == key {
            self.last_return.1
        } else {
            self.return_entry(function)
        };
        note_return(&mut self.returns[index].1, value);
    }

    /// The place of `function` in `returns`, made on its first return.
    #[inline(never)]
    fn return_entry(&mut self, function: &Arc<Function>) -> usize {
        let key = Arc::as_ptr(function) as usize;
        let index = *self.returns_index.entry(key).or_insert_with(|| {
            self.returns.push((function.clone(), SmallVec::new()));
            self.returns.len() - 1
        });
        self.last_return = (key, index);
        index
    }

    fn run_arity(
        &mut self,
        function: &Arc<Function>,
        arity: &Arity,
        args: &[Value],
        f: Frame<'_>,
    ) -> EvalResult {
        if let Some(slot) = arity.self_slot {
            self.stack[f.base + slot as usize] = Value::Fn(function.clone());
        }
        if arity.rest.is_none() {
            // `accepts` matched the count; plain names are read from `args`.
            for (p, a) in arity.params.iter().zip(args) {
                if !matches!(p, Pattern::Arg) {
                    self.bind(p, dup(a), f)?;
                }
            }
        } else {
            self.bind_params(arity, args.iter().cloned(), args.len(), f)?;
        }
        let result = self.eval(&arity.body, f);
        if matches!(result, Err(Flow::Recur)) {
            return self.recur_into(arity, f);
        }
        result
    }

    /// The body of `arity` again for each `recur` that reached it, until
    /// it gives something else.
    #[inline(never)]
    fn recur_into(&mut self, arity: &Arity, f: Frame<'_>) -> EvalResult {
        loop {
            self.tick()?;
            // Empty when `recur` stored its values itself.
            if !self.recur_values.is_empty() {
                // `recur` passes the rest parameter as one value.
                let values = std::mem::take(&mut self.recur_values);
                if arity.reads_args {
                    return self.recur_with_args(arity, values, f);
                }
                self.bind_recur(arity, values, f)?;
            }
            match self.eval_body(&arity.body, f) {
                Err(Flow::Recur) => {}
                other => return other,
            }
        }
    }

    fn bind_params(
        &mut self,
        arity: &Arity,
        mut args: impl Iterator<Item = Value>,
        n: usize,
        f: Frame<'_>,
    ) -> EvalResult<()> {
        for p in &arity.params {
            let v = args.next().unwrap_or(Value::Nil);
            self.bind(p, v, f)?;
        }
        if let Some(rest) = &arity.rest {
            let remaining: Vec<Value> = args.collect();
            let v = if n > arity.params.len() && !remaining.is_empty() {
                rest_value(rest, remaining)?
            } else {
                Value::Nil
            };
            self.bind(rest, v, f)?;
        }
        Ok(())
    }

    /// The body of `arity`, whose parameters are read from the arguments
    /// (`Pattern::Arg`), again for each `recur`: the values of each
    /// `recur` are the arguments of the next round.
    #[inline(never)]
    fn recur_with_args(
        &mut self,
        arity: &Arity,
        mut values: SmallVec<[Value; 4]>,
        f: Frame<'_>,
    ) -> EvalResult {
        loop {
            let callee = Callee {
                args: &values,
                ..*f.callee
            };
            let frame = Frame {
                base: f.base,
                callee: &callee,
            };
            for (p, a) in arity.params.iter().zip(values.iter()) {
                if !matches!(p, Pattern::Arg) {
                    self.bind(p, dup(a), frame)?;
                }
            }
            match self.eval(&arity.body, frame) {
                Err(Flow::Recur) => {}
                other => return other,
            }
            self.tick()?;
            values = std::mem::take(&mut self.recur_values);
        }
    }

    fn bind_recur(
        &mut self,
        arity: &Arity,
        values: SmallVec<[Value; 4]>,
        f: Frame<'_>,
    ) -> EvalResult<()> {
        let mut values = values.into_iter();
        for p in &arity.params {
            let v = values.next().unwrap_or(Value::Nil);
            self.bind(p, v, f)?;
        }
        if let Some(rest) = &arity.rest {
            let v = values.next().unwrap_or(Value::Nil);
            self.bind(rest, v, f)?;
        }
        Ok(())
    }

    /// Resolve a user definition, with the `tool/` and `data/` fallback
    /// for bare names (NS-004..007).
    pub(crate) fn global(&self, name: &str, fallback: bool) -> Result<Value, Error> {
        if let Some(def) = self.globals.get(name) {
            return Ok(def.value.clone());
        }
        if fallback {
            let tool = self.host.has_tool(name);
            let data = self.host.data(name);
            match (tool, data) {
                (true, Some(_)) => {
                    return Err(Error::new(
                        ErrorKind::AmbiguousReference,
                        format!("`{name}` is both `tool/{name}` and `data/{name}`"),
                    )
                    .with_hint(format!("write `tool/{name}` or `data/{name}`")))
                }
                (true, None) => return Ok(tool_value(name)),
                (false, Some(v)) => return Ok(v),
                (false, None) => {}
            }
        }
        Err(self.undefined(name, fallback))
    }

    fn undefined(&self, name: &str, fallback: bool) -> Error {
        let mut candidates: Vec<String> = self.globals.names().map(String::from).collect();
        candidates.extend(self.registry.names().map(String::from));
        if fallback {
            candidates.extend(self.host.data_names());
            candidates.extend(self.host.tool_names());
        }
        let near = suggest(name, candidates.iter().map(|s| s.as_str()));
        let mut err = Error::new(
            ErrorKind::Undefined,
            if fallback {
                format!("Undefined symbol `{name}`")
            } else {
                format!("`user/{name}` is not defined")
            },
        );
        if !near.is_empty() {
            let list: Vec<String> = near.iter().map(|n| format!("`{n}`")).collect();
            err = err.with_hint(format!("did you mean {}?", list.join(", ")));
        }
        err
    }

    /// `data/name` (and `(data "name")`): the input value called `name`,
    /// or, when there is none and the name has hyphens, the one with
    /// underscores instead (`data/order-items` finds `order_items`,
    /// specification §7.5).
    pub(crate) fn data(&self, name: &str) -> EvalResult {
        if let Some(v) = self.host.data(name) {
            return Ok(v);
        }
        if name.contains('-') {
            if let Some(v) = self.host.data(&name.replace('-', "_")) {
                return Ok(v);
            }
        }
        let names = self.host.data_names();
        let mut err = Error::new(
            ErrorKind::Undefined,
            format!("{} is not defined", data_reference(name)),
        );
        let near = suggest(name, names.iter().map(|s| s.as_str()));
        if let Some(n) = near.first() {
            err = err.with_hint(format!("did you mean {}?", data_reference(n)));
        } else if !names.is_empty() {
            let list: Vec<String> = names.iter().map(|n| data_reference(n)).collect();
            err = err.with_hint(format!("available: {}", list.join(", ")));
        }
        Err(err.into())
    }

    fn tool_ref(&self, name: &str) -> EvalResult {
        if self.host.has_tool(name) {
            Ok(tool_value(name))
        } else {
            Err(self.unknown_tool(name).into())
        }
    }

    fn unknown_tool(&self, name: &str) -> Error {
        let names = self.host.tool_names();
        let mut err = Error::new(ErrorKind::Undefined, format!("Unknown tool `tool/{name}`"));
        let near = suggest(name, names.iter().map(|s| s.as_str()));
        if let Some(n) = near.first() {
            err = err.with_hint(format!("did you mean `tool/{n}`?"));
        } else if names.is_empty() {
            err = err.with_hint("no tools are available");
        } else {
            let list: Vec<String> = names.iter().map(|n| format!("tool/{n}")).collect();
            err = err.with_hint(format!("available: {}", list.join(", ")));
        }
        err
    }

    /// Call a host tool, recording the call (TC-006).
    pub(crate) fn call_tool(&mut self, name: &str, args: &[Value]) -> EvalResult {
        if !self.host.has_tool(name) {
            return Err(self.unknown_tool(name).into());
        }
        if self.tool_calls.len() >= self.limits.max_tool_calls {
            return Err(Error::new(
                ErrorKind::ToolCallLimit,
                format!(
                    "Program made more than {} tool calls",
                    self.limits.max_tool_calls
                ),
            )
            .with_hint("batch requests or filter data before calling tools")
            .into());
        }
        // The clock is read once before the call and once after: each
        // reading serves the time limit and the call's duration.
        let started = Instant::now();
        self.check_time_at(started)?;
        let context = ToolContext {
            deadline: self.started.checked_add(self.limits.timeout),
            time_limit: self.limits.timeout,
            interrupt: self.interrupt.clone(),
        };
        let result = self.host.call_tool(name, args, &context);
        let ended = Instant::now();
        self.tool_calls.push(ToolCallRecord {
            name: name.to_string(),
            args: args.to_vec(),
            result: result.as_ref().ok().cloned(),
            error: result.as_ref().err().map(|e| e.message().to_string()),
            duration: ended.saturating_duration_since(started),
        });
        // A tool stopped at the program's deadline returns when the
        // deadline is reached; that is the program's timeout.
        if context.deadline.is_some_and(|d| ended >= d) {
            return Err(context.timeout_error().into());
        }
        self.check_time_at(ended)?;
        result.map_err(|e| {
            if e.kind() == ErrorKind::Tool {
                e.into()
            } else {
                Error::new(
                    ErrorKind::Tool,
                    format!("Tool `{name}` failed: {}", e.message()),
                )
                .into()
            }
        })
    }
}

/// A copy of `v`: scalars inline, anything else through `Clone` (a
/// reference count).
#[inline(always)]
fn dup(v: &Value) -> Value {
    match v {
        Value::Nil => Value::Nil,
        Value::Bool(b) => Value::Bool(*b),
        Value::Int(i) => Value::Int(*i),
        Value::Float(x) => Value::Float(*x),
        Value::Native(n) => Value::Native(n),
        _ => v.clone(),
    }
}

/// The integer an evaluation gave, if it gave one.
#[inline(always)]
fn int_result(r: &EvalResult) -> Option<i64> {
    match r {
        Ok(Value::Int(i)) => Some(*i),
        _ => None,
    }
}

/// Whether `v` counts as true, dropping it.
#[inline(always)]
fn truthy(v: Value) -> bool {
    let yes = v.truthy();
    release(v);
    yes
}

/// Whether `v` is a scalar, which owns nothing: dropping it is a no-op.
#[inline(always)]
fn owns_nothing(v: &Value) -> bool {
    matches!(
        v,
        Value::Nil | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Native(_)
    )
}

/// Drop `v`; a scalar, which owns nothing, without a call.
#[inline(always)]
fn release(v: Value) {
    if owns_nothing(&v) {
        std::mem::forget(v);
    } else {
        drop(v);
    }
}

/// What one parallel branch produced.
struct Branch {
    result: EvalResult,
    tool_calls: Vec<ToolCallRecord>,
    steps: u64,
}

/// Keep `value` as the latest return value of its type: one value per
/// type, so the list stays as short as the set of types (both forms of
/// a string are one type).
#[inline]
fn note_return(values: &mut SmallVec<[Value; 2]>, value: &Value) {
    let kind = std::mem::discriminant(value);
    let same_type = |v: &Value| std::mem::discriminant(v) == kind || (v.is_str() && value.is_str());
    match values.iter_mut().find(|v| same_type(v)) {
        Some(slot) => release(std::mem::replace(slot, dup(value))),
        None => values.push(value.clone()),
    }
}

fn reword(flow: Flow, index: usize, index_error: &impl Fn(usize, Error) -> Error) -> Flow {
    match flow {
        Flow::Stop(mut stop) => {
            if let Stop::Error(e) = *stop {
                *stop = Stop::Error(index_error(index, e));
            }
            Flow::Stop(stop)
        }
        other => other,
    }
}

fn tool_value(name: &str) -> Value {
    Value::Fn(Arc::new(Function::new(FunctionKind::Tool(ArcStr::from(
        name,
    )))))
}

fn with_span(flow: Flow, span: Span) -> Flow {
    match flow {
        Flow::Stop(mut stop) => {
            if let Stop::Error(e) = *stop {
                *stop = Stop::Error(e.with_span(span));
            }
            Flow::Stop(stop)
        }
        other => other,
    }
}

/// "`f` expects 2 arguments, got 3"; `expected` is text such as `1 or 2`
/// or `at least 1`, and decides between "argument" and "arguments".
pub(crate) fn arity_error(what: &str, got: usize, expected: &str) -> Error {
    let singular = expected.ends_with(" 1") || expected == "1";
    Error::arity(format!(
        "{what} expects {expected} argument{}, got {got}",
        if singular { "" } else { "s" }
    ))
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The value a rest pattern (`& more`) binds: the remaining items as a
/// vector, or, for a map pattern (`[& {:keys [a]}]`, keyword arguments),
/// a map of them taken as key/value pairs (a single map stands for
/// itself, as in Clojure 1.11).
fn rest_value(pattern: &Pattern, remaining: Vec<Value>) -> Result<Value, Error> {
    if !matches!(pattern, Pattern::Map { .. }) {
        return Ok(Value::vector(remaining));
    }
    match remaining.as_slice() {
        [m @ Value::Map(_)] => Ok(m.clone()),
        items if items.len() % 2 == 0 => Ok(Value::map(
            items
                .chunks(2)
                .map(|kv| (kv[0].clone(), kv[1].clone()))
                .collect(),
        )),
        items => Err(Error::type_error(format!(
            "Keyword arguments come in pairs, got {} value{} after the fixed arguments",
            items.len(),
            if items.len() == 1 { "" } else { "s" }
        ))),
    }
}

/// How a program names an input value: `data/name`, or `(data "name")`
/// for a key that is not a symbol (`"first name"`, `"2024"`), quoted in
/// backticks for messages.
pub(crate) fn data_reference(name: &str) -> String {
    let symbol_like = name
        .chars()
        .next()
        .is_some_and(|c| !c.is_ascii_digit() && c != ':' && c != '\'')
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || "-_*+!?<>=.'".contains(c));
    if symbol_like {
        format!("`data/{name}`")
    } else {
        format!("`(data {})`", crate::value::pr_str(&Value::str(name)))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_eval_result_is_two_words() {
        // Every node evaluated writes one; a larger one costs more to
        // write, copy and test.
        assert_eq!(std::mem::size_of::<super::Flow>(), 8);
        assert_eq!(std::mem::size_of::<super::EvalResult>(), 16);
    }
}
