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
//! Not yet: filling (the engine's [`mm_engine`]-side choice exists, the commit
//! does not), the refresh by the server's heartbeat, the game-server plane and
//! the API.

use crate::StoreError;
use async_trait::async_trait;
use mm_domain::{MatchId, MatchStatus, Millis, Pool};
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

    /// The live backfill of match `id`: open, not lapsed, its match assigned.
    async fn backfill(&self, pool: &Pool, id: &MatchId) -> Result<Option<Backfill>, StoreError>;

    /// Every live backfill of `pool` with a seat open, oldest first.
    async fn open_backfills(&self, pool: &Pool) -> Result<Vec<Backfill>, StoreError>;
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
