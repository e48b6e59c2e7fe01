//! The eight MCP tools: their names (the serve methods they become), the descriptions a model
//! reads to choose one, their input schemas and the one output schema of every result.
//!
//! The input schemas describe exactly the fields of the serve request of the same name
//! (INTERFACE.md, "The supervisor protocol"): a tool's arguments are passed on as that request's
//! fields, and the session answers a missing or mistyped field with its own error.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{json, Value};

/// One tool of the catalogue.
struct Spec {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    /// It changes files or runs programs: denied without a human unless the unattended policy
    /// allows it (serve's rule `unattended`).
    mutating: bool,
    properties: fn() -> Value,
    required: &'static [&'static str],
}

const CWD: &str = "Working directory, relative to the sandbox root (default: the root).";
const TIMEOUT: &str =
    "Kill the whole process tree after this long, e.g. \"30s\" or \"5m\" (default: the policy's timeout).";

const CATALOGUE: &[Spec] = &[
    Spec {
        name: "shell_run",
        title: "Run a shell command in the sandbox",
        description: "Run a shell command string with /bin/sh -c inside hullward's kernel sandbox \
            (Landlock confined to the sandbox root, no network unless the policy allows hosts, \
            scrubbed environment, timeout). The command is first checked by the shell guard \
            (ShellPolicy allow/deny, no $(...) or `...` substitution, no absolute paths outside \
            the sandbox, no sudo or catastrophic deletes); a denied command does not run and the \
            result is an error starting with [DENIED] that names the rule. Output is stdout and \
            stderr with secret values replaced by <secret-hidden>; structuredContent.exit_code is \
            the command's exit status (124 timeout, 126 denied).",
        mutating: true,
        properties: || {
            json!({
                "command": {"type": "string", "description": "The command string, e.g. \"cargo test 2>&1 | tail -20\"."},
                "cwd": {"type": "string", "description": CWD},
                "timeout": {"type": "string", "description": TIMEOUT},
            })
        },
        required: &["command"],
    },
    Spec {
        name: "run",
        title: "Run a program in the sandbox",
        description: "Run one program with its arguments (no shell: no pipes, globs or \
            redirections) inside hullward's kernel sandbox: the filesystem outside the sandbox \
            root is invisible or read-only, deny rules hide secrets, the network is cut unless \
            the policy allows hosts, the whole process tree is killed at the timeout. Output is \
            the program's stdout and stderr with secret values masked; \
            structuredContent.exit_code is its exit status (124 timeout, 126 denied before it \
            ran, 127 not found).",
        mutating: true,
        properties: || {
            json!({
                "argv": {"type": "array", "items": {"type": "string"}, "minItems": 1,
                         "description": "The program and its arguments, e.g. [\"cargo\", \"test\", \"--quiet\"]."},
                "cwd": {"type": "string", "description": CWD},
                "timeout": {"type": "string", "description": TIMEOUT},
            })
        },
        required: &["argv"],
    },
    Spec {
        name: "probe",
        title: "Run a code snippet in the sandbox",
        description: "Run a short snippet of code with an interpreter (sh, bash, python, node, \
            ...) under the same kernel sandbox as run. Shell snippets pass the whole shell guard; \
            other languages are checked against the credential-file rule and the ShellPolicy. \
            Output is the snippet's stdout and stderr with secret values masked.",
        mutating: true,
        properties: || {
            json!({
                "language": {"type": "string", "description": "The interpreter: sh, bash, python, node, ..."},
                "code": {"type": "string", "description": "The snippet's source code."},
                "timeout": {"type": "string", "description": TIMEOUT},
            })
        },
        required: &["language", "code"],
    },
    Spec {
        name: "read_file",
        title: "Read a file inside the sandbox",
        description: "Read a text file inside the sandbox roots after the path guard (deny rules, \
            credential files, the sandbox boundary); no symlink or .. can leave the roots. Long \
            files are returned in pieces of at most ReadFileSizeLimit bytes, ending with a notice \
            that says which offset to read on from. A denied path is an error starting with [DENIED].",
        mutating: false,
        properties: || {
            json!({
                "path": {"type": "string", "description": "The file, relative to the sandbox root or absolute inside it."},
                "offset": {"type": "integer", "minimum": 0, "description": "Start reading at this byte offset (default 0), as the truncation notice says."},
            })
        },
        required: &["path"],
    },
    Spec {
        name: "write_file",
        title: "Write a file inside the sandbox",
        description: "Write (create or replace) a text file inside the sandbox roots, atomically, \
            after the path guard (deny rules, then the Write globs, then the ChangeEnvelope). A \
            path outside what the policy lets the agent write is an error starting with [DENIED].",
        mutating: true,
        properties: || {
            json!({
                "path": {"type": "string", "description": "The file, relative to the sandbox root or absolute inside it."},
                "content": {"type": "string", "description": "The file's whole new content."},
            })
        },
        required: &["path", "content"],
    },
    Spec {
        name: "list_files",
        title: "List a directory inside the sandbox",
        description: "List the entries of one directory inside the sandbox roots, one per line \
            as TYPE, SIZE in bytes, NAME, after the path guard. A file a deny rule protects may \
            be listed by name, but read_file refuses its content.",
        mutating: false,
        properties: || {
            json!({
                "path": {"type": "string", "description": "The directory, relative to the sandbox root (\".\" for the root)."},
            })
        },
        required: &["path"],
    },
    Spec {
        name: "check_path",
        title: "Would hullward allow this file operation?",
        description: "Decide a file operation without doing it, as `hullward check path`: \
            returns allowed, or the [DENIED] reason with its rule (a denial is an error result). \
            Use it before planning work on a path you are not sure about.",
        mutating: false,
        properties: || {
            json!({
                "op": {"type": "string", "enum": ["read", "write", "list", "delete", "exec"], "description": "The operation."},
                "path": {"type": "string", "description": "The path, relative to the sandbox root or absolute."},
            })
        },
        required: &["op", "path"],
    },
    Spec {
        name: "check_url",
        title: "Would hullward allow this outbound request?",
        description: "Decide an outbound HTTP(S) request without sending it, as `hullward check \
            url`: the host allowlist (HttpAllowedHosts) and the private-range rule (loopback, \
            link-local, cloud metadata). Returns allowed, or the [DENIED] reason with its rule (a \
            denial is an error result).",
        mutating: false,
        properties: || json!({"url": {"type": "string", "description": "The full URL, e.g. https://api.github.com/repos."}}),
        required: &["url"],
    },
];

/// The tool named `name`, if hullward has one: its serve method name.
pub fn method(name: &str) -> Option<&'static str> {
    CATALOGUE.iter().find(|s| s.name == name).map(|s| s.name)
}

/// Every tool, as `tools/list` returns it.
pub fn all() -> Vec<Tool> {
    let output = Arc::new(object(output_schema()));
    CATALOGUE
        .iter()
        .map(|spec| {
            let input = json!({
                "type": "object",
                "properties": (spec.properties)(),
                "required": spec.required,
                "additionalProperties": false,
            });
            let annotations = ToolAnnotations::with_title(spec.title)
                .read_only(!spec.mutating)
                .destructive(spec.mutating)
                .open_world(false);
            Tool::new(spec.name, spec.description, object(input))
                .with_title(spec.title)
                .with_raw_output_schema(output.clone())
                .with_annotations(annotations)
        })
        .collect()
}

/// The `structuredContent` of every result (see [`super::reply`]).
fn output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "exit_code": {"type": "integer", "description": "The program's exit status; for checks 0 allowed, 1 denied or needs approval; 126 denied before it ran."},
            "denied": {
                "description": "null, or the rule that denied the call and its [DENIED] message.",
                "anyOf": [
                    {"type": "null"},
                    {"type": "object",
                     "properties": {"rule": {"type": "string"}, "message": {"type": "string"}},
                     "required": ["rule", "message"]}
                ]
            },
            "reason": {"type": "string", "description": "How a call ended: exited, signal, timeout, cancelled, denied, ..."},
            "verdict": {"type": "string", "enum": ["allow", "deny", "ask"], "description": "A check's decision."},
            "rule": {"type": "string", "description": "The rule that decided a check."},
        },
        "required": ["exit_code", "denied"],
    })
}

fn object(v: Value) -> JsonObject {
    match v {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_names_its_required_fields_among_its_properties() {
        let tools = all();
        assert_eq!(tools.len(), 8);
        for tool in &tools {
            let props = tool.input_schema["properties"].as_object().unwrap();
            for r in tool.input_schema["required"].as_array().unwrap() {
                assert!(props.contains_key(r.as_str().unwrap()), "{}: {r}", tool.name);
            }
            assert_eq!(method(&tool.name), Some(&*tool.name));
        }
        assert_eq!(method("skill_run"), None);
    }
}
