//! `ptc config show` and `ptc config check`: the history layer's
//! effective configuration with the source of each value, and the
//! validation of a configuration file.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

use ptc_lisp::history::config::{self, Overrides, ENV_VARS};

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
                println!("{}: valid", file.display());
                ExitCode::SUCCESS
            }
            Err(e) => {
                for problem in &e.problems {
                    eprintln!("error: {problem}");
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
                eprintln!("error: {problem}");
            }
            return ExitCode::from(1);
        }
    };
    match &loaded.file {
        Some(f) => println!("# the history layer's configuration, from {}", f.display()),
        None => println!("# the history layer's configuration (no file: defaults and environment)"),
    }
    let mut section = String::new();
    let entries = loaded.entries();
    let width = entries
        .iter()
        .map(|(path, value, _)| leaf(path).len() + value.len() + 3)
        .max()
        .unwrap_or(0);
    for (path, value, source) in entries {
        let here = path.rsplit_once('.').map_or("", |(s, _)| s);
        if here != section {
            section = here.to_string();
            println!("\n[{section}]");
        }
        let line = format!("{} = {value}", leaf(&path));
        println!("{line:<width$}  # {source}");
    }
    if env_vars {
        println!("\n# environment variables");
        for (var, path) in ENV_VARS {
            println!("# {var:<38} {path}");
        }
    }
    ExitCode::SUCCESS
}

fn leaf(path: &str) -> &str {
    path.rsplit_once('.').map_or(path, |(_, k)| k)
}
