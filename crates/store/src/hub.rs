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
    subscribers: Mutex<HashMap<PlayerId, Vec<mpsc::Sender<Box<Event>>>>>,
}

impl Hub {
    /// A receiver of `player`'s events from now on.
    pub fn subscribe(&self, player: &PlayerId) -> Events {
        let (tx, rx) = mpsc::channel(BUFFER);
        let mut subs = self.subscribers.lock().unwrap_or_else(|p| p.into_inner());
        subs.entry(player.clone()).or_default().push(tx);
        rx
    }

    /// Whether `player` has a local subscriber (which may have closed since).
    pub fn listening(&self, player: &PlayerId) -> bool {
        let subs = self.subscribers.lock().unwrap_or_else(|p| p.into_inner());
        subs.contains_key(player)
    }

    /// Hands an event to every local subscriber of its player, dropping closed ones.
    pub fn dispatch(&self, envelope: EventEnvelope) {
        let mut subs = self.subscribers.lock().unwrap_or_else(|p| p.into_inner());
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
