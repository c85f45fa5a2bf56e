//! The store contract shared by the Redis and in-memory implementations.

use crate::StoreError;
use crate::{
    Backfills, Blocks, Fleet, GiveUp, Leading, Lifecycle, Limits, Locks, Online, Parties,
    RateCheck, Registry, Results, Verdict,
};
use async_trait::async_trait;
use mm_domain::{
    Event, EventEnvelope, Match, MatchId, MatchRecord, MatchStatus, Millis, PlayerId, Pool, Ticket,
    TicketFate, TicketId, TicketStatus, TicketView,
};
use std::collections::HashSet;
use std::time::Duration;

/// Charges one call to `charge`; the wait when it is over the limit.
pub(crate) async fn over<S: Limits + ?Sized>(
    store: &S,
    charge: Option<&RateCheck>,
) -> Result<Option<Duration>, StoreError> {
    let Some(charge) = charge else {
        return Ok(None);
    };
    Ok(
        match store.check_rates(std::slice::from_ref(charge)).await?[..] {
            [Verdict::Limited(wait)] => Some(wait),
            _ => None,
        },
    )
}

/// [`Store::activate_charged`] with the charge made on its own, before.
pub(crate) async fn charge_apart<S: Store + ?Sized>(
    store: &S,
    ticket: &Ticket,
    charge: Option<&RateCheck>,
) -> Result<Result<Vec<u64>, EnqueueOutcome>, StoreError> {
    if let Some(wait) = over(store, charge).await? {
        return Ok(Err(EnqueueOutcome::Limited(wait)));
    }
    store.activate(ticket).await
}

/// What an activation found of a ticket's players ([`Store::activate_apart`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Activated {
    /// Each player's freshness mark for the mode ([`Store::activate`]).
    pub marks: Vec<u64>,
    /// Whom the players blocked or were blocked by, sorted, each once
    /// ([`Blocks::kept_apart`]).
    pub blocks: Vec<PlayerId>,
}

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
    /// This player already has this live ticket for the same mode.
    PlayerBusy(PlayerId, TicketId),
    /// This player is in a match that is not over.
    InMatch(PlayerId, MatchId),
    /// This player declined or ignored a ready check and may not queue until then.
    Banned(PlayerId, Millis),
    /// The ticket carries an older rating for this player than one applied (or
    /// being applied) since: read it again and retry.
    StaleRating(PlayerId),
    /// The call was over the rate limit it was charged to; one would be allowed
    /// after this long. Nothing was queued.
    Limited(Duration),
}

/// Why the matchmaker withdrew a ticket: a player of it was placed in a match
/// through another of their tickets.
pub const MATCHED_ELSEWHERE: &str = "matched_elsewhere";
/// Why the matchmaker withdrew a ticket's entry in one region: the ticket itself was
/// matched in another region. The ticket shows as matched.
pub(crate) const MATCHED_IN_OTHER_POOL: &str = "matched";

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
    /// Tickets waiting in the queue (on Redis, a pool leader's among them: it
    /// reads its pool without taking them out).
    pub queued: u64,
    /// Tickets held by workers (claim workers; the memory store's leaders).
    pub processing: u64,
    /// When the longest-waiting ticket (queued or held) was enqueued; None when
    /// none waits. The Redis store keeps enqueue times per second and may answer
    /// up to a second early (the earliest time seen in that second).
    pub oldest_enqueued_at: Option<Millis>,
}

/// Queue, lease and match state, plus the match lifecycle ([`Lifecycle`]) and the
/// game servers ([`Fleet`]). All methods are safe to call concurrently from any
/// number of processes (Redis) or tasks (memory).
#[async_trait]
pub trait Store:
    Lifecycle
    + Fleet
    + Results
    + Limits
    + Locks
    + Leading
    + Parties
    + Blocks
    + Backfills
    + GiveUp
    + Registry
    + Online
    + Send
    + Sync
    + 'static
{
    /// Succeeds when the store answers.
    async fn ping(&self) -> Result<(), StoreError>;

    /// Queues a new ticket in every pool it waits in ([`Ticket::pools`]), unless one
    /// of its players already has a live ticket for the same mode, is in a match
    /// that is not over, or is banned, or unless the ticket's rating snapshot of a
    /// player is older than that player's freshness mark (see [`Results`]; not
    /// checked when `skills_fresh` is set or the ticket has no snapshots). A player may have
    /// live tickets for several modes at once; the first match any of them joins
    /// withdraws the others (reason [`MATCHED_ELSEWHERE`]).
    async fn enqueue(&self, ticket: &Ticket) -> Result<EnqueueOutcome, StoreError>;

    /// [`Store::enqueue`] as one rate-limited call: first charges one call to
    /// `charge` (a limiter, normally of one of the ticket's players); over the
    /// limit it answers [`EnqueueOutcome::Limited`] and does nothing else. A
    /// charged call stays charged whatever the outcome. Redis charges a player's
    /// limiter inside that player's activation script, with no round trip of its
    /// own.
    async fn enqueue_charged(
        &self,
        ticket: &Ticket,
        charge: Option<&RateCheck>,
    ) -> Result<EnqueueOutcome, StoreError> {
        if let Some(wait) = over(self, charge).await? {
            return Ok(EnqueueOutcome::Limited(wait));
        }
        self.enqueue(ticket).await
    }

    /// A new ticket from its player: reads whom its players blocked, as the
    /// store has it now, into [`Ticket::blocks`], then
    /// [`Store::enqueue_charged`]. Redis on one node does both in one script
    /// call for a solo player who blocked nobody.
    async fn enqueue_new(
        &self,
        ticket: &mut Ticket,
        charge: Option<&RateCheck>,
    ) -> Result<EnqueueOutcome, StoreError> {
        ticket.blocks = self.kept_apart(&ticket.players).await?;
        self.enqueue_charged(ticket, charge).await
    }

    /// The first half of [`Store::enqueue`], for a caller that finishes rating the
    /// ticket meanwhile: makes the ticket its players' live ticket for the mode
    /// (with the same refusals, the freshness check only for snapshots carried and
    /// not `skills_fresh`) but queues it nowhere yet. Returns each player's
    /// freshness mark for the mode. Follow with [`Store::enqueue_entries`] (same
    /// ticket id, mode and regions; ratings filled in), or give the places back with
    /// [`Store::deactivate`].
    async fn activate(
        &self,
        ticket: &Ticket,
    ) -> Result<Result<Vec<u64>, EnqueueOutcome>, StoreError>;

    /// [`Store::activate`] charged to a rate limit, as [`Store::enqueue_charged`].
    async fn activate_charged(
        &self,
        ticket: &Ticket,
        charge: Option<&RateCheck>,
    ) -> Result<Result<Vec<u64>, EnqueueOutcome>, StoreError> {
        charge_apart(self, ticket, charge).await
    }

    /// [`Store::activate_charged`] and [`Blocks::kept_apart`] of the ticket's
    /// players together: what a new ticket needs before it is queued. If the
    /// block lists cannot be read, the activation is given back and the error
    /// returned. Redis reads them in the players' activation scripts (the lists
    /// live in the players' slots), with no call of their own.
    async fn activate_apart(
        &self,
        ticket: &Ticket,
        charge: Option<&RateCheck>,
    ) -> Result<Result<Activated, EnqueueOutcome>, StoreError> {
        let (blocks, activated) = tokio::join!(
            self.kept_apart(&ticket.players),
            self.activate_charged(ticket, charge)
        );
        let marks = match activated? {
            Ok(marks) => marks,
            Err(refused) => return Ok(Err(refused)),
        };
        match blocks {
            Ok(blocks) => Ok(Ok(Activated { marks, blocks })),
            Err(e) => {
                if let Err(undo) = self.deactivate(ticket).await {
                    tracing::warn!(error = %undo, "could not give back a ticket's activation");
                }
                Err(e)
            }
        }
    }

    /// The second half of [`Store::enqueue`]: queues an activated ticket in every
    /// pool it waits in.
    async fn enqueue_entries(&self, ticket: &Ticket) -> Result<(), StoreError>;

    /// Gives back an activation that will not be queued.
    async fn deactivate(&self, ticket: &Ticket) -> Result<(), StoreError>;

    /// A ticket of `player`'s, or `None` if the player has no such ticket.
    async fn ticket(
        &self,
        player: &PlayerId,
        id: &TicketId,
    ) -> Result<Option<TicketView>, StoreError>;

    /// Cancels a ticket of `player`'s unless it is already in a match.
    async fn cancel(&self, player: &PlayerId, id: &TicketId) -> Result<CancelOutcome, StoreError> {
        self.withdraw(player, id, None).await
    }

    /// Cancels a ticket of `player`'s unless it is already in a match; with a
    /// `reason`, as the matchmaker's doing (the ticket reads as cancelled with it).
    async fn withdraw(
        &self,
        player: &PlayerId,
        id: &TicketId,
        reason: Option<&str>,
    ) -> Result<CancelOutcome, StoreError>;

    /// The player's current tickets, one per mode (some may have ended since: read
    /// them to know).
    async fn live_tickets(&self, player: &PlayerId) -> Result<Vec<TicketId>, StoreError>;

    /// The player's most recent matches, newest first.
    async fn player_matches(
        &self,
        player: &PlayerId,
        limit: usize,
    ) -> Result<Vec<Match>, StoreError>;

    /// The pool of match `id` if it is in the player's history (their newest
    /// [`crate::HISTORY_LEN`] matches), found without reading the matches: what a
    /// player asking for one of their past matches costs.
    async fn history_pool(
        &self,
        player: &PlayerId,
        id: &MatchId,
    ) -> Result<Option<Pool>, StoreError>;

    /// Claims up to `max` queued tickets of `pool` for `worker`, starting at the
    /// rating rank `start * queue length` (start in `[0, 1)`), and sets the worker's
    /// lease on the pool to `lease` from now. The Redis store takes at most 2,000
    /// in one call (see `claim.lua`).
    ///
    /// While a pool leader holds the pool's lock ([`crate::Leading`]), the pool is
    /// the leader's: this claims nothing and answers [`StoreError::Led`], so workers
    /// of the two coordinations sharing a store (a misconfiguration, or a rolling
    /// change from `claim` to `leader`) leave a led pool whole to its leader.
    async fn claim(
        &self,
        worker: &str,
        pool: &Pool,
        max: usize,
        start: f64,
        lease: Duration,
    ) -> Result<Vec<Claimed>, StoreError>;

    /// [`Store::claim`] of up to `max` tickets but at most half the queue,
    /// unless that is fewer than `floor`: a consumer whose claims grow past its
    /// batch (rules that thin it: see `mm_engine::claim`) does not take a small
    /// pool whole, away from the other consumers.
    async fn claim_part(
        &self,
        worker: &str,
        pool: &Pool,
        max: usize,
        floor: usize,
        start: f64,
        lease: Duration,
    ) -> Result<Vec<Claimed>, StoreError>;

    /// Commits matches whose tickets `worker` still holds, each all or nothing, and
    /// none of whose players is already in another match (through another ticket or
    /// another region's entry of the same ticket). Returns the ids of the committed
    /// matches; they wait in the outbox for `fan_out`. A match that loses a race for
    /// a player is skipped; its tickets stay held for the worker to release.
    /// `lease` is the worker's lease: a cross-pool reservation left older than that
    /// by a crashed worker may be taken over.
    async fn complete(
        &self,
        worker: &str,
        pool: &Pool,
        matches: &[Match],
        lease: Duration,
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

    /// Finishes committed matches: withdraws their players' other tickets and their
    /// tickets' entries in other pools, writes the matches to the players' histories,
    /// marks the players as in the match while it is not over, publishes the
    /// match's first event (`match.ready_check`, `match.placing` or
    /// `match.completed`; `ticket.cancelled` for what was withdrawn) and takes the
    /// matches out of the outbox.
    /// Idempotent and resumable.
    async fn fan_out(&self, pool: &Pool, matches: &[Match]) -> Result<(), StoreError>;

    /// [`Store::fan_out`] of matches formed by the cycle that first claimed
    /// some of their tickets (those in `first`): the players of those tickets
    /// hear `ticket.searching` just before the match, rather than in a publish
    /// of its own before the cycle formed (on Redis, in the same message as the
    /// match: see [`crate::events`]).
    async fn fan_out_first(
        &self,
        pool: &Pool,
        matches: &[Match],
        first: &HashSet<TicketId>,
    ) -> Result<(), StoreError> {
        self.publish(&searching_events(matches, first)).await?;
        self.fan_out(pool, matches).await
    }

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

    /// Wake-ups from now on: the names of pools a ticket arrived in, from any
    /// process (see [`crate::Wakes`]; a hint, not a guarantee).
    async fn wake_ups(&self) -> Result<crate::WakeUps, StoreError>;

    /// Events addressed to `player` from now on, from any process.
    async fn subscribe(&self, player: &PlayerId) -> Result<crate::Events, StoreError>;

    /// Queue and processing depth of a pool.
    async fn depths(&self, pool: &Pool) -> Result<Depths, StoreError>;

    /// The pool's most recently committed matches, newest first (at most
    /// [`RECENT_MATCHES`]; fewer once old ones are purged).
    async fn recent_matches(&self, pool: &Pool, n: usize) -> Result<Vec<Match>, StoreError>;
}

/// How many committed matches a pool remembers for [`Store::recent_matches`].
pub const RECENT_MATCHES: usize = 50;

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
    /// Taken out by the matchmaker, with the reason (shows as cancelled).
    Withdrawn(String),
    /// Ended because a player did not accept a match in time, with the reason.
    TimedOut(String),
}

impl State {
    /// Parses the Redis state string (see [`crate::keys`]).
    pub(crate) fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "q" => State::New,
            "r" => State::Requeued,
            "s" => State::Held,
            "c" => State::Cancelled,
            _ => match (s.strip_prefix("w:"), s.strip_prefix("t:")) {
                (Some(reason), _) => State::Withdrawn(reason.to_string()),
                (_, Some(reason)) => State::TimedOut(reason.to_string()),
                _ => State::Matched(MatchId::new(s.strip_prefix("m:")?).ok()?),
            },
        })
    }

    pub(crate) fn is_live(&self) -> bool {
        matches!(self, State::New | State::Requeued | State::Held)
    }

    /// The ticket's status; in a match, the match's (`None` if unknown: completed).
    pub(crate) fn status(&self, in_match: Option<MatchStatus>) -> TicketStatus {
        use TicketStatus as S;
        match self {
            State::New => S::Queued,
            State::Requeued | State::Held => S::Searching,
            State::Cancelled | State::Withdrawn(_) => S::Cancelled,
            State::TimedOut(_) => S::TimedOut,
            State::Matched(_) => in_match.map_or(S::Completed, S::in_match),
        }
    }
}

/// One pool's entry of a ticket, as read from the store.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub pool: Pool,
    pub state: State,
    pub finished_at: Option<mm_domain::Millis>,
}

/// The region a waiting ticket names when it no longer waits in its best
/// one (`best`: that region was closed while it waited, and the ticket left
/// it) but still waits in another: the first such. `None` when it waits in
/// its best region, or nowhere.
pub(crate) fn moved_region<'e>(entries: &'e [Entry], best: &str) -> Option<&'e str> {
    if entries
        .iter()
        .any(|e| e.pool.region == best && e.state.is_live())
    {
        return None;
    }
    entries
        .iter()
        .find(|e| e.state.is_live())
        .map(|e| e.pool.region.as_str())
}

/// The state of a ticket that waits in several pools, from its entries there: matched
/// if any entry is; live while any entry is (searching once any was looked at);
/// otherwise withdrawn (with its reason) before cancelled. Returns the entry that
/// decides, with the latest finish time when the ticket is over.
pub(crate) fn combine(entries: Vec<Entry>) -> Option<Entry> {
    if let Some(m) = entries
        .iter()
        .find(|e| matches!(e.state, State::Matched(_)))
    {
        return Some(m.clone());
    }
    let rank = |s: &State| match s {
        State::Held | State::Requeued => 5,
        State::New => 4,
        State::Withdrawn(r) if r != MATCHED_IN_OTHER_POOL => 3,
        State::TimedOut(_) => 3,
        State::Withdrawn(_) => 2,
        State::Cancelled => 1,
        State::Matched(_) => 0,
    };
    let finished_at = entries.iter().filter_map(|e| e.finished_at).max();
    let mut best = entries.into_iter().max_by_key(|e| rank(&e.state))?;
    if !best.state.is_live() {
        best.finished_at = finished_at;
    }
    Some(best)
}

/// Builds the API view of a ticket from what the store holds; `found` is the
/// ticket's match with its lifecycle when the ticket is in one.
///
/// A match that ended before it was played decides its tickets' fate at once,
/// though the unwind that carries it out comes a moment later: a ticket bound
/// back to the queue reads `queued` (still waiting, with its original wait) from
/// the moment the match ends, and one that ends reads as it will stay. So a
/// status read as terminal never changes again.
pub(crate) fn view(
    ticket: &Ticket,
    state: &State,
    finished_at: Option<mm_domain::Millis>,
    found: Option<&MatchRecord>,
    now: mm_domain::Millis,
) -> TicketView {
    let fate = match (state, found) {
        (State::Matched(_), Some(r)) if r.status.is_terminal() => Some(r.fate(&ticket.players)),
        _ => None,
    };
    if fate == Some(TicketFate::Requeue) {
        return TicketView::new(ticket, TicketStatus::Queued, now);
    }
    let status = match &fate {
        Some(TicketFate::End { status, .. }) => *status,
        _ => state.status(found.map(|r| r.status)),
    };
    // Time in queue stops when the ticket ends or joins a match.
    let end = if status.is_terminal() || matches!(state, State::Matched(_)) {
        finished_at.unwrap_or(now)
    } else {
        now
    };
    let mut v = TicketView::new(ticket, status, end);
    if let State::Withdrawn(reason) | State::TimedOut(reason) = state {
        v.reason = Some(reason.clone());
    }
    if let State::Matched(id) = state {
        v.match_id = Some(id.clone());
        let m = found.map(|r| &r.matched);
        v.co_players = m.map(|m| {
            m.players()
                .filter(|p| !ticket.players.contains(p))
                .cloned()
                .collect()
        });
        v.team = m
            .and_then(|m| m.tickets.iter().find(|t| t.ticket_id == ticket.id))
            .map(|t| t.team);
        v.reason = match fate {
            Some(TicketFate::End { reason, .. }) => Some(reason),
            _ => found.and_then(|r| r.reason.clone()),
        };
    }
    v
}

/// The first event of a committed match for each of its players: the ready check,
/// placement, or (without either) the completed match.
pub(crate) fn formed_events(m: &Match) -> Vec<EventEnvelope> {
    let record = MatchRecord::start(m);
    m.tickets
        .iter()
        .flat_map(|t| {
            t.players.iter().map(move |p| EventEnvelope {
                player: p.clone(),
                event: match record.status {
                    MatchStatus::RequiresAcceptance => Event::ReadyCheck {
                        ticket_id: t.ticket_id.clone(),
                        match_id: m.id.clone(),
                        deadline: record.deadline.unwrap_or(m.created_at),
                        matched: m.clone(),
                    },
                    MatchStatus::Placing => Event::Placing {
                        ticket_id: t.ticket_id.clone(),
                        match_id: m.id.clone(),
                        matched: m.clone(),
                    },
                    _ => Event::Completed {
                        ticket_id: t.ticket_id.clone(),
                        match_id: m.id.clone(),
                        matched: m.clone(),
                        result: None,
                    },
                },
            })
        })
        .collect()
}

/// The `ticket.searching` events of the tickets of `matches` in `first`, one
/// per player, in the matches' order.
pub(crate) fn searching_events(matches: &[Match], first: &HashSet<TicketId>) -> Vec<EventEnvelope> {
    matches
        .iter()
        .flat_map(|m| &m.tickets)
        .filter(|t| first.contains(&t.ticket_id))
        .flat_map(|t| searching(&t.ticket_id, &t.players))
        .collect()
}

/// Ticket `id`'s `ticket.searching` events, one per player of `players`.
pub fn searching<'a>(
    id: &'a TicketId,
    players: &'a [PlayerId],
) -> impl Iterator<Item = EventEnvelope> + 'a {
    players.iter().map(move |p| EventEnvelope {
        player: p.clone(),
        event: Event::Searching {
            ticket_id: id.clone(),
        },
    })
}

/// The `ticket.cancelled` events of a ticket the matchmaker withdrew, one per player.
pub(crate) fn withdrawn_events(ticket: &Ticket, reason: &str) -> Vec<EventEnvelope> {
    EventEnvelope::cancelled(&ticket.players, &ticket.id, Some(reason))
}
