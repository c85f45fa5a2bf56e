//! Domain types shared by every matchmaker component: identifiers, tickets, pools,
//! matches and their lifecycle, ticket statuses and the events pushed to players.
//! No I/O lives here.

mod attributes;
mod event;
mod ids;
mod lifecycle;
mod matches;
mod orset;
mod party;
mod rating;
mod result_check;
mod ticket;

pub use attributes::{
    AttributeError, Attributes, MAX_ATTRIBUTES, MAX_ITEMS, MAX_NAME, MAX_TEXT, Value, valid_name,
};
pub use event::{Event, EventEnvelope};
pub use ids::{IdError, MatchId, PartyId, PlayerId, TicketId};
pub use lifecycle::{
    Answer, AutoBackfill, DEFAULT_PLACEMENT_TIMEOUT, Joined, Lifecycle, MatchRecord, MatchResult,
    MatchStatus, Outcome, PLACEMENT_RETRY_MS, Placement, PlayerResult, RecordStart, STEP_GRACE_MS,
    ServerAssignment, TeamResult, TicketFate, reasons,
};
pub use matches::{Decided, FillOf, Match, MatchTicket, RuleStep};
pub use orset::{OrSet, Tag};
pub use party::{MAX_PARTY, MAX_PENDING_INVITES, Party, PartyView};
pub use rating::{Decay, MatchOn, RatingJob, RatingModel, RatingPolicy, Skill};
pub use result_check::ResultError;
pub use ticket::{
    LANE_SPAN, LANES, MAX_RATING, MIN_RATING, Pool, RegionLatency, RegionQueue, Ticket,
    TicketStatus, TicketView, lane_ranks, queue_score, score_lane,
};

/// Milliseconds since the Unix epoch, the time unit stored everywhere.
pub type Millis = u64;

/// The current wall-clock time in milliseconds since the Unix epoch.
pub fn now_ms() -> Millis {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as Millis)
        .unwrap_or(0)
}
