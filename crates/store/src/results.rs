//! The store's side of ratings: finished matches' results waiting for the rating
//! service, and each player's freshness marks.
//!
//! A result enters the queue in the same atomic step that records it on the match
//! ([`crate::Transition::rating`]), so a result acknowledged to a game server is
//! never lost. Consumers claim results under a lease and acknowledge them once
//! applied; a consumer that dies mid-batch leaves them to be claimed again when
//! its lease runs out (the rating store applies each match once, so a second
//! delivery changes nothing).
//!
//! A freshness mark is the newest rating version applied, or being applied, for a
//! player in a mode. The rating consumer raises it while it holds the players'
//! rows, before committing; [`crate::Store::enqueue`] refuses a ticket that
//! carries an older version for any player (`EnqueueOutcome::StaleRating`), and
//! the ingress reads the rating again (waiting for the commit) before retrying.

use crate::StoreError;
use async_trait::async_trait;
use mm_domain::{MatchId, PlayerId, Pool, RatingJob};
use std::time::Duration;

#[async_trait]
pub trait Results: Send + Sync {
    /// Claims up to `max` results of `pool` that no consumer holds (or whose
    /// consumer's lease ran out) for `lease`.
    async fn claim_results(
        &self,
        pool: &Pool,
        max: usize,
        lease: Duration,
    ) -> Result<Vec<RatingJob>, StoreError>;

    /// Queues a result recorded elsewhere (imports, benchmarks); the server
    /// manager's go through [`crate::Transition::rating`]. Returns false if the
    /// match was queued already.
    async fn queue_result(&self, pool: &Pool, job: &RatingJob) -> Result<bool, StoreError>;

    /// Forgets results the rating service applied.
    async fn ack_results(&self, pool: &Pool, ids: &[MatchId]) -> Result<(), StoreError>;

    /// How many results of `pool` wait to be applied (held or not).
    async fn pending_results(&self, pool: &Pool) -> Result<u64, StoreError>;

    /// Raises each player's freshness mark for the mode to the version (never lowers it).
    async fn mark_ratings(&self, marks: &[(PlayerId, String, u64)]) -> Result<(), StoreError>;
}
