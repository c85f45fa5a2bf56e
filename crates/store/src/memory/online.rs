//! [`Online`] for the in-memory store: each player's notes by ingress, in a
//! map of its own (never under the store's lock). Players whose latest note is
//! older than [`ONLINE_KEPT`] are forgotten whenever the map has doubled since
//! the last sweep.

use super::MemoryStore;
use crate::{ONLINE_KEPT, Online, StoreError};
use async_trait::async_trait;
use mm_domain::{Millis, PlayerId, now_ms};
use std::collections::HashMap;

/// Player -> ingress -> until when it holds a socket of theirs.
#[derive(Default)]
pub(super) struct Notes {
    by_player: HashMap<PlayerId, HashMap<String, Millis>>,
    /// Players kept after the last sweep.
    swept_at: usize,
}

impl Notes {
    fn sweep(&mut self, now: Millis) {
        let kept = ONLINE_KEPT.as_millis() as Millis;
        self.by_player
            .retain(|_, notes| notes.values().any(|&until| until + kept > now));
        self.swept_at = self.by_player.len();
    }
}

#[async_trait]
impl Online for MemoryStore {
    async fn hold(
        &self,
        holder: &str,
        players: &[PlayerId],
        until: Millis,
    ) -> Result<(), StoreError> {
        let mut notes = self.online.lock().unwrap_or_else(|p| p.into_inner());
        for p in players {
            notes
                .by_player
                .entry(p.clone())
                .or_default()
                .insert(holder.to_string(), until);
        }
        if notes.by_player.len() > 2 * notes.swept_at.max(512) {
            notes.sweep(now_ms());
        }
        Ok(())
    }

    async fn last_seen(&self, player: &PlayerId) -> Result<Option<Millis>, StoreError> {
        let notes = self.online.lock().unwrap_or_else(|p| p.into_inner());
        let kept = ONLINE_KEPT.as_millis() as Millis;
        let latest = notes
            .by_player
            .get(player)
            .and_then(|n| n.values().copied().max());
        Ok(latest.filter(|&l| l + kept > now_ms()))
    }
}
