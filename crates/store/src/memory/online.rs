//! [`Online`] for the in-memory store: each player's notes by ingress and the
//! ingresses' lives, in a map of their own (never under the store's lock).
//! Notes past keeping are forgotten whenever the map has doubled since the
//! last sweep.

use super::MemoryStore;
use crate::{ONLINE_KEPT, OPEN_KEPT, Online, StoreError};
use async_trait::async_trait;
use mm_domain::{Millis, PlayerId, now_ms};
use std::collections::HashMap;

/// One ingress's note of a player's sockets.
#[derive(Clone, Copy)]
enum Note {
    /// One is open there, noted at.
    Open(Millis),
    /// The last one there closed at.
    Closed(Millis),
}

impl Note {
    /// Whether the note is still kept at `now`.
    fn kept(self, now: Millis) -> bool {
        match self {
            Note::Open(at) => at + OPEN_KEPT.as_millis() as Millis > now,
            Note::Closed(at) => at + ONLINE_KEPT.as_millis() as Millis > now,
        }
    }
}

/// Player -> ingress -> note, and ingress -> until when it lives.
#[derive(Default)]
pub(super) struct Notes {
    by_player: HashMap<PlayerId, HashMap<String, Note>>,
    ingresses: HashMap<String, Millis>,
    /// Players kept after the last sweep.
    swept_at: usize,
}

#[async_trait]
impl Online for MemoryStore {
    async fn hold(
        &self,
        holder: &str,
        player: &PlayerId,
        open: bool,
        now: Millis,
    ) -> Result<(), StoreError> {
        let mut notes = self.online.lock().unwrap_or_else(|p| p.into_inner());
        let note = if open {
            Note::Open(now)
        } else {
            Note::Closed(now)
        };
        notes
            .by_player
            .entry(player.clone())
            .or_default()
            .insert(holder.to_string(), note);
        if notes.by_player.len() > 2 * notes.swept_at.max(512) {
            let now = now_ms();
            notes
                .by_player
                .retain(|_, n| n.values().any(|note| note.kept(now)));
            notes.swept_at = notes.by_player.len();
        }
        Ok(())
    }

    async fn alive(&self, holder: &str, until: Millis) -> Result<(), StoreError> {
        let mut notes = self.online.lock().unwrap_or_else(|p| p.into_inner());
        let forgotten = until.saturating_sub(2 * ONLINE_KEPT.as_millis() as Millis);
        notes.ingresses.retain(|_, &mut u| u >= forgotten);
        notes.ingresses.insert(holder.to_string(), until);
        Ok(())
    }

    async fn last_seen(&self, player: &PlayerId) -> Result<Option<Millis>, StoreError> {
        let notes = self.online.lock().unwrap_or_else(|p| p.into_inner());
        let now = now_ms();
        let Some(mine) = notes.by_player.get(player) else {
            return Ok(None);
        };
        Ok(mine
            .iter()
            .filter(|(_, note)| note.kept(now))
            .filter_map(|(holder, note)| match *note {
                Note::Open(_) => notes.ingresses.get(holder).copied(),
                Note::Closed(at) => Some(at),
            })
            .max())
    }
}
