//! The store contract shared by the Redis and in-memory implementations.

use crate::StoreError;
use async_trait::async_trait;
use mm_domain::{
    Event, EventEnvelope, Match, MatchId, PlayerId, Pool, Ticket, TicketId, TicketView,
};
use std::time::Duration;
use tokio::sync::mpsc;

/// A ticket a worker claimed.
#[derive(Debug, Clone, PartialEq)]
pub struct Claimed {
    pub ticket: Ticket,
    /// True the first time any worker claims this ticket (it becomes `searching`).
    pub first_claim: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnqueueOutcome {
    Queued,
    /// This player already has this active ticket.
    PlayerBusy(PlayerId, TicketId),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CancelOutcome {
    Cancelled,
    AlreadyCancelled,
    /// Too late: the ticket is in this match.
    Matched(MatchId),
    NotFound,
}

/// How many tickets wait in a pool's queue and how many workers hold.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Depths {
    pub queued: u64,
    pub processing: u64,
}

/// Queue, lease and match state. All methods are safe to call concurrently from any
/// number of processes (Redis) or tasks (memory).
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Succeeds when the store answers.
    async fn ping(&self) -> Result<(), StoreError>;

    /// Queues a new ticket, unless one of its players already has an active one.
    async fn enqueue(&self, ticket: &Ticket) -> Result<EnqueueOutcome, StoreError>;

    /// A ticket of `player`'s, or `None` if the player has no such ticket.
    async fn ticket(
        &self,
        player: &PlayerId,
        id: &TicketId,
    ) -> Result<Option<TicketView>, StoreError>;

    /// Cancels a ticket of `player`'s unless it is already in a match.
    async fn cancel(&self, player: &PlayerId, id: &TicketId) -> Result<CancelOutcome, StoreError>;

    /// The player's most recent matches, newest first.
    async fn player_matches(
        &self,
        player: &PlayerId,
        limit: usize,
    ) -> Result<Vec<Match>, StoreError>;

    /// Claims up to `max` queued tickets of `pool` for `worker`, starting at the
    /// rating rank `start * queue length` (start in `[0, 1)`), and sets the worker's
    /// lease on the pool to `lease` from now.
    async fn claim(
        &self,
        worker: &str,
        pool: &Pool,
        max: usize,
        start: f64,
        lease: Duration,
    ) -> Result<Vec<Claimed>, StoreError>;

    /// Commits matches whose tickets `worker` still holds, each all or nothing.
    /// Returns the ids of the committed matches; they wait in the outbox for `fan_out`.
    async fn complete(
        &self,
        worker: &str,
        pool: &Pool,
        matches: &[Match],
    ) -> Result<Vec<MatchId>, StoreError>;

    /// Returns held tickets to the queue (all of them when `ids` is `None`), keeping
    /// their original enqueue time. Returns how many were requeued.
    async fn release(
        &self,
        worker: &str,
        pool: &Pool,
        ids: Option<&[TicketId]>,
    ) -> Result<usize, StoreError>;

    /// Extends `worker`'s lease on `pool`; returns how many tickets it holds there.
    async fn heartbeat(
        &self,
        worker: &str,
        pool: &Pool,
        lease: Duration,
    ) -> Result<usize, StoreError>;

    /// Workers whose lease on `pool` has expired.
    async fn expired_workers(&self, pool: &Pool) -> Result<Vec<String>, StoreError>;

    /// Returns the tickets of `worker` to the queue if its lease has expired.
    /// `None` if the lease turned out to be live.
    async fn reclaim(&self, worker: &str, pool: &Pool) -> Result<Option<usize>, StoreError>;

    /// Writes committed matches to their players' histories, publishes
    /// `ticket.matched` to them and takes them out of the outbox, in one round trip.
    /// Idempotent.
    async fn fan_out(&self, pool: &Pool, matches: &[Match]) -> Result<(), StoreError>;

    /// Matches that were committed more than `older_than` ago and not yet fanned out.
    async fn stale_outbox(
        &self,
        pool: &Pool,
        older_than: Duration,
    ) -> Result<Vec<Match>, StoreError>;

    /// Forgets tickets and matches that finished more than `older_than` ago.
    async fn purge(&self, pool: &Pool, older_than: Duration) -> Result<usize, StoreError>;

    /// Publishes events to the players they are addressed to, in any process.
    async fn publish(&self, events: &[EventEnvelope]) -> Result<(), StoreError>;

    /// Events addressed to `player` from now on, from any process.
    async fn subscribe(&self, player: &PlayerId) -> Result<mpsc::Receiver<Event>, StoreError>;

    /// Queue and processing depth of a pool.
    async fn depths(&self, pool: &Pool) -> Result<Depths, StoreError>;
}

/// A ticket's state in the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum State {
    /// Queued, never claimed.
    New,
    /// Back in the queue after a pass.
    Requeued,
    /// Held by a worker.
    Held,
    Cancelled,
    Matched(MatchId),
}

impl State {
    /// Parses the Redis state string (see [`crate::keys`]).
    pub(crate) fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "q" => State::New,
            "r" => State::Requeued,
            "s" => State::Held,
            "c" => State::Cancelled,
            _ => State::Matched(MatchId::new(s.strip_prefix("m:")?).ok()?),
        })
    }

    pub(crate) fn status(&self) -> mm_domain::TicketStatus {
        use mm_domain::TicketStatus as S;
        match self {
            State::New => S::Queued,
            State::Requeued | State::Held => S::Searching,
            State::Cancelled => S::Cancelled,
            State::Matched(_) => S::Matched,
        }
    }
}

/// Builds the API view of a ticket from what the store holds.
pub(crate) fn view(
    ticket: &Ticket,
    state: &State,
    finished_at: Option<mm_domain::Millis>,
    found: Option<&Match>,
    now: mm_domain::Millis,
) -> TicketView {
    let status = state.status();
    let end = if status.is_terminal() {
        finished_at.unwrap_or(now)
    } else {
        now
    };
    let mut v = TicketView::new(ticket, status, end);
    if let State::Matched(id) = state {
        v.match_id = Some(id.clone());
        v.co_players = found.map(|m| {
            m.players()
                .filter(|p| !ticket.players.contains(p))
                .cloned()
                .collect()
        });
        v.team = found
            .and_then(|m| m.tickets.iter().find(|t| t.ticket_id == ticket.id))
            .map(|t| t.team);
    }
    v
}

/// The `ticket.matched` events of a committed match, one per player.
pub(crate) fn matched_events(m: &Match) -> Vec<EventEnvelope> {
    m.tickets
        .iter()
        .flat_map(|t| {
            t.players.iter().map(|p| EventEnvelope {
                player: p.clone(),
                event: Event::Matched {
                    ticket_id: t.ticket_id.clone(),
                    match_id: m.id.clone(),
                    matched: m.clone(),
                },
            })
        })
        .collect()
}
