//! Real calls that plant a protected path, read back through `hullward audit`: a new `.env` of a
//! `direct` call is quarantined and recorded as a `quarantine` record; the same file written by an
//! `overlay` call is refused at apply and recorded as a `refused` record — each with the call id,
//! the path, the rule that protected it and where the kept copy is — while the neighbour file
//! written by the same call lands and is in no such record.

#[path = "support/sandbox.rs"]
mod support;

use serde_json::Value;
use support::Sandbox;

/// The call id hullward printed on stderr.
fn call_id(text: &str) -> String {
    let at = text.find("call-").expect("a call id in the output");
    text[at..]
        .split(|c: char| c.is_whitespace() || matches!(c, '`' | '\'' | '/' | ')'))
        .next()
        .unwrap()
        .to_string()
}

/// `hullward audit --json` (and the plain timeline) for one call.
fn audit(sb: &Sandbox, call: &str) -> (Vec<Value>, String) {
    let json = sb.hullward().args(["audit", "--json", "--call", call]).output().unwrap();
    assert!(json.status.success(), "{}", String::from_utf8_lossy(&json.stderr));
    let records =
        String::from_utf8(json.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let plain = sb.hullward().args(["audit", "--call", call]).output().unwrap();
    (records, String::from_utf8(plain.stdout).unwrap())
}

fn of_kind<'a>(records: &'a [Value], kind: &str) -> Vec<&'a Value> {
    records.iter().filter(|r| r["kind"] == kind).collect()
}

#[test]
fn a_direct_calls_planted_env_file_is_quarantined_and_audited() {
    let sb = Sandbox::new();
    let out = sb.sh("echo PLANTED=hw-direct-1 > .env; echo ok > notes.txt");
    out.expect_code(0);
    assert!(!sb.exists(".env"), "{out}");
    assert_eq!(sb.read("notes.txt").as_deref(), Some("ok\n"));
    let id = call_id(&out.stderr);
    let (records, plain) = audit(&sb, &id);
    let q = of_kind(&records, "quarantine");
    assert_eq!(q.len(), 1, "{records:?}");
    let q = q[0];
    assert_eq!((q["call_id"].as_str(), q["path"].as_str()), (Some(id.as_str()), Some(".env")));
    assert_eq!(q["change"], "created");
    assert!(q["rule"].as_str().is_some_and(|r| r.contains(".env")), "{q}");
    let kept = q["quarantined_to"].as_str().expect("where the copy is");
    assert_eq!(std::fs::read_to_string(kept).unwrap(), "PLANTED=hw-direct-1\n");
    assert!(plain.contains(".env created ["), "{plain}");
    assert!(plain.contains(&format!("→ quarantined to {kept}")), "{plain}");
    assert!(!records.iter().any(|r| r["path"] == "notes.txt"), "{records:?}");
}

#[test]
fn an_overlay_calls_planted_env_file_is_refused_at_apply_and_audited() {
    let sb = Sandbox::new();
    let out =
        sb.sh_with(&["--workspace", "overlay"], "echo PLANTED=hw-overlay-2 > .env; echo ok > notes.txt");
    out.expect_code(0);
    assert!(!sb.exists(".env"), "{out}");
    assert_eq!(sb.read("notes.txt").as_deref(), Some("ok\n"), "{out}");
    let id = call_id(&out.stderr);
    let (records, plain) = audit(&sb, &id);
    let r = of_kind(&records, "refused");
    assert_eq!(r.len(), 1, "{records:?}");
    let r = r[0];
    assert_eq!((r["call_id"].as_str(), r["path"].as_str()), (Some(id.as_str()), Some(".env")));
    assert_eq!((r["why"].as_str(), r["op"].as_str()), (Some("protected"), Some("apply")));
    assert!(r["rule"].as_str().is_some_and(|rule| rule.contains(".env")), "{r}");
    let kept = r["kept_in"].as_str().expect("where the copy is");
    assert_eq!(std::fs::read_to_string(kept).unwrap(), "PLANTED=hw-overlay-2\n");
    assert!(plain.contains(".env not applied (protected ["), "{plain}");
    assert!(plain.contains(&format!("the call's version is kept in {kept}")), "{plain}");
    assert!(!of_kind(&records, "call").is_empty(), "the call's own record is there too: {records:?}");
}
