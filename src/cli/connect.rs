//! `hullward run|sh --connect SOCK` (or `HULLWARD_SOCKET`): the call is sent to a running
//! `hullward serve` instead of being run here, so scripts and CI steps pay the server's warm
//! cost. The server's policy applies; of this command line only `--timeout` and `--json` count.
//!
//! Order of [`call`]: connect → `hello` (a human is attached when standard input is a terminal;
//! approvals are then asked on `/dev/tty`) → the request, with the current directory → its
//! events until the `exit` event: stdout and stderr data to this process's own, notices to
//! stderr (every event as a JSON line on stderr with `--json`) → the exit code.

use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::CommonArgs;
use crate::error::{code, Error};
use crate::supervisor::approval;

/// The socket from `--connect`, else from a non-empty `HULLWARD_SOCKET`.
pub fn socket(flag: Option<PathBuf>) -> Option<PathBuf> {
    flag.or_else(|| std::env::var_os("HULLWARD_SOCKET").filter(|s| !s.is_empty()).map(PathBuf::from))
}

/// Sends `request` (its `method` and fields) as one call and relays it; returns its exit code.
pub fn call(common: &CommonArgs, socket: &Path, mut request: Value) -> Result<u8, Error> {
    let failed =
        |what: &str, e: std::io::Error| Error::Internal(format!("{what} '{}': {e}", socket.display()));
    let stream = UnixStream::connect(socket).map_err(|e| failed("cannot connect to", e))?;
    let mut writer = stream.try_clone().map_err(|e| failed("socket", e))?;
    let human = std::io::stdin().is_terminal();
    let cwd = std::env::current_dir().map_err(|e| Error::Internal(format!("current directory: {e}")))?;
    request["id"] = json!(1);
    request["cwd"] = json!(cwd.to_string_lossy());
    if let Some(t) = common.timeout {
        request["timeout"] = json!(crate::policy::duration::format(t));
    }
    let hello = json!({"id": 0, "method": "hello", "human": human, "client": "hullward-cli"});
    writeln!(writer, "{hello}\n{request}").map_err(|e| failed("cannot write to", e))?;
    for line in BufReader::new(stream).lines() {
        let line = line.map_err(|e| failed("cannot read from", e))?;
        let Ok(event) = serde_json::from_str::<Value>(&line) else { continue };
        if event["id"] != json!(1) {
            continue;
        }
        if let Some(code) = relay(&event, common.json, &mut writer)? {
            return Ok(code);
        }
    }
    Err(Error::Internal(format!(
        "the server on '{}' closed the connection before the call ended",
        socket.display()
    )))
}

/// Shows one event of the call; the exit code once it is the `exit` event.
fn relay(event: &Value, json: bool, writer: &mut UnixStream) -> Result<Option<u8>, Error> {
    let text = |field: &str| event[field].as_str().unwrap_or_default().to_string();
    match event["event"].as_str().unwrap_or_default() {
        "stdout" => {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(text("data").as_bytes()).and_then(|_| out.flush());
        }
        "stderr" if !json => eprint!("{}", text("data")),
        "notice" if !json => eprintln!("{}", text("message")),
        "approval" => {
            let allow = approval::ask_terminal(&text("prompt")).unwrap_or(false);
            let answer = json!({"id": 1, "method": "approve", "allow": allow});
            writeln!(writer, "{answer}")
                .map_err(|e| Error::Internal(format!("cannot answer the approval: {e}")))?;
        }
        "error" => {
            eprintln!("hullward: the server refused the request: {}", text("message"));
            return Ok(Some(code::USAGE));
        }
        "exit" => {
            if json {
                eprintln!("{event}");
            }
            return Ok(Some(event["code"].as_u64().map_or(code::INTERNAL, |c| c.min(255) as u8)));
        }
        _ if json => eprintln!("{event}"),
        _ => {}
    }
    Ok(None)
}
