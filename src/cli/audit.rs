//! `hullward audit [--since T] [--call ID] [--json]`: the audit log read back as a timeline.
//!
//! Order: find the log ([`log_path`]: `--audit FILE`, else `$HULLWARD_HOME/audit.jsonl`), read it
//! line by line, keep the records that pass the filters ([`Filter`]), and print each one — as the
//! JSON object it is (`--json`, one per line) or as one readable line ([`render`]) per record:
//! decisions (allow, deny, ask, with the `[DENIED]` text below a denial), finished calls (exit
//! status, duration, what the filters masked, what `--no-strict` dropped), egress requests of the
//! proxy, quarantined paths of `direct` calls and changes an overlay call's apply refused (path,
//! why, rule, where the call's version is kept), and any other kind of record (records of newer
//! versions) generically as its fields. A line that is not a JSON object is reported on stderr by its number and
//! skipped: a damaged line does not hide the rest of the log.
//!
//! The log is only read: this command never loads the policy, so a broken configuration in the
//! current directory does not stop anyone from reading what happened.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use super::args::hullward_home;
use super::style::{Style, Tone};
use super::CommonArgs;
use crate::error::Error;

/// Which records to show.
#[derive(Debug, Default)]
struct Filter<'a> {
    since: Option<SystemTime>,
    call: Option<&'a str>,
}

impl Filter<'_> {
    fn keeps(&self, record: &Map<String, Value>) -> bool {
        let call_ok = self.call.is_none_or(|c| record.get("call_id").and_then(Value::as_str) == Some(c));
        let since_ok = self.since.is_none_or(|since| {
            record
                .get("time")
                .and_then(Value::as_str)
                .and_then(|t| parse_time(t).ok())
                .is_some_and(|t| t >= since)
        });
        call_ok && since_ok
    }
}

pub fn run(common: &CommonArgs, since: Option<SystemTime>, call: Option<&str>) -> Result<u8, Error> {
    let path = log_path(common);
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            eprintln!("hullward: no audit log at '{}' yet: nothing has been recorded", path.display());
            return Ok(0);
        }
        Err(e) => return Err(Error::Usage(format!("cannot read the audit log '{}': {e}", path.display()))),
    };
    let filter = Filter { since, call };
    let style = Style::for_stdout();
    let out = io::stdout();
    let mut out = out.lock();
    for (n, line) in BufReader::new(file).lines().enumerate() {
        let line =
            line.map_err(|e| Error::Usage(format!("cannot read the audit log '{}': {e}", path.display())))?;
        if line.trim().is_empty() {
            continue;
        }
        let Ok(Value::Object(record)) = serde_json::from_str::<Value>(&line) else {
            eprintln!("hullward: {}:{}: not an audit record, skipped", path.display(), n + 1);
            continue;
        };
        if !filter.keeps(&record) {
            continue;
        }
        let text = if common.json { line } else { render(&record, style) };
        if writeln!(out, "{text}").is_err() {
            // The reader went away (`hullward audit | head`): it asked for no more.
            return Ok(0);
        }
    }
    Ok(0)
}

/// `--audit FILE` (against the current directory), else `$HULLWARD_HOME/audit.jsonl`.
fn log_path(common: &CommonArgs) -> PathBuf {
    match &common.audit {
        Some(p) => p.clone(),
        None => {
            let env = std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
                .collect();
            hullward_home(&env).join("audit.jsonl")
        }
    }
}

/// One record as one line (a denial or a question adds its message below, indented):
/// `TIME  CALL  WHAT  DETAIL`, the verdict coloured on a terminal.
fn render(r: &Map<String, Value>, style: Style) -> String {
    let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("");
    let time = s("time").replacen('T', " ", 1);
    let (what, detail) = match s("kind") {
        "decision" if is_egress(r) => {
            (format!("egress {}", verdict(r)), format!("{} [{}]", s("url"), s("rule")))
        }
        "decision" => (verdict(r), format!("{} [{}]", subject(r), s("rule"))),
        "call" => ("call".to_string(), call_detail(r)),
        "quarantine" if r.contains_key("change") => ("quarantine".to_string(), quarantine_detail(r)),
        "refused" => ("refused".to_string(), refused_detail(r)),
        other => (if other.is_empty() { "record".to_string() } else { other.to_string() }, generic(r)),
    };
    let tone = match what.rsplit(' ').next().unwrap_or("") {
        "allow" => Tone::Good,
        "deny" => Tone::Bad,
        "ask" | "quarantine" | "refused" => Tone::Warn,
        _ if what == "call" && r.get("exit_status").and_then(Value::as_i64) != Some(0) => Tone::Bad,
        _ => Tone::Strong,
    };
    let mut line = format!(
        "{}  {}  {} {detail}",
        style.paint(Tone::Faint, &time),
        style.paint(Tone::Faint, s("call_id")),
        style.paint(tone, &format!("{what:<12}"))
    );
    if let Some(message) = r.get("message").and_then(Value::as_str).filter(|m| !m.is_empty()) {
        for part in message.lines() {
            line.push_str("\n    ");
            line.push_str(part);
        }
    }
    line
}

fn verdict(r: &Map<String, Value>) -> String {
    r.get("verdict").and_then(Value::as_str).unwrap_or("decided").to_string()
}

/// A request of the egress proxy: `METHOD host:port`, not a URL with a scheme.
fn is_egress(r: &Map<String, Value>) -> bool {
    r.get("url").and_then(Value::as_str).is_some_and(|u| !u.contains("://"))
}

/// What a call or decision was about: the command, the program, the file operation or the URL.
fn subject(r: &Map<String, Value>) -> String {
    if let Some(c) = r.get("command").and_then(Value::as_str) {
        return format!("sh: {c}");
    }
    if let Some(argv) = r.get("argv").and_then(Value::as_array) {
        let words: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
        return format!("run: {}", words.join(" "));
    }
    if let Some(p) = r.get("path").and_then(Value::as_str) {
        return format!("{} {p}", r.get("op").and_then(Value::as_str).unwrap_or("path"));
    }
    r.get("url").and_then(Value::as_str).map(|u| format!("url {u}")).unwrap_or_default()
}

fn call_detail(r: &Map<String, Value>) -> String {
    let n = |k: &str| r.get(k).and_then(Value::as_u64).unwrap_or(0);
    let mut out = match r.get("exit_status").and_then(Value::as_i64) {
        Some(code) => format!("exit {code}"),
        None => "ended".to_string(),
    };
    if let Some(ms) = r.get("duration_ms").and_then(Value::as_u64) {
        out.push_str(&format!(" after {}", crate::policy::duration::format(Duration::from_millis(ms))));
    }
    out.push_str(&format!(": {}", subject(r)));
    if n("masks_applied") > 0 {
        out.push_str(&format!(" ({} secret(s) masked)", n("masks_applied")));
    }
    if n("diff_bodies_hidden") > 0 {
        out.push_str(&format!(" ({} diff bodies hidden)", n("diff_bodies_hidden")));
    }
    if let Some(dropped) = r.get("dropped").and_then(Value::as_array) {
        let list: Vec<&str> = dropped.iter().filter_map(Value::as_str).collect();
        out.push_str(&format!(" (--no-strict dropped: {})", list.join(", ")));
    }
    out
}

/// A protected path a `direct` call created or changed: `PATH created [RULE] → quarantined to …`.
fn quarantine_detail(r: &Map<String, Value>) -> String {
    let s = |k: &str| r.get(k).and_then(Value::as_str);
    let mut out =
        format!("{} {} [{}]", s("path").unwrap_or(""), s("change").unwrap_or(""), s("rule").unwrap_or(""));
    if let Some(to) = s("quarantined_to") {
        out.push_str(&format!(" → quarantined to {to}"));
    }
    if let Some(from) = s("restored_from") {
        out.push_str(&format!("; original put back from {from}"));
    }
    if let Some(e) = s("error") {
        out.push_str(&format!("; {e}"));
    }
    out
}

/// A change an overlay call's apply did not make: `PATH not applied (WHY [RULE]); kept in …`.
fn refused_detail(r: &Map<String, Value>) -> String {
    let s = |k: &str| r.get(k).and_then(Value::as_str);
    let rule = s("rule").map(|rule| format!(" [{rule}]")).unwrap_or_default();
    let mut out =
        format!("{} not applied ({}{rule})", s("path").unwrap_or(""), s("why").unwrap_or("refused"));
    if let Some(kept) = s("kept_in") {
        out.push_str(&format!("; the call's version is kept in {kept}"));
    }
    out
}

/// A record of a kind this version does not know: its fields as `key=value`, by key.
fn generic(r: &Map<String, Value>) -> String {
    r.iter()
        .filter(|(k, _)| !matches!(k.as_str(), "time" | "call_id" | "kind" | "message"))
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={other}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `--since`: an age (`30m`, `2h`, `7d`) before now, or a time ([`parse_time`]).
pub fn parse_since(text: &str) -> Result<SystemTime, String> {
    let text = text.trim();
    let age = match text.strip_suffix('d') {
        Some(days) if !days.is_empty() && days.bytes().all(|b| b.is_ascii_digit()) => {
            days.parse::<u64>().ok().and_then(|d| d.checked_mul(86_400)).map(Duration::from_secs)
        }
        _ => crate::policy::duration::parse(text),
    };
    if let Some(age) = age {
        return SystemTime::now().checked_sub(age).ok_or_else(|| format!("'{text}' reaches before 1970"));
    }
    parse_time(text).map_err(|why| {
        format!(
            "'{text}' is neither an age (30m, 2h, 7d) nor a time (2026-04-22, 2026-04-22T15:30:00Z): {why}"
        )
    })
}

/// A time as `YYYY-MM-DD[(T| )HH:MM[:SS[.frac]]][Z|±HH:MM]`; without an offset it is UTC.
pub fn parse_time(text: &str) -> Result<SystemTime, String> {
    let num = |s: &str, what: &str| s.parse::<u64>().map_err(|_| format!("bad {what} '{s}'"));
    let (date, rest) = text.split_at(text.find(['T', 't', ' ']).unwrap_or(text.len()));
    let mut parts = date.splitn(3, '-');
    let (Some(y), Some(m), Some(d)) = (parts.next(), parts.next(), parts.next()) else {
        return Err("the date is not YYYY-MM-DD".into());
    };
    let (year, month, day) = (num(y, "year")?, num(m, "month")?, num(d, "day")?);
    if !(1970..=9999).contains(&year) || !(1..=12).contains(&month) || day < 1 || day > days_in(year, month) {
        return Err(format!("no such date '{date}'"));
    }
    let rest = rest.get(1..).unwrap_or("");
    let (clock, offset) = match rest.find(['Z', 'z', '+', '-']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let mut secs = 0u64;
    let mut nanos = 0u32;
    if !clock.is_empty() {
        let (hms, frac) = clock.split_once('.').unwrap_or((clock, ""));
        let fields: Vec<&str> = hms.split(':').collect();
        let (h, mi, s) = match fields.as_slice() {
            [h, mi] => (num(h, "hour")?, num(mi, "minute")?, 0),
            [h, mi, s] => (num(h, "hour")?, num(mi, "minute")?, num(s, "second")?),
            _ => return Err(format!("the time of day '{clock}' is not HH:MM[:SS]")),
        };
        if h > 23 || mi > 59 || s > 60 {
            return Err(format!("no such time of day '{clock}'"));
        }
        if !frac.is_empty() {
            let digits: String = frac.chars().take(9).collect();
            let scaled = format!("{digits:0<9}");
            nanos = u32::try_from(num(&scaled, "fraction")?).map_err(|_| format!("bad fraction '{frac}'"))?;
        }
        secs = h * 3600 + mi * 60 + s;
    }
    let shift: i64 = match offset {
        "" | "Z" | "z" => 0,
        o => {
            let sign = if o.starts_with('-') { -1 } else { 1 };
            let (oh, om) = o[1..].split_once(':').unwrap_or((&o[1..], "0"));
            sign * i64::try_from(num(oh, "offset")? * 3600 + num(om, "offset")? * 60).unwrap_or(0)
        }
    };
    let local = days_since_epoch(year, month, day) * 86_400 + secs;
    let utc = u64::try_from(i64::try_from(local).unwrap_or(i64::MAX) - shift)
        .map_err(|_| "the time is before 1970".to_string())?;
    Ok(UNIX_EPOCH + Duration::new(utc, nanos))
}

fn is_leap(y: u64) -> bool {
    (y.is_multiple_of(4) && !y.is_multiple_of(100)) || y.is_multiple_of(400)
}

fn days_in(year: u64, month: u64) -> u64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn days_since_epoch(year: u64, month: u64, day: u64) -> u64 {
    let years: u64 = (1970..year).map(|y| if is_leap(y) { 366 } else { 365 }).sum();
    let months: u64 = (1..month).map(|m| days_in(year, m)).sum();
    years + months + day - 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::rfc3339;

    const PLAIN: Style = Style { color: false };

    fn record(json: &str) -> Map<String, Value> {
        match serde_json::from_str(json).unwrap() {
            Value::Object(m) => m,
            _ => panic!(),
        }
    }

    #[test]
    fn times_read_back_what_the_log_writes() {
        for secs in [0u64, 951_782_400, 1_709_251_199, 1_776_871_812, 4_107_542_400] {
            let t = UNIX_EPOCH + Duration::from_millis(secs * 1000 + 250);
            assert_eq!(parse_time(&rfc3339(t)), Ok(t), "{}", rfc3339(t));
        }
        let day = parse_time("2026-04-22").unwrap();
        assert_eq!(rfc3339(day), "2026-04-22T00:00:00.000Z");
        assert_eq!(rfc3339(parse_time("2026-04-22T17:30+02:00").unwrap()), "2026-04-22T15:30:00.000Z");
        assert_eq!(rfc3339(parse_time("2026-04-22 15:30:12").unwrap()), "2026-04-22T15:30:12.000Z");
        for bad in ["2026-02-30", "2026-13-01", "yesterday", "2026-04-22T25:00", "1969-12-31"] {
            assert!(parse_time(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn since_takes_ages_and_times() {
        let week = parse_since("7d").unwrap();
        let now = SystemTime::now();
        let age = now.duration_since(week).unwrap();
        assert!(age >= Duration::from_secs(7 * 86_400) && age < Duration::from_secs(7 * 86_400 + 60));
        assert!(parse_since("90m").unwrap() < now);
        assert_eq!(parse_since("2026-04-22").unwrap(), parse_time("2026-04-22").unwrap());
        assert!(parse_since("last week").unwrap_err().contains("neither an age"));
    }

    #[test]
    fn every_kind_renders_and_unknown_kinds_show_their_fields() {
        let deny = record(
            r#"{"time":"2026-04-22T15:30:12.000Z","call_id":"c1","kind":"decision","command":"rm -rf /","verdict":"deny","rule":"catastrophic-delete","message":"[DENIED] Shell command blocked"}"#,
        );
        assert_eq!(
            render(&deny, PLAIN),
            "2026-04-22 15:30:12.000Z  c1  deny         sh: rm -rf / [catastrophic-delete]\n    [DENIED] Shell command blocked"
        );
        let egress = record(
            r#"{"time":"t","call_id":"c1","kind":"decision","url":"CONNECT api.github.com:443","verdict":"allow","rule":"host-allowlist"}"#,
        );
        assert!(render(&egress, PLAIN).contains("egress allow CONNECT api.github.com:443 [host-allowlist]"));
        let call = record(
            r#"{"time":"t","call_id":"c1","kind":"call","argv":["cargo","test"],"exit_status":0,"duration_ms":1500,"masks_applied":2,"bytes_masked":40,"diff_bodies_hidden":0,"dropped":["seccomp"]}"#,
        );
        let line = render(&call, PLAIN);
        assert!(line.contains("call         exit 0 after "), "{line}");
        assert!(
            line.contains("run: cargo test (2 secret(s) masked) (--no-strict dropped: seccomp)"),
            "{line}"
        );
        let quarantine = record(
            r#"{"time":"t","call_id":"c1","kind":"quarantine","path":".git/hooks/pre-commit","change":"created","rule":".git/hooks/**","quarantined_to":"/h/q/c1/x"}"#,
        );
        assert!(render(&quarantine, PLAIN).ends_with(
            "quarantine   .git/hooks/pre-commit created [.git/hooks/**] → quarantined to /h/q/c1/x"
        ));
        let refused = record(
            r#"{"time":"t","call_id":"c2","kind":"refused","op":"apply","path":".env","why":"protected","rule":".env","kept_in":"/h/b/c2/refused/ws/.env"}"#,
        );
        assert!(render(&refused, PLAIN).ends_with(
            "refused      .env not applied (protected [.env]); the call's version is kept in /h/b/c2/refused/ws/.env"
        ));
        let newer = record(r#"{"time":"t","call_id":"c1","kind":"quarantine","path":"x","moved_to":"/h/q"}"#);
        assert!(render(&newer, PLAIN).ends_with("quarantine   moved_to=/h/q path=x"));
    }

    #[test]
    fn a_terminal_gets_the_verdict_in_colour() {
        let deny = record(
            r#"{"time":"t","call_id":"c1","kind":"decision","url":"https://x/","verdict":"deny","rule":"r"}"#,
        );
        let painted = render(&deny, Style { color: true });
        assert!(
            painted.contains(&format!("\x1b[31m{:<12}\x1b[0m url https://x/ [r]", "deny")),
            "{painted:?}"
        );
        assert!(!render(&deny, PLAIN).contains('\x1b'));
    }

    #[test]
    fn filters_by_call_and_time() {
        let r = record(r#"{"time":"2026-04-22T15:30:12.000Z","call_id":"c1","kind":"call"}"#);
        let at = parse_time("2026-04-22T15:30:12Z").unwrap();
        assert!(Filter { since: Some(at), call: Some("c1") }.keeps(&r));
        assert!(!Filter { since: Some(at + Duration::from_secs(1)), call: None }.keeps(&r));
        assert!(!Filter { since: None, call: Some("c2") }.keeps(&r));
        let undated = record(r#"{"call_id":"c1","kind":"call"}"#);
        assert!(!Filter { since: Some(at), call: None }.keeps(&undated));
        assert!(Filter::default().keeps(&undated));
    }
}
