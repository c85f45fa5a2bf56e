//! The store contract for a match's life after it is committed: the saga's state
//! (status, ready-check answers, server, result), the steps that move it, and the
//! players' "in a match" and "banned" marks. The saga itself is driven by
//! `mm_server::saga`; every step here is atomic and safe to repeat.

use crate::StoreError;
use async_trait::async_trait;
use mm_domain::{
    Answer, MatchId, MatchRecord, MatchResult, MatchStatus, Millis, PlayerId, Pool, RatingJob,
    ServerAssignment,
};

/// How a ready-check answer landed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnswerOutcome {
    /// Recorded: `accepted` of `total` players have accepted.
    Accepted { accepted: usize, total: usize },
    /// This answer completed the ready check: the match moved on to `next`.
    AllAccepted { next: MatchStatus, total: usize },
    /// The player declined: the match is cancelled.
    Declined,
    /// The ready check is over: the match is in this status, or its deadline passed.
    Closed(MatchStatus),
    /// No such match in its pool.
    NotFound,
}

/// A move of a match from one status to another, applied only if the match is in
/// one of `from` (compare-and-set).
#[derive(Debug, Clone, PartialEq)]
pub struct Transition {
    pub from: Vec<MatchStatus>,
    pub to: MatchStatus,
    pub reason: Option<String>,
    pub server: Option<ServerAssignment>,
    pub result: Option<MatchResult>,
    /// Answers recorded with the move (players who dropped count as declining).
    pub answers: Vec<(PlayerId, Answer)>,
    /// When the saga needs its next step; `None`: no step pending.
    pub due: Option<Millis>,
    /// A result for the rating service, queued in the same atomic step (see
    /// [`crate::Results`]).
    pub rating: Option<RatingJob>,
}

impl Transition {
    pub fn new(from: &[MatchStatus], to: MatchStatus) -> Self {
        Self {
            from: from.to_vec(),
            to,
            reason: None,
            server: None,
            result: None,
            answers: Vec::new(),
            due: None,
            rating: None,
        }
    }

    pub fn reason(mut self, r: &str) -> Self {
        self.reason = Some(r.to_string());
        self
    }

    pub fn due(mut self, at: Millis) -> Self {
        self.due = Some(at);
        self
    }
}

/// The store's side of the match saga.
#[async_trait]
pub trait Lifecycle: Send + Sync {
    /// The player's match that is not over yet (`requires_acceptance`, `placing`
    /// or `assigned`), with its pool.
    async fn current_match(&self, player: &PlayerId)
    -> Result<Option<(Pool, MatchId)>, StoreError>;

    /// A match with its lifecycle. `in_outbox` is true while the match's commit is
    /// not yet settled (players not yet told).
    async fn match_record(
        &self,
        pool: &Pool,
        id: &MatchId,
    ) -> Result<Option<(MatchRecord, bool)>, StoreError>;

    /// Records `player`'s ready-check answer (the caller checked the player is in
    /// the match). Refused once the deadline passed (store clock).
    async fn answer(
        &self,
        pool: &Pool,
        id: &MatchId,
        player: &PlayerId,
        answer: Answer,
    ) -> Result<AnswerOutcome, StoreError>;

    /// Records that `player`'s last connection dropped (`connected == false`) or
    /// came back during the match's ready check; a drop makes the match due when
    /// the player's grace runs out.
    async fn presence(
        &self,
        pool: &Pool,
        id: &MatchId,
        player: &PlayerId,
        connected: bool,
    ) -> Result<(), StoreError>;

    /// Applies `t` if the match is in one of `t.from`. Returns whether it applied.
    async fn transition(
        &self,
        pool: &Pool,
        id: &MatchId,
        t: Transition,
    ) -> Result<bool, StoreError>;

    /// Matches of `pool` whose saga has a step due at or before now.
    async fn due(&self, pool: &Pool, limit: usize) -> Result<Vec<MatchId>, StoreError>;

    /// Postpones the match's next step to `at` (only if one is pending).
    async fn reschedule(&self, pool: &Pool, id: &MatchId, at: Millis) -> Result<(), StoreError>;

    /// After the match ended (terminal status): requeues, ends or leaves its
    /// tickets per [`MatchRecord::fate`], bans the players of
    /// [`MatchRecord::at_fault`] until `ban_until`, and clears the players'
    /// in-a-match mark. Idempotent; the caller then tells the players and calls
    /// [`Lifecycle::step_done`].
    async fn unwind(
        &self,
        pool: &Pool,
        record: &MatchRecord,
        ban_until: Millis,
    ) -> Result<(), StoreError>;

    /// Marks the step for `status` done: nothing is due until the next transition.
    /// Does nothing if the match moved on meanwhile. True if this call marked it;
    /// for a status that ends the match, only the first call that settles it
    /// (drivers that raced through the same last step count the match once).
    async fn step_done(
        &self,
        pool: &Pool,
        id: &MatchId,
        status: MatchStatus,
    ) -> Result<bool, StoreError>;
}
