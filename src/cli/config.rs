//! `ptc config show` and `ptc config check`: the history layer's
//! effective configuration with the source of each value, and the
//! validation of a configuration file.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

use ptc_lisp::history::config::{self, Overrides, ENV_VARS};

use super::out;

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the effective history-layer configuration as TOML, each
    /// value with where it came from (default, file:line, environment
    /// variable)
    Show {
        /// The configuration file [default: ptc.toml if present]
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Also list every COMPACT_* environment variable and its field
        #[arg(long)]
        env_vars: bool,
    },
    /// Validate a configuration file (with the COMPACT_* variables set
    /// now); exit 0 when valid, 1 with one line per problem when not
    Check {
        /// The file to check (TOML, YAML or JSON, by extension)
        file: PathBuf,
    },
}

pub fn run(command: &ConfigCommand) -> ExitCode {
    match command {
        ConfigCommand::Show { config, env_vars } => show(config.as_deref(), *env_vars),
        ConfigCommand::Check { file } => match config::load(Some(file), Overrides::default()) {
            Ok(_) => {
                out::line(&format!("{}: valid", file.display()));
                ExitCode::SUCCESS
            }
            Err(e) => {
                for problem in &e.problems {
                    errln!("error: {problem}");
                }
                ExitCode::from(1)
            }
        },
    }
}

fn show(file: Option<&std::path::Path>, env_vars: bool) -> ExitCode {
    let loaded = match config::load(file, Overrides::default()) {
        Ok(l) => l,
        Err(e) => {
            for problem in &e.problems {
                errln!("error: {problem}");
            }
            return ExitCode::from(1);
        }
    };
    match &loaded.file {
        Some(f) => out::line(&format!(
            "# the history layer's configuration, from {}",
            f.display()
        )),
        None => {
            out::line("# the history layer's configuration (no file: defaults and environment)")
        }
    }
    let mut section = String::new();
    let entries = loaded.entries();
    // Comments line up after the longest setting, up to a column: a long
    // value (a pattern of thousands of characters) is not padded against.
    let width = entries
        .iter()
        .map(|(path, value, _)| leaf(path).chars().count() + value.chars().count() + 3)
        .max()
        .unwrap_or(0)
        .min(MAX_ALIGN);
    for (path, value, source) in entries {
        let here = path.rsplit_once('.').map_or("", |(s, _)| s);
        if here != section {
            section = here.to_string();
            out::line(&format!("\n[{section}]"));
        }
        let line = format!("{} = {value}", leaf(&path));
        let pad = width.saturating_sub(line.chars().count());
        out::line(&format!("{line}{}  # {source}", " ".repeat(pad)));
    }
    if env_vars {
        out::line("\n# environment variables");
        for (var, path) in ENV_VARS {
            out::line(&format!("# {var:<38} {path}"));
        }
    }
    ExitCode::SUCCESS
}

/// The column up to which `config show` aligns its comments.
const MAX_ALIGN: usize = 60;

fn leaf(path: &str) -> &str {
    path.rsplit_once('.').map_or(path, |(_, k)| k)
}
