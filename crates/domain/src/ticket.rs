//! Tickets: what a client puts in the queue, the pool it waits in, its status, and
//! the view of it that the API returns.

use crate::{MatchId, Millis, PlayerId, TicketId};
use serde::{Deserialize, Serialize};

/// Lowest rating a ticket may carry.
pub const MIN_RATING: f64 = 0.0;
/// Highest rating a ticket may carry; anything above is refused as absurd.
pub const MAX_RATING: f64 = 10_000.0;

/// A queue of tickets that can be matched with each other: one mode in one region.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Pool {
    pub mode: String,
    pub region: String,
}

impl Pool {
    pub fn new(mode: impl Into<String>, region: impl Into<String>) -> Self {
        Self {
            mode: mode.into(),
            region: region.into(),
        }
    }

    /// The pool's name, `mode:region`; used as the Redis hash tag of its keys.
    pub fn name(&self) -> String {
        format!("{}:{}", self.mode, self.region)
    }

    /// Parses a name made by [`Pool::name`].
    pub fn parse(name: &str) -> Option<Self> {
        let (mode, region) = name.split_once(':')?;
        Some(Self::new(mode, region))
    }
}

/// A request to be matched: one or more players who play together.
///
/// A ticket is immutable once queued; its status lives in the store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ticket {
    pub id: TicketId,
    /// The player who created the ticket.
    pub owner: PlayerId,
    pub players: Vec<PlayerId>,
    pub mode: String,
    /// Acceptable regions, most preferred first. The ticket waits in the pool of the first.
    pub regions: Vec<String>,
    pub rating: f64,
    /// When the ticket was first queued; kept across release and requeue.
    pub enqueued_at: Millis,
}

impl Ticket {
    pub fn pool(&self) -> Pool {
        Pool::new(&self.mode, &self.regions[0])
    }
}

/// Where a ticket is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TicketStatus {
    /// Waiting in the queue, not yet looked at by any worker.
    Queued,
    /// Being considered by workers (held by one now, or back in the queue between passes).
    Searching,
    /// Placed in a match.
    Matched,
    /// Cancelled by its owner.
    Cancelled,
}

impl TicketStatus {
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Matched | Self::Cancelled)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Searching => "searching",
            Self::Matched => "matched",
            Self::Cancelled => "cancelled",
        }
    }
}

/// What the API shows of a ticket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TicketView {
    pub id: TicketId,
    pub status: TicketStatus,
    pub mode: String,
    pub region: String,
    pub players: Vec<PlayerId>,
    pub rating: f64,
    pub enqueued_at: Millis,
    /// Time spent waiting: until now while active, until the end once terminal.
    pub time_in_queue_ms: Millis,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub match_id: Option<MatchId>,
    /// The other players of the match, once matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub co_players: Option<Vec<PlayerId>>,
}

impl TicketView {
    /// The view of `ticket` in `status`, having waited until `end` (now while
    /// active, the finish time once terminal). Match fields are left empty.
    pub fn new(ticket: &Ticket, status: TicketStatus, end: Millis) -> Self {
        Self {
            id: ticket.id.clone(),
            status,
            mode: ticket.mode.clone(),
            region: ticket.regions[0].clone(),
            players: ticket.players.clone(),
            rating: ticket.rating,
            enqueued_at: ticket.enqueued_at,
            time_in_queue_ms: end.saturating_sub(ticket.enqueued_at),
            match_id: None,
            co_players: None,
        }
    }
}
