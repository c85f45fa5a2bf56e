//! Matches: the tickets a worker put together, as recorded in the store.

use crate::{MatchId, Millis, PlayerId, TicketId};
use serde::{Deserialize, Serialize};

/// One ticket's place in a match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatchTicket {
    pub ticket_id: TicketId,
    pub players: Vec<PlayerId>,
    /// The rating the ticket was matched with.
    pub rating: f64,
    pub enqueued_at: Millis,
    /// The team the ticket plays on (0-based); a party is always on one team.
    #[serde(default)]
    pub team: usize,
}

/// A formed match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Match {
    pub id: MatchId,
    pub mode: String,
    pub region: String,
    pub tickets: Vec<MatchTicket>,
    pub created_at: Millis,
}

impl Match {
    /// Every player of the match, ticket by ticket.
    pub fn players(&self) -> impl Iterator<Item = &PlayerId> {
        self.tickets.iter().flat_map(|t| t.players.iter())
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
