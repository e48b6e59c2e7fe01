//! The command line of the contract (INTERFACE.md, "Commands"): parsing with clap and dispatch.
//!
//! `main` installs the crash hook ([`crate::crashdump`]), parses the arguments (clap exits 2 on a
//! usage error, with a suggestion for a near miss), builds the policy from the common flags
//! ([`args`]), runs one command module and turns its result into the exit code. Each command
//! lives in its own module; none of them prints an error itself — they return [`Error`] and
//! `main` reports it once (and, for hullward's own failures, writes a crash dump).
//!
//! The program operands of `run`, `sh`, `explain` and `check shell` are trailing arguments that
//! may not *start* with a dash: a misspelled flag before the program (`run --tiemout 5s -- ls`)
//! is a usage error instead of a program named `--tiemout`. After `--`, or after the program's
//! first word, anything goes (`run -- ls -la`, `run ls -la`).

mod args;
mod audit;
mod check;
mod connect;
mod doctor;
mod explain;
mod filter;
mod mcp;
mod run;
mod serve;
mod style;
mod validate;
mod workspace;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use args::{hullward_home, CommonArgs};

use crate::error::Error;

/// `--version`: the crate version and the git revision it was built from (`build.rs`).
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (git ", env!("HULLWARD_GIT_REV"), ")");

/// hullward — makes an AI agent's tool calls safe to run: the kernel says no.
#[derive(Debug, Parser)]
#[command(name = "hullward", version = VERSION, about, max_term_width = 100, after_help = EXAMPLES)]
pub struct Cli {
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(subcommand)]
    pub command: Command,
}

const EXAMPLES: &str = "\
Examples:
  hullward run -- cargo test                  run the tests, confined to the current directory
  hullward sh --timeout 5m -- 'make && make check'
  hullward check url https://api.github.com/  decide without doing (exit 0 allowed, 1 denied)
  hullward explain -- cargo build             what run would enforce, and why
  hullward audit --since 1h                   what was decided in the last hour

Configuration: --config FILE, else the first of ./.hullward.yaml,
./.fuseraft/config/orchestration.yaml, $XDG_CONFIG_HOME/hullward/config.yaml,
/etc/hullward/config.yaml (see `hullward explain`).";

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one program under kernel enforcement and filter its output.
    #[command(after_help = "\
Examples:
  hullward run -- cargo test
  hullward run --net proxy --allow-host crates.io --allow-host static.crates.io -- cargo fetch
  hullward run --timeout 30s --env CARGO_HOME --json -- ./build.sh 2>events.jsonl

Exit status: the program's own (128+N when killed by signal N); 124 timeout; 126 denied before
it ran; 3 strict mode refused; 2 usage or configuration error; 125 hullward failed.")]
    Run {
        /// The program and its arguments (after `--`).
        #[arg(required = true, trailing_var_arg = true, value_name = "PROGRAM")]
        argv: Vec<OsString>,
        /// Send the call to the `hullward serve` on this socket (also HULLWARD_SOCKET).
        #[arg(long, value_name = "SOCK")]
        connect: Option<PathBuf>,
    },
    /// Check a shell command string with the shell guard, then run it as `/bin/sh -c`.
    #[command(after_help = "\
Examples:
  hullward sh -- 'cargo build 2>&1 | tail -20'
  hullward sh --config .fuseraft/config/orchestration.yaml -- 'go test ./...'
  hullward sh --hitl on -- 'git commit -am wip'     # asks before running

A command the shell guard denies exits 126 and prints the [DENIED] reason; nothing runs.")]
    Sh {
        /// The command string (after `--`).
        #[arg(required = true, trailing_var_arg = true, value_name = "COMMAND")]
        command: Vec<String>,
        /// Send the call to the `hullward serve` on this socket (also HULLWARD_SOCKET).
        #[arg(long, value_name = "SOCK")]
        connect: Option<PathBuf>,
    },
    /// Decide a request without carrying it out.
    #[command(after_help = "\
Examples:
  hullward check shell -- 'rm -rf /'
  hullward check path write .git/hooks/pre-commit
  hullward check url --json http://169.254.169.254/latest/meta-data/

Exit status: 0 allowed, 1 denied or needs approval.")]
    Check {
        #[command(subcommand)]
        what: CheckCommand,
    },
    /// Copy stdin to stdout with secret values masked and protected diff bodies hidden.
    #[command(after_help = "\
Examples:
  git diff | hullward filter
  hullward filter --deny 'infra/prod/**' < build.log > build-clean.log")]
    Filter,
    /// Print the enforcement `run` would apply.
    #[command(after_help = "\
Examples:
  hullward explain                           the policy: sources, roots, rules and their origins
  hullward explain -- cargo test             plus the per-call plan on this kernel
  hullward explain --profile ci --json -- make | jq .plan.landlock")]
    Explain {
        /// The program `run` would start (after `--`), for the per-call plan.
        #[arg(trailing_var_arg = true, value_name = "PROGRAM")]
        argv: Vec<OsString>,
    },
    /// Validate the configuration: errors and warnings with file:line.
    #[command(after_help = "\
Examples:
  hullward validate
  hullward validate --config .fuseraft/config/orchestration.yaml
  hullward validate --profile ./team-profile.yaml --json

Exit status: 0 valid, 1 invalid, 2 unreadable file or bad flag.")]
    Validate,
    /// Report what this kernel can enforce and whether strict mode can run here.
    #[command(after_help = "\
Examples:
  hullward doctor
  hullward doctor --net proxy --json         can strict mode run with the proxy here?")]
    Doctor,
    /// Run the supervisor daemon on a Unix socket.
    #[command(after_help = "\
Examples:
  hullward serve --socket /run/hullward.sock --root /srv/agent/work
  hullward serve --socket \"$XDG_RUNTIME_DIR/hullward.sock\" --config .hullward.yaml")]
    Serve {
        /// The socket to create (mode 0600).
        #[arg(long, value_name = "PATH")]
        socket: PathBuf,
    },
    /// Serve the tool calls as an MCP server on stdin/stdout (for Claude Code, Codex, any MCP client).
    #[command(after_help = "\
Examples:
  claude mcp add hullward -- hullward mcp --root .
  hullward mcp --root /srv/agent/work --unattended-policy allow    # a client without elicitation
  hullward mcp --config .hullward.yaml --hitl on                   # ask (elicitation) for every call

Tools: shell_run, run, probe, read_file, write_file, list_files, check_path, check_url. Approval
uses MCP elicitation when the client offers it; otherwise the unattended policy decides.")]
    Mcp,
    /// Read the audit log back as a timeline of decisions, calls, egress and quarantined paths.
    #[command(after_help = "\
Examples:
  hullward audit --since 1h                  the last hour
  hullward audit --since 2026-04-22T15:00:00Z --call call-4711-0-5f3e2a1c
  hullward audit --json | jq 'select(.verdict == \"deny\")'

The log is --audit FILE, else $HULLWARD_HOME/audit.jsonl (HULLWARD_HOME defaults to ~/.hullward).")]
    Audit {
        /// Only records at or after T: a time (2026-04-22, 2026-04-22T15:30:00Z) or an age (30m, 2h, 7d).
        #[arg(long, value_name = "T", value_parser = audit::parse_since)]
        since: Option<std::time::SystemTime>,
        /// Only the records of this call.
        #[arg(long = "call", value_name = "ID")]
        call: Option<String>,
    },
    /// Show a held overlay call's changes (`--review`) as a diff.
    #[command(after_help = "\
Examples:
  hullward run --workspace overlay --review -- make fmt
  hullward review                            the newest held call
  hullward review call-4711-0-5f3e2a1c | less

Protected files' bodies are hidden and secret values masked, as in every program's output.")]
    Review {
        /// The call (default: the newest held call).
        #[arg(value_name = "CALL")]
        call: Option<String>,
    },
    /// Apply a held overlay call's changes (protected paths and conflicts are refused).
    #[command(after_help = "\
Examples:
  hullward apply call-4711-0-5f3e2a1c
  hullward undo call-4711-0-5f3e2a1c         and back again")]
    Apply {
        /// The call (default: the newest held call).
        #[arg(value_name = "CALL")]
        call: Option<String>,
    },
    /// Throw a held overlay call's changes away.
    #[command(after_help = "\
Examples:
  hullward discard call-4711-0-5f3e2a1c")]
    Discard {
        /// The call (default: the newest held call).
        #[arg(value_name = "CALL")]
        call: Option<String>,
    },
    /// Put back what an applied overlay call overwrote or deleted, and remove what it created.
    #[command(after_help = "\
Examples:
  hullward undo                              the newest applied call
  hullward undo call-4711-0-5f3e2a1c

Exit status: 0 undone; 1 refused (the host changed a file since the call applied it; each is
named); 2 no such call.")]
    Undo {
        /// The call (default: the newest applied call not undone yet).
        #[arg(value_name = "CALL")]
        call: Option<String>,
    },
    /// List the applied overlay calls' backups with their sizes, and the held calls.
    #[command(after_help = "\
Examples:
  hullward backups
  hullward backups --json | jq '.backups[] | select(.undone | not)'")]
    Backups,
}

#[derive(Debug, Subcommand)]
pub enum CheckCommand {
    /// Decide a shell command string.
    Shell {
        /// The command string (after `--`).
        #[arg(required = true, trailing_var_arg = true, value_name = "COMMAND")]
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
    crate::crashdump::install_panic_hook(hullward_home(&process_env()));
    crate::filter::logging::init();
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("hullward: {e}");
            if e.is_internal_failure() {
                crate::crashdump::report(
                    &hullward_home(&process_env()),
                    &crate::crashdump::Failure::error(&e),
                );
            }
            ExitCode::from(e.exit_code())
        }
    }
}

/// This process's environment, the variables that are valid UTF-8.
fn process_env() -> std::collections::BTreeMap<String, String> {
    std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))).collect()
}

fn dispatch(cli: Cli) -> Result<u8, Error> {
    let common = &cli.common;
    match cli.command {
        Command::Check { what } => check::run(common, what),
        Command::Validate => validate::run(common),
        Command::Explain { argv } => explain::run(common, &argv),
        Command::Run { argv, connect } => run::run(common, argv, connect::socket(connect).as_deref()),
        Command::Sh { command, connect } => run::sh(common, &command, connect::socket(connect).as_deref()),
        Command::Filter => filter::run(common),
        Command::Doctor => doctor::run(common),
        Command::Serve { socket } => serve::run(common, socket),
        Command::Mcp => mcp::run(common),
        Command::Audit { since, call } => audit::run(common, since, call.as_deref()),
        Command::Review { call } => workspace::held(common, workspace::Held::Review, call.as_deref()),
        Command::Apply { call } => workspace::held(common, workspace::Held::Apply, call.as_deref()),
        Command::Discard { call } => workspace::held(common, workspace::Held::Discard, call.as_deref()),
        Command::Undo { call } => workspace::undo(common, call.as_deref()),
        Command::Backups => workspace::list(common),
    }
}
