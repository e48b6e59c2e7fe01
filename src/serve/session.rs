//! One connection: one session. Reads requests line by line, answers each, starts calls, routes
//! approvals and cancellations to this connection's own calls only.
//!
//! Order of [`serve_connection`]: the writer task (the only writer of the socket; every reply
//! and event passes its bounded queue) → requests until end of input or server shutdown → the
//! session closes: waiting approvals are refused, running calls cancelled → the writer ends once
//! every call's last event is written.

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};
use tokio::io::{AsyncWriteExt, BufWriter};
use tokio::net::unix::OwnedWriteHalf;
use tokio::net::UnixStream;
use tokio::sync::mpsc;

use super::access::Grants;
use super::call::{self, Approvals, Calls, Origin};
use super::probe;
use super::protocol::{self, Line, LineReader};
use super::skills::{self, Found};
use super::tools::{self, FileOp, Tool};
use super::workspace::{self, Held};
use super::{Phase, Server};
use crate::audit::{AuditLog, AuditRecord, Subject};
use crate::filter::SecretSet;
use crate::guard::{path, shell, url, Decision};
use crate::supervisor::{CallSpec, Engine, Input, Stop};

/// Replies and events queued for one connection before its calls are held back.
const CONNECTION_QUEUE: usize = 64;

/// Serves one connection until it closes (or the server has shut down).
pub async fn serve_connection(server: Arc<Server>, stream: UnixStream) {
    let (read, write) = stream.into_split();
    let (out, queue) = mpsc::channel(CONNECTION_QUEUE);
    let writer = tokio::spawn(write_events(write, queue));
    let mut session = Session::new(server.clone(), out);
    let mut lines = LineReader::new(read);
    let mut phase = server.phase.subscribe();
    loop {
        tokio::select! {
            line = lines.next() => match line {
                Ok(Some(Line::Text(bytes))) => session.handle(&bytes).await,
                Ok(Some(Line::TooLong)) => {
                    let message = format!("request line longer than {} bytes; skipped", protocol::MAX_LINE);
                    session.reply(protocol::error(None, &message)).await;
                }
                Ok(None) | Err(_) => break,
            },
            _ = closed(&mut phase) => break,
        }
    }
    session.close();
    drop(session);
    let _ = writer.await;
}

/// Resolves once the server has closed.
async fn closed(phase: &mut tokio::sync::watch::Receiver<Phase>) {
    let closed = phase.wait_for(|p| *p == Phase::Closed).await.is_ok();
    if !closed {
        std::future::pending::<()>().await;
    }
}

/// Writes queued events, one JSON object per line, flushing whenever the queue runs dry.
async fn write_events(write: OwnedWriteHalf, mut queue: mpsc::Receiver<Value>) {
    let mut w = BufWriter::new(write);
    while let Some(event) = queue.recv().await {
        let mut line = event.to_string();
        line.push('\n');
        if w.write_all(line.as_bytes()).await.is_err() {
            return;
        }
        if queue.is_empty() && w.flush().await.is_err() {
            return;
        }
    }
    let _ = w.flush().await;
}

/// The state of one session: one connection of the daemon, or one in-process front end. Order:
/// [`Session::new`] → [`Session::handle`] for each request line (replies and events go to the
/// queue given to `new`) → [`Session::close`].
pub struct Session {
    server: Arc<Server>,
    number: u64,
    out: mpsc::Sender<Value>,
    human: bool,
    client: String,
    seen: HashSet<String>,
    approvals: Approvals,
    calls: Calls,
    grants: Grants,
}

impl Session {
    /// A session whose replies and events are sent to `out`.
    pub fn new(server: Arc<Server>, out: mpsc::Sender<Value>) -> Session {
        let number = server.next_number();
        Session {
            server,
            number,
            out,
            human: false,
            client: String::new(),
            seen: HashSet::new(),
            approvals: Approvals::default(),
            calls: Calls::default(),
            grants: Grants::default(),
        }
    }

    /// The session's name (the `hello` reply, the audit log).
    fn name(&self) -> String {
        format!("session-{}-{}", std::process::id(), self.number)
    }

    async fn reply(&self, event: Value) {
        let _ = self.out.send(event).await;
    }

    /// Refuses what waits for approval and cancels the running calls.
    pub fn close(&self) {
        if let Ok(mut waiting) = self.approvals.lock() {
            waiting.clear();
        }
        if let Ok(calls) = self.calls.lock() {
            for running in calls.values() {
                running.stop.send_replace(Some(Stop::Cancelled));
            }
        }
    }

    /// Answers one request line.
    pub async fn handle(&mut self, bytes: &[u8]) {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let req: Value = match serde_json::from_slice(bytes) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => return self.reply(protocol::error(None, "a request is one JSON object")).await,
            Err(e) => return self.reply(protocol::error(None, &format!("bad JSON: {e}"))).await,
        };
        let id = match req.get("id") {
            Some(id) if !id.is_null() => id.clone(),
            _ => return self.reply(protocol::error(None, "missing field 'id'")).await,
        };
        let method = match protocol::string(&req, "method") {
            Ok(m) => m.to_string(),
            Err(e) => return self.reply(protocol::error(Some(&id), &e)).await,
        };
        if method != "approve" && !self.seen.insert(protocol::id_key(&id)) {
            let message = format!("duplicate id {id}: ids are unique within a connection");
            return self.reply(protocol::error(Some(&id), &message)).await;
        }
        if let Err(message) = self.dispatch(&method, &id, &req).await {
            self.reply(protocol::error(Some(&id), &message)).await;
        }
    }

    async fn dispatch(&mut self, method: &str, id: &Value, req: &Value) -> Result<(), String> {
        match method {
            "hello" => self.hello(id, req).await,
            "run" => self.run(id, req),
            "shell_run" => self.shell_run(id, req),
            "probe" => self.probe(id, req),
            "skill_run" => self.skill_run(id, req),
            "approve" => self.approve(id, req),
            "cancel" => self.cancel(id, req).await,
            "status" => self.status(id).await,
            "read_file" => self.file(id, req, FileOp::Read { offset: protocol::offset(req)? }),
            "write_file" => {
                let content = protocol::string(req, "content")?.to_string();
                self.file(id, req, FileOp::Write { content })
            }
            "list_files" => self.file(id, req, FileOp::List),
            "check_path" => {
                let op = protocol::string(req, "op")?.parse()?;
                self.file(id, req, FileOp::Check(op))
            }
            "check_url" => self.check_url(id, req).await,
            "review" => self.held(id, req, Held::Review),
            "apply" => self.held(id, req, Held::Apply),
            "discard" => self.held(id, req, Held::Discard),
            other => Err(format!("unknown method '{other}'")),
        }
    }

    async fn hello(&mut self, id: &Value, req: &Value) -> Result<(), String> {
        self.human = protocol::boolean(req, "human", false)?;
        self.client = protocol::optional_string(req, "client")?.unwrap_or_default().to_string();
        tracing::info!(session = self.number, client = %self.client, human = self.human, "hello");
        let session = self.name();
        self.reply(json!({"id": id, "event": "hello", "version": crate::cli::VERSION, "session": session}))
            .await;
        Ok(())
    }

    fn run(&mut self, id: &Value, req: &Value) -> Result<(), String> {
        let words = protocol::strings(req, "argv")?;
        let spec = CallSpec {
            argv: words.iter().map(OsString::from).collect(),
            display: words.join(" "),
            subject: Subject::Argv(words),
            guard: None,
            ..self.spec(req)?
        };
        self.start(id, "run", spec, None)
    }

    fn shell_run(&mut self, id: &Value, req: &Value) -> Result<(), String> {
        let command = protocol::string(req, "command")?.to_string();
        let spec = self.spec(req)?;
        let spec = CallSpec {
            argv: ["/bin/sh", "-c", command.as_str()].iter().map(OsString::from).collect(),
            display: command.clone(),
            guard: Some(shell::check_in(self.server.engine.policy(), &command, &spec.cwd)),
            subject: Subject::Command(command),
            ..spec
        };
        self.start(id, "shell_run", spec, None)
    }

    fn probe(&mut self, id: &Value, req: &Value) -> Result<(), String> {
        let lang = probe::language(protocol::string(req, "language")?)?;
        let code = protocol::string(req, "code")?;
        probe::admissible(code)?;
        let file = probe::snippet_file(lang, self.server.next_number());
        let shown = format!("probe {}: {code}", lang.names[0]);
        let spec = CallSpec {
            argv: probe::argv(lang, code, &file),
            display: shown.clone(),
            subject: Subject::Command(shown),
            guard: Some(probe::guard(self.server.engine.policy(), lang, code, &file)),
            ..self.spec(req)?
        };
        self.start(id, "probe", spec, None)
    }

    fn skill_run(&mut self, id: &Value, req: &Value) -> Result<(), String> {
        let name = protocol::string(req, "skill")?;
        let script = protocol::string(req, "script")?;
        let args = protocol::optional_strings(req, "args")?;
        let policy = self.server.engine.policy();
        let shown = format!("skill_run {name}/{script} {}", args.join(" "));
        let (argv, guard, own) = match skills::find(policy, name, script).map_err(|e| e.to_string())? {
            Found::Skill(skill) => {
                let own = skill.policy(policy).map(|p| self.server.engine.with_policy(p));
                (skill.argv(&args), skill.guard(self.human), own)
            }
            Found::Denied(denied) => (vec![OsString::from(script)], Some(denied), None),
        };
        let subject = Subject::Argv(argv.iter().map(|a| a.to_string_lossy().into_owned()).collect());
        let spec =
            CallSpec { argv, display: shown.trim_end().to_string(), subject, guard, ..self.spec(req)? };
        self.start(id, "skill_run", spec, own)
    }

    /// What every call of this session shares: the working directory (relative to the root),
    /// the server's environment, no terminal, empty standard input, the request's timeout.
    fn spec(&self, req: &Value) -> Result<CallSpec, String> {
        let root = &self.server.engine.policy().root;
        let cwd = match protocol::optional_string(req, "cwd")? {
            Some(dir) => path::lexical(Path::new(dir), root),
            None => root.clone(),
        };
        Ok(CallSpec {
            argv: Vec::new(),
            cwd,
            env: self.server.engine.env().clone(),
            terminal: false,
            stdin: Input::Empty,
            display: String::new(),
            subject: Subject::Argv(Vec::new()),
            guard: None,
            timeout: protocol::timeout(req)?,
        })
    }

    fn start(
        &mut self,
        id: &Value,
        method: &'static str,
        spec: CallSpec,
        own: Option<Engine>,
    ) -> Result<(), String> {
        if self.server.phase() != Phase::Serving {
            return Err("the server is shutting down; no new calls".into());
        }
        let origin = Origin {
            server: self.server.clone(),
            id: id.clone(),
            human: self.human,
            out: self.out.clone(),
            approvals: self.approvals.clone(),
            calls: self.calls.clone(),
        };
        call::start(origin, method, spec, own);
        Ok(())
    }

    /// Answers the approval event of this connection's call `id`.
    fn approve(&mut self, id: &Value, req: &Value) -> Result<(), String> {
        let allow = protocol::boolean(req, "allow", false)?;
        let waiting = self.approvals.lock().ok().and_then(|mut w| w.remove(&protocol::id_key(id)));
        match waiting {
            Some(answer) => {
                let _ = answer.send(allow);
                Ok(())
            }
            None => Err(format!("no call {id} of this connection is waiting for approval")),
        }
    }

    async fn cancel(&mut self, id: &Value, req: &Value) -> Result<(), String> {
        let target = req.get("target_id").filter(|t| !t.is_null()).ok_or("missing field 'target_id'")?;
        let key = protocol::id_key(target);
        let found = self.calls.lock().ok().and_then(|c| c.get(&key).map(|r| r.stop.clone()));
        let stop = found.ok_or_else(|| format!("no running call {target} on this connection"))?;
        stop.send_replace(Some(Stop::Cancelled));
        if let Some(answer) = self.approvals.lock().ok().and_then(|mut w| w.remove(&key)) {
            let _ = answer.send(false);
        }
        self.reply(json!({"id": id, "event": "result", "cancelled": target})).await;
        Ok(())
    }

    /// This connection's running calls (never another's), each with whether it waits for the
    /// human's approval, and the server's uptime.
    async fn status(&mut self, id: &Value) -> Result<(), String> {
        let waiting: HashSet<String> =
            self.approvals.lock().map(|w| w.keys().cloned().collect()).unwrap_or_default();
        let calls: Vec<Value> = self.calls.lock().map_or_else(
            |_| Vec::new(),
            |c| {
                c.iter()
                    .map(|(key, r)| {
                        json!({
                            "id": serde_json::from_str::<Value>(key).unwrap_or(Value::Null),
                            "method": r.method,
                            "command": r.display,
                            "running_s": r.started.elapsed().as_secs_f64(),
                            "waiting_approval": waiting.contains(key),
                        })
                    })
                    .collect()
            },
        );
        let uptime = self.server.started.elapsed().as_secs();
        self.reply(json!({"id": id, "event": "status", "calls": calls, "uptime_s": uptime})).await;
        Ok(())
    }

    /// A file method: answered on a thread of its own (it may wait for the human).
    fn file(&mut self, id: &Value, req: &Value, op: FileOp) -> Result<(), String> {
        let path = protocol::string(req, "path")?.to_string();
        if self.server.phase() != Phase::Serving {
            return Err("the server is shutting down; no new calls".into());
        }
        let tool = Tool {
            server: self.server.clone(),
            session: self.name(),
            id: id.clone(),
            human: self.human,
            out: self.out.clone(),
            approvals: self.approvals.clone(),
            grants: self.grants.clone(),
        };
        tools::start(tool, op, path);
        Ok(())
    }

    /// A held-call method (`review`, `apply`, `discard`): answered on a thread of its own.
    fn held(&mut self, id: &Value, req: &Value, what: Held) -> Result<(), String> {
        let call = protocol::string(req, "call")?.to_string();
        let request = workspace::Request {
            server: self.server.clone(),
            session: self.name(),
            id: id.clone(),
            human: self.human,
            out: self.out.clone(),
        };
        workspace::start(request, what, call);
        Ok(())
    }

    async fn check_url(&mut self, id: &Value, req: &Value) -> Result<(), String> {
        let u = protocol::string(req, "url")?.to_string();
        let decision = url::check(&self.server.engine.policy().http, &u);
        self.result(id, Subject::Url(u), decision).await;
        Ok(())
    }

    /// A check's decision: recorded in the audit log, answered as a `result` event.
    async fn result(&self, id: &Value, subject: Subject, decision: Decision) {
        let policy = self.server.engine.policy();
        let record = AuditRecord::decision(self.name(), subject, &decision);
        let secrets = SecretSet::from_env(self.server.engine.env());
        if let Err(e) =
            AuditLog::open(&policy.session.audit_path).and_then(|log| log.record(&record, &secrets))
        {
            tracing::warn!("cannot write the audit log: {e}");
        }
        let mut reply = serde_json::to_value(&decision).unwrap_or_default();
        reply["id"] = id.clone();
        reply["event"] = json!("result");
        self.reply(reply).await;
    }
}
