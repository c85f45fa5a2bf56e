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
    /// Per party, when a merge last changed it (its key's expiry on Redis).
    merged_at: HashMap<PartyId, Millis>,
    pointers: HashMap<PlayerId, PartyId>,
    /// Per invitee, the parties whose invites are noted, and when.
    invited: HashMap<PlayerId, HashMap<PartyId, Millis>>,
    /// Per player, the attribute claims their token carried, and when.
    attested: HashMap<PlayerId, (Attributes, Millis)>,
    /// When [`Inner::sweep`] last ran.
    swept_at: Millis,
}

/// How often the memory store drops what [`PARTY_TTL`] let lapse.
const SWEEP_EVERY: Millis = 60_000;

impl Inner {
    /// Drops, at most once every [`SWEEP_EVERY`], what Redis would have let
    /// expire by `now`: parties untouched for [`PARTY_TTL`], the pointers to
    /// them, invite notes and attested claims that old. Without it every party
    /// ever made stayed in memory. One pass over each map a minute, not one per
    /// call.
    fn sweep(&mut self, now: Millis) {
        if now.saturating_sub(self.swept_at) < SWEEP_EVERY {
            return;
        }
        self.swept_at = now;
        let ttl = PARTY_TTL.as_millis() as Millis;
        let fresh = |at: &Millis| now.saturating_sub(*at) < ttl;
        self.merged_at.retain(|_, at| fresh(at));
        let merged_at = &self.merged_at;
        self.parties.retain(|id, _| merged_at.contains_key(id));
        let parties = &self.parties;
        self.pointers.retain(|_, party| parties.contains_key(party));
        self.invited.retain(|_, noted| {
            noted.retain(|_, at| fresh(at));
            !noted.is_empty()
        });
        self.attested.retain(|_, (_, at)| fresh(at));
    }
}

impl MemoryParties {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The lock, after a sweep due at `now`.
    fn swept(&self, now: Millis) -> std::sync::MutexGuard<'_, Inner> {
        let mut inner = self.lock();
        inner.sweep(now);
        inner
    }

    pub fn party(&self, id: &PartyId) -> Option<Party> {
        self.lock().parties.get(id).cloned()
    }

    pub fn merge(&self, delta: &Party, limits: PartyLimits) -> PartyMerge {
        self.merge_at(delta, limits, mm_domain::now_ms())
    }

    fn merge_at(&self, delta: &Party, limits: PartyLimits, now: Millis) -> PartyMerge {
        let mut inner = self.swept(now);
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
        inner.merged_at.insert(delta.id.clone(), now);
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
        let mut inner = self.swept(now);
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
        let mut inner = self.swept(now);
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
        let mut inner = self.swept(mm_domain::now_ms());
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Parties untouched for their lifetime go, with the pointers to them, the
    /// invite notes and the attested claims that old; what was touched since
    /// stays. The sweep runs at most once a minute.
    #[test]
    fn lapsed_parties_leave_memory() {
        let parties = MemoryParties::default();
        let ttl = PARTY_TTL.as_millis() as Millis;
        let limits = PartyLimits {
            members: 0,
            invites: 0,
        };
        let (ann, bob) = (PlayerId::new("ann").unwrap(), PlayerId::new("bob").unwrap());
        let old = Party::create(PartyId::new("pt-old").unwrap(), ann.clone(), 1, "a");
        let kept = Party::create(PartyId::new("pt-kept").unwrap(), bob.clone(), 1, "b");
        let t0 = mm_domain::now_ms();
        parties.merge_at(&old, limits, t0);
        parties.merge_at(&kept, limits, t0);
        assert_eq!(parties.claim(&ann, &old.id, None), None);
        assert_eq!(parties.claim(&bob, &kept.id, None), None);
        {
            let mut inner = parties.lock();
            inner
                .invited
                .entry(bob.clone())
                .or_default()
                .insert(old.id.clone(), t0);
            inner
                .attested
                .insert(ann.clone(), (Attributes::default(), t0));
        }
        // Touched since: this one stays.
        parties.merge_at(&kept, limits, t0 + ttl / 2);
        let swept = t0 + ttl + SWEEP_EVERY;
        parties.lock().sweep(swept);
        // Not a minute since that sweep: what lapses now waits for the next.
        let gone = PlayerId::new("cy").unwrap();
        parties
            .lock()
            .attested
            .insert(gone.clone(), (Attributes::default(), t0));
        parties.lock().sweep(swept + SWEEP_EVERY / 2);
        assert!(
            parties.lock().attested.contains_key(&gone),
            "the sweep waits its minute"
        );
        parties.lock().sweep(swept + SWEEP_EVERY);
        let inner = parties.lock();
        assert!(!inner.parties.contains_key(&old.id));
        assert!(!inner.merged_at.contains_key(&old.id));
        assert!(!inner.pointers.contains_key(&ann));
        assert!(inner.invited.is_empty());
        assert!(inner.attested.is_empty());
        assert!(inner.parties.contains_key(&kept.id));
        assert_eq!(inner.pointers.get(&bob), Some(&kept.id));
    }
}
