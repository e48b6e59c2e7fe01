//! The held-call methods of `hullward serve` (`review`, `apply`, `discard`) over a real socket:
//! a server run with `--workspace overlay --review` holds each call's writes (a real overlay
//! under the real kernel sandbox); a connection then reviews the diff, applies or discards it,
//! and the host tree is checked after each step.

mod serve_support;

use serde_json::{json, Value};
use serve_support::{Conn, Server};

/// Runs `sh -c command` on `c` (`run`: the shell guard would refuse naming `.env`) and returns the id of the held call (the exit event's `call`, which
/// the `notice` saying the changes are held names too).
fn held_call(c: &mut Conn, id: &str, command: &str) -> String {
    c.send(json!({"id": id, "method": "run", "argv": ["sh", "-c", command]}));
    let events = c.call_events(&json!(id));
    let exit = events.last().unwrap();
    assert_eq!(exit["code"], 0, "{events:?}");
    let call = exit["call"].as_str().unwrap().to_string();
    let notice = events.iter().find(|e| e["event"] == "notice").unwrap_or_else(|| panic!("{events:?}"));
    let said = notice["message"].as_str().unwrap();
    assert!(said.contains("held") && said.contains(&format!("review {call}")), "{said}");
    call
}

fn ask(c: &mut Conn, id: &str, method: &str, call: &str) -> Value {
    c.send(json!({"id": id, "method": method, "call": call}));
    c.next_for(&json!(id))
}

#[test]
fn a_held_call_is_reviewed_then_applied_and_an_unattended_apply_is_denied() {
    let server = Server::start(&["--workspace", "overlay", "--review"]);
    let mut human = server.session(true);
    let call = held_call(
        &mut human,
        "w",
        "echo two >> notes.txt; echo SECRET_TOKEN=hw-sreview-secret-5521 > .env; echo new > created.txt",
    );
    let host = |p: &str| std::fs::read_to_string(server.root.join(p)).ok();
    assert_eq!(host("notes.txt").as_deref(), Some("hw-serve-notes\n"), "nothing lands before the review");
    assert_eq!(host("created.txt"), None);

    let review = ask(&mut human, "r", "review", &call);
    assert_eq!((review["event"].as_str(), review["call"].as_str()), (Some("result"), Some(call.as_str())));
    let diff = review["diff"].as_str().unwrap();
    assert!(diff.contains("diff --git a/notes.txt b/notes.txt"), "{review}");
    assert!(diff.contains("\n hw-serve-notes\n+two\n"), "{review}");
    assert!(diff.contains("+new"), "{review}");
    assert!(diff.contains("# not applied: '.env'"), "{review}");
    assert!(!review.to_string().contains("hw-sreview-secret-5521"), "{review}");

    let mut agent = server.session(false);
    let denied = ask(&mut agent, "a", "apply", &call);
    assert_eq!(denied["event"], "result", "{denied}");
    assert_eq!(denied["denied"]["rule"], "unattended", "{denied}");
    assert_eq!(host("notes.txt").as_deref(), Some("hw-serve-notes\n"), "a denied apply changes nothing");
    assert!(server.audit().iter().any(|r| r.to_string().contains(&format!("apply {call}"))));
    // Reviewing changes nothing on the host, so an unattended connection may.
    assert_eq!(ask(&mut agent, "r", "review", &call)["diff"], review["diff"]);

    let applied = ask(&mut human, "p", "apply", &call);
    assert_eq!(applied["event"], "result", "{applied}");
    assert_eq!(applied["applied"], 2, "{applied}");
    let refused = applied["refused"].as_array().unwrap();
    assert!(refused
        .iter()
        .any(|r| r["path"] == ".env" && r["why"].as_str().unwrap().starts_with("protected")));
    assert!(applied["report"].as_str().unwrap().contains("hullward undo"), "{applied}");
    assert_eq!(host("notes.txt").as_deref(), Some("hw-serve-notes\ntwo\n"));
    assert_eq!(host("created.txt").as_deref(), Some("new\n"));
    assert_eq!(host(".env"), None, "a new .env never lands");

    let again = ask(&mut human, "p2", "apply", &call);
    assert_eq!(again["event"], "error", "an applied call is no longer held: {again}");
}

#[test]
fn a_held_call_is_discarded_and_unknown_calls_are_errors() {
    let server = Server::start(&["--workspace", "overlay", "--review", "--unattended-policy", "allow"]);
    let mut c = server.session(false);
    let call = held_call(&mut c, "w", "echo gone > made.txt; rm notes.txt");
    assert!(server.root.join("notes.txt").exists());

    let discarded = ask(&mut c, "d", "discard", &call);
    assert_eq!((discarded["event"].as_str(), discarded["discarded"].as_bool()), (Some("result"), Some(true)));
    assert_eq!(std::fs::read_to_string(server.root.join("notes.txt")).unwrap(), "hw-serve-notes\n");
    assert!(!server.root.join("made.txt").exists());

    for (id, method) in [("r", "review"), ("a", "apply"), ("x", "discard")] {
        let gone = ask(&mut c, id, method, &call);
        assert_eq!(gone["event"], "error", "{method}: {gone}");
        assert!(gone["message"].as_str().unwrap().contains(&call), "{gone}");
    }
    assert_eq!(ask(&mut c, "n", "review", "call-nope")["event"], "error");
    c.send(json!({"id": "m", "method": "review"}));
    let missing = c.next_for(&json!("m"));
    assert_eq!(
        (missing["event"].as_str(), missing["message"].as_str()),
        (Some("error"), Some("missing field 'call'"))
    );
}
