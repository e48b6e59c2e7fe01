//! The child's environment: scrubbed to `Sandbox.Env`, plus the named credentials for this call.
//!
//! Everything not listed is dropped — a host `GITHUB_TOKEN` never reaches the child unless the
//! policy names it. `Sandbox.Credentials` are looked up in the OS keychain (service `hullward`,
//! account = the variable name; on Linux the kernel keyring), then in hullward's own environment;
//! their values are returned separately so the output filter can mask them even when they did not
//! come from the environment.

use std::collections::BTreeMap;

/// The environment for one call.
#[derive(Debug, Clone, Default)]
pub struct ChildEnv {
    pub vars: Vec<(String, String)>,
    /// Values of forwarded credentials (to be masked in output).
    pub credential_values: Vec<String>,
    /// Credentials that were found nowhere.
    pub missing_credentials: Vec<String>,
}

/// Where a credential was found.
fn lookup_credential(name: &str, host: &BTreeMap<String, String>) -> Option<String> {
    let from_keyring = keyring::Entry::new("hullward", name).and_then(|e| e.get_password()).ok();
    from_keyring.filter(|v| !v.is_empty()).or_else(|| host.get(name).filter(|v| !v.is_empty()).cloned())
}

/// Builds the environment from the pass-through list, the credentials and `extra` (proxy
/// variables), later entries replacing earlier ones of the same name.
pub fn build(
    pass: &[String],
    credentials: &[String],
    host: &BTreeMap<String, String>,
    extra: &[(String, String)],
) -> ChildEnv {
    let mut out = ChildEnv::default();
    let set = |k: &str, v: String, vars: &mut Vec<(String, String)>| {
        vars.retain(|(name, _)| name != k);
        vars.push((k.to_string(), v));
    };
    for name in pass {
        if let Some(v) = host.get(name) {
            set(name, v.clone(), &mut out.vars);
        }
    }
    for name in credentials {
        match lookup_credential(name, host) {
            Some(v) => {
                out.credential_values.push(v.clone());
                set(name, v, &mut out.vars);
            }
            None => out.missing_credentials.push(name.clone()),
        }
    }
    for (k, v) in extra {
        set(k, v.clone(), &mut out.vars);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_listed_variables_and_credentials_pass() {
        let host: BTreeMap<String, String> = [
            ("PATH", "/usr/bin"),
            ("GITHUB_TOKEN", "ghp_should_not_pass"),
            ("HULLWARD_TEST_CRED_ENV_ONLY", "sk-test-value-123456"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let env = build(
            &["PATH".into(), "LANG".into()],
            &["HULLWARD_TEST_CRED_ENV_ONLY".into(), "HULLWARD_TEST_CRED_NOWHERE".into()],
            &host,
            &[("HTTP_PROXY".into(), "http://127.0.0.1:3128".into())],
        );
        let names: Vec<&str> = env.vars.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["PATH", "HULLWARD_TEST_CRED_ENV_ONLY", "HTTP_PROXY"]);
        assert_eq!(env.credential_values, ["sk-test-value-123456"]);
        assert_eq!(env.missing_credentials, ["HULLWARD_TEST_CRED_NOWHERE"]);
    }
}
