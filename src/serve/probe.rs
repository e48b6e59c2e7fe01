//! `probe` (seed 000, "Probe"): a snippet of code run by the named interpreter under the same
//! enforcement as `shell_run`.
//!
//! Order: the language names the interpreter ([`language`]) → the snippet is checked
//! ([`guard`]: a shell language gets the whole shell guard; any other language the
//! `credential-file` rule, ShellPolicy and approval) → the call's argv ([`argv`]): `/bin/sh`
//! writes the snippet, passed as an argument, into the call's private `/tmp` with `umask 077`,
//! then `exec`s the interpreter on that file — so tracebacks name a real file, the snippet never
//! touches the roots, and the interpreter is the one the sandbox's `PATH` finds.

use std::ffi::OsString;

use crate::guard::shell;
use crate::guard::Decision;
use crate::policy::Policy;

/// The longest snippet: it travels as one argument (the kernel's `MAX_ARG_STRLEN` is 128 KiB).
pub const MAX_SNIPPET: usize = 100 * 1024;

/// A language `probe` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Language {
    /// The names a request may use.
    pub names: &'static [&'static str],
    pub interpreter: &'static str,
    /// The snippet file's extension.
    pub ext: &'static str,
    /// Shell syntax: the whole shell guard applies.
    pub shell: bool,
}

const LANGUAGES: &[Language] = &[
    Language { names: &["sh"], interpreter: "/bin/sh", ext: "sh", shell: true },
    Language { names: &["bash"], interpreter: "bash", ext: "sh", shell: true },
    Language { names: &["python", "python3", "py"], interpreter: "python3", ext: "py", shell: false },
    Language { names: &["node", "javascript", "js"], interpreter: "node", ext: "js", shell: false },
    Language { names: &["perl"], interpreter: "perl", ext: "pl", shell: false },
    Language { names: &["ruby"], interpreter: "ruby", ext: "rb", shell: false },
];

/// Writes the snippet (`$2`) to the file (`$1`) and runs the interpreter (`$0`) on it.
const WRAPPER: &str = "umask 077 && printf '%s' \"$2\" > \"$1\" && exec \"$0\" \"$1\"";

/// The language called `name`.
pub fn language(name: &str) -> Result<Language, String> {
    LANGUAGES.iter().find(|l| l.names.contains(&name)).copied().ok_or_else(|| {
        let known: Vec<&str> = LANGUAGES.iter().flat_map(|l| l.names.iter().copied()).collect();
        format!("unknown language '{name}' (expected one of: {})", known.join(", "))
    })
}

/// A snippet that can be passed on: not too long, no NUL byte.
pub fn admissible(code: &str) -> Result<(), String> {
    if code.len() > MAX_SNIPPET {
        return Err(format!("field 'code' is longer than {MAX_SNIPPET} bytes"));
    }
    if code.contains('\0') {
        return Err("field 'code' must not contain a NUL character".into());
    }
    Ok(())
}

/// Where the snippet of the call numbered `n` is written (the call's private `/tmp`).
pub fn snippet_file(lang: Language, n: u64) -> String {
    format!("/tmp/hullward-probe-{n}.{}", lang.ext)
}

/// The interpreter's command line, as approvals and ShellPolicy see it.
pub fn invocation(lang: Language, file: &str) -> String {
    format!("{} {file}", lang.interpreter)
}

/// The guard's decision on the snippet.
pub fn guard(policy: &Policy, lang: Language, code: &str, file: &str) -> Decision {
    if lang.shell {
        shell::check(policy, code)
    } else {
        shell::check_snippet(policy, &invocation(lang, file), code)
    }
}

/// The call's argv: the wrapper, the interpreter, the file, the snippet.
pub fn argv(lang: Language, code: &str, file: &str) -> Vec<OsString> {
    ["/bin/sh", "-c", WRAPPER, lang.interpreter, file, code].iter().map(OsString::from).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_are_found_by_any_of_their_names() {
        assert_eq!(language("python").unwrap().interpreter, "python3");
        assert_eq!(language("js").unwrap().ext, "js");
        assert!(language("sh").unwrap().shell);
        assert!(language("cobol").unwrap_err().contains("unknown language 'cobol'"));
        assert!(admissible(&"x".repeat(MAX_SNIPPET + 1)).is_err());
        assert!(admissible("a\0b").is_err());
    }
}
