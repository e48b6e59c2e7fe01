//! `fetch-to-exec`: downloading and executing in one step.
//!
//! Three shapes, all read from the analysis:
//! 1. a pipeline where a downloader (`curl`, `wget`, `fetch`, httpie, `nc`, …) feeds a later
//!    stage that reads its program from standard input (`… | sh`, `… | bash -s`, `… | python3`);
//!    an interpreter given its code another way (`python3 -c '…'`, `jq .`) only reads data;
//! 2. a downloader inside a substitution whose output becomes code: the `-c` of a shell,
//!    `eval`'s arguments, the command word itself, an interpreter's `-c`/`-e`, or a heredoc fed to
//!    an interpreter (`sh -c "$(curl …)"`, `eval "$(curl …)"`);
//! 3. a downloader inside a process substitution handed to an interpreter (`bash <(curl …)`,
//!    `source <(wget -O- …)`).

use crate::guard::shell::analysis::{Analysis, Cmd, Enclosure};
use crate::guard::Decision;

/// Programs that download.
const DOWNLOADERS: &[&str] =
    &["curl", "wget", "wget2", "fetch", "http", "https", "xh", "xhs", "curlie", "nc", "ncat", "netcat"];

fn downloads(cmd: &Cmd) -> bool {
    cmd.names().any(|n| DOWNLOADERS.contains(&n))
}

/// A downloader piped into a program reader, in any pipeline.
fn piped(analysis: &Analysis) -> bool {
    let mut fetch: Vec<Vec<bool>> = analysis.pipeline_stages.iter().map(|&n| vec![false; n]).collect();
    let mut run: Vec<Vec<bool>> = fetch.clone();
    for cmd in &analysis.cmds {
        for e in &cmd.enclosures {
            if let Enclosure::Stage { pipeline, index } = *e {
                if let (Some(f), Some(r)) = (fetch.get_mut(pipeline), run.get_mut(pipeline)) {
                    if let (Some(f), Some(r)) = (f.get_mut(index), r.get_mut(index)) {
                        *f |= downloads(cmd);
                        *r |= cmd.stdin_program;
                    }
                }
            }
        }
    }
    fetch.iter().zip(&run).any(|(f, r)| {
        let first_fetch = f.iter().position(|&x| x);
        first_fetch.is_some_and(|i| r.iter().skip(i + 1).any(|&x| x))
    })
}

/// A downloader inside a substitution whose output is run.
fn substituted(analysis: &Analysis) -> bool {
    analysis.cmds.iter().filter(|c| downloads(c)).any(|c| {
        c.enclosures
            .iter()
            .any(|e| matches!(e, Enclosure::Subst(id) if analysis.subst_is_code.get(*id) == Some(&true)))
    })
}

pub fn check(analysis: &Analysis) -> Option<Decision> {
    (piped(analysis) || substituted(analysis)).then(|| {
        Decision::deny(
            "fetch-to-exec",
            format!(
                "[DENIED] Shell command blocked: it downloads code and executes it in one step (fetch-to-exec).\n{}",
                super::ASK_THE_USER
            ),
        )
    })
}
