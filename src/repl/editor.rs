//! Interactive mode: the rustyline editor and the read-eval-print loop.
//!
//! - Enter on unbalanced input (the real reader's
//!   [`read_status`](crate::reader::read_status) says incomplete) starts a
//!   new line that shows the continuation prompt `...> `. The prompt is
//!   kept in the buffer as [`MARKER`] (spaces, which the reader ignores)
//!   and drawn by the highlighter, because rustyline has no continuation
//!   prompt of its own; the markers are removed before evaluation.
//! - Tab completes `tool/`, `data/`, `user/`, builtin and special-form
//!   names, colon commands, and file names after `:load` / `:save`.
//! - History is kept in a file ([`history_path`]).
//! - Ctrl-C while a program runs sets the session's interrupt flag (from
//!   the `ctrlc` handler thread); a second Ctrl-C before the first took
//!   effect exits. At the prompt, Ctrl-C clears the line; Ctrl-D exits on
//!   an empty line and, at a continuation prompt, cancels the unfinished
//!   form (and says so).
//! - Input that holds no form (blank, or only comments) is not a turn.
//! - Results wider than the terminal are pretty-printed to its width.

use std::borrow::Cow;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rustyline::completion::{Completer, FilenameCompleter, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::{CmdKind, Highlighter};
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{
    Cmd, ColorMode, CompletionType, ConditionalEventHandler, Config, Context, Editor, Event,
    EventContext, EventHandler, Helper, KeyCode, KeyEvent, Modifiers, RepeatCount,
};

use crate::builtins::registry;
use crate::reader::{read_status, ReadStatus};

use super::commands::{special_form_names, COMMANDS};
use super::print::{Printer, Source};
use super::{Repl, ReplConfig, SessionFactory, Step};

/// The prompt.
const PROMPT: &str = "ptc> ";
/// The continuation prompt, as drawn (the same width as [`PROMPT`]).
const CONTINUATION: &str = "...> ";
/// What stands for the continuation prompt in the buffer.
const MARKER: &str = "     ";

const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

/// Run the interactive REPL; returns the exit code.
pub(super) fn run(config: ReplConfig, new_session: SessionFactory) -> i32 {
    let color = std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let out = Printer::new(color, None);
    let mut repl = match Repl::start(config, new_session, out.clone()) {
        Ok(r) => r,
        Err(e) => {
            out.error(&e);
            return 2;
        }
    };

    let editor_config = Config::builder()
        .auto_add_history(false)
        .history_ignore_space(true)
        .completion_type(CompletionType::List)
        // The highlighter draws the continuation prompt, so it must run
        // even when colors are off; it adds no escapes then.
        .color_mode(if std::io::stdout().is_terminal() {
            ColorMode::Forced
        } else {
            ColorMode::Disabled
        })
        .build();
    let mut editor: Editor<ReplHelper, DefaultHistory> = match Editor::with_config(editor_config) {
        Ok(e) => e,
        Err(e) => {
            out.error(&format!("cannot start the line editor: {e}"));
            return 2;
        }
    };
    // After the editor: rustyline's terminal set-up installs a SIGINT
    // handler of its own, which this one replaces.
    install_interrupt_handler(repl.interrupt.clone(), out.clone());
    editor.set_helper(Some(ReplHelper::new(color)));
    for key in [
        KeyEvent(KeyCode::Enter, Modifiers::NONE),
        KeyEvent(KeyCode::Char('J'), Modifiers::CTRL),
        KeyEvent(KeyCode::Char('M'), Modifiers::CTRL),
    ] {
        editor.bind_sequence(key, EventHandler::Conditional(Box::new(ContinueLine)));
    }
    let cancelled = Arc::new(AtomicBool::new(false));
    editor.bind_sequence(
        KeyEvent(KeyCode::Char('D'), Modifiers::CTRL),
        EventHandler::Conditional(Box::new(CancelForm(cancelled.clone()))),
    );
    let mut history = HistoryFile::open(&mut editor, out.clone());

    out.note(&format!(
        "ptc-lisp {}: each input is one turn. :help for commands, Ctrl-D to exit.",
        env!("CARGO_PKG_VERSION")
    ));
    loop {
        if let Some(kind) = out.write_failure() {
            return out.failure_code(kind);
        }
        if let Some(helper) = editor.helper_mut() {
            helper.names = repl.session_names();
        }
        repl.out.width = editor.dimensions().map(|(columns, _)| usize::from(columns));
        match editor.readline(PROMPT) {
            Ok(input) => {
                if input.trim().is_empty() {
                    continue;
                }
                let _ = editor.add_history_entry(input.as_str());
                history.append(&mut editor);
                let program = strip_markers(&input);
                if holds_no_form(&program) {
                    continue;
                }
                if program.trim_start().starts_with(':') {
                    if repl.command(program.trim()) == Step::Quit {
                        break;
                    }
                } else {
                    repl.eval(&program, &Source::whole(&program));
                }
            }
            Err(ReadlineError::Interrupted) => {
                if cancelled.swap(false, Ordering::SeqCst) {
                    out.note("(unfinished form cancelled)");
                }
                continue;
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                out.error(&format!("cannot read input: {e}"));
                return 1;
            }
        }
    }
    0
}

/// Ctrl-C during an evaluation stops it through the current session's
/// interrupt flag. The flag is cleared before and after every turn; a
/// Ctrl-C that finds it still set (the evaluation did not stop, say in a
/// slow tool call) exits the process.
fn install_interrupt_handler(slot: Arc<Mutex<Arc<AtomicBool>>>, out: Printer) {
    let result = ctrlc::set_handler(move || {
        let already = slot
            .lock()
            .map(|flag| flag.swap(true, Ordering::SeqCst))
            .unwrap_or(true);
        if already {
            std::process::exit(130);
        }
    });
    if let Err(e) = result {
        out.note(&format!(
            "Ctrl-C cannot interrupt evaluations ({e}); it will end the REPL instead"
        ));
    }
}

/// The program text of an input: continuation markers removed.
fn strip_markers(input: &str) -> String {
    let mut out = String::with_capacity(input.len());
    for (i, line) in input.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
            out.push_str(line.strip_prefix(MARKER).unwrap_or(line));
        } else {
            out.push_str(line);
        }
    }
    out
}

/// True when `buffer` is a program the reader needs more lines for.
fn is_incomplete(buffer: &str) -> bool {
    !buffer.trim_start().starts_with(':')
        && read_status(&strip_markers(buffer)) == ReadStatus::Incomplete
}

/// Enter at the end of unbalanced input: a new line with the
/// continuation marker. Anywhere else Enter does what it always does
/// (the validator decides).
struct ContinueLine;

impl ConditionalEventHandler for ContinueLine {
    fn handle(&self, _: &Event, _: RepeatCount, _: bool, ctx: &EventContext) -> Option<Cmd> {
        let line = ctx.line();
        (ctx.pos() == line.len() && is_incomplete(line))
            .then(|| Cmd::Insert(1, format!("\n{MARKER}")))
    }
}

/// True when `program` reads as zero forms (blank or only comments): such
/// input is not a turn.
fn holds_no_form(program: &str) -> bool {
    !program.trim_start().starts_with(':')
        && matches!(crate::reader::read_program(program), Ok(forms) if forms.is_empty())
}

/// Ctrl-D on a multi-line (unfinished) input: cancel it, as Ctrl-C would,
/// and flag that it was Ctrl-D so the loop says so. On an empty line or a
/// single-line input it does what it always does (exit / delete).
struct CancelForm(Arc<AtomicBool>);

impl ConditionalEventHandler for CancelForm {
    fn handle(&self, _: &Event, _: RepeatCount, _: bool, ctx: &EventContext) -> Option<Cmd> {
        let line = ctx.line();
        (line.contains('\n') && is_incomplete(line)).then(|| {
            self.0.store(true, Ordering::SeqCst);
            Cmd::Interrupt
        })
    }
}

/// The history file: `PTC_HISTORY` if set (empty turns it off), else
/// `$XDG_DATA_HOME/ptc/history`, else `~/.local/share/ptc/history`.
pub(super) fn history_path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("PTC_HISTORY") {
        return (!path.is_empty()).then(|| PathBuf::from(path));
    }
    let data_home = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".local").join("share"))
        })?;
    Some(data_home.join("ptc").join("history"))
}

/// The largest history file the REPL reads.
const MAX_HISTORY_BYTES: u64 = 16 * 1024 * 1024;

/// The history file in use; a failure to write it warns once and turns
/// saving off for the rest of the session.
struct HistoryFile {
    path: Option<PathBuf>,
    out: Printer,
}

impl HistoryFile {
    fn open(editor: &mut Editor<ReplHelper, DefaultHistory>, out: Printer) -> Self {
        let mut path = history_path();
        if let Some(p) = &path {
            match std::fs::metadata(p) {
                // Read only a regular file within the limit: the editor
                // reads it whole, and a FIFO or device would block or
                // never end.
                Ok(m) if !m.is_file() || m.len() > MAX_HISTORY_BYTES => {
                    out.note(&format!(
                        "warning: the history file `{}` is {}; history is off (set PTC_HISTORY \
                         to another file, or to nothing to turn it off)",
                        p.display(),
                        if m.is_file() {
                            format!(
                                "larger than the limit of {}",
                                crate::input::human_bytes(MAX_HISTORY_BYTES)
                            )
                        } else {
                            "not a regular file".to_string()
                        }
                    ));
                    path = None;
                }
                Ok(_) => {
                    if let Err(e) = editor.load_history(p) {
                        out.note(&format!(
                            "warning: cannot read the history file `{}`: {e}",
                            p.display()
                        ));
                    }
                }
                Err(_) => {}
            }
        }
        HistoryFile { path, out }
    }

    fn append(&mut self, editor: &mut Editor<ReplHelper, DefaultHistory>) {
        let Some(path) = &self.path else {
            return;
        };
        let result = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() && !dir.exists() => {
                std::fs::create_dir_all(dir).map_err(ReadlineError::from)
            }
            _ => Ok(()),
        }
        .and_then(|()| editor.append_history(path));
        if let Err(e) = result {
            self.out.note(&format!(
                "warning: cannot write the history file `{}` ({e}); history will not be saved \
                 (set PTC_HISTORY to another file, or to nothing to turn it off)",
                path.display()
            ));
            self.path = None;
        }
    }
}

/// The rustyline helper: validation, completion and the continuation
/// prompt.
struct ReplHelper {
    color: bool,
    /// `user/`, `tool/` and `data/` names of the session, updated before
    /// every prompt.
    names: SessionNames,
    files: FilenameCompleter,
}

/// The names a session defines, for completion.
#[derive(Debug, Default, Clone)]
pub(super) struct SessionNames {
    pub user: Vec<String>,
    pub tools: Vec<String>,
    pub data: Vec<String>,
}

impl Repl {
    fn session_names(&self) -> SessionNames {
        SessionNames {
            user: self.session.globals().names().map(str::to_string).collect(),
            tools: self
                .session
                .tools()
                .iter()
                .map(|t| t.name().to_string())
                .collect(),
            data: self.session.data().iter().map(|(n, _)| n.clone()).collect(),
        }
    }
}

impl ReplHelper {
    fn new(color: bool) -> Self {
        ReplHelper {
            color,
            names: SessionNames::default(),
            files: FilenameCompleter::new(),
        }
    }

    /// Every name that completes `word`, sorted.
    fn candidates(&self, word: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut add = |name: String| {
            if name.starts_with(word) {
                out.push(name);
            }
        };
        for n in &self.names.tools {
            add(format!("tool/{n}"));
        }
        for n in &self.names.data {
            add(format!("data/{n}"));
        }
        for n in &self.names.user {
            add(n.clone());
            if word.starts_with("user/") {
                add(format!("user/{n}"));
            }
        }
        if !["tool/", "data/", "user/"]
            .iter()
            .any(|p| word.starts_with(p))
        {
            for n in registry().names() {
                // Refused functions only exist to explain themselves.
                if registry().lookup(n).is_some_and(|b| b.listed()) {
                    add(n.to_string());
                }
            }
            for n in special_form_names() {
                add(n.to_string());
            }
        }
        out.sort();
        out.dedup();
        out
    }
}

/// Characters that end a symbol when scanning back from the cursor.
fn is_delimiter(c: char) -> bool {
    c.is_whitespace() || "()[]{}\"',;@^`~\\".contains(c)
}

impl Completer for ReplHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let before = &line[..pos];
        let trimmed = before.trim_start();
        if trimmed.starts_with(':') {
            match trimmed.split_once(char::is_whitespace) {
                // The command name itself.
                None => {
                    let start = pos - trimmed.len();
                    let pairs = COMMANDS
                        .iter()
                        .filter(|(name, _, _)| name.starts_with(trimmed))
                        .map(|(name, _, _)| pair(name))
                        .collect();
                    return Ok((start, pairs));
                }
                Some((":load" | ":save", _)) => return self.files.complete(line, pos, ctx),
                Some((":doc", _)) => {}
                Some(_) => return Ok((pos, Vec::new())),
            }
        }
        let start = before
            .char_indices()
            .rev()
            .find(|(_, c)| is_delimiter(*c))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let word = &before[start..];
        if word.is_empty() || word.starts_with(':') || word.starts_with('#') {
            return Ok((pos, Vec::new()));
        }
        let pairs = self.candidates(word).iter().map(|n| pair(n)).collect();
        Ok((start, pairs))
    }
}

fn pair(name: &str) -> Pair {
    Pair {
        display: name.to_string(),
        replacement: name.to_string(),
    }
}

impl Hinter for ReplHelper {
    type Hint = String;
}

impl Highlighter for ReplHelper {
    /// Draw the continuation prompt over each line's marker.
    fn highlight<'l>(&self, line: &'l str, _pos: usize) -> Cow<'l, str> {
        if !line.contains('\n') {
            return Cow::Borrowed(line);
        }
        let mut out = String::with_capacity(line.len() + 16);
        for (i, part) in line.split('\n').enumerate() {
            if i > 0 {
                out.push('\n');
                if let Some(rest) = part.strip_prefix(MARKER) {
                    if self.color {
                        out.push_str(DIM);
                        out.push_str(CONTINUATION);
                        out.push_str(RESET);
                    } else {
                        out.push_str(CONTINUATION);
                    }
                    out.push_str(rest);
                    continue;
                }
            }
            out.push_str(part);
        }
        Cow::Owned(out)
    }

    fn highlight_char(&self, line: &str, _pos: usize, _kind: CmdKind) -> bool {
        line.contains('\n')
    }
}

impl Validator for ReplHelper {
    /// Unbalanced input continues on the next line; anything else
    /// (complete, or invalid so the error is shown) is submitted.
    fn validate(&self, ctx: &mut ValidationContext) -> rustyline::Result<ValidationResult> {
        Ok(if is_incomplete(ctx.input()) {
            ValidationResult::Incomplete
        } else {
            ValidationResult::Valid(None)
        })
    }
}

impl Helper for ReplHelper {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_removed_from_continuation_lines_only() {
        let input = format!("(+ 1\n{MARKER}2)\n  3");
        assert_eq!(strip_markers(&input), "(+ 1\n2)\n  3");
        assert_eq!(strip_markers("     (+ 1 2)"), "     (+ 1 2)");
    }

    #[test]
    fn incomplete_input_is_detected_through_markers() {
        assert!(is_incomplete("(defn f [x]"));
        assert!(is_incomplete(&format!("(defn f [x]\n{MARKER}(+ x")));
        assert!(!is_incomplete(&format!("(defn f [x]\n{MARKER}x)")));
        assert!(!is_incomplete(":doc ("));
        assert!(!is_incomplete("(+ 1))"));
    }

    #[test]
    fn completion_offers_builtins_and_session_names() {
        let mut helper = ReplHelper::new(false);
        helper.names = SessionNames {
            user: vec!["filtered".into()],
            tools: vec!["search".into()],
            data: vec!["users".into()],
        };
        let found = helper.candidates("filt");
        assert!(found.contains(&"filter".to_string()), "{found:?}");
        assert!(found.contains(&"filtered".to_string()), "{found:?}");
        assert_eq!(helper.candidates("tool/"), vec!["tool/search"]);
        assert_eq!(helper.candidates("data/u"), vec!["data/users"]);
        assert_eq!(helper.candidates("user/f"), vec!["user/filtered"]);
        assert!(helper.candidates("defn").contains(&"defn-".to_string()));
    }

    #[test]
    fn continuation_prompts_keep_the_width() {
        let helper = ReplHelper::new(false);
        let line = format!("(+ 1\n{MARKER}2)");
        let drawn = helper.highlight(&line, 0);
        assert_eq!(drawn, "(+ 1\n...> 2)");
        assert_eq!(drawn.len(), line.len());
    }
}
