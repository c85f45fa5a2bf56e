//! Which pools are supervised. Every supervisor notes the pools it serves on
//! each pass ([`Registry::supervised`]); a pool that no supervisor has noted
//! for a while ([`Registry::unsupervised`]) is served by no process of the
//! deployment any more: its mode or region was taken out of their
//! configuration. Whatever still waits in it (tickets, ready checks,
//! placements) waits for nobody, and its players cannot queue again while a
//! match of theirs there is not over. The supervisor warns of such a pool
//! until it is empty, then forgets it ([`Registry::forget_pool`]). It also
//! warns of a pool it serves that no worker does ([`Registry::live_workers`]:
//! every live worker keeps a lease on each pool it serves).

use crate::StoreError;
use async_trait::async_trait;
use mm_domain::{Millis, Pool};

#[async_trait]
pub trait Registry {
    /// Notes that `pools` were supervised at `now` (ms).
    async fn supervised(&self, pools: &[Pool], now: Millis) -> Result<(), StoreError>;

    /// The pools last supervised before `before`, at most `max`, the longest
    /// unsupervised first, each with when it last was.
    async fn unsupervised(
        &self,
        before: Millis,
        max: usize,
    ) -> Result<Vec<(Pool, Millis)>, StoreError>;

    /// Forgets `pool`, unless a supervisor noted it at `before` or later (it
    /// is noted again whenever one serves it).
    async fn forget_pool(&self, pool: &Pool, before: Millis) -> Result<(), StoreError>;

    /// How many workers hold a live lease on `pool` (each live worker renews
    /// one on every pool it serves, claim worker or leader).
    async fn live_workers(&self, pool: &Pool) -> Result<u64, StoreError>;
}
