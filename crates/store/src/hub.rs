//! Local delivery of player events: each process keeps the senders of the players
//! connected to it, and whatever receives an event (the memory store directly, the
//! Redis store from Pub/Sub) hands it to the hub.

use mm_domain::{Event, EventEnvelope, PlayerId};
use std::collections::HashMap;
use std::sync::Mutex;
use tokio::sync::mpsc;

/// Events buffered per subscriber before a slow one starts losing events.
const BUFFER: usize = 256;

/// What a subscriber receives: each event boxed. A channel allocates its first
/// block of 32 slots when made, so a slot as big as an event (about 400 bytes,
/// a match in it) cost every connected player 13 KiB before any event came; a
/// box's slot costs 8 bytes.
pub type Events = mpsc::Receiver<Box<Event>>;

#[derive(Default)]
pub struct Hub {
    subscribers: Mutex<Subscribers>,
}

#[derive(Default)]
struct Subscribers {
    by_player: HashMap<PlayerId, Vec<mpsc::Sender<Box<Event>>>>,
    /// The players' count at which `subscribe` next drops closed subscribers.
    sweep_at: usize,
}

/// The fewest players' entries a sweep waits for.
const SWEEP_FLOOR: usize = 1024;

impl Hub {
    fn lock(&self) -> std::sync::MutexGuard<'_, Subscribers> {
        self.subscribers.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A receiver of `player`'s events from now on.
    ///
    /// A subscriber whose receiver is gone (its socket closed) is dropped when
    /// an event for its player comes, and, for players who get none, when the
    /// entries reach twice what the last sweep left (at least
    /// [`SWEEP_FLOOR`]): else every player who ever connected and left kept an
    /// entry, amortized one pass per as many subscriptions as it keeps.
    pub fn subscribe(&self, player: &PlayerId) -> Events {
        let (tx, rx) = mpsc::channel(BUFFER);
        let mut subs = self.lock();
        subs.by_player.entry(player.clone()).or_default().push(tx);
        if subs.by_player.len() >= subs.sweep_at {
            subs.by_player.retain(|_, list| {
                list.retain(|tx| !tx.is_closed());
                !list.is_empty()
            });
            subs.sweep_at = (2 * subs.by_player.len()).max(SWEEP_FLOOR);
        }
        rx
    }

    /// Whether `player` has a local subscriber still open.
    pub fn listening(&self, player: &PlayerId) -> bool {
        self.lock()
            .by_player
            .get(player)
            .is_some_and(|list| list.iter().any(|tx| !tx.is_closed()))
    }

    /// Hands an event to every local subscriber of its player, dropping closed ones.
    pub fn dispatch(&self, envelope: EventEnvelope) {
        let mut guard = self.lock();
        let subs = &mut guard.by_player;
        let Some(list) = subs.get_mut(&envelope.player) else {
            return;
        };
        list.retain(|tx| match tx.try_send(Box::new(envelope.event.clone())) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                tracing::warn!(player = %envelope.player, "subscriber is too slow; event dropped");
                true
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        });
        if list.is_empty() {
            subs.remove(&envelope.player);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Players who connected and left, and get no event, do not stay: their
    /// closed subscribers go at the next sweep; open ones stay.
    #[test]
    fn closed_subscribers_are_swept() {
        let hub = Hub::default();
        let player = |i: usize| PlayerId::new(format!("p{i}")).unwrap();
        let kept: Vec<Events> = (0..10).map(|i| hub.subscribe(&player(i))).collect();
        for i in 10..10 * SWEEP_FLOOR {
            drop(hub.subscribe(&player(i)));
        }
        let entries = hub.lock().by_player.len();
        assert!(entries <= 2 * SWEEP_FLOOR, "{entries} entries");
        assert!((0..10).all(|i| hub.listening(&player(i))));
        assert!(!hub.listening(&player(10 * SWEEP_FLOOR - 1)));
        drop(kept);
        assert!(!hub.listening(&player(0)));
    }
}
