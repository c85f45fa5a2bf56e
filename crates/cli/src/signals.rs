//! The stop signals a long-running subcommand obeys: SIGTERM (what an
//! orchestrator sends) and SIGINT (Ctrl-C). Both are listened to from the moment
//! [`Stop`] is made, so a signal that comes at any later moment is seen, never
//! lost between two waits nor taken by the default action (which ends the
//! process on the spot).

use tokio::signal::unix::{Signal, SignalKind, signal};

pub struct Stop {
    term: Signal,
    int: Signal,
}

impl Stop {
    /// Installs both handlers (call it first thing, inside the runtime).
    pub fn new() -> Self {
        Self {
            term: signal(SignalKind::terminate()).expect("SIGTERM handler"),
            int: signal(SignalKind::interrupt()).expect("SIGINT handler"),
        }
    }

    /// Waits for the next SIGTERM or SIGINT (cancel-safe: a signal that comes
    /// while nobody waits is kept for the next call).
    pub async fn recv(&mut self) {
        tokio::select! {
            _ = self.term.recv() => {}
            _ = self.int.recv() => {}
        }
    }
}
