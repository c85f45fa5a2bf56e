//! Pools nobody serves any more. Each supervisor pass notes the pools it
//! serves in the store's registry ([`mm_store::Registry`]); every few passes
//! a supervisor looks at the pools nobody noted for [`STALE_PASSES`] passes:
//! their mode or region was taken out of every process's configuration while
//! tickets still waited there or matches had steps to take. Nothing serves
//! them: the tickets wait without end and the players of a match stuck in its
//! ready check cannot queue again. The supervisor cannot tell a mode removed
//! for good from one a process will serve again, so it only warns (each
//! check, with the fix: define the mode again with `closed = true`, or serve
//! the region again closed (`REGIONS` and `CLOSED_REGIONS`), which ends
//! the tickets and lets the matches finish) and counts the tickets in
//! `matchmaker_unserved_tickets`; a pool found empty is forgotten.
//!
//! The same check finds the pools the supervisor serves whose tickets have
//! waited that long while no worker holds a live lease on them (every live
//! worker renews one on each pool it serves): workers started with other
//! `MODES` or `REGIONS` than the ingress, or none running at all.

use mm_domain::{Millis, Pool};
use mm_store::{Store, StoreError};
use mm_telemetry::names;
use std::collections::BTreeSet;

/// A pool counts as nobody's after this many supervisor intervals without a
/// pass over it (a minute at the default 5 s).
pub const STALE_PASSES: u32 = 12;
/// A supervisor looks for such pools every this many intervals.
pub const CHECK_PASSES: u32 = 6;
/// Most pools looked at per check.
const MAX_POOLS: usize = 100;

/// A pool nobody serves, with what waits in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stranded {
    pub pool: Pool,
    pub cause: Cause,
    /// Tickets waiting (queued or held).
    pub waiting: u64,
    /// Matches with a step due (a ready check's end, a placement, an unwind).
    pub steps_due: usize,
}

/// Who is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// No supervisor served the pool since this time (ms).
    Unsupervised { last_served: Millis },
    /// No worker serves it, and its oldest ticket was queued at this time.
    NoWorker { oldest: Millis },
}

/// The pools no supervisor served since `before`, but for `own` (served by
/// the caller), with something left in them (those found empty are
/// forgotten); then the pools of `worked` (the caller's pools matches form
/// in) whose oldest ticket was queued before `before` and which no worker
/// serves.
pub async fn find(
    store: &dyn Store,
    own: &[Pool],
    worked: &[Pool],
    before: Millis,
) -> Result<Vec<Stranded>, StoreError> {
    let mut out = Vec::new();
    for pool in worked {
        let depths = store.depths(pool).await?;
        let Some(oldest) = depths.oldest_enqueued_at.filter(|&o| o < before) else {
            continue;
        };
        if store.live_workers(pool).await? == 0 {
            out.push(Stranded {
                pool: pool.clone(),
                cause: Cause::NoWorker { oldest },
                waiting: depths.queued + depths.processing,
                steps_due: 0,
            });
        }
    }
    for (pool, last_served) in store.unsupervised(before, MAX_POOLS).await? {
        if own.contains(&pool) {
            continue;
        }
        let depths = store.depths(&pool).await?;
        let steps_due = store.due(&pool, 1000).await?.len();
        let waiting = depths.queued + depths.processing;
        if waiting == 0 && steps_due == 0 {
            store.forget_pool(&pool, before).await?;
            continue;
        }
        out.push(Stranded {
            pool,
            cause: Cause::Unsupervised { last_served },
            waiting,
            steps_due,
        });
    }
    Ok(out)
}

/// Warns of each pool of `found` and sets its gauge; pools of the last check
/// (`reported`) not found now go back to zero. Returns the pools reported.
pub fn report(found: &[Stranded], reported: &BTreeSet<String>, now: Millis) -> BTreeSet<String> {
    let mut now_reported = BTreeSet::new();
    for s in found {
        match s.cause {
            Cause::Unsupervised { last_served } => tracing::warn!(
                pool = %s.pool.name(),
                tickets_waiting = s.waiting,
                matches_with_steps_due = s.steps_due,
                unserved_for_s = now.saturating_sub(last_served) / 1000,
                "no supervisor serves this pool any more (its mode or region was taken out of the \
                 processes' configuration): its tickets wait without end and its matches cannot \
                 finish. Define the mode again with closed = true (a region: list it in REGIONS \
                 and CLOSED_REGIONS) until they have ended"
            ),
            Cause::NoWorker { oldest } => tracing::warn!(
                pool = %s.pool.name(),
                tickets_waiting = s.waiting,
                oldest_wait_s = now.saturating_sub(oldest) / 1000,
                "no worker serves this pool: its tickets wait unmatched. Start a worker whose \
                 MODES and REGIONS include it (or close the mode)"
            ),
        }
        metrics::gauge!(names::UNSERVED_TICKETS, "pool" => s.pool.name()).set(s.waiting as f64);
        now_reported.insert(s.pool.name());
    }
    for gone in reported.difference(&now_reported) {
        metrics::gauge!(names::UNSERVED_TICKETS, "pool" => gone.clone()).set(0.0);
    }
    now_reported
}
