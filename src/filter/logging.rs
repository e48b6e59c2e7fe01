//! hullward's own logs: `tracing` events, formatted one per line on stderr, each masked before it
//! is written.
//!
//! [`init`] is called once at the start of `main`. It reads the level from `HULLWARD_LOG` (`off`,
//! `error`, `warn` — the default —, `info`, `debug`, `trace`) and installs a `fmt` subscriber whose
//! writer is a [`MaskingMakeWriter`]: every formatted event is collected whole, the secret values
//! of hullward's own environment are masked ([`SecretSet::from_env`]) and the log patterns are
//! applied ([`logmask`]), and only then is it written, with one `write_all`. No sink ever sees an
//! unmasked event.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::str::FromStr;
use std::sync::OnceLock;

use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::fmt::MakeWriter;

use super::logmask;
use super::secrets::SecretSet;

/// The environment variable that sets the log level.
pub const LOG_ENV: &str = "HULLWARD_LOG";

/// Installs the masked stderr logger. Calling it again (or after another subscriber was set) does
/// nothing.
pub fn init() {
    let setting = std::env::var(LOG_ENV).ok();
    let (level, bad) = level(setting.as_deref());
    let writer = MaskingMakeWriter::from_env(io::stderr);
    let installed = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_target(false)
        .without_time()
        .with_writer(writer)
        .try_init()
        .is_ok();
    if let (true, Some(value)) = (installed, bad) {
        tracing::warn!(
            "{LOG_ENV}='{value}' is not a log level (off, error, warn, info, debug, trace); using warn"
        );
    }
}

/// The level named by `value` (default `warn`); the value back when it names none.
fn level(value: Option<&str>) -> (LevelFilter, Option<&str>) {
    match value.map(str::trim).filter(|v| !v.is_empty()) {
        None => (LevelFilter::WARN, None),
        Some(v) => match LevelFilter::from_str(v) {
            Ok(l) => (l, None),
            Err(_) => (LevelFilter::WARN, Some(v)),
        },
    }
}

/// Makes one [`MaskedEvent`] writer per event, in front of an inner writer (stderr in `init`).
#[derive(Debug)]
pub struct MaskingMakeWriter<M> {
    secrets: OnceLock<SecretSet>,
    inner: M,
}

impl<M> MaskingMakeWriter<M> {
    /// Masks exactly `secrets`.
    pub fn new(secrets: SecretSet, inner: M) -> MaskingMakeWriter<M> {
        MaskingMakeWriter { secrets: OnceLock::from(secrets), inner }
    }

    /// Masks the secrets of this process's environment, read when the first event is written
    /// (most runs log nothing, and building the set is not free).
    pub fn from_env(inner: M) -> MaskingMakeWriter<M> {
        MaskingMakeWriter { secrets: OnceLock::new(), inner }
    }

    fn secrets(&self) -> &SecretSet {
        self.secrets.get_or_init(|| {
            let env: BTreeMap<String, String> = std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
                .collect();
            SecretSet::from_env(&env)
        })
    }
}

impl<'a, M: MakeWriter<'a>> MakeWriter<'a> for MaskingMakeWriter<M> {
    type Writer = MaskedEvent<'a, M::Writer>;

    fn make_writer(&'a self) -> Self::Writer {
        MaskedEvent { secrets: self.secrets(), inner: self.inner.make_writer(), buf: Vec::new() }
    }
}

/// Collects one formatted event and writes it masked when the event is done (on drop).
pub struct MaskedEvent<'a, W: Write> {
    secrets: &'a SecretSet,
    inner: W,
    buf: Vec<u8>,
}

impl<W: Write> Write for MaskedEvent<'_, W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    /// Nothing is written before the whole event is there.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<W: Write> Drop for MaskedEvent<'_, W> {
    fn drop(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        let masked = self.secrets.mask(&self.buf);
        let redacted = logmask::redact(&masked);
        // A log line that cannot be written has nowhere else to go.
        let _ = self.inner.write_all(&redacted).and_then(|()| self.inner.flush());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl Write for Sink {
        fn write(&mut self, data: &[u8]) -> io::Result<usize> {
            self.0.lock().map_err(|_| io::Error::other("poisoned"))?.extend_from_slice(data);
            Ok(data.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn events_are_masked_before_they_reach_the_sink() {
        let sink = Sink::default();
        let secrets = SecretSet::from_values(["planted-env-secret-42"]);
        let out = sink.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(LevelFilter::INFO)
            .without_time()
            .with_writer(MaskingMakeWriter::new(secrets, move || out.clone()))
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(
                header = "Bearer eyJhbGciOi.payload",
                "provider said token=abc123 and planted-env-secret-42"
            );
            tracing::info!("key sk-ant-api03-0123456789abcdefghij");
            tracing::debug!("not shown at info");
        });
        let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        for leaked in ["eyJhbGciOi", "abc123", "planted-env-secret-42", "sk-ant", "not shown"] {
            assert!(!text.contains(leaked), "{leaked} in {text}");
        }
        assert!(text.contains("<secret-hidden>") && text.contains("[REDACTED]"), "{text}");
        assert_eq!(text.lines().count(), 2, "{text}");
    }

    #[test]
    fn levels() {
        assert_eq!(level(None), (LevelFilter::WARN, None));
        assert_eq!(level(Some("debug")), (LevelFilter::DEBUG, None));
        assert_eq!(level(Some("OFF")), (LevelFilter::OFF, None));
        assert_eq!(level(Some("loud")), (LevelFilter::WARN, Some("loud")));
    }
}
