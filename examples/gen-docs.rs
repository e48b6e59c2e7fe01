//! Generates the man pages and shell completions from the clap definition of the command line.
//!
//!     cargo run --example gen-docs -- OUT_DIR
//!
//! writes `OUT_DIR/docs/man/*.1` (one page for `hullward`, one per subcommand) and
//! `OUT_DIR/completions/{hullward.bash,_hullward,hullward.fish}`. `scripts/gen-docs.sh` runs it
//! over the checkout; `scripts/check-docs.sh` runs it into a scratch folder and fails when the
//! checked-in files differ. An example, not part of the binary: hullward itself does not depend
//! on `clap_mangen` or `clap_complete`.
//!
//! Each page is clap_mangen's sections (name, synopsis, description, options, subcommands) plus
//! the command's examples as an EXAMPLES section set without filling, so that command lines stay
//! one per line; the main page adds FILES, ENVIRONMENT and SEE ALSO. The pages carry the crate
//! version without the git revision, and no date, so they only change when the command line does.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::CommandFactory;
use clap_complete::Shell;

fn main() -> std::io::Result<()> {
    let out = PathBuf::from(std::env::args_os().nth(1).unwrap_or_else(|| ".".into()));
    let mut cmd =
        hullward::cli::Cli::command().version(env!("CARGO_PKG_VERSION")).disable_help_subcommand(true);
    cmd.build();
    let man = out.join("docs/man");
    std::fs::create_dir_all(&man)?;
    let mut names = Vec::new();
    collect(&cmd, &mut names);
    for (i, page) in names.iter().enumerate() {
        let see_also = if i == 0 { &names[1..] } else { &names[..1] };
        write_page(page, see_also, &man)?;
    }
    completions(cmd, &out.join("completions"))
}

/// The command and its subcommands, depth first, the main command first.
fn collect(cmd: &clap::Command, out: &mut Vec<clap::Command>) {
    out.push(cmd.clone());
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        collect(sub, out);
    }
}

fn page_name(cmd: &clap::Command) -> String {
    cmd.get_display_name().unwrap_or(cmd.get_name()).to_string()
}

fn write_page(cmd: &clap::Command, see_also: &[clap::Command], dir: &Path) -> std::io::Result<()> {
    let name = page_name(cmd);
    let man = clap_mangen::Man::new(cmd.clone())
        .title(name.clone())
        .source(format!("hullward {}", env!("CARGO_PKG_VERSION")));
    let mut page = Vec::new();
    man.render_title(&mut page)?;
    man.render_name_section(&mut page)?;
    man.render_synopsis_section(&mut page)?;
    man.render_description_section(&mut page)?;
    man.render_options_section(&mut page)?;
    if cmd.has_subcommands() {
        man.render_subcommands_section(&mut page)?;
    }
    if let Some(after) = cmd.get_after_help() {
        page.extend(section("EXAMPLES", &after.to_string()).into_bytes());
    }
    if cmd.get_display_name() == Some("hullward") || cmd.get_name() == "hullward" {
        page.extend(section("FILES", FILES).into_bytes());
        page.extend(section("ENVIRONMENT", ENVIRONMENT).into_bytes());
    }
    let refs: Vec<String> = see_also.iter().map(|c| format!("\\fB{}\\fR(1)", page_name(c))).collect();
    page.extend(format!(".SH \"SEE ALSO\"\n{}\n", refs.join(", ")).into_bytes());
    std::fs::File::create(dir.join(format!("{name}.1")))?.write_all(&page)
}

/// A section whose text is set line for line (`.nf`), escaped for roff.
fn section(title: &str, text: &str) -> String {
    let body = text.strip_prefix("Examples:\n").unwrap_or(text);
    let mut out = format!(".SH {title}\n.nf\n");
    for line in body.lines() {
        let escaped = line.replace('\\', "\\e").replace('-', "\\-");
        if escaped.starts_with(['.', '\'']) {
            out.push_str("\\&");
        }
        out.push_str(&escaped);
        out.push('\n');
    }
    out.push_str(".fi\n");
    out
}

const FILES: &str = "\
./.hullward.yaml                          project configuration (discovered first)
./.fuseraft/config/orchestration.yaml     a fuseraft project's configuration (its Security: section)
$XDG_CONFIG_HOME/hullward/config.yaml     the user's configuration (~/.config/hullward/config.yaml)
/etc/hullward/config.yaml                 the machine's configuration
$HULLWARD_HOME/audit.jsonl                the audit log, mode 0600 (read it with hullward audit)
$HULLWARD_HOME/crashdump/                 crash reports of hullward itself, mode 0600

Without --config, the first configuration file found is layered on the profile;
hullward explain lists the files that were read.";

const ENVIRONMENT: &str = "\
HULLWARD_HOME          where the audit log and crash dumps live (default ~/.hullward)
XDG_CONFIG_HOME        the user's configuration folder (default ~/.config)
HULLWARD_LOG           hullward's own diagnostics on stderr (e.g. HULLWARD_LOG=debug)";

fn completions(mut cmd: clap::Command, dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
        clap_complete::generate_to(shell, &mut cmd, "hullward", dir)?;
    }
    Ok(())
}
