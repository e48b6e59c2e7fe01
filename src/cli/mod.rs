//! The command line of the contract (INTERFACE.md, "Commands"): parsing with clap and dispatch.
//!
//! `main` parses the arguments (clap exits 2 on a usage error), builds the policy from the common
//! flags ([`args`]), runs one command module and turns its result into the exit code. Each
//! command lives in its own module; none of them prints an error itself — they return
//! [`Error`] and `main` reports it once.

mod args;
mod check;
mod doctor;
mod explain;
mod filter;
mod run;
mod validate;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use args::CommonArgs;

use crate::error::Error;

/// hullward — makes an AI agent's tool calls safe to run: the kernel says no.
#[derive(Debug, Parser)]
#[command(name = "hullward", version, about, max_term_width = 100)]
pub struct Cli {
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one program under kernel enforcement and filter its output.
    Run {
        /// The program and its arguments (after `--`).
        #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true, value_name = "PROGRAM")]
        argv: Vec<OsString>,
    },
    /// Check a shell command string with the shell guard, then run it as `/bin/sh -c`.
    Sh {
        /// The command string (after `--`).
        #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Decide a request without carrying it out.
    Check {
        #[command(subcommand)]
        what: CheckCommand,
    },
    /// Copy stdin to stdout with secret values masked and protected diff bodies hidden.
    Filter,
    /// Print the enforcement `run` would apply.
    Explain {
        /// The program `run` would start (after `--`), for the per-call plan.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "PROGRAM")]
        argv: Vec<OsString>,
    },
    /// Validate the configuration: errors and warnings with file:line.
    Validate,
    /// Report what this kernel can enforce and whether strict mode can run here.
    Doctor,
    /// Run the supervisor daemon on a Unix socket.
    Serve {
        /// The socket to create (mode 0600).
        #[arg(long, value_name = "PATH")]
        socket: PathBuf,
    },
}

#[derive(Debug, Subcommand)]
pub enum CheckCommand {
    /// Decide a shell command string.
    Shell {
        /// The command string (after `--`).
        #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Decide a file operation: OP is read, write, list, delete or exec.
    Path {
        #[arg(value_name = "OP")]
        op: crate::guard::path::Op,
        #[arg(value_name = "PATH")]
        path: PathBuf,
    },
    /// Decide an outbound request (host allowlist, private ranges).
    Url {
        #[arg(value_name = "URL")]
        url: String,
    },
}

/// Parses the command line, runs the command and returns the process exit code.
pub fn main() -> ExitCode {
    crate::filter::logging::init();
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("hullward: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

fn dispatch(cli: Cli) -> Result<u8, Error> {
    let common = &cli.common;
    match cli.command {
        Command::Check { what } => check::run(common, what),
        Command::Validate => validate::run(common),
        Command::Explain { argv } => explain::run(common, &argv),
        Command::Run { argv } => run::run(common, argv),
        Command::Sh { command } => run::sh(common, &command),
        Command::Filter => filter::run(common),
        Command::Doctor => doctor::run(common),
        Command::Serve { .. } => Err(Error::NotImplemented("serve")),
    }
}
