//! A shortcut for the command lines of agent loops: `ptc eval` and `ptc run`
//! parsed with a command that defines only that subcommand.
//!
//! Building the whole `ptc` command defines every option of every
//! subcommand, about a quarter of the instructions of starting `ptc run`
//! on an empty program. This parse defines the one subcommand named first.
//! It only ever answers for a command line the full parse would accept
//! the same way: on anything else (another subcommand, a help or version
//! flag, any error) it gives up and the full parse runs, so every message
//! and help text comes from the full command.

use std::ffi::OsString;

use clap::{Args, FromArgMatches};

use crate::{Command, EvalCommand, RunCommand};

/// The `eval` or `run` command of `args` (the program's name first), or
/// `None` when the full parse must decide.
pub fn eval_or_run(args: impl IntoIterator<Item = OsString>) -> Option<Command> {
    let args: Vec<OsString> = args.into_iter().collect();
    let subcommand = match args.get(1)?.to_str()? {
        "eval" => EvalCommand::augment_args(clap::Command::new("eval")),
        "run" => RunCommand::augment_args(clap::Command::new("run")),
        _ => return None,
    };
    let matches = clap::Command::new("ptc")
        .subcommand(subcommand)
        .try_get_matches_from(args)
        .ok()?;
    match matches.subcommand()? {
        ("eval", m) => EvalCommand::from_arg_matches(m).ok().map(Command::Eval),
        ("run", m) => RunCommand::from_arg_matches(m).ok().map(Command::Run),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn args(line: &[&str]) -> Vec<OsString> {
        std::iter::once("ptc")
            .chain(line.iter().copied())
            .map(OsString::from)
            .collect()
    }

    /// A command, in the form the two parses' commands are compared in.
    fn shown(command: Command) -> String {
        match command {
            Command::Eval(c) => format!("{c:?}"),
            Command::Run(c) => format!("{c:?}"),
            _ => "another subcommand".into(),
        }
    }

    fn full(line: &[&str]) -> Option<String> {
        crate::Cli::try_parse_from(args(line))
            .ok()?
            .command
            .map(shown)
    }

    fn quick(line: &[&str]) -> Option<String> {
        eval_or_run(args(line)).map(shown)
    }

    #[test]
    fn the_shortcut_agrees_with_the_full_parse_or_leaves_it_to_it() {
        let accepted: &[&[&str]] = &[
            &["eval", "(+ 1 2)"],
            &["eval", "-17"],
            &["eval", "-"],
            &["eval", "--json", "(+ 1 2)"],
            &["run", "p.clj"],
            &["run", "-"],
            &["run", "p.clj", "--data", "d.json", "--timeout-ms", "50"],
            &[
                "run",
                "--max-steps",
                "9",
                "p.clj",
                "--stats=json",
                "--repeat",
                "3",
            ],
            &[
                "run",
                "p.clj",
                "--stats",
                "--mcp",
                "fs=npx server",
                "--mcp",
                "b=x",
            ],
            &[
                "run",
                "p.clj",
                "--tools",
                "t.toml",
                "--prelude",
                "u.clj",
                "--json",
            ],
            &[
                "run",
                "p.clj",
                "--max-data-bytes",
                "10",
                "--max-result-bytes",
                "20",
            ],
            &["run", "--", "-p.clj"],
        ];
        for line in accepted {
            let quick = quick(line);
            assert!(quick.is_some(), "{line:?}: the shortcut should answer");
            assert_eq!(quick, full(line), "{line:?}");
        }
        // Help, version, errors and other subcommands go to the full parse,
        // which prints what is wrong or what was asked for.
        let left: &[&[&str]] = &[
            &[],
            &["--version"],
            &["run"],
            &["run", "--help"],
            &["eval", "-h"],
            &["run", "p.clj", "--bogus"],
            &["run", "p.clj", "--timeout-ms", "0"],
            &["run", "p.clj", "--stats", "xml"],
            &["run", "p.clj", "--version"],
            &["eval", "(+ 1 2)", "extra"],
            &["agent", "--llm", "openai:m"],
            &["help", "run"],
            &["--mission", "x", "run", "p.clj"],
        ];
        for line in left {
            assert_eq!(quick(line), None, "{line:?}");
        }
    }
}
