//! Colon commands: `:help`, `:doc`, `:env`, `:context`, `:history`,
//! `:tokens`, `:save`, `:load`, `:reset`, `:quit`. They inspect the
//! session and render what the model would see; only `:load` and `:reset`
//! change it, and only `:save` and `:load` touch files.

use std::fmt::Write as _;
use std::path::Path;

use crate::builtins::introspect::{self, SPECIAL_FORMS};
use crate::builtins::registry;
use crate::compression::format::{type_label, FormatOptions};
use crate::compression::{build_messages, Message, RenderContext, Role};
use crate::error::suggest;
use crate::session::Turn;
use crate::value::Value;

use super::print::Source;
use super::{save, Repl, Step};

/// Every command: name, argument, what it does. `:help` prints this list
/// and the completer offers the names.
pub(super) const COMMANDS: &[(&str, &str, &str)] = &[
    (":help", "", "this list"),
    (
        ":doc",
        "NAME",
        "documentation of a builtin, special form, tool or definition",
    ),
    (
        ":apropos",
        "TEXT",
        "the builtins, special forms and definitions whose name or doc mentions TEXT",
    ),
    (
        ":env",
        "",
        "tool/ with signatures, data/ and user/ with their types",
    ),
    (
        ":more",
        "",
        "the last result (*1) in full, however long (results are cut after 2000 characters or 50 lines)",
    ),
    (
        ":context",
        "",
        "the next prompt, exactly as the compressor renders it",
    ),
    (
        ":history",
        "",
        "every turn: program, output, tool calls, result or error",
    ),
    (":tokens", "", "token counts of the next prompt, by section"),
    (
        ":budget",
        "",
        "the next prompt's tokens against the context budget",
    ),
    (
        ":compact",
        "NOTE?",
        "compact the next prompt now (older turns become a summary)",
    ),
    (
        ":save",
        "FILE",
        "write the user/ definitions as a prelude file",
    ),
    (":load", "FILE", "evaluate a file as one turn"),
    (
        ":reset",
        "",
        "start a new session with the same tools, data and prelude",
    ),
    (":quit", "", "leave the REPL (also Ctrl-D)"),
];

/// Values in `:history`: generous, but bounded.
const HISTORY_FORMAT: FormatOptions = FormatOptions {
    limit: 50,
    printable_limit: 2000,
};

/// Column where `:env` comments start.
const ENV_COLUMN: usize = 33;

/// The names of the special forms `:doc` knows.
pub(super) fn special_form_names() -> impl Iterator<Item = &'static str> {
    SPECIAL_FORMS.iter().map(|f| f.name)
}

impl Repl {
    /// Run one colon command line (`:name arg`).
    pub(super) fn command(&mut self, line: &str) -> Step {
        let (name, arg) = match line.split_once(char::is_whitespace) {
            Some((name, arg)) => (name, arg.trim()),
            None => (line, ""),
        };
        let arg = unquote(arg);
        let failed = match name {
            ":help" | ":h" | ":?" => {
                self.out.line(&help_text());
                false
            }
            ":doc" => self.doc(arg),
            ":apropos" => self.apropos(arg),
            ":env" => {
                self.out.line(self.env_text().trim_end());
                false
            }
            ":more" => self.more(),
            ":context" => {
                self.context();
                false
            }
            ":history" => {
                let text = history_text(self.session.turns());
                self.out.line(text.trim_end());
                false
            }
            ":tokens" => {
                let text = self.tokens_text();
                self.out.line(&text);
                false
            }
            ":budget" => {
                let text = self.budget_text();
                self.out.line(&text);
                false
            }
            ":compact" => self.compact_now(arg),
            ":save" => self.save(arg),
            ":load" => self.load(arg),
            ":reset" => match self.reset() {
                Ok(()) => {
                    self.out
                        .note("a new session: user/ and the turns are cleared");
                    false
                }
                Err(e) => {
                    self.out.error(&format!("cannot start a new session: {e}"));
                    true
                }
            },
            ":quit" | ":q" | ":exit" => return Step::Quit,
            _ => {
                let names: Vec<&str> = COMMANDS.iter().map(|(n, _, _)| *n).collect();
                let mut message = format!("Unknown command `{name}`");
                let by_prefix = names.iter().find(|n| name.len() > 1 && n.starts_with(name));
                let near = suggest(name, names.iter().copied());
                if let Some(best) = by_prefix.or(near.first()) {
                    let _ = write!(message, " (did you mean `{best}`?)");
                }
                let _ = write!(message, "; the commands are {}", names.join(" "));
                self.out.error(&message);
                true
            }
        };
        Step::Continue { failed }
    }

    /// `:apropos TEXT`: the names whose name or documentation mentions
    /// TEXT, as `(apropos "TEXT")` gives them, plus matching tools.
    fn apropos(&self, text: &str) -> bool {
        if text.trim().is_empty() {
            self.out
                .error("`:apropos` needs some text, like `:apropos upper`");
            return true;
        }
        let mut names = introspect::apropos(text, self.session.globals());
        let query = text.trim().to_lowercase();
        for tool in self.session.tools() {
            let spec = &tool.spec;
            if spec.name.to_lowercase().contains(&query)
                || spec.description.to_lowercase().contains(&query)
            {
                names.push(format!("tool/{}", spec.name));
            }
        }
        names.sort_unstable();
        if names.is_empty() {
            self.out
                .note(&format!("nothing mentions `{}`", text.trim()));
        } else {
            self.out.line(&names.join("\n"));
        }
        false
    }

    /// `:doc NAME`: a tool, a user definition, a builtin or a special form.
    fn doc(&self, name: &str) -> bool {
        if name.is_empty() {
            self.out.error("`:doc` needs a name, like `:doc map`");
            return true;
        }
        match self.doc_text(name) {
            Some(text) => {
                self.out.line(&text);
                false
            }
            None => {
                let mut message = format!("No documentation for `{name}`");
                // Opaque iterators fix their item lifetimes, so the names
                // are gathered one by one.
                let mut candidates: Vec<&str> = Vec::new();
                for n in self.session.globals().names() {
                    candidates.push(n);
                }
                for n in registry().names().chain(special_form_names()) {
                    candidates.push(n);
                }
                let near = suggest(name, candidates);
                if !near.is_empty() {
                    let _ = write!(message, " (did you mean `{}`?)", near.join("`, `"));
                }
                self.out.error(&message);
                true
            }
        }
    }

    fn doc_text(&self, name: &str) -> Option<String> {
        if let Some(tool_name) = name.strip_prefix("tool/") {
            let tool = self
                .session
                .tools()
                .iter()
                .find(|t| t.name() == tool_name)?;
            let spec = &tool.spec;
            let mut out = format!("tool/{} {}", spec.name, spec.signature.text());
            if !spec.description.is_empty() {
                let _ = write!(out, "\n  {}", spec.description);
            }
            return Some(out);
        }
        if let Some(data_name) = name.strip_prefix("data/") {
            let (_, value) = self.session.data().iter().find(|(n, _)| n == data_name)?;
            return Some(format!("data/{data_name} ; {}", type_label(value)));
        }
        if let Some(doc) = introspect::definition_doc(self.session.globals(), name) {
            return Some(doc);
        }
        if let Some(doc) = introspect::doc_text(name) {
            return Some(doc);
        }
        // A tool by its bare name (`:doc search` for `tool/search`).
        if !name.contains('/') && self.session.tools().iter().any(|t| t.name() == name) {
            return self.doc_text(&format!("tool/{name}"));
        }
        // Forms the language refuses explain themselves when analyzed.
        if let Err(e) = crate::eval::Program::compile(&format!("({name})")) {
            if e.code() == "unsupported" {
                let mut out = format!("{name}: {}", e.message());
                if let Some(hint) = e.hint() {
                    let _ = write!(out, "\n  hint: {hint}");
                }
                return Some(out);
            }
        }
        None
    }

    /// `:env`: every name the next program can use, with its type.
    fn env_text(&self) -> String {
        let mut out = String::new();
        out.push_str(";; === tool/ ===\n");
        if self.session.tools().is_empty() {
            out.push_str(";; (no tools: start with --tools FILE)\n");
        }
        for tool in self.session.tools() {
            let spec = &tool.spec;
            let entry = format!("tool/{} {}", spec.name, spec.signature.text());
            env_line(&mut out, &entry, &spec.description);
        }
        out.push_str(";; === data/ ===\n");
        if self.session.data().is_empty() {
            out.push_str(";; (no data: start with --data FILE.json)\n");
        }
        for (name, value) in self.session.data() {
            env_line(
                &mut out,
                &crate::session::data_reference(name),
                &type_label(value),
            );
        }
        out.push_str(";; === user/ ===\n");
        if self.session.memory().is_empty() {
            out.push_str(";; (nothing defined yet)\n");
        }
        for entry in self.session.memory().iter() {
            let doc = entry
                .doc
                .as_deref()
                .map(|d| format!("\"{}\" ", one_line(d)))
                .unwrap_or_default();
            match (&entry.value, fn_params(&entry.value)) {
                (_, Some(params)) => {
                    let ret = if entry.return_types.is_empty() {
                        String::new()
                    } else {
                        format!("-> {}", entry.return_types.join(" | "))
                    };
                    let comment = format!("{doc}{ret}");
                    env_line(
                        &mut out,
                        &format!("({} {params})", entry.name),
                        comment.trim_end(),
                    );
                }
                (value, None) => {
                    let comment = format!("{doc}= {}", type_label(value));
                    env_line(&mut out, &entry.name, &comment);
                }
            }
        }
        out
    }

    /// The messages of the next prompt: as the configured compression
    /// renders them, with the compaction in force applied.
    pub(super) fn next_prompt(&self) -> Vec<Message> {
        self.with_carry(self.render_prompt())
    }

    /// The next prompt as the configured compression renders it.
    pub(super) fn render_prompt(&self) -> Vec<Message> {
        let ctx = RenderContext::for_session(
            &self.session,
            self.config.mission.clone(),
            self.config.max_turns,
        )
        .with_system_prompt(self.config.system_prompt.clone());
        let (messages, _) = build_messages(
            &self.config.compression,
            self.config.max_turns,
            self.session.turns(),
            self.session.memory(),
            &ctx,
        );
        messages
    }

    /// `:context`: the messages after the system prompt. One message is
    /// shown as is; several (failed turns stay whole) under role headers.
    fn context(&self) {
        let messages = self.next_prompt();
        let shown: Vec<&Message> = messages.iter().filter(|m| m.role != Role::System).collect();
        if let [only] = shown.as_slice() {
            self.out.line(&only.content);
        } else {
            let mut out = String::new();
            for (i, m) in shown.iter().enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                let _ = writeln!(out, "[{}]", m.role);
                out.push_str(&m.content);
                out.push('\n');
            }
            self.out.line(out.trim_end());
        }
        let taken = self.session.turns().len();
        if taken >= self.config.max_turns {
            self.out.note(&format!(
                "({taken} turns taken with --max-turns {}: an agent run would have ended)",
                self.config.max_turns
            ));
        }
    }

    /// `:tokens`: the next prompt's token counts by section. The total is
    /// the history layer's count of the prompt (the one `:budget`, `ptc
    /// prompt` and compaction show): the sections split the messages'
    /// text, and `framing` is the rest (per-message framing, roles, the
    /// reply priming and any tool schemas).
    fn tokens_text(&mut self) -> String {
        let messages = self.next_prompt();
        let chat: Vec<crate::history::Message> = messages
            .iter()
            .cloned()
            .map(crate::history::Message::from)
            .collect();
        let counter = self.compactor.counter_mut();
        let total = counter.count(&chat).total();
        let model = counter.token_model();
        let count = |text: &str| model.count(text);
        let mut sections = SectionCounts::default();
        for m in &messages {
            match m.role {
                Role::System => sections.system += count(&m.content),
                Role::Assistant => sections.programs += count(&m.content),
                Role::User => sections.add_user_message(&m.content, &count),
            }
        }
        let label = if model.is_exact() {
            format!(
                "{} tokens for {}",
                model.encoding.name(),
                self.config.counting_model
            )
        } else {
            format!(
                "tokens for {}, approximated from {}",
                self.config.counting_model,
                model.encoding.name()
            )
        };
        sections.render(total, &label)
    }

    /// `:save FILE`.
    fn save(&self, path: &str) -> bool {
        if path.is_empty() {
            self.out
                .error("`:save` needs a file name, like `:save prelude.clj`");
            return true;
        }
        let saved = save::prelude_source(&self.session);
        if let Err(e) = std::fs::write(path, &saved.text) {
            self.out.error(&format!("cannot write `{path}`: {e}"));
            return true;
        }
        for warning in &saved.skipped {
            self.out.note(&format!("not saved: {warning}"));
        }
        self.out.note(&format!(
            "saved {} definition(s) to {path}; load them with `:load {path}` or `ptc --prelude {path}`",
            saved.saved
        ));
        false
    }

    /// `:load FILE`: the whole file as one turn.
    fn load(&mut self, path: &str) -> bool {
        if path.is_empty() {
            self.out
                .error("`:load` needs a file name, like `:load prelude.clj`");
            return true;
        }
        match crate::input::read_program_file(Path::new(path)) {
            Ok(text) => self.eval(&text, &Source::file(&text, Path::new(path))),
            Err(e) => {
                self.out.error(&e.describe(&format!("`{path}`")));
                true
            }
        }
    }
}

/// `:help`.
fn help_text() -> String {
    let mut out = String::from(
        "Each input is one turn of a session, as a model's program would be.\n\
         tool/NAME calls a tool, data/NAME reads input data, and definitions\n\
         persist in user/. *1 *2 *3 hold the last results.\n\nCommands:\n",
    );
    for (name, arg, what) in COMMANDS {
        let usage = format!("{name} {arg}");
        let _ = writeln!(out, "  {usage:<14} {what}");
    }
    out.push_str("\nTab completes names; Ctrl-C stops a running evaluation; Ctrl-D exits.");
    out
}

/// `:history`: every turn in full.
fn history_text(turns: &[Turn]) -> String {
    if turns.is_empty() {
        return ";; no turns yet".to_string();
    }
    let mut out = String::new();
    for turn in turns {
        crate::compression::write_turn(&mut out, turn, HISTORY_FORMAT);
        out.push('\n');
    }
    out
}

/// Token counts of the next prompt by section.
#[derive(Default)]
struct SectionCounts {
    system: usize,
    mission: usize,
    tools: usize,
    data: usize,
    user: usize,
    tool_calls: usize,
    output: usize,
    /// Programs of turns shown whole (failed turns, or no compression).
    programs: usize,
    /// Errors, results, turns left, the expected return.
    other: usize,
    /// Whether the first USER message (the one with the mission) was seen.
    seen_first: bool,
}

/// The section headers of a rendered USER message and where they count.
const HEADERS: &[&str] = &[
    ";; === tool/ ===",
    ";; === data/ ===",
    ";; === user/ (your prelude) ===",
    ";; Tool calls made:",
    ";; No tool calls made",
    ";; Output:",
    ";; Expected return:",
    ";; Result:",
    ";; Returned:",
    ";; Failed:",
    "Error:",
    "Turns left:",
    "FINAL TURN",
];

impl SectionCounts {
    /// Split a USER message at its section headers (each at the start of
    /// a line) and count each part. Text before the first header is the
    /// mission in the first USER message and feedback in later ones.
    fn add_user_message(&mut self, content: &str, count: &dyn Fn(&str) -> usize) {
        let mut starts: Vec<(usize, &str)> = Vec::new();
        let mut offset = 0;
        for line in content.split_inclusive('\n') {
            if let Some(h) = HEADERS.iter().find(|h| line.starts_with(**h)) {
                starts.push((offset, h));
            }
            offset += line.len();
        }
        let first = starts.first().map_or(content.len(), |(at, _)| *at);
        let lead = count(&content[..first]);
        if self.seen_first {
            self.other += lead;
        } else {
            self.mission += lead;
            self.seen_first = true;
        }
        for (i, (start, header)) in starts.iter().enumerate() {
            let end = starts.get(i + 1).map_or(content.len(), |(at, _)| *at);
            let n = count(&content[*start..end]);
            *match *header {
                ";; === tool/ ===" => &mut self.tools,
                ";; === data/ ===" => &mut self.data,
                ";; === user/ (your prelude) ===" => &mut self.user,
                ";; Tool calls made:" | ";; No tool calls made" => &mut self.tool_calls,
                ";; Output:" => &mut self.output,
                _ => &mut self.other,
            } += n;
        }
    }

    /// The rows, then `framing` (what `total` has beyond the sections'
    /// text) and the total.
    fn render(&self, total: usize, label: &str) -> String {
        let rows = [
            ("mission", self.mission),
            ("tool/", self.tools),
            ("data/", self.data),
            ("user/", self.user),
            ("tool calls", self.tool_calls),
            ("output", self.output),
            ("programs", self.programs),
            ("other", self.other),
        ];
        let mut out = String::new();
        if self.system == 0 {
            out.push_str("system prompt      -  (none configured)\n");
        } else {
            let _ = writeln!(out, "{:<16} {:>6}", "system prompt", self.system);
        }
        let mut text = self.system;
        for (name, n) in rows {
            text += n;
            let _ = writeln!(out, "{name:<16} {n:>6}");
        }
        let framing = total.saturating_sub(text);
        let _ = writeln!(
            out,
            "{:<16} {framing:>6}   (roles, message framing, reply priming)",
            "framing"
        );
        let _ = write!(out, "{:<16} {total:>6}   ({label})", "total");
        out
    }
}

/// `entry`, then `; comment` at [`ENV_COLUMN`] when there is a comment.
fn env_line(out: &mut String, entry: &str, comment: &str) {
    out.push_str(entry);
    if !comment.is_empty() {
        let pad = ENV_COLUMN.saturating_sub(entry.chars().count()).max(1);
        out.extend(std::iter::repeat_n(' ', pad));
        out.push_str("; ");
        out.push_str(&one_line(comment));
    }
    out.push('\n');
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A command argument without surrounding quotes.
fn unquote(arg: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = arg.strip_prefix(q).and_then(|a| a.strip_suffix(q)) {
            return inner;
        }
    }
    arg
}

/// The parameter vector of a user function, when it has one.
fn fn_params(value: &Value) -> Option<&str> {
    match value {
        Value::Fn(f) => f.params(),
        _ => None,
    }
}

impl Repl {
    /// `:more`: the last result in full; an error when there is none.
    fn more(&mut self) -> bool {
        let last = self
            .session
            .turns()
            .iter()
            .rev()
            .find_map(|turn| match &turn.outcome {
                crate::session::TurnOutcome::Value { value }
                | crate::session::TurnOutcome::Return { value } => Some(value),
                _ => None,
            });
        match last {
            Some(value) => {
                self.out
                    .line(&super::print::full_text(value, self.out.width));
                false
            }
            None => {
                self.out.error(":more: no result yet");
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_forms_are_special() {
        for name in special_form_names() {
            assert!(
                registry().lookup(name).is_none(),
                "`{name}` is a builtin, not a special form"
            );
        }
    }

    #[test]
    fn every_supported_special_form_has_a_doc() {
        for name in crate::eval::special_forms() {
            assert!(
                SPECIAL_FORMS.iter().any(|f| f.name == name),
                "`:doc {name}` has no entry in SPECIAL_FORMS"
            );
        }
    }

    #[test]
    fn messages_split_into_sections() {
        let mut counts = SectionCounts::default();
        counts.add_user_message(
            "Find it\n\n;; === data/ ===\ndata/x ; integer\n\n;; Output:\nhi\n\nTurns left: 3",
            &crate::tokens::count_tokens,
        );
        assert!(counts.mission > 0 && counts.data > 0 && counts.output > 0);
        assert!(counts.other > 0);
        assert_eq!(counts.tools + counts.user + counts.tool_calls, 0);
    }
}
