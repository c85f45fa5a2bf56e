//! Wake-ups (seed 002's "agent enqueued" event): a new ticket wakes the workers
//! serving its pool at once instead of at their next poll (which stays as the
//! safety net), and so does a ticket put back in the queue by a reclaim or by a
//! match that was not played, and a backfill opened with a seat to fill. On
//! Redis, `enqueue.lua` (and `reclaim.lua`, `unwind_entry.lua`) publishes the
//! pool's name on [`crate::keys::WAKE_CHANNEL`] only when the pool is *armed*:
//! every claim arms it (`claim.lua`), the first ticket after a claim disarms it
//! and publishes, so a busy pool costs one message per claim, not one per
//! ticket; `backfill_open.lua` publishes whenever a seat is open. A process's
//! subscription to the channel (made when its first worker asks, resubscribed
//! when lost, waking every worker then) hands the names to [`Wakes`]. In memory,
//! enqueueing and opening a backfill wake directly.
//!
//! A wake-up is a hint: one lost (a subscription being restored, a receiver that
//! lagged) costs at most one poll interval, never a ticket.

use tokio::sync::broadcast;

/// How many wake-ups a slow receiver may fall behind before it sees "lagged"
/// (which it takes as a wake-up of every pool).
const BUFFER: usize = 1024;

/// The wake-ups of one process, fanned out to its workers.
#[derive(Debug)]
pub struct Wakes {
    tx: broadcast::Sender<String>,
}

impl Default for Wakes {
    fn default() -> Self {
        Self {
            tx: broadcast::channel(BUFFER).0,
        }
    }
}

impl Wakes {
    /// Wakes whoever serves `pool` (by name) in this process.
    pub fn wake(&self, pool: &str) {
        if self.tx.receiver_count() > 0 {
            let _ = self.tx.send(pool.to_string());
        }
    }

    /// Wakes every worker of this process (wake-ups may have been missed).
    pub fn wake_all(&self) {
        if self.tx.receiver_count() > 0 {
            let _ = self.tx.send(String::new());
        }
    }

    pub fn subscribe(&self) -> WakeUps {
        WakeUps {
            rx: self.tx.subscribe(),
        }
    }
}

/// One receiver of wake-ups.
#[derive(Debug)]
pub struct WakeUps {
    rx: broadcast::Receiver<String>,
}

/// What woke a receiver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wake {
    /// A new ticket in the pool of this name.
    Pool(String),
    /// Wake-ups were missed: any pool may have new tickets.
    Any,
}

impl WakeUps {
    /// The next wake-up; `None` once the store is gone.
    pub async fn next(&mut self) -> Option<Wake> {
        match self.rx.recv().await {
            Ok(pool) if pool.is_empty() => Some(Wake::Any),
            Ok(pool) => Some(Wake::Pool(pool)),
            Err(broadcast::error::RecvError::Lagged(_)) => Some(Wake::Any),
            Err(broadcast::error::RecvError::Closed) => None,
        }
    }
}
