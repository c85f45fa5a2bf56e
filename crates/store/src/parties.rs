//! Parties in the store, so every ingress sees the same party. A party's state
//! is merged, never overwritten ([`Parties::merge_party`]: OR-Set unions, the
//! larger leader tag, a sticky disband; one script on Redis), so concurrent edits
//! through different ingresses converge. Each player points at the party they are
//! in ([`Parties::claim_party`]); a pointer to a party that does not list the
//! player (a crash between the two steps, a party that expired) is stale, and the
//! caller may take it over. Each invitee keeps a note of the parties whose
//! invites to them are pending ([`Parties::note_invite`]), so they can be bounded.

use crate::StoreError;
use async_trait::async_trait;
use mm_domain::{Attributes, Millis, Party, PartyId, PlayerId};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// How long an untouched party (and a player's pointer to it) is kept.
pub const PARTY_TTL: Duration = Duration::from_secs(24 * 3600);

/// The most members and pending invites a merge may leave a party with (0:
/// any). Only a delta that adds members (invites) is held to the first (second).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartyLimits {
    pub members: usize,
    pub invites: usize,
}

/// The answer to a merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartyMerge {
    /// The party as it stands after the merge.
    Merged(Party),
    /// The merge would have left more members than allowed; nothing changed.
    Full,
    /// The merge would have left more pending invites than allowed; nothing
    /// changed.
    TooManyInvites,
}

#[async_trait]
pub trait Parties {
    /// The party, if it exists (a disbanded one is returned as such).
    async fn party(&self, id: &PartyId) -> Result<Option<Party>, StoreError>;

    /// Merges `delta` (a new party, or an edit's delta) into the stored party,
    /// unless it would leave more members or pending invites than `limits`.
    async fn merge_party(
        &self,
        delta: &Party,
        limits: PartyLimits,
    ) -> Result<PartyMerge, StoreError>;

    /// Notes, with the invitee, that `party` invited them, unless `max` other
    /// parties' invites are noted there already: then `Err` with those parties
    /// (some may be stale: accepted, withdrawn, disbanded; the caller forgets
    /// those with [`Parties::forget_invite`] and tries again). Notes older than
    /// [`PARTY_TTL`] are dropped.
    async fn note_invite(
        &self,
        invitee: &PlayerId,
        party: &PartyId,
        max: usize,
    ) -> Result<Result<(), Vec<PartyId>>, StoreError>;

    /// Forgets the note that `party` invited `invitee`.
    async fn forget_invite(&self, invitee: &PlayerId, party: &PartyId) -> Result<(), StoreError>;

    /// Keeps the attribute claims `player`'s own token carried (for the modes
    /// that take attributes from the token), for [`PARTY_TTL`]: what a ticket
    /// their party leader queues gives them.
    async fn attest(&self, player: &PlayerId, claims: &Attributes) -> Result<(), StoreError>;

    /// What [`Parties::attest`] kept for `player`.
    async fn attested(&self, player: &PlayerId) -> Result<Option<Attributes>, StoreError>;

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
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    parties: HashMap<PartyId, Party>,
    pointers: HashMap<PlayerId, PartyId>,
    /// Per invitee, the parties whose invites are noted, and when.
    invited: HashMap<PlayerId, HashMap<PartyId, Millis>>,
    /// Per player, the attribute claims their token carried, and when.
    attested: HashMap<PlayerId, (Attributes, Millis)>,
}

impl MemoryParties {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn party(&self, id: &PartyId) -> Option<Party> {
        self.lock().parties.get(id).cloned()
    }

    pub fn merge(&self, delta: &Party, limits: PartyLimits) -> PartyMerge {
        let mut inner = self.lock();
        let mut merged = inner
            .parties
            .get(&delta.id)
            .cloned()
            .unwrap_or_else(|| delta.clone());
        merged.merge(delta);
        let over = |max: usize, n: usize| max > 0 && n > max;
        if delta.members.adds().next().is_some() && over(limits.members, merged.members.len()) {
            return PartyMerge::Full;
        }
        if delta.invites.adds().next().is_some() && over(limits.invites, merged.invites.len()) {
            return PartyMerge::TooManyInvites;
        }
        inner.parties.insert(delta.id.clone(), merged.clone());
        PartyMerge::Merged(merged)
    }

    pub fn note_invite(
        &self,
        invitee: &PlayerId,
        party: &PartyId,
        max: usize,
    ) -> Result<(), Vec<PartyId>> {
        let now = mm_domain::now_ms();
        let ttl = PARTY_TTL.as_millis() as Millis;
        let mut inner = self.lock();
        let noted = inner.invited.entry(invitee.clone()).or_default();
        noted.retain(|_, at| now.saturating_sub(*at) < ttl);
        if !noted.contains_key(party) && noted.len() >= max {
            let mut parties: Vec<PartyId> = noted.keys().cloned().collect();
            parties.sort();
            return Err(parties);
        }
        noted.insert(party.clone(), now);
        Ok(())
    }

    pub fn forget_invite(&self, invitee: &PlayerId, party: &PartyId) {
        let mut inner = self.lock();
        if let Some(noted) = inner.invited.get_mut(invitee) {
            noted.remove(party);
            if noted.is_empty() {
                inner.invited.remove(invitee);
            }
        }
    }

    pub fn attest(&self, player: &PlayerId, claims: &Attributes) {
        let now = mm_domain::now_ms();
        let ttl = PARTY_TTL.as_millis() as Millis;
        let mut inner = self.lock();
        inner
            .attested
            .retain(|_, (_, at)| now.saturating_sub(*at) < ttl);
        inner.attested.insert(player.clone(), (claims.clone(), now));
    }

    pub fn attested(&self, player: &PlayerId) -> Option<Attributes> {
        let ttl = PARTY_TTL.as_millis() as Millis;
        let now = mm_domain::now_ms();
        self.lock()
            .attested
            .get(player)
            .filter(|(_, at)| now.saturating_sub(*at) < ttl)
            .map(|(a, _)| a.clone())
    }

    pub fn player_party(&self, player: &PlayerId) -> Option<PartyId> {
        self.lock().pointers.get(player).cloned()
    }

    pub fn claim(
        &self,
        player: &PlayerId,
        party: &PartyId,
        stale: Option<&PartyId>,
    ) -> Option<PartyId> {
        let mut inner = self.lock();
        match inner.pointers.get(player) {
            Some(current) if current != party && Some(current) != stale => Some(current.clone()),
            _ => {
                inner.pointers.insert(player.clone(), party.clone());
                None
            }
        }
    }

    pub fn release(&self, player: &PlayerId, party: &PartyId) {
        let mut inner = self.lock();
        if inner.pointers.get(player) == Some(party) {
            inner.pointers.remove(player);
        }
    }
}
