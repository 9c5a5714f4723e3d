//! The interactive REPL: each input is one turn of a real [`Session`], so a
//! person can explore data and tools and see exactly what a model would
//! see next (`:context`, `:tokens`).
//!
//! On a terminal, input is edited with rustyline (`editor.rs`): a validator
//! runs the real reader so unbalanced input continues on the next line,
//! names complete with Tab, history is kept in a file, and Ctrl-C stops a
//! running evaluation through the session's interrupt flag. When standard
//! input is not a terminal (`piped.rs`), the input is split into top-level
//! forms and each runs as a turn, without prompts or colors.
//!
//! This module may use `session`, `compression` and `tokens`; it does not
//! build sessions itself: the caller passes a [`SessionFactory`] (the `ptc`
//! binary's loads data and tool manifests), which `:reset` calls again. The
//! token encoding is only loaded by `:tokens`, never at start-up.
//!
//! ```no_run
//! use ptc_lisp::repl::{self, ReplConfig};
//! use ptc_lisp::session::Session;
//!
//! let code = repl::run(ReplConfig::default(), Box::new(|| Ok(Session::new())));
//! std::process::exit(code);
//! ```

mod budget;
mod commands;
mod editor;
mod piped;
mod print;
mod save;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::compression::{CompressionSetting, DEFAULT_MAX_TURNS};
use crate::history::recorder::Recorder;
use crate::history::{Carry, Compactor, Policy};
use crate::session::{Session, Turn, TurnOutcome};

use print::{Printer, Source};

pub use save::prelude_source;

/// Builds the session the REPL starts with, and a fresh one on `:reset`.
pub type SessionFactory = Box<dyn Fn() -> Result<Session, String>>;

/// Start-up options of the REPL.
#[derive(Debug, Clone)]
pub struct ReplConfig {
    /// A file of definitions evaluated first, as a turn (again on `:reset`).
    pub prelude: Option<PathBuf>,
    /// The `max_turns` of the run `:context` renders for.
    pub max_turns: usize,
    /// The mission `:context` and `:tokens` render first.
    pub mission: String,
    /// How `:context` and `:tokens` render the history.
    pub compression: CompressionSetting,
    /// The system prompt an agent run would send (counted by `:tokens`);
    /// empty for none. The binary supplies the agent's, so this module
    /// needs no dependency on `agent`.
    pub system_prompt: String,
    /// The token budget `:budget` checks and `:compact` compacts to.
    pub policy: Policy,
    /// The model whose tokenizer `:budget` counts with.
    pub counting_model: String,
    /// Where `:compact`'s events and archived rounds go, if anywhere
    /// (shared so the caller can flush it after the REPL ends).
    pub recorder: Option<Arc<Mutex<Recorder>>>,
}

impl Default for ReplConfig {
    /// No prelude, the default `max_turns`, no mission, compression on.
    fn default() -> Self {
        ReplConfig {
            prelude: None,
            max_turns: DEFAULT_MAX_TURNS,
            mission: String::new(),
            compression: CompressionSetting::On,
            system_prompt: String::new(),
            policy: Policy::default(),
            counting_model: "gpt-4o".into(),
            recorder: None,
        }
    }
}

/// Run the REPL on the process's standard streams and return its exit
/// code: interactive on a terminal, piped otherwise (see the module docs).
pub fn run(config: ReplConfig, new_session: SessionFactory) -> i32 {
    if std::io::stdin().is_terminal() {
        editor::run(config, new_session)
    } else {
        piped::run(config, new_session)
    }
}

/// What the caller should do after a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// Go on; `failed` tells whether the command or turn failed.
    Continue {
        failed: bool,
    },
    Quit,
}

/// The state both front ends share: the session and how to print.
struct Repl {
    config: ReplConfig,
    new_session: SessionFactory,
    session: Session,
    out: Printer,
    /// The interrupt flag of the current session; the Ctrl-C handler
    /// reads this slot, so `:reset` only has to replace its contents.
    interrupt: Arc<Mutex<Arc<AtomicBool>>>,
    /// Counts and compacts the next prompt (`:budget`, `:compact`).
    compactor: Compactor,
    /// The compaction in force over the next prompts.
    carry: Carry,
}

impl Repl {
    /// A REPL with a first session (and its prelude run). A session that
    /// cannot be built is fatal: the message says why.
    fn start(
        config: ReplConfig,
        new_session: SessionFactory,
        out: Printer,
    ) -> Result<Self, String> {
        let mut session = new_session()?;
        let interrupt = Arc::new(Mutex::new(session.interrupt_handle()));
        let compactor = Compactor::new(&config.counting_model, config.policy.clone())
            .map_err(|e| e.to_string())?;
        let mut repl = Repl {
            config,
            new_session,
            session,
            out,
            interrupt,
            compactor,
            carry: Carry::new(budget::PINNED),
        };
        repl.run_prelude();
        Ok(repl)
    }

    /// Evaluate the prelude file, if any, as a turn. Only errors are shown.
    fn run_prelude(&mut self) {
        let Some(path) = self.config.prelude.clone() else {
            return;
        };
        match crate::input::read_program_file(&path) {
            Ok(text) => {
                let turn = self.run_turn(&text);
                if !turn.success {
                    self.out.error(&format!(
                        "the prelude `{}` failed (turn {})",
                        path.display(),
                        turn.number
                    ));
                    self.show_turn(&turn, &Source::file(&text, &path));
                }
            }
            Err(e) => self
                .out
                .error(&e.describe(&format!("the prelude `{}`", path.display()))),
        }
    }

    /// Run `program` as the next turn and print what it produced. Returns
    /// true when the turn failed (an error or `(fail ...)`).
    fn eval(&mut self, program: &str, source: &Source) -> bool {
        let turn = self.run_turn(program);
        self.show_turn(&turn, source)
    }

    /// Run `program` as the next turn. The interrupt flag is cleared
    /// before and after, so a Ctrl-C that arrived outside an evaluation
    /// (during `:tokens`, or as a turn ended) does not stop the next one.
    fn run_turn(&mut self, program: &str) -> Turn {
        self.clear_interrupt();
        let turn = self.session.eval(program).clone();
        self.clear_interrupt();
        turn
    }

    fn clear_interrupt(&mut self) {
        if let Ok(flag) = self.interrupt.lock() {
            flag.store(false, Ordering::SeqCst);
        }
    }

    /// Print a turn's output and its result or error; true if it failed.
    fn show_turn(&self, turn: &Turn, source: &Source) -> bool {
        for line in &turn.prints {
            self.out.line(line);
        }
        match &turn.outcome {
            TurnOutcome::Value { value } => {
                self.out.value(value);
                false
            }
            TurnOutcome::Return { value } => {
                self.out.value(value);
                self.out
                    .note("(return) an agent run would end here with this value");
                false
            }
            TurnOutcome::Fail { value } => {
                self.out.failed(value);
                true
            }
            TurnOutcome::Error { error } => {
                if error.code == "interrupted" {
                    // The terminal echoed `^C` where the next line would start.
                    self.out.note("");
                }
                self.out.turn_error(error, source);
                true
            }
        }
    }

    /// Replace the session with a fresh one from the factory (and run the
    /// prelude again).
    fn reset(&mut self) -> Result<(), String> {
        let mut session = (self.new_session)()?;
        let flag = session.interrupt_handle();
        self.session = session;
        self.carry.reset();
        if let Ok(mut slot) = self.interrupt.lock() {
            *slot = flag;
        }
        self.run_prelude();
        Ok(())
    }
}
