//! Piped mode: standard input is not a terminal, so it is read whole,
//! split into top-level forms with the reader, and each form runs as one
//! turn with its output and result printed. A line that starts with `:`
//! outside any form is a colon command. No prompts, no colors, no history
//! file. The exit code is 1 when the last form or command failed.

use crate::reader::{read_program, read_status, ReadStatus};

use super::print::{Printer, Source};
use super::{Repl, ReplConfig, SessionFactory, Step};

/// Run every form and command of standard input; returns the exit code.
pub(super) fn run(config: ReplConfig, new_session: SessionFactory) -> i32 {
    let mut out = Printer::new(
        false,
        std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.trim().parse().ok())
            .filter(|&c: &usize| c > 0),
    );
    out.more_hint = super::print::PIPED_MORE_HINT;
    let input = match crate::input::read_text(
        std::io::stdin().lock(),
        crate::input::MAX_PROGRAM_BYTES,
        "standard input",
        "for program text",
    ) {
        Ok(input) => input,
        Err(e) => {
            out.error(&e.describe("standard input"));
            return 2;
        }
    };
    let mut repl = match Repl::start(config, new_session, out.clone()) {
        Ok(r) => r,
        Err(e) => {
            out.error(&e);
            return 2;
        }
    };
    let failed = run_script(&mut repl, &input);
    match out.write_failure() {
        Some(kind) => out.failure_code(kind),
        None => i32::from(failed),
    }
}

/// Run a script's forms and commands in order; true if the last failed.
fn run_script(repl: &mut Repl, input: &str) -> bool {
    let mut failed = false;
    // The text of the forms read so far that are not complete yet, and
    // the line it starts on.
    let mut pending = String::new();
    let mut pending_line = 1;
    for (index, line) in input.split_inclusive('\n').enumerate() {
        if repl.out.write_failure().is_some() {
            // Nobody reads what the rest would print.
            return failed;
        }
        let number = index as u32 + 1;
        if pending.trim().is_empty() && line.trim_start().starts_with(':') {
            pending.clear();
            match repl.command(line.trim()) {
                Step::Continue { failed: f } => failed = f,
                Step::Quit => return failed,
            }
            continue;
        }
        if pending.trim().is_empty() {
            pending.clear();
            pending_line = number;
        }
        pending.push_str(line);
        match read_status(&pending) {
            ReadStatus::Incomplete => {}
            ReadStatus::Complete => {
                if let Some(f) = run_forms(repl, &pending, input, pending_line) {
                    failed = f;
                }
                pending.clear();
            }
            ReadStatus::Invalid(_) => {
                // The session reports the reader's error as a failed turn.
                failed = run_chunk(repl, &pending, input, pending_line, 1);
                pending.clear();
            }
        }
    }
    if !pending.trim().is_empty() {
        // Input ended inside a form: the turn fails with the reader's error.
        failed = run_chunk(repl, &pending, input, pending_line, 1);
    }
    failed
}

/// Run each top-level form of `chunk` (which starts on line `first_line`
/// of `input`) as its own turn. Returns whether the last one failed, or
/// `None` when the chunk held no forms (only comments or whitespace).
fn run_forms(repl: &mut Repl, chunk: &str, input: &str, first_line: u32) -> Option<bool> {
    let forms = match read_program(chunk) {
        Ok(forms) => forms,
        Err(_) => return Some(run_chunk(repl, chunk, input, first_line, 1)),
    };
    let mut failed = None;
    for form in forms {
        if repl.out.write_failure().is_some() {
            break;
        }
        let text = &chunk[form.span.start..form.span.end];
        let source = Source {
            text: input,
            line: first_line + form.span.line - 1,
            column: form.span.column,
            file: None,
        };
        failed = Some(repl.eval(text, &source));
    }
    failed
}

fn run_chunk(repl: &mut Repl, chunk: &str, input: &str, line: u32, column: u32) -> bool {
    let source = Source {
        text: input,
        line,
        column,
        file: None,
    };
    repl.eval(chunk.trim_end(), &source)
}
