//! The REPL (`ptc` with no subcommand): piped stdin runs each form as a
//! turn; a pseudo-terminal drives the interactive editor.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Run `ptc ARGS` with `input` on a pipe.
fn piped(args: &[&str], input: &str) -> Output {
    piped_with_env(args, &[], input)
}

/// [`piped`] with extra environment variables.
fn piped_with_env(args: &[&str], env: &[(&str, &str)], input: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ptc"))
        .args(args)
        .envs(env.iter().copied())
        .env("PTC_HISTORY", dir.path().join("history"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ptc runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        !dir.path().join("history").exists(),
        "piped mode keeps no history"
    );
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn write(dir: &Path, name: &str, contents: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

#[test]
fn forms_run_as_turns_with_definitions_results_and_output() {
    let out = piped(
        &[],
        "(def xs [3 1 2])\n\
         (defn total\n  \"Sum of v\"\n  [v]\n  (reduce + v))\n\
         (println \"sum is\" (total xs)) (total (map inc xs))\n\
         ; a comment\n\
         (* *1 2)\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "#'xs\n#'total\nsum is 6\nnil\n9\n18\n");
    assert_eq!(stderr(&out), "");
}

#[test]
fn errors_show_the_script_line_with_a_caret_and_exit_1_when_last() {
    let out = piped(&[], "(def a 1)\n(+ a\n   (undefined-fn 2))\n");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "#'a\n");
    let err = stderr(&out);
    assert!(
        err.starts_with("error: 3:5: Undefined symbol `undefined-fn`"),
        "{err}"
    );
    assert!(
        err.contains("  |    (undefined-fn 2))\n  |     ^\n"),
        "{err}"
    );
    // A failure that is not the last form does not decide the exit code,
    // and the session goes on after it.
    let out = piped(&[], "(def a 1)\n(+ a \"x\")\n(inc a)\n");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "#'a\n2\n");
    // Columns count from the form's start within its line.
    let out = piped(&[], "(def b 2) (+ b nil)\n");
    assert!(
        stderr(&out).starts_with("error: 1:11: "),
        "{}",
        stderr(&out)
    );
}

#[test]
fn reader_errors_and_unfinished_input_fail() {
    let out = piped(&[], "(+ 1 2))\n");
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("(parse-error)"), "{}", stderr(&out));
    let out = piped(&[], "(+ 1\n");
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("(parse-error)"), "{}", stderr(&out));
}

#[test]
fn fail_and_return_are_reported() {
    let out = piped(&[], "(return [1 2])\n");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "[1 2]\n");
    assert!(stderr(&out).contains("agent run would end here"));
    let out = piped(&[], "(fail \"no luck\")\n");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).starts_with("fail: \"no luck\""),
        "{}",
        stderr(&out)
    );
}

#[test]
fn long_results_are_truncated_with_a_count() {
    let out = piped(&[], "(range 10000)\n(count *1)\n");
    let text = stdout(&out);
    let first = text.lines().next().unwrap();
    assert!(first.len() < 2200, "{}", first.len());
    // Cut between two numbers, with a marker inside the brackets, and a
    // note of how much was shown.
    let (shown, note) = first.split_once(" ...] ").unwrap();
    let numbers: Vec<usize> = shown[1..].split(' ').map(|n| n.parse().unwrap()).collect();
    assert_eq!(numbers, (0..numbers.len()).collect::<Vec<_>>());
    assert_eq!(
        note,
        format!(
            "(truncated: {} of 10000 items shown; *1 holds it all; a line `:more` after the form prints it all)",
            numbers.len()
        )
    );
    assert_eq!(text.lines().nth(1), Some("10000"));
}

/// `:more` prints the last result whole, however long, and it re-reads
/// to the same value; before any result it is an error.
#[test]
fn more_prints_the_last_result_in_full() {
    let out = piped(
        &[],
        "(vec (range 10000))
:more
",
    );
    let text = stdout(&out);
    let whole = text.lines().nth(1).unwrap();
    let expected: Vec<String> = (0..10000).map(|n| n.to_string()).collect();
    assert_eq!(whole, format!("[{}]", expected.join(" ")));
    // Pretty-printed to COLUMNS, still whole.
    let out = piped_with_env(
        &[],
        &[("COLUMNS", "60")],
        "(into {} (map (fn [i] [i (str i)]) (range 300)))\n:more\n",
    );
    let text = stdout(&out);
    let (cut, whole) = text
        .split_once("shown; *1 holds it all; a line `:more` after the form prints it all)\n")
        .unwrap();
    assert!(cut.lines().count() <= 50, "{cut}");
    assert_eq!(whole.lines().count(), 300, "{whole}");
    assert!(whole.lines().all(|l| l.chars().count() <= 60), "{whole}");
    let out = piped(&[], ":more\n");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(":more: no result yet"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn piped_results_are_pretty_printed_to_columns_when_set() {
    let program = "{:name \"a fairly long name\" :tags [:one :two :three] :nested {:x 1 :y 2}}\n";
    let out = piped_with_env(&[], &[("COLUMNS", "30")], program);
    assert_eq!(
        stdout(&out),
        "{:name \"a fairly long name\",\n :tags [:one :two :three],\n :nested {:x 1, :y 2}}\n"
    );
    // Without COLUMNS (not a terminal): one line.
    let out = piped(&[], program);
    assert_eq!(stdout(&out).lines().count(), 1);
}

#[test]
fn doc_shows_builtins_special_forms_and_definitions() {
    let out = piped(
        &[],
        ":doc map\n:doc when\n(defn twice \"Doubles x\" [x] (* 2 x))\n:doc twice\n:doc str/join\n:doc try\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("(map f coll & colls)"), "{text}");
    assert!(
        text.contains("(when test body...)   (special form)"),
        "{text}"
    );
    assert!(
        text.contains("(twice [x])   (user/)\n  Doubles x"),
        "{text}"
    );
    assert!(text.contains("(join "), "{text}");
    assert!(text.contains("try: Exception handling"), "{text}");
    let out = piped(&[], ":doc no-such-thing\n");
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("No documentation for `no-such-thing`"));
}

#[test]
fn env_lists_tools_data_and_definitions_with_types() {
    let dir = tempfile::tempdir().unwrap();
    let data = write(
        dir.path(),
        "data.json",
        r#"{"users": [{"name": "Ada"}, {"name": "Bo"}], "limit": 3}"#,
    );
    let tools = write(
        dir.path(),
        "tools.json",
        r#"{"tools": {"stock": {"signature": "(item :string) -> :int", "description": "Units in stock", "response": 4}}}"#,
    );
    let out = piped(
        &[
            "--data",
            data.to_str().unwrap(),
            "--tools",
            tools.to_str().unwrap(),
        ],
        "(def names (mapv :name data/users))\n(defn f [x] (inc x))\n(f 1)\n(tool/stock \"laptop\")\n\
         (defn g [x] (when (pos? x) x))\n(g 1)\n(g 0)\n:env\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("#'names\n#'f\n2\n4\n"), "{text}");
    for line in [
        ";; === tool/ ===",
        "tool/stock (item :string) -> :int ; Units in stock",
        ";; === data/ ===",
        "data/users                       ; vector[2]",
        "data/limit                       ; integer",
        ";; === user/ ===",
        "names                            ; = vector[2]",
        "(f [x])                          ; -> integer",
        // Every call counts: one returned an integer, the other nil.
        "(g [x])                          ; -> integer | nil",
    ] {
        assert!(text.contains(line), "missing {line:?} in\n{text}");
    }
}

#[test]
fn context_renders_the_next_prompt() {
    let out = piped(
        &["--mission", "Count the things", "--max-turns", "10"],
        "(def things [1 2 3])\n(println \"three\")\n:context\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let context = &text[text.find("Count the things").expect(&text)..];
    assert_eq!(
        context,
        "Count the things\n\n\
         ;; === user/ (your prelude) ===\n\
         things                           ; = vector[3], sample: 1\n\n\
         ;; Output:\nthree\n\n\
         Turns left: 8\n"
    );
}

#[test]
fn context_options_change_the_rendering() {
    let script = "(println \"a\")\n(println \"b\")\n:context\n";
    let out = piped(&["--println-limit", "1"], script);
    let text = stdout(&out);
    assert!(
        text.contains(";; Output:\n;   ... 1 earlier println call omitted\nb\n"),
        "{text}"
    );
    assert!(!text.contains(";; Output:\na"), "{text}");
    let out = piped(&["--no-compression"], script);
    let text = stdout(&out);
    assert!(
        text.contains("[ASSISTANT]\n```clojure\n(println \"a\")\n```"),
        "{text}"
    );
}

#[test]
fn history_shows_every_turn() {
    let out = piped(
        &[],
        "(def a 1)\n(println \"hello\")\n(+ a \"x\")\n:history\n",
    );
    let text = stdout(&out);
    for part in [
        "--- Turn 1 (ok,",
        "(def a 1)\n;; result: #'a\n;; defined: a",
        "--- Turn 2 (ok,",
        ";; printed:\nhello\n;; result: nil",
        "--- Turn 3 (error,",
        ";; error: type-error at 1:1:",
    ] {
        assert!(text.contains(part), "missing {part:?} in\n{text}");
    }
}

#[test]
fn tokens_break_the_prompt_down_by_section() {
    let out = piped(
        &["--mission", "Find the total"],
        "(def xs [1 2 3])\n(println (reduce + xs))\n:tokens\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let count = |name: &str| -> usize {
        let line = text
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} in\n{text}"));
        line[name.len()..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!(count("mission") > 0);
    assert!(count("user/") > 0);
    assert!(count("output") > 0);
    assert_eq!(count("tool/"), 0);
    // The agent's system prompt is part of the next prompt.
    assert!(count("system prompt") > 500);
    let total = count("total");
    let sum: usize = [
        "system prompt",
        "mission",
        "tool/",
        "data/",
        "user/",
        "tool calls",
        "output",
        "programs",
        "other",
        "framing",
    ]
    .iter()
    .map(|n| count(n))
    .sum();
    assert_eq!(total, sum, "{text}");
    assert!(count("framing") > 0, "{text}");
}

/// `:tokens` and `:budget` show the same total for the same prompt (one
/// count source), before and after turns.
#[test]
fn tokens_and_budget_agree() {
    let out = piped(
        &["--mission", "Sum the values"],
        ":tokens
:budget
(def v [1 2 3])
(println (apply + v))
:tokens
:budget
",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let totals: Vec<usize> = text
        .lines()
        .filter_map(|l| l.strip_prefix("total"))
        .map(|r| r.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    let budgets: Vec<usize> = text
        .lines()
        .filter_map(|l| l.strip_prefix("next prompt: "))
        .map(|r| r.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(totals.len(), 2, "{text}");
    assert_eq!(totals, budgets, "{text}");
    assert!(totals[1] > totals[0], "{text}");
}

#[test]
fn save_then_load_restores_definitions_in_a_fresh_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("saved.clj");
    let file = file.to_str().unwrap();
    let out = piped(
        &[],
        &format!(
            "(def rates \"Exchange rates\" {{:eur 1.1 :gbp 1.3}})\n\
             (defn convert\n  \"Convert an amount\"\n  [amount cur]\n  (* amount (get rates cur)))\n\
             (def words '(a b))\n\
             :save {file}\n"
        ),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("saved 3 definition(s)"),
        "{}",
        stderr(&out)
    );
    let saved = std::fs::read_to_string(file).unwrap();
    assert!(
        saved.contains(
            "(defn convert\n  \"Convert an amount\"\n  [amount cur]\n  (* amount (get rates cur)))"
        ),
        "{saved}"
    );
    assert!(
        saved.contains("(def rates \"Exchange rates\" {:eur 1.1, :gbp 1.3})"),
        "{saved}"
    );

    let out = piped(
        &[],
        &format!(":load {file}\n(convert 10 :gbp)\nwords\n:doc convert\n"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("\n13.0\n(a b)\n"), "{text}");
    assert!(text.contains("Convert an amount"), "{text}");

    // The same file works as a prelude.
    let out = piped(&["--prelude", file], "(convert 2 :eur)\n");
    assert_eq!(stdout(&out), "2.2\n", "{}", stderr(&out));
}

#[test]
fn prelude_runs_first_and_again_after_reset() {
    let dir = tempfile::tempdir().unwrap();
    let prelude = write(
        dir.path(),
        "prelude.clj",
        "(def base 40)\n(defn answer [] (+ base 2))\n",
    );
    let out = piped(
        &["--prelude", prelude.to_str().unwrap()],
        "(answer)\n(def extra 1)\n:reset\n(answer)\nextra\n",
    );
    let text = stdout(&out);
    assert_eq!(text, "42\n#'extra\n42\n", "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Undefined symbol `extra`"),
        "{}",
        stderr(&out)
    );
    assert_eq!(out.status.code(), Some(1));

    let bad = write(dir.path(), "bad.clj", "(def ok 1)\n(+ ok \"x\")\n");
    let out = piped(&["--prelude", bad.to_str().unwrap()], "(+ 1 1)\n");
    let err = stderr(&out);
    assert!(err.contains("the prelude"), "{err}");
    assert!(err.contains("bad.clj:2:1: "), "{err}");
    assert_eq!(stdout(&out), "2\n");
}

#[test]
fn a_session_that_cannot_be_built_is_a_usage_error() {
    let out = piped(&["--data", "/nonexistent/data.json"], "1\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot read data file `/nonexistent/data.json`"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stdout(&out), "");
}

#[test]
fn reset_keeps_tools_and_data() {
    let dir = tempfile::tempdir().unwrap();
    let data = write(dir.path(), "data.json", r#"{"n": 5}"#);
    let out = piped(
        &["--data", data.to_str().unwrap()],
        "(def x 1)\n:reset\n(inc data/n)\n:history\n",
    );
    let text = stdout(&out);
    assert!(text.starts_with("#'x\n6\n--- Turn 1 (ok,"), "{text}");
    assert!(!text.contains("turn 2"), "{text}");
}

#[test]
fn help_and_unknown_commands() {
    let out = piped(&[], ":help\n");
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    for cmd in [
        ":doc NAME",
        ":env",
        ":context",
        ":history",
        ":tokens",
        ":save FILE",
        ":load FILE",
        ":reset",
        ":quit",
    ] {
        assert!(text.contains(cmd), "missing {cmd} in\n{text}");
    }
    let out = piped(&[], ":hist\n");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("Unknown command `:hist` (did you mean `:history`?)"),
        "{err}"
    );
    assert!(
        err.contains(":help :doc :apropos :env :more :context :history :tokens"),
        "{err}"
    );
}

#[test]
fn quit_stops_reading() {
    let out = piped(&[], "1\n:quit\n2\n");
    assert_eq!(stdout(&out), "1\n");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn load_reports_errors_with_the_file_name() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "broken.clj", "(def a 1)\n(a b c\n");
    let out = piped(&[], &format!(":load {}\n", file.display()));
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("broken.clj:"), "{}", stderr(&out));
    let out = piped(&[], ":load /nonexistent/file.clj\n");
    assert!(stderr(&out).contains("cannot read `/nonexistent/file.clj`"));
}

/// The interactive editor, driven through a pseudo-terminal.
#[cfg(unix)]
mod pty {
    use std::process::Command;
    use std::time::{Duration, Instant};

    use expectrl::process::Healthcheck;
    use expectrl::{ControlCode, Eof, Expect, Regex, Session};

    /// Generous: CI machines are small and busy.
    const TIMEOUT: Duration = Duration::from_secs(30);

    struct Repl {
        session: expectrl::session::OsSession,
        _dir: tempfile::TempDir,
    }

    fn start(args: &[&str]) -> Repl {
        start_with_history(args, None)
    }

    /// Start with the history file in a fresh directory, or at `history`.
    fn start_with_history(args: &[&str], history: Option<&std::path::Path>) -> Repl {
        let dir = tempfile::tempdir().unwrap();
        let history = history.map_or_else(|| dir.path().join("history"), |p| p.to_path_buf());
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ptc"));
        cmd.args(args)
            .env("TERM", "xterm")
            .env("NO_COLOR", "1")
            .env("PTC_HISTORY", history);
        let mut session = Session::spawn(cmd).expect("a pseudo-terminal");
        session.set_expect_timeout(Some(TIMEOUT));
        session.expect("ptc> ").expect("the first prompt");
        Repl { session, _dir: dir }
    }

    impl Repl {
        /// Type a line and press Enter (a terminal sends `\r`).
        fn enter(&mut self, line: &str) {
            self.session.send(format!("{line}\r")).unwrap();
        }

        fn expect(&mut self, text: &str) {
            if let Err(e) = self.session.expect(text) {
                panic!("expected {text:?}: {e}");
            }
        }

        /// Ctrl-C until the running evaluation reports the interrupt (the
        /// signal only counts once the evaluation has started). Each
        /// Ctrl-C gets 10 s to take effect: a second one while the first
        /// is still pending ends the REPL by design, which a loaded
        /// machine must not provoke. A REPL that ended fails the test
        /// instead of blocking on a write nobody reads.
        fn interrupt(&mut self) {
            std::thread::sleep(Duration::from_millis(300));
            let deadline = Instant::now() + 3 * TIMEOUT;
            self.session
                .set_expect_timeout(Some(Duration::from_secs(10)));
            loop {
                assert!(
                    self.session.is_alive().unwrap_or(false),
                    "the REPL ended on Ctrl-C"
                );
                self.session.send(ControlCode::EndOfText).unwrap();
                if self.session.expect("Evaluation interrupted").is_ok() {
                    break;
                }
                assert!(Instant::now() < deadline, "Ctrl-C did not interrupt");
            }
            self.session.set_expect_timeout(Some(TIMEOUT));
        }

        fn history(&self) -> String {
            std::fs::read_to_string(self._dir.path().join("history")).unwrap_or_default()
        }
    }

    #[test]
    fn unbalanced_input_continues_on_the_next_line() {
        let mut repl = start(&[]);
        repl.enter("(defn f [x]");
        repl.expect("...> ");
        repl.enter("  (* x 2))");
        repl.expect("#'f");
        repl.enter("(f 21)");
        repl.expect("42");
        // The whole multi-line form is one history entry.
        let history = repl.history();
        assert!(history.contains("(defn f [x]"), "{history}");
        assert_eq!(history.matches("(defn f").count(), 1, "{history}");
    }

    #[test]
    fn ctrl_c_interrupts_a_running_evaluation_and_the_session_survives() {
        let mut repl = start(&["--timeout-ms", "600000"]);
        repl.enter("(def kept 7)");
        repl.expect("#'kept");
        repl.enter("(loop [] (recur))");
        // The signal only counts once the evaluation has started, so send
        // it until the interrupt is reported.
        repl.interrupt();
        repl.expect("ptc> ");
        repl.enter("(+ kept 1)");
        repl.expect("8");
    }

    #[test]
    fn a_cut_result_names_more_which_prints_it_all() {
        let mut repl = start(&[]);
        repl.enter("(vec (range 3000))");
        repl.expect("of 3000 items shown; *1 holds it all; :more prints it all)");
        repl.enter(":more");
        repl.expect("2997 2998 2999]");
        repl.enter("(count *1)");
        repl.expect("3000");
    }

    #[test]
    fn ctrl_c_at_the_prompt_clears_the_line() {
        let mut repl = start(&[]);
        repl.session.send("(+ 40").unwrap();
        repl.session.send(ControlCode::EndOfText).unwrap();
        repl.expect("ptc> ");
        repl.enter("(+ 2 2)");
        repl.expect("4");
    }

    #[test]
    fn tab_completes_builtin_names() {
        let mut repl = start(&[]);
        repl.session.send("(filt").unwrap();
        repl.session.send("\t").unwrap();
        // `filter` and `filterv` share the prefix `filter`.
        repl.expect("filter");
        repl.session.send("\t").unwrap();
        repl.expect("filterv");
        repl.enter(" odd? [1 2 3])");
        repl.expect("[1 3]");
    }

    #[test]
    fn colon_commands_work_interactively() {
        let mut repl = start(&[]);
        repl.enter(":doc map");
        repl.expect("Apply f to each item");
        repl.enter("(def n 3)");
        repl.expect("#'n");
        repl.enter(":env");
        repl.expect("= integer");
    }

    #[test]
    fn an_unwritable_history_file_warns_once() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a-file");
        std::fs::write(&file, "").unwrap();
        // A path under a regular file cannot be created, even by root.
        let mut repl = start_with_history(&[], Some(&file.join("history")));
        repl.enter("(+ 1 1)");
        repl.expect("cannot write the history file");
        repl.expect("to nothing to turn it off)");
        repl.session
            .expect(Regex(r"\n2\r?\n"))
            .expect("the first result");
        repl.enter("(+ 2 2)");
        let seen = repl
            .session
            .expect(Regex(r"\n4\r?\n"))
            .expect("the second result");
        let before = String::from_utf8_lossy(seen.before()).into_owned();
        assert!(!before.contains("history file"), "{before}");
    }

    #[test]
    fn ctrl_d_at_a_continuation_prompt_cancels_the_unfinished_form() {
        let mut repl = start(&[]);
        repl.enter("(defn g [x]");
        repl.expect("...> ");
        repl.session.send(ControlCode::EndOfTransmission).unwrap();
        repl.expect("(unfinished form cancelled)");
        repl.expect("ptc> ");
        repl.enter("(+ 2 2)");
        repl.expect("4");
        // The cancelled form never ran: the first turn is `(+ 2 2)`.
        repl.enter(":history");
        repl.expect("Turn 1");
        repl.expect("(+ 2 2)");
        repl.enter("(g 1)");
        repl.expect("Undefined symbol `g`");
    }

    #[test]
    fn a_line_of_only_a_comment_is_not_a_turn() {
        let mut repl = start(&[]);
        repl.enter("; just a note");
        // Input typed before the next prompt may be dropped by the line
        // editor: wait for the prompt drawn after the comment's echo.
        repl.expect("; just a note");
        repl.expect("ptc> ");
        repl.enter("(+ 40 2)");
        repl.session
            .expect(Regex(r"\n42\r?\n"))
            .expect("the result");
        repl.enter(":history");
        // The first turn listed is `(+ 40 2)`: the comment was not one.
        let seen = repl
            .session
            .expect(Regex(r"--- Turn (\d+) \(ok[^\n]*\n([^\r\n]*)"))
            .expect("the history");
        let number = String::from_utf8_lossy(seen.get(1).unwrap()).into_owned();
        let program = String::from_utf8_lossy(seen.get(2).unwrap()).into_owned();
        assert_eq!((number.as_str(), program.as_str()), ("1", "(+ 40 2)"));
    }

    #[test]
    fn an_interrupted_evaluation_is_a_failed_turn_in_history_and_context() {
        let mut repl = start(&["--timeout-ms", "600000"]);
        repl.enter("(loop [] (recur))");
        repl.interrupt();
        repl.expect("ptc> ");
        // The same fact in the REPL's history and in the model's view.
        repl.enter(":history");
        repl.expect("Turn 1 (error");
        repl.expect(";; error: interrupted");
        repl.enter(":context");
        repl.expect("Evaluation interrupted");
    }

    #[test]
    fn results_wider_than_the_terminal_are_pretty_printed() {
        let mut repl = start(&[]);
        repl.enter("(vec (for [i (range 4)] {:id i :name (str \"name-\" i) :tags [:a :b]}))");
        // One map per line, aligned under the bracket (the terminal is 80
        // columns wide; the flat form is 150).
        repl.expect("[{:id 0, :name \"name-0\", :tags [:a :b]}");
        repl.session
            .expect(Regex(r#"\r?\n \{:id 1, :name "name-1", :tags \[:a :b\]\}"#))
            .expect("the second map on its own line");
    }

    #[test]
    fn ctrl_d_exits() {
        let mut repl = start(&[]);
        repl.session.send(ControlCode::EndOfTransmission).unwrap();
        repl.session.expect(Eof).expect("end of output");
        let status = repl.session.get_process().wait().unwrap();
        assert!(
            matches!(status, expectrl::process::unix::WaitStatus::Exited(_, 0)),
            "{status:?}"
        );
    }
}

#[test]
fn budget_shows_the_next_prompt_against_the_budget() {
    let out = piped(&[], "(def a 1)\n:budget\n");
    let text = stdout(&out);
    assert!(
        text.contains(
            "of a 126500-token budget (max_context_tokens 128000 - hard_cap_buffer 1500)"
        ),
        "{text}"
    );
    assert!(
        text.contains("compaction triggers at 108800 (85%)"),
        "{text}"
    );
    for section in ["system", "developer", "tools", "messages"] {
        assert!(
            text.lines().any(|l| l.trim_start().starts_with(section)),
            "{section}: {text}"
        );
    }
    assert!(
        text.contains("counted for gpt-4o (o200k_base, exact)"),
        "{text}"
    );
}

#[test]
fn compact_folds_older_turns_into_a_summary_that_stays() {
    // Enough turns that compacting lowers the token count (since issue 38
    // a manual compaction that would not is refused).
    let mut input: String = (1..=30).map(|i| format!("(def v{i} {i})\n")).collect();
    input.push_str(":compact checkpoint\n(+ v1 v2)\n:context\n:budget\n");
    let out = piped(&["--no-compression", "--max-turns", "40"], &input);
    let (text, err) = (stdout(&out), stderr(&out));
    assert!(
        err.contains("compacted: ") && err.contains("summary v1"),
        "{err}"
    );
    assert!(text.contains("<COMPACT-SUMMARY v1>"), "{text}");
    assert!(
        text.contains("defined v1 : integer"),
        "the interpreter state is kept:\n{text}"
    );
    assert!(text.contains("checkpoint"), "the note is kept:\n{text}");
    assert!(
        !text.contains("```clojure\n(def v1 1)\n```"),
        "the first turns are folded:\n{text}"
    );
    assert!(
        text.contains("```clojure\n(+ v1 v2)\n```"),
        "later turns are shown whole:\n{text}"
    );
    assert!(text.contains("a compaction is in force"), "{text}");
}

#[test]
fn compact_explains_when_there_is_nothing_to_compact() {
    let out = piped(&[], "(def a 1)\n:compact\n");
    let err = stderr(&out);
    assert!(
        err.contains("nothing to compact: ") && err.contains("--no-compression"),
        "{err}"
    );
}

/// Issue 38: `:compact` never makes the prompt bigger; when it would, it
/// says so and changes nothing.
#[test]
fn compact_never_makes_the_prompt_bigger() {
    for turns in [7, 8, 10, 14] {
        let mut input: String = (1..=turns).map(|i| format!("(def v{i} {i})\n")).collect();
        input.push_str(":compact\n:budget\n");
        let out = piped(&["--no-compression", "--max-turns", "40"], &input);
        let err = stderr(&out);
        let line = err
            .lines()
            .find(|l| l.contains("compacted: "))
            .unwrap_or_else(|| panic!("{turns}: {err}"));
        if line.contains("not compacted: ") {
            assert!(line.contains("would not lower the token count"), "{line}");
            assert!(!stdout(&out).contains("a compaction is in force"), "{line}");
            continue;
        }
        let numbers: Vec<usize> = line
            .split("compacted: ")
            .nth(1)
            .unwrap()
            .split(" tokens")
            .next()
            .unwrap()
            .split(" -> ")
            .map(|n| n.trim().parse().unwrap())
            .collect();
        assert!(numbers[1] < numbers[0], "{turns}: {line}");
    }
}
