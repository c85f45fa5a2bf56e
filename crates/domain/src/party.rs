//! Parties (seed 004's party service): players who queue together. A party is a
//! composition of CRDTs, so concurrent edits made through different ingresses
//! converge however they are merged: members and pending invites are [`OrSet`]s
//! (a remove wins only over adds it observed), the leader is a last-writer-wins
//! register ordered by tag, and `disbanded` only ever becomes true.
//!
//! Operations are pure: each returns the delta it made, for the store to merge.

use crate::{Millis, OrSet, PartyId, PlayerId, Tag};
use serde::{Deserialize, Serialize};

/// Most members of a party (seed 004: parties of 2 to 5).
pub const MAX_PARTY: usize = 5;
/// Most invites pending at once, from one party and to one player.
pub const MAX_PENDING_INVITES: usize = 20;

/// A tag for an edit at `now`: time-ordered, unique by `nonce`.
pub fn tag(now: Millis, nonce: &str) -> Tag {
    format!("{now:015}-{nonce}")
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Party {
    pub id: PartyId,
    pub created_at: Millis,
    /// The leader and the tag it was set with (the larger tag wins a merge).
    pub leader: PlayerId,
    pub leader_tag: Tag,
    pub members: OrSet<PlayerId>,
    pub invites: OrSet<PlayerId>,
    pub disbanded: bool,
}

/// What clients see of a party.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PartyView {
    pub id: PartyId,
    pub leader: PlayerId,
    /// Members in the order they joined (the leader first when they created it).
    pub members: Vec<PlayerId>,
    pub invites: Vec<PlayerId>,
    pub created_at: Millis,
}

impl Party {
    /// A new party of one, `leader`, created at `now`; the delta is the party.
    pub fn create(id: PartyId, leader: PlayerId, now: Millis, nonce: &str) -> Self {
        let t = tag(now, nonce);
        let mut members = OrSet::new();
        members.add(leader.clone(), t.clone());
        Self {
            id,
            created_at: now,
            leader,
            leader_tag: t,
            members,
            invites: OrSet::new(),
            disbanded: false,
        }
    }

    /// An empty delta of this party (merging it changes nothing).
    fn delta(&self) -> Party {
        Party {
            id: self.id.clone(),
            created_at: self.created_at,
            leader: self.leader.clone(),
            leader_tag: self.leader_tag.clone(),
            members: OrSet::new(),
            invites: OrSet::new(),
            disbanded: false,
        }
    }

    /// Takes in another replica's state or a delta.
    pub fn merge(&mut self, other: &Party) {
        self.members.merge(&other.members);
        self.invites.merge(&other.invites);
        if (&other.leader_tag, &other.leader) > (&self.leader_tag, &self.leader) {
            self.leader = other.leader.clone();
            self.leader_tag = other.leader_tag.clone();
        }
        self.created_at = self.created_at.min(other.created_at);
        self.disbanded |= other.disbanded;
    }

    pub fn is_member(&self, p: &PlayerId) -> bool {
        !self.disbanded && self.members.contains(p)
    }

    pub fn is_invited(&self, p: &PlayerId) -> bool {
        !self.disbanded && self.invites.contains(p)
    }

    /// Members in join order.
    pub fn members(&self) -> Vec<PlayerId> {
        if self.disbanded {
            return Vec::new();
        }
        let mut m = self.members.elements();
        m.sort_by(|a, b| self.members.first_tag(a).cmp(&self.members.first_tag(b)));
        m
    }

    pub fn view(&self) -> PartyView {
        PartyView {
            id: self.id.clone(),
            leader: self.leader.clone(),
            members: self.members(),
            invites: if self.disbanded {
                Vec::new()
            } else {
                self.invites.elements()
            },
            created_at: self.created_at,
        }
    }

    /// The leader invites `p`.
    pub fn invite(&mut self, p: PlayerId, now: Millis, nonce: &str) -> Party {
        let mut d = self.delta();
        d.invites = self.invites.add(p, tag(now, nonce));
        d
    }

    /// `p`, invited, joins (their invite is used up).
    pub fn join(&mut self, p: PlayerId, now: Millis, nonce: &str) -> Party {
        let mut d = self.delta();
        d.invites = self.invites.remove(&p);
        d.members = self.members.add(p, tag(now, nonce));
        d
    }

    /// `p` leaves or is kicked (or an invite is withdrawn). A leader who leaves
    /// hands over to the longest-standing member; the last member out disbands it.
    pub fn remove(&mut self, p: &PlayerId, now: Millis, nonce: &str) -> Party {
        let mut d = self.delta();
        d.members = self.members.remove(p);
        d.invites = self.invites.remove(p);
        let rest = self.members();
        if rest.is_empty() {
            self.disbanded = true;
            d.disbanded = true;
        } else if self.leader == *p {
            self.leader = rest[0].clone();
            self.leader_tag = tag(now, nonce);
            d.leader = self.leader.clone();
            d.leader_tag = self.leader_tag.clone();
        }
        d
    }

    /// The leader disbands the party.
    pub fn disband(&mut self) -> Party {
        self.disbanded = true;
        let mut d = self.delta();
        d.disbanded = true;
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> PlayerId {
        PlayerId::new(s).unwrap()
    }

    #[test]
    fn invites_joins_and_a_leader_leaving_hand_over() {
        let mut party = Party::create(PartyId::new("pt-1").unwrap(), p("alice"), 10, "a");
        party.invite(p("bob"), 11, "b");
        assert!(party.is_invited(&p("bob")) && !party.is_member(&p("bob")));
        party.join(p("bob"), 12, "c");
        party.invite(p("carol"), 13, "d");
        party.join(p("carol"), 14, "e");
        assert_eq!(party.members(), [p("alice"), p("bob"), p("carol")]);
        assert!(party.view().invites.is_empty());
        party.remove(&p("alice"), 15, "f");
        assert_eq!(party.leader, p("bob"), "the longest-standing member leads");
        party.remove(&p("bob"), 16, "g");
        party.remove(&p("carol"), 17, "h");
        assert!(party.disbanded && party.members().is_empty());
    }

    /// Seed 004's conflict: Alice kicks Carol while Carol leaves and Bob's
    /// invitee Dave joins; every order of merging the three deltas agrees.
    #[test]
    fn concurrent_edits_converge_in_any_order() {
        let mut base = Party::create(PartyId::new("pt-1").unwrap(), p("alice"), 1, "a");
        for (i, who) in ["bob", "carol"].iter().enumerate() {
            base.invite(p(who), 2 + i as u64, &format!("i{i}"));
            base.join(p(who), 4 + i as u64, &format!("j{i}"));
        }
        base.invite(p("dave"), 6, "i-dave");
        let kick = base.clone().remove(&p("carol"), 7, "kick");
        let leave = base.clone().remove(&p("carol"), 7, "leave");
        let join = base.clone().join(p("dave"), 7, "join");
        let deltas = [kick, leave, join];
        let mut results = Vec::new();
        for order in [[0, 1, 2], [2, 1, 0], [1, 2, 0], [0, 2, 1]] {
            let mut r = base.clone();
            for i in order {
                r.merge(&deltas[i]);
            }
            results.push(r);
        }
        for r in &results {
            assert_eq!(r, &results[0]);
        }
        assert_eq!(results[0].members(), [p("alice"), p("bob"), p("dave")]);
    }
}
