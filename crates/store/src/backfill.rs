//! The store contract for backfills (issue 34, in progress): a running match's
//! open seats, kept in its pool beside the match. A game server opens one for a
//! match it hosts (a trusted backend for any), only while the match is
//! `assigned`; opening again changes the seats. Every change raises the
//! backfill's generation, which a fill will have to name (so two workers never
//! fill one seat twice). A backfill lives until it is closed, its match is no
//! longer `assigned`, or nobody refreshed it for its time to live.
//!
//! On Redis a pool's backfills are one hash in the pool's slot
//! (`mm:{p:..}:bf`: match id -> backfill JSON), read and written by scripts
//! that check the match's lifecycle hash in the same slot.
//!
//! Filling: a worker commits a *fill*, a match of its own whose
//! [`mm_domain::FillOf`] names the running match and the generation it read.
//! The commit (`complete`) takes the fill's seats only if the backfill is still
//! at that generation, open, live and has the seats; it raises the generation,
//! so a second worker's fill of the same read is refused. The fill then goes
//! through the mode's ready check (if any) and, instead of a game-server
//! allocation, [`Backfills::join_fill`] adds its tickets to the running match
//! and gives it that match's server. A fill that ends before it joins gives its
//! seats back ([`Backfills::return_seats`]).
//!

use crate::StoreError;
use async_trait::async_trait;
use mm_domain::{Match, MatchId, MatchStatus, Millis, PlayerId, Pool, ServerAssignment};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Most teams a backfill names seats for (a battle royale has 100).
pub const MAX_BACKFILL_TEAMS: usize = 100;

/// A running match's open seats.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Backfill {
    pub match_id: MatchId,
    /// The game server hosting the match.
    pub server_id: String,
    /// Open seats per team.
    pub open: Vec<u32>,
    /// One more at every change: a fill names the generation it read.
    pub generation: u64,
    /// When it was first opened.
    pub opened_at: Millis,
    /// When it lapses unless refreshed.
    pub expires_at: Millis,
}

/// How an open or a close ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BackfillOutcome {
    /// Opened or changed: the backfill as it is now.
    Open(Backfill),
    /// Closed (or there was none).
    Closed,
    /// No such match in the pool.
    NoMatch,
    /// The match is not `assigned` (it has not started, or it is over).
    NotRunning(MatchStatus),
    /// The match is hosted by another server.
    NotYours,
}

#[async_trait]
pub trait Backfills: Send + Sync {
    /// Opens the backfill of match `id` in `pool` with `open` seats per team
    /// (or changes the seats of the open one), live for `ttl` from now. With
    /// `server`, only the server hosting the match may; `None` is a trusted
    /// backend. Seats for more teams than the match has are refused by the
    /// caller; here `open` is taken as given, and an empty `open` closes it.
    async fn open_backfill(
        &self,
        pool: &Pool,
        id: &MatchId,
        server: Option<&str>,
        open: &[u32],
        ttl: Duration,
    ) -> Result<BackfillOutcome, StoreError>;

    /// Closes the backfill of match `id` (the same check on `server`).
    async fn close_backfill(
        &self,
        pool: &Pool,
        id: &MatchId,
        server: Option<&str>,
    ) -> Result<BackfillOutcome, StoreError>;

    /// Records that `player` left running match `id` (only while it is
    /// `assigned`; with `server`, only its host): the match's record lists
    /// them (`left`), and a fill no longer counts them on their team. False
    /// when refused.
    async fn player_left(
        &self,
        pool: &Pool,
        id: &MatchId,
        server: Option<&str>,
        player: &PlayerId,
    ) -> Result<bool, StoreError>;

    /// Keeps the live backfill of match `id` open for `ttl` from now, without
    /// changing it (no new generation): what a game server's heartbeat does
    /// for its matches. Only the host's (`server`; `None` trusted). True if
    /// there was one to refresh.
    async fn refresh_backfill(
        &self,
        pool: &Pool,
        id: &MatchId,
        server: Option<&str>,
        ttl: Duration,
    ) -> Result<bool, StoreError>;

    /// The live backfill of match `id`: open, not lapsed, its match assigned.
    async fn backfill(&self, pool: &Pool, id: &MatchId) -> Result<Option<Backfill>, StoreError>;

    /// Every live backfill of `pool` with a seat open, oldest first.
    async fn open_backfills(&self, pool: &Pool) -> Result<Vec<Backfill>, StoreError>;

    /// Joins the committed fill `fill` (status `placing`) to the running match
    /// it fills: the match gains the fill's tickets (on the teams they name)
    /// and lists the fill; the fill becomes `assigned` on the match's server,
    /// its notification due now. Refused ([`JoinOutcome::Closed`]) when the
    /// match is no longer `assigned`.
    async fn join_fill(&self, pool: &Pool, fill: &MatchId) -> Result<JoinOutcome, StoreError>;

    /// Marks joined fill `fill` (status `assigned`): its players were told,
    /// or its game server acknowledged them (which makes its saga due now).
    /// False if it is not a joined, assigned fill.
    async fn mark_fill(
        &self,
        pool: &Pool,
        fill: &MatchId,
        mark: FillMark,
    ) -> Result<bool, StoreError>;

    /// Takes joined fill `fill` back out of its running match (the game
    /// server refused its players or did not acknowledge them): the match
    /// loses its tickets, and the fill fails with `reason` and no server, so
    /// its players go back to the queue with their wait; due now.
    async fn unjoin_fill(
        &self,
        pool: &Pool,
        fill: &MatchId,
        reason: &str,
    ) -> Result<UnjoinOutcome, StoreError>;

    /// Gives the seats of `fill`, a fill that ended without joining, back to
    /// its match's backfill if that is still open (raising its generation).
    /// Once per fill however often it is called; true if this call gave them.
    async fn return_seats(&self, pool: &Pool, fill: &Match) -> Result<bool, StoreError>;
}

/// What [`Backfills::mark_fill`] records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FillMark {
    Notified,
    Acknowledged,
}

/// How [`Backfills::unjoin_fill`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnjoinOutcome {
    /// Out of the match: its players go back to the queue.
    Done,
    /// The running match is over: the fill ends with it.
    Closed,
    /// Not a joined, assigned fill that is not yet acknowledged.
    Moved,
}

/// How [`Backfills::join_fill`] ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JoinOutcome {
    /// Joined: the fill's players play on this server.
    Joined(ServerAssignment),
    /// The running match is over (or gone): the fill cannot join.
    Closed,
    /// The fill is not `placing` (another driver moved it), or is not a fill.
    Moved,
}

/// Whether `b`, read at `now`, still has the generation `generation` and room
/// for `sizes` players per team (what a fill's commit checks on both stores).
pub(crate) fn has_room(b: &Backfill, generation: u64, sizes: &[u32], now: Millis) -> bool {
    b.generation == generation
        && b.expires_at > now
        && sizes
            .iter()
            .enumerate()
            .all(|(team, &n)| n == 0 || b.open.get(team).is_some_and(|&o| o >= n))
}

/// Of the live `backfills` of a pool, those with a seat open, oldest first
/// (what [`Backfills::open_backfills`] answers on both stores).
pub(crate) fn with_seats(backfills: impl IntoIterator<Item = Backfill>) -> Vec<Backfill> {
    let mut out: Vec<Backfill> = backfills
        .into_iter()
        .filter(|b| b.open.iter().any(|&o| o > 0))
        .collect();
    out.sort_by(|a, b| (a.opened_at, &a.match_id).cmp(&(b.opened_at, &b.match_id)));
    out
}
