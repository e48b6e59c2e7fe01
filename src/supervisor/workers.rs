//! Threads kept for the next job of the same kind.
//!
//! A served call used to start three threads and end them again: the call's own (which runs the
//! engine) and its two output pumps. Starting one takes ≈ 150 µs here before it runs (its stack
//! mapped, guard page, signal stack, TLS), and the call's own start is on the path the client
//! waits for; ending one unmaps its stack again. A [`Pool`] hands a job to a thread of its kind
//! that is idle, or starts one when none is: no job ever waits for another to end. A thread that
//! finished a job waits [`IDLE_FOR`] for the next one, and at most [`MAX_IDLE`] of a pool wait;
//! the others end, so a burst of concurrent calls leaves no crowd of threads behind.
//!
//! A job must leave its thread as it found it (signal mask, namespaces, working directory: the
//! engine changes none of them on its own thread; the child's setup happens after its `clone`).
//! A job that panics ends its thread, as a thread of its own would have ended.
//!
//! Order: one `static` [`Pool`] per kind of thread (its name) → [`Pool::run`] for each job.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::Mutex;
use std::time::Duration;

/// How long a thread that finished its job waits for the next one.
/// (An agent's calls come seconds apart, now and then minutes.)
pub const IDLE_FOR: Duration = Duration::from_secs(120);

/// How many threads of one pool may wait at once.
pub const MAX_IDLE: usize = 4;

type Job = Box<dyn FnOnce() + Send>;

/// The idle threads of one kind, each waiting on a channel of its own.
pub struct Pool {
    name: &'static str,
    idle_for: Duration,
    max_idle: usize,
    idle: Mutex<Vec<(u64, Sender<Job>)>>,
    next: AtomicU64,
}

impl Pool {
    /// A pool whose threads are named `name` (as `ps` and `perf` show them).
    pub const fn new(name: &'static str) -> Pool {
        Pool::with_limits(name, IDLE_FOR, MAX_IDLE)
    }

    pub const fn with_limits(name: &'static str, idle_for: Duration, max_idle: usize) -> Pool {
        Pool { name, idle_for, max_idle, idle: Mutex::new(Vec::new()), next: AtomicU64::new(0) }
    }

    /// Runs `job` on an idle thread of this pool, or on a new one. Errors only when a new thread
    /// was needed and the system refused it.
    pub fn run(&'static self, job: impl FnOnce() + Send + 'static) -> io::Result<()> {
        let job: Job = Box::new(job);
        // A taken sender's thread cannot leave: it finds itself gone from the list (under the
        // same lock) and waits for the job instead, so this send does not fail.
        let job = match self.take_idle() {
            Some(worker) => match worker.send(job) {
                Ok(()) => return Ok(()),
                Err(returned) => returned.0,
            },
            None => job,
        };
        let (tx, rx) = channel();
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        std::thread::Builder::new().name(self.name.into()).spawn(move || self.work(id, job, tx, rx))?;
        Ok(())
    }

    fn take_idle(&self) -> Option<Sender<Job>> {
        self.idle.lock().ok()?.pop().map(|(_, tx)| tx)
    }

    /// The thread's life: the first job, then the next ones handed to it, until it has waited
    /// [`IDLE_FOR`] for nothing or the pool has enough idle threads.
    fn work(&self, id: u64, first: Job, tx: Sender<Job>, rx: Receiver<Job>) {
        first();
        loop {
            match self.idle.lock() {
                Ok(mut idle) if idle.len() < self.max_idle => idle.push((id, tx.clone())),
                _ => return,
            }
            let job = match rx.recv_timeout(self.idle_for) {
                Ok(job) => job,
                Err(RecvTimeoutError::Timeout) => {
                    let still_listed = self.idle.lock().map(|mut idle| {
                        let listed = idle.iter().position(|(i, _)| *i == id);
                        listed.map(|at| idle.swap_remove(at)).is_some()
                    });
                    match still_listed {
                        Ok(false) => match rx.recv() {
                            // Taken just as the wait ended: its job is on the way.
                            Ok(job) => job,
                            Err(_) => return,
                        },
                        _ => return,
                    }
                }
                Err(RecvTimeoutError::Disconnected) => return,
            };
            job();
        }
    }

    /// Threads of this pool waiting for a job now.
    #[cfg(test)]
    fn idle_count(&self) -> usize {
        self.idle.lock().map(|i| i.len()).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::sync_channel;
    use std::sync::{Arc, Barrier};
    use std::thread::ThreadId;
    use std::time::Instant;

    fn thread_of(pool: &'static Pool) -> ThreadId {
        let (tx, rx) = sync_channel(1);
        pool.run(move || tx.send(std::thread::current().id()).unwrap()).unwrap();
        rx.recv().unwrap()
    }

    /// Waits until `pool` has `n` idle threads (a job's thread lists itself after the job).
    fn until_idle(pool: &Pool, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while pool.idle_count() != n {
            assert!(Instant::now() < deadline, "the pool has {} idle threads, not {n}", pool.idle_count());
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn a_finished_thread_takes_the_next_job_and_keeps_its_name() {
        static POOL: Pool = Pool::new("hw-test-reuse");
        let first = thread_of(&POOL);
        until_idle(&POOL, 1);
        let (tx, rx) = sync_channel(1);
        POOL.run(move || {
            tx.send((std::thread::current().id(), std::thread::current().name().map(String::from))).unwrap()
        })
        .unwrap();
        let (second, name) = rx.recv().unwrap();
        assert_eq!(first, second);
        assert_eq!(name.as_deref(), Some("hw-test-reuse"));
    }

    #[test]
    fn concurrent_jobs_never_wait_for_each_other_and_the_idle_are_bounded() {
        static POOL: Pool = Pool::with_limits("hw-test-burst", IDLE_FOR, 2);
        let n = 6;
        // Every job waits for all the others: this ends only if each runs on a thread of its own.
        let all = Arc::new(Barrier::new(n + 1));
        let (tx, rx) = channel();
        for _ in 0..n {
            let (all, tx) = (all.clone(), tx.clone());
            POOL.run(move || {
                all.wait();
                tx.send(std::thread::current().id()).unwrap();
            })
            .unwrap();
        }
        all.wait();
        let mut threads: Vec<ThreadId> = (0..n).map(|_| rx.recv().unwrap()).collect();
        threads.sort_by_key(|t| format!("{t:?}"));
        threads.dedup();
        assert_eq!(threads.len(), n);
        until_idle(&POOL, 2);
    }

    #[test]
    fn an_idle_thread_ends_after_its_wait_and_the_next_job_gets_a_new_one() {
        static POOL: Pool = Pool::with_limits("hw-test-expire", Duration::from_millis(20), 4);
        let first = thread_of(&POOL);
        until_idle(&POOL, 1);
        until_idle(&POOL, 0);
        assert_ne!(thread_of(&POOL), first);
    }
}
