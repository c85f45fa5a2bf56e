//! Events pushed to players over the WebSocket, JSON objects tagged by `type`.

use crate::{Match, MatchId, PlayerId, TicketId};
use serde::{Deserialize, Serialize};

/// Something that happened to one of a player's tickets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum Event {
    /// A worker looked at the ticket for the first time.
    #[serde(rename = "ticket.searching")]
    Searching { ticket_id: TicketId },
    /// The ticket was placed in a match.
    #[serde(rename = "ticket.matched")]
    Matched {
        ticket_id: TicketId,
        match_id: MatchId,
        #[serde(rename = "match")]
        matched: Match,
    },
    /// The ticket was cancelled by one of its players, or withdrawn by the
    /// matchmaker with a `reason` (`matched_elsewhere`).
    #[serde(rename = "ticket.cancelled")]
    Cancelled {
        ticket_id: TicketId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
}

/// An event addressed to one player, as it travels between processes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventEnvelope {
    pub player: PlayerId,
    pub event: Event,
}
