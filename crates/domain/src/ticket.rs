//! Tickets: what a client puts in the queue, the pool it waits in, its status, and
//! the view of it that the API returns.

use crate::Attributes;
use crate::{MatchId, Millis, PlayerId, Skill, TicketId};
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

/// A region a ticket accepts, with the latency the client measured to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegionLatency {
    pub region: String,
    /// Round-trip time the client measured, if it did; regions without one rank
    /// after measured ones, in the order listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<u32>,
}

/// A request to be matched: one player, or a party of players who play together
/// on one team.
///
/// A ticket is immutable once queued; its status lives in the store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ticket {
    pub id: TicketId,
    /// The player who created the ticket.
    pub owner: PlayerId,
    pub players: Vec<PlayerId>,
    /// Each player's own rating, in the order of `players`.
    #[serde(default)]
    pub player_ratings: Vec<f64>,
    /// Each player's skill as the rating service had it when the ticket was queued,
    /// in the order of `players` (the snapshot the match is scored against). Empty
    /// when the ratings came from a trusted caller instead.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<Skill>,
    /// The skills were read past every rating batch in flight (a locking read), so
    /// the store takes them as they are. Not stored.
    #[serde(skip)]
    pub skills_fresh: bool,
    pub mode: String,
    /// Acceptable regions in the client's order of preference.
    pub regions: Vec<RegionLatency>,
    /// The rating the ticket is matched with: the player's, or the party's per the
    /// mode's policy.
    pub rating: f64,
    /// When the ticket was first queued; kept across release and requeue.
    pub enqueued_at: Millis,
    /// The regions the ticket waits in, best first, each with the time from which it
    /// may be matched there (the mode's region plan). Empty means the best region only,
    /// at once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queues: Vec<RegionQueue>,
    /// What the ticket's players run and want (a client build, a platform, the
    /// maps they would play...), read by the mode's rules.
    #[serde(default, skip_serializing_if = "Attributes::is_empty")]
    pub attributes: Attributes,
    /// Each player's own attributes over the ticket's, in the order of
    /// `players`; empty when none differ.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub player_attributes: Vec<Attributes>,
    /// Players whom a player of this ticket blocked, as the store had it when
    /// the ticket was queued, and those of blocks made either way while it
    /// waits (the store adds them, and takes out those of unblocks): never in
    /// its match. Who blocked its players is on their own tickets: the engine
    /// reads both lists.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<PlayerId>,
    /// How many times a block or unblock made while the ticket waits rewrote
    /// its stored copy (a block already in `blocks` counts too): an unblock's
    /// rewrite of a copy read before another block's fails and reads again.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub blocks_rev: u32,
    /// Where the ticket waits in its queues: tickets that a mode's hard rules
    /// keep apart (client builds) are in different lanes, and a queue is
    /// ordered by lane, then rating ([`Ticket::queue_score`]), so that a claim
    /// of neighbours takes tickets that may meet. 0 for a mode without such
    /// rules (and for a ticket queued before lanes: it waits in lane 0, and is
    /// matched all the same).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub lane: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// How far apart two lanes sit in a queue's order: more than any rating
/// ([`MAX_RATING`]).
pub const LANE_SPAN: f64 = 100_000.0;

/// Lanes are below this (2^24): the highest score, about 1.7e12, keeps a
/// double's precision to a few thousandths of a rating point.
pub const LANES: u32 = 1 << 24;

/// A queue's order for a ticket rated `rating` in lane `lane`: the rating in
/// lane 0; in a later lane, the lane's start plus the rating (kept within the
/// lane's span). `unwind_entry.lua` computes the same.
pub fn queue_score(lane: u32, rating: f64) -> f64 {
    if lane == 0 {
        return rating;
    }
    f64::from(lane % LANES) * LANE_SPAN + rating.clamp(MIN_RATING, MAX_RATING)
}

/// The lane a queue score is in (0 for a rating alone, below 0 for a negative
/// one).
pub fn score_lane(score: f64) -> i64 {
    (score / LANE_SPAN).floor() as i64
}

/// The ranks `[lo, hi)` of the lane of the entry at rank `at` in a queue whose
/// scores, in order, are `scores` (`n` of them): the whole queue for lane 0 or
/// below, as `claim.lua` takes its run.
pub fn lane_ranks(
    scores: impl Iterator<Item = f64> + Clone,
    n: usize,
    at: usize,
) -> (usize, usize) {
    let Some(lane) = scores.clone().nth(at).map(score_lane) else {
        return (0, n);
    };
    if lane <= 0 {
        return (0, n);
    }
    let lo = scores.clone().take_while(|&s| score_lane(s) < lane).count();
    let hi = lo
        + scores
            .skip(lo)
            .take_while(|&s| score_lane(s) == lane)
            .count();
    (lo, hi)
}

/// One region a ticket waits in and from when it may be matched there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegionQueue {
    pub region: String,
    pub eligible_at: Millis,
}

impl Ticket {
    /// A one-player ticket that accepts one region.
    pub fn solo(
        id: TicketId,
        player: PlayerId,
        mode: impl Into<String>,
        region: impl Into<String>,
        rating: f64,
        enqueued_at: Millis,
    ) -> Self {
        Self {
            id,
            owner: player.clone(),
            players: vec![player],
            player_ratings: vec![rating],
            skills: Vec::new(),
            skills_fresh: false,
            mode: mode.into(),
            regions: vec![RegionLatency {
                region: region.into(),
                latency_ms: None,
            }],
            rating,
            enqueued_at,
            queues: Vec::new(),
            attributes: Attributes::default(),
            player_attributes: Vec::new(),
            blocks: Vec::new(),
            blocks_rev: 0,
            lane: 0,
        }
    }

    /// The ticket's place in a queue's order (the score of the Redis queue):
    /// see [`queue_score`].
    pub fn queue_score(&self) -> f64 {
        queue_score(self.lane, self.rating)
    }

    /// Player `i`'s value of attribute `name`: their own, else the ticket's.
    pub fn attribute(&self, i: usize, name: &str) -> Option<&crate::Value> {
        self.player_attributes
            .get(i)
            .and_then(|a| a.get(name))
            .or_else(|| self.attributes.get(name))
    }

    /// The best region: lowest measured latency, then the client's order.
    pub fn best_region(&self) -> &str {
        self.regions
            .iter()
            .enumerate()
            .min_by_key(|(i, r)| (r.latency_ms.unwrap_or(u32::MAX), *i))
            .map(|(_, r)| r.region.as_str())
            .unwrap_or("")
    }

    /// The ticket's home pool: its mode in its best region.
    pub fn pool(&self) -> Pool {
        Pool::new(&self.mode, self.best_region())
    }

    /// Every pool the ticket waits in, the home pool first.
    pub fn pools(&self) -> Vec<Pool> {
        if self.queues.is_empty() {
            return vec![self.pool()];
        }
        self.queues
            .iter()
            .map(|q| Pool::new(&self.mode, &q.region))
            .collect()
    }

    /// From when the ticket may be matched in `region` (its enqueue time if the
    /// region is not in its plan: it then waits only where it was queued).
    pub fn eligible_at(&self, region: &str) -> Millis {
        self.queues
            .iter()
            .find(|q| q.region == region)
            .map_or(self.enqueued_at, |q| q.eligible_at)
    }
}

/// Where a ticket is in its life. Once in a match the ticket follows the match's
/// status; see [`crate::MatchStatus`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TicketStatus {
    /// Waiting in the queue, not yet looked at by any worker.
    Queued,
    /// Being considered by workers (held by one now, or back in the queue between passes).
    Searching,
    /// In a match that waits for every player to accept.
    RequiresAcceptance,
    /// In a match being placed on a game server.
    Placing,
    /// In a match on a game server.
    Assigned,
    /// In a match that is over (or, without placement, matched).
    Completed,
    /// Cancelled by one of its players, or ended by the matchmaker (see `reason`).
    Cancelled,
    /// Ended because a player of it did not accept a match in time.
    TimedOut,
    /// Its match failed after it started (see `reason`).
    Failed,
}

impl TicketStatus {
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            Self::Completed | Self::Cancelled | Self::TimedOut | Self::Failed
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Searching => "searching",
            Self::RequiresAcceptance => "requires_acceptance",
            Self::Placing => "placing",
            Self::Assigned => "assigned",
            Self::Completed => "completed",
            Self::Cancelled => "cancelled",
            Self::TimedOut => "timed_out",
            Self::Failed => "failed",
        }
    }

    /// The status of a ticket in a match of `status`.
    pub fn in_match(status: crate::MatchStatus) -> Self {
        use crate::MatchStatus as M;
        match status {
            M::RequiresAcceptance => Self::RequiresAcceptance,
            M::Placing => Self::Placing,
            M::Assigned => Self::Assigned,
            M::Completed => Self::Completed,
            M::Cancelled => Self::Cancelled,
            M::TimedOut => Self::TimedOut,
            M::Failed => Self::Failed,
        }
    }
}

/// What the API shows of a ticket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TicketView {
    pub id: TicketId,
    pub status: TicketStatus,
    pub mode: String,
    /// Its best region (lowest measured latency, then the order listed); once
    /// that region was closed while it waited (`CLOSED_REGIONS`), the region
    /// it waits in.
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
    /// The ticket's team in the match (0-based), once matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub team: Option<usize>,
    /// Why the ticket ended, when the matchmaker ended it: `matched_elsewhere` (a
    /// player of the ticket was placed in a match through another ticket),
    /// `declined`, `ready_check_expired`, `disconnected`, `server_lost`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The ticket's attributes (including those taken from tokens).
    #[serde(default, skip_serializing_if = "Attributes::is_empty")]
    pub attributes: Attributes,
    /// Each player's own attributes where they differ, in the order of
    /// `players`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub player_attributes: Vec<Attributes>,
    /// While the ticket waits: how long tickets like it (rating, party size,
    /// region) waited lately from queue to match, in all; `null` with too
    /// little recent data, or once it no longer waits.
    #[serde(default)]
    pub estimated_wait_ms: Option<Millis>,
}

impl TicketView {
    /// The view of `ticket` in `status`, having waited until `end` (now while
    /// active, the finish time once terminal). Match fields are left empty.
    pub fn new(ticket: &Ticket, status: TicketStatus, end: Millis) -> Self {
        Self {
            id: ticket.id.clone(),
            status,
            mode: ticket.mode.clone(),
            region: ticket.best_region().to_string(),
            players: ticket.players.clone(),
            rating: ticket.rating,
            enqueued_at: ticket.enqueued_at,
            time_in_queue_ms: end.saturating_sub(ticket.enqueued_at),
            match_id: None,
            co_players: None,
            team: None,
            reason: None,
            attributes: ticket.attributes.clone(),
            player_attributes: ticket.player_attributes.clone(),
            estimated_wait_ms: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_order_a_queue_before_ratings() {
        // Lane 0 is the rating alone.
        assert_eq!(queue_score(0, 1234.5), 1234.5);
        // Any rating in lane 3 comes before any in lane 4.
        assert!(queue_score(3, MAX_RATING) < queue_score(4, MIN_RATING));
        assert_eq!(score_lane(queue_score(3, 1500.0)), 3);
        assert_eq!(score_lane(1500.0), 0);
        assert_eq!(queue_score(3, 1500.25) - queue_score(3, 1500.0), 0.25);
    }

    #[test]
    fn a_lane_s_ranks_are_found_around_any_of_its_entries() {
        let scores = [
            1000.0,
            1200.0,
            queue_score(2, 10.0),
            queue_score(2, 20.0),
            queue_score(5, 0.0),
        ];
        let of = |at| lane_ranks(scores.iter().copied(), scores.len(), at);
        // Lane 0: the whole queue, as a queue without lanes.
        assert_eq!(of(0), (0, 5));
        assert_eq!(of(2), (2, 4));
        assert_eq!(of(3), (2, 4));
        assert_eq!(of(4), (4, 5));
        // Past the end: the whole queue.
        assert_eq!(of(9), (0, 5));
    }
}
