//! `hullward filter`: standard input to standard output through the output filter, exactly as a
//! sandboxed child's output would be filtered (Decision 13: the secrets come from this process's
//! own environment, roots and home).
//!
//! Reads are large and placed for a fast copy ([`ReadBuf`]; a pipe on stdin is grown as the pumps
//! grow theirs, [`PipeReader`]) and written out as soon as they are filtered. A closed stdout
//! (`hullward filter | head`) ends the copy quietly with status 0, as the reader asked for no more;
//! any other read or write error is hullward's failure (125), naming the stream.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsFd;

use super::CommonArgs;
use crate::error::Error;
use crate::filter::{OutputFilter, SecretSet};
use crate::supervisor::pump::{PipeReader, ReadBuf, READ_SIZE};

pub fn run(common: &CommonArgs) -> Result<u8, Error> {
    let policy = common.policy()?;
    let env: BTreeMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    let secrets = SecretSet::discover(&policy, &env);
    tracing::debug!(secrets = secrets.len(), "filter: secrets discovered");
    let mut filter = OutputFilter::new(&secrets, &policy);
    // Unbuffered handles on fds 0 and 1 (duplicates): the filter does its own batching.
    let mut input = PipeReader::new(dup(&io::stdin(), "stdin")?);
    let mut output = File::from(dup(&io::stdout(), "stdout")?);
    match copy(&mut filter, &mut input, &mut output) {
        Ok(()) => {}
        Err(Failure::Write(e)) if e.kind() == io::ErrorKind::BrokenPipe => {}
        Err(Failure::Read(e)) => return Err(Error::Internal(format!("filter: reading stdin: {e}"))),
        Err(Failure::Write(e)) => return Err(Error::Internal(format!("filter: writing stdout: {e}"))),
    }
    let stats = filter.stats();
    tracing::info!(
        secrets_masked = stats.secrets_masked,
        bytes_masked = stats.bytes_masked,
        diff_bodies_hidden = stats.diff_bodies_hidden,
        "filter: done"
    );
    Ok(0)
}

enum Failure {
    Read(io::Error),
    Write(io::Error),
}

fn copy(filter: &mut OutputFilter, input: &mut PipeReader, output: &mut impl Write) -> Result<(), Failure> {
    let mut buf = ReadBuf::new();
    let mut out = Vec::with_capacity(READ_SIZE + 4096);
    loop {
        let read = match input.read_into(&mut buf) {
            Ok(read) => read,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Failure::Read(e)),
        };
        let n = read.len();
        if n == 0 {
            filter.finish(&mut out);
        } else {
            filter.push(read, &mut out);
        }
        output.write_all(&out).map_err(Failure::Write)?;
        out.clear();
        if n == 0 {
            return output.flush().map_err(Failure::Write);
        }
    }
}

fn dup(fd: &impl AsFd, name: &str) -> Result<std::os::fd::OwnedFd, Error> {
    fd.as_fd().try_clone_to_owned().map_err(|e| Error::Internal(format!("filter: {name}: {e}")))
}
