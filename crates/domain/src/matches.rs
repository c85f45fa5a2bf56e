//! Matches: the tickets a worker put together, as recorded in the store.

use crate::{Attributes, Lifecycle, MatchId, Millis, PlayerId, Skill, TicketId};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One ticket's place in a match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct MatchTicket {
    pub ticket_id: TicketId,
    pub players: Vec<PlayerId>,
    /// The rating the ticket was matched with.
    pub rating: f64,
    pub enqueued_at: Millis,
    /// The team the ticket plays on (0-based); a party is always on one team.
    #[serde(default)]
    pub team: usize,
    /// Each player's skill snapshot from the ticket (empty if it had none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<Skill>,
    /// The ticket's attributes, kept when its mode has rules (so that players
    /// filling seats later meet the same rules against this ticket).
    #[serde(default, skip_serializing_if = "Attributes::is_empty")]
    pub attributes: Attributes,
    /// Each player's own attributes over the ticket's (empty when none differ).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub player_attributes: Vec<Attributes>,
}

/// What a mode's rules decided for a match.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Decided {
    /// For each `intersect` rule, its attribute and the value chosen (a map the
    /// players picked).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub chosen: BTreeMap<String, String>,
    /// With a `roles` rule, each player's role.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub roles: BTreeMap<PlayerId, String>,
    /// Each rule (`kind:attribute`) and the relax step it was at when the match
    /// formed (0: not relaxed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<RuleStep>,
    /// Set when this match fills open seats of a running match (a backfill):
    /// its players join that match, on the teams their tickets name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backfill: Option<FillOf>,
}

impl Decided {
    pub fn is_empty(&self) -> bool {
        self.chosen.is_empty()
            && self.roles.is_empty()
            && self.rules.is_empty()
            && self.backfill.is_none()
    }
}

/// The running match a fill joins, and the generation of its backfill the
/// worker read: the fill commits only if the backfill is still at it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct FillOf {
    pub match_id: MatchId,
    pub generation: u64,
}

/// The relax step a rule was at when a match formed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RuleStep {
    pub rule: String,
    pub step: usize,
}

/// A formed match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Match {
    pub id: MatchId,
    pub mode: String,
    pub region: String,
    pub tickets: Vec<MatchTicket>,
    pub created_at: Millis,
    /// What happens after the match is formed (from its mode).
    #[serde(default)]
    pub lifecycle: Lifecycle,
    /// What the mode's rules decided: `chosen`, `roles`, `rules`.
    #[serde(default, flatten)]
    pub decided: Decided,
}

impl Match {
    /// Every player of the match, ticket by ticket.
    pub fn players(&self) -> impl Iterator<Item = &PlayerId> {
        self.tickets.iter().flat_map(|t| t.players.iter())
    }

    /// Number of players.
    pub fn player_count(&self) -> usize {
        self.tickets.iter().map(|t| t.players.len()).sum()
    }

    /// The ticket that holds `player`.
    pub fn ticket_of(&self, player: &PlayerId) -> Option<&MatchTicket> {
        self.tickets.iter().find(|t| t.players.contains(player))
    }

    /// The running match this one fills seats of, if it is a fill.
    pub fn fills(&self) -> Option<&FillOf> {
        self.decided.backfill.as_ref()
    }

    /// Players per team (0-based), as the tickets name their teams.
    pub fn team_sizes(&self) -> Vec<u32> {
        let mut sizes = Vec::new();
        for t in &self.tickets {
            if sizes.len() <= t.team {
                sizes.resize(t.team + 1, 0);
            }
            sizes[t.team] += t.players.len() as u32;
        }
        sizes
    }

    /// Highest minus lowest ticket rating.
    pub fn rating_spread(&self) -> f64 {
        let (lo, hi) = self
            .tickets
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), t| {
                (lo.min(t.rating), hi.max(t.rating))
            });
        if self.tickets.is_empty() {
            0.0
        } else {
            hi - lo
        }
    }
}
