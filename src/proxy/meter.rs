//! Accounting: the proxy-wide counters behind [`ProxyStats`], the byte budget of the call, and each
//! connection's [`Meter`] — its bytes in both directions, the status sent to the client, and the
//! idle clock that ends a connection on which nothing moves.

use std::sync::atomic::{AtomicU16, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use tokio::time::Instant;

use super::ProxyStats;

/// Proxy-wide counters, shared by every connection task.
#[derive(Debug, Default)]
pub struct Counters {
    pub connections: AtomicU64,
    pub allowed: AtomicU64,
    pub denied: AtomicU64,
    pub rejected: AtomicU64,
    pub failed: AtomicU64,
    pub events_dropped: AtomicU64,
    bytes_up: AtomicU64,
    bytes_down: AtomicU64,
    /// Up plus down, for the budget.
    bytes_total: AtomicU64,
}

impl Counters {
    pub fn snapshot(&self) -> ProxyStats {
        ProxyStats {
            connections: self.connections.load(Relaxed),
            allowed: self.allowed.load(Relaxed),
            denied: self.denied.load(Relaxed),
            rejected: self.rejected.load(Relaxed),
            failed: self.failed.load(Relaxed),
            bytes_up: self.bytes_up.load(Relaxed),
            bytes_down: self.bytes_down.load(Relaxed),
            events_dropped: self.events_dropped.load(Relaxed),
        }
    }

    pub fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Relaxed);
    }

    /// True when the call's byte budget is spent.
    pub fn budget_spent(&self, budget: u64) -> bool {
        self.bytes_total.load(Relaxed) >= budget
    }
}

/// Which way bytes flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// From the child to the upstream.
    Up,
    /// From the upstream to the child.
    Down,
}

/// The byte budget of the call is used up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetSpent(pub u64);

/// One connection's accounting.
#[derive(Debug)]
pub struct Meter<'a> {
    counters: &'a Counters,
    budget: u64,
    up: AtomicU64,
    down: AtomicU64,
    status: AtomicU16,
    origin: Instant,
    /// Milliseconds after `origin` when a byte last moved.
    last_ms: AtomicU64,
}

impl<'a> Meter<'a> {
    pub fn new(counters: &'a Counters, budget: u64) -> Meter<'a> {
        Meter {
            counters,
            budget,
            up: AtomicU64::new(0),
            down: AtomicU64::new(0),
            status: AtomicU16::new(0),
            origin: Instant::now(),
            last_ms: AtomicU64::new(0),
        }
    }

    /// Counts `n` bytes about to be sent on; refuses them when they would exceed the budget.
    pub fn record(&self, dir: Direction, n: usize) -> Result<(), BudgetSpent> {
        let n = n as u64;
        let (mine, total) = match dir {
            Direction::Up => (&self.up, &self.counters.bytes_up),
            Direction::Down => (&self.down, &self.counters.bytes_down),
        };
        if self.counters.bytes_total.fetch_add(n, Relaxed).saturating_add(n) > self.budget {
            return Err(BudgetSpent(self.budget));
        }
        mine.fetch_add(n, Relaxed);
        total.fetch_add(n, Relaxed);
        self.last_ms.store(self.origin.elapsed().as_millis() as u64, Relaxed);
        Ok(())
    }

    pub fn bytes(&self) -> (u64, u64) {
        (self.up.load(Relaxed), self.down.load(Relaxed))
    }

    /// Notes the status line the client has been sent.
    pub fn set_status(&self, status: u16) {
        self.status.store(status, Relaxed);
    }

    /// The status the client has been sent, 0 while it has been sent nothing.
    pub fn status(&self) -> u16 {
        self.status.load(Relaxed)
    }

    pub fn elapsed(&self) -> Duration {
        self.origin.elapsed()
    }

    /// Completes once no byte has moved for `limit`.
    pub async fn idle(&self, limit: Duration) {
        loop {
            let deadline = self.origin + Duration::from_millis(self.last_ms.load(Relaxed)) + limit;
            if Instant::now() >= deadline {
                return;
            }
            tokio::time::sleep_until(deadline).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_shared_by_every_connection() {
        let counters = Counters::default();
        let a = Meter::new(&counters, 100);
        let b = Meter::new(&counters, 100);
        assert_eq!(a.record(Direction::Up, 60), Ok(()));
        assert_eq!(b.record(Direction::Down, 40), Ok(()));
        assert_eq!(b.record(Direction::Down, 1), Err(BudgetSpent(100)));
        assert!(counters.budget_spent(100));
        assert_eq!((a.bytes(), b.bytes()), ((60, 0), (0, 40)));
        let s = counters.snapshot();
        assert_eq!((s.bytes_up, s.bytes_down), (60, 40));
    }

    #[tokio::test]
    async fn idle_waits_for_quiet() {
        let counters = Counters::default();
        let m = Meter::new(&counters, u64::MAX);
        tokio::time::sleep(Duration::from_millis(30)).await;
        m.record(Direction::Up, 1).unwrap();
        let start = Instant::now();
        m.idle(Duration::from_millis(50)).await;
        assert!(start.elapsed() >= Duration::from_millis(45), "{:?}", start.elapsed());
    }
}
