//! Parties in the store, so every ingress sees the same party. A party's state
//! is merged, never overwritten ([`Parties::merge_party`]: OR-Set unions, the
//! larger leader tag, a sticky disband; one script on Redis), so concurrent edits
//! through different ingresses converge. Each player points at the party they are
//! in ([`Parties::claim_party`]); a pointer to a party that does not list the
//! player (a crash between the two steps, a party that expired) is stale, and the
//! caller may take it over.

use crate::StoreError;
use async_trait::async_trait;
use mm_domain::{Party, PartyId, PlayerId};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// How long an untouched party (and a player's pointer to it) is kept.
pub const PARTY_TTL: Duration = Duration::from_secs(24 * 3600);

/// The answer to a merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartyMerge {
    /// The party as it stands after the merge.
    Merged(Party),
    /// The merge would have left more members than allowed; nothing changed.
    Full,
}

#[async_trait]
pub trait Parties {
    /// The party, if it exists (a disbanded one is returned as such).
    async fn party(&self, id: &PartyId) -> Result<Option<Party>, StoreError>;

    /// Merges `delta` (a new party, or an edit's delta) into the stored party,
    /// unless it would leave more than `max` members.
    async fn merge_party(&self, delta: &Party, max: usize) -> Result<PartyMerge, StoreError>;

    /// The party `player` points at.
    async fn player_party(&self, player: &PlayerId) -> Result<Option<PartyId>, StoreError>;

    /// Points `player` at `party` unless they point at another party than `stale`;
    /// returns that other party then.
    async fn claim_party(
        &self,
        player: &PlayerId,
        party: &PartyId,
        stale: Option<&PartyId>,
    ) -> Result<Option<PartyId>, StoreError>;

    /// Removes `player`'s pointer if it points at `party`.
    async fn release_party(&self, player: &PlayerId, party: &PartyId) -> Result<(), StoreError>;
}

/// Parties of [`crate::MemoryStore`].
#[derive(Default)]
pub struct MemoryParties {
    inner: Mutex<(HashMap<PartyId, Party>, HashMap<PlayerId, PartyId>)>,
}

impl MemoryParties {
    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, (HashMap<PartyId, Party>, HashMap<PlayerId, PartyId>)> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn party(&self, id: &PartyId) -> Option<Party> {
        self.lock().0.get(id).cloned()
    }

    pub fn merge(&self, delta: &Party, max: usize) -> PartyMerge {
        let mut inner = self.lock();
        let mut merged = inner
            .0
            .get(&delta.id)
            .cloned()
            .unwrap_or_else(|| delta.clone());
        merged.merge(delta);
        let adds = delta.members.adds().next().is_some();
        if max > 0 && adds && merged.members.len() > max {
            return PartyMerge::Full;
        }
        inner.0.insert(delta.id.clone(), merged.clone());
        PartyMerge::Merged(merged)
    }

    pub fn player_party(&self, player: &PlayerId) -> Option<PartyId> {
        self.lock().1.get(player).cloned()
    }

    pub fn claim(
        &self,
        player: &PlayerId,
        party: &PartyId,
        stale: Option<&PartyId>,
    ) -> Option<PartyId> {
        let mut inner = self.lock();
        match inner.1.get(player) {
            Some(current) if current != party && Some(current) != stale => Some(current.clone()),
            _ => {
                inner.1.insert(player.clone(), party.clone());
                None
            }
        }
    }

    pub fn release(&self, player: &PlayerId, party: &PartyId) {
        let mut inner = self.lock();
        if inner.1.get(player) == Some(party) {
            inner.1.remove(player);
        }
    }
}
