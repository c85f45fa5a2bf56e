//! Matches: the tickets a worker put together, as recorded in the store.

use crate::{Lifecycle, MatchId, Millis, PlayerId, Skill, TicketId};
use serde::{Deserialize, Serialize};

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
