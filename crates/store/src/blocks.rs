//! Players' block lists, kept with the player: whom each blocked (at most
//! [`MAX_BLOCKS`]), and, beside it, who blocked them, so that a new ticket
//! carries every player its players may never meet, either way. On Redis both
//! are sets in the players' own slots (`mm:{u:PLAYER}:blocks`,
//! `...:blocked_by`): blocking writes the blocker's list (checking its size in
//! one script) and then the other's reverse set.

use crate::StoreError;
use async_trait::async_trait;
use mm_domain::PlayerId;
use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

/// Most players one player may block.
pub const MAX_BLOCKS: usize = 200;

/// The answer to a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blocked {
    /// Added (or already there).
    Done,
    /// The list holds [`MAX_BLOCKS`] players already; nothing changed.
    Full,
}

#[async_trait]
pub trait Blocks {
    /// `player` blocks `other` (idempotent).
    async fn block(&self, player: &PlayerId, other: &PlayerId) -> Result<Blocked, StoreError>;

    /// `player` unblocks `other`; false if `other` was not blocked.
    async fn unblock(&self, player: &PlayerId, other: &PlayerId) -> Result<bool, StoreError>;

    /// Whom `player` blocked, sorted.
    async fn blocks(&self, player: &PlayerId) -> Result<Vec<PlayerId>, StoreError>;

    /// Everyone `players` may not meet: whom any of them blocked and who
    /// blocked any of them, sorted, without duplicates.
    async fn kept_apart(&self, players: &[PlayerId]) -> Result<Vec<PlayerId>, StoreError>;
}

/// One player's lists: whom they blocked, and who blocked them.
type Lists = (BTreeSet<PlayerId>, BTreeSet<PlayerId>);

/// Block lists of [`crate::MemoryStore`].
#[derive(Default)]
pub struct MemoryBlocks {
    inner: Mutex<HashMap<PlayerId, Lists>>,
}

impl MemoryBlocks {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PlayerId, Lists>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn block(&self, player: &PlayerId, other: &PlayerId) -> Blocked {
        let mut inner = self.lock();
        let own = &mut inner.entry(player.clone()).or_default().0;
        if !own.contains(other) && own.len() >= MAX_BLOCKS {
            return Blocked::Full;
        }
        own.insert(other.clone());
        inner
            .entry(other.clone())
            .or_default()
            .1
            .insert(player.clone());
        Blocked::Done
    }

    pub fn unblock(&self, player: &PlayerId, other: &PlayerId) -> bool {
        let mut inner = self.lock();
        let removed = inner
            .get_mut(player)
            .is_some_and(|(own, _)| own.remove(other));
        if let Some((_, by)) = inner.get_mut(other) {
            by.remove(player);
        }
        removed
    }

    pub fn blocks(&self, player: &PlayerId) -> Vec<PlayerId> {
        self.lock()
            .get(player)
            .map(|(own, _)| own.iter().cloned().collect())
            .unwrap_or_default()
    }

    pub fn kept_apart(&self, players: &[PlayerId]) -> Vec<PlayerId> {
        let inner = self.lock();
        let mut out = BTreeSet::new();
        for p in players {
            if let Some((own, by)) = inner.get(p) {
                out.extend(own.iter().cloned());
                out.extend(by.iter().cloned());
            }
        }
        out.into_iter().collect()
    }
}
