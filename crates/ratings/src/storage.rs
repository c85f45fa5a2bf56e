//! The rating storage contract, shared by PostgreSQL (deployments of many
//! processes) and SQLite (the embedded default). One conformance suite runs
//! against both (`tests/it/conformance.rs`).
//!
//! Applying results is two-phase so the caller can act while the players' rows are
//! locked: [`RatingStore::begin`] claims the batch's match ids (exactly once: a
//! match already recorded is skipped and its earlier changes returned), locks and
//! updates the players' rows, bumps their versions and writes the history, all in
//! one open transaction; [`Pending::commit`] makes it durable. The rating consumer
//! raises the players' freshness marks in the matchmaking store between the two,
//! so a ticket queued meanwhile is refused as stale and re-read once the commit
//! lands (see `mm_server::ratings`).

use crate::model::Change;
use async_trait::async_trait;
use mm_domain::{MatchId, Millis, PlayerId, RatingJob, RatingPolicy, Skill};
use std::collections::HashMap;

#[derive(Debug, thiserror::Error)]
pub enum RatingError {
    #[error("rating database: {0}")]
    Database(#[from] sqlx::Error),
    #[error("rating database migration: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("rating database URL: {0}")]
    Url(String),
}

/// A player's stored skill in one mode.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stored {
    pub skill: Skill,
    pub games: u64,
    /// When the last scored match was applied (decay counts from here).
    pub last_played: Millis,
}

/// A player's rating in one mode, as the API shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ModeRating {
    pub mode: String,
    pub stored: Stored,
}

/// One scored match in a player's history.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryEntry {
    pub match_id: MatchId,
    pub mode: String,
    pub old: Skill,
    pub new: Skill,
    pub rank: u32,
    pub abandoned: bool,
    pub at: Millis,
}

/// One leaderboard row.
#[derive(Debug, Clone, PartialEq)]
pub struct BoardRow {
    pub rank: u64,
    pub player: PlayerId,
    /// What the board ranks by: the figure matched on, after decay.
    pub value: f64,
    pub skill: Skill,
    pub games: u64,
}

/// What applying one match did.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    pub match_id: MatchId,
    pub mode: String,
    /// The players' changes (empty if the match was not scored).
    pub changes: Vec<Change>,
    /// False when an earlier batch had already applied the match: `changes` are the
    /// ones it made then (so their events can be sent again), nothing changed now.
    pub now: bool,
    /// Why the match changed no rating, if it did not.
    pub unscored: Option<String>,
}

/// Each mode's rating policy.
#[derive(Debug, Clone, Default)]
pub struct Policies(HashMap<String, RatingPolicy>);

impl Policies {
    pub fn new(modes: impl IntoIterator<Item = (String, RatingPolicy)>) -> Self {
        Self(modes.into_iter().collect())
    }

    /// The mode's policy; team Elo for a mode no longer configured.
    pub fn get(&self, mode: &str) -> RatingPolicy {
        self.0.get(mode).copied().unwrap_or(RatingPolicy::ELO)
    }

    pub fn modes(&self) -> impl Iterator<Item = (&str, &RatingPolicy)> {
        self.0.iter().map(|(m, p)| (m.as_str(), p))
    }
}

/// Applied but not yet committed.
#[async_trait]
pub trait Pending: Send {
    fn applied(&self) -> &[Applied];
    /// Makes the batch durable. Dropping instead rolls it back.
    async fn commit(self: Box<Self>) -> Result<(), RatingError>;
}

#[async_trait]
pub trait RatingStore: Send + Sync + 'static {
    /// The stored skills of `players` in `mode`, in order (`None`: never rated).
    async fn skills(
        &self,
        mode: &str,
        players: &[PlayerId],
    ) -> Result<Vec<Option<Stored>>, RatingError>;

    /// Like [`RatingStore::skills`], but waits for any batch in flight that holds
    /// these players' rows, so the answer is at least as new as every result whose
    /// freshness mark was raised before the call.
    async fn skills_fresh(
        &self,
        mode: &str,
        players: &[PlayerId],
    ) -> Result<Vec<Option<Stored>>, RatingError>;

    /// Applies a batch of results (each match at most once, ever) in one open
    /// transaction; see the module doc.
    async fn begin(
        &self,
        jobs: &[RatingJob],
        policies: &Policies,
        now: Millis,
    ) -> Result<Box<dyn Pending>, RatingError>;

    /// Every mode's rating of a player.
    async fn player(&self, player: &PlayerId) -> Result<Vec<ModeRating>, RatingError>;

    /// A player's scored matches in a mode, newest first.
    async fn history(
        &self,
        player: &PlayerId,
        mode: &str,
        limit: usize,
    ) -> Result<Vec<HistoryEntry>, RatingError>;

    /// The best `limit` players of a mode from rank `offset + 1` on.
    async fn leaderboard(
        &self,
        mode: &str,
        offset: u64,
        limit: usize,
    ) -> Result<Vec<BoardRow>, RatingError>;

    /// A player's leaderboard rank in a mode (`None`: never rated).
    async fn rank(&self, mode: &str, player: &PlayerId) -> Result<Option<u64>, RatingError>;

    /// Brings the leaderboard figure of players idle past the mode's decay period
    /// up to date; the same `now` gives the same figures (idempotent). Returns how
    /// many rows changed.
    async fn decay(
        &self,
        mode: &str,
        policy: &RatingPolicy,
        now: Millis,
    ) -> Result<u64, RatingError>;

    /// Every rated player's version in every mode: (player, mode, version). For
    /// seeding freshness marks in a deployment that keeps them complete (`serve`).
    async fn versions(&self) -> Result<Vec<(PlayerId, String, u64)>, RatingError>;

    /// Whether a match was applied (or recorded as unscored).
    async fn is_applied(&self, id: &MatchId) -> Result<bool, RatingError>;

    /// Every history row of every player of a mode, for audits: (player, version,
    /// match) in player then version order.
    async fn audit(&self, mode: &str) -> Result<Vec<(PlayerId, u64, MatchId)>, RatingError>;
}
