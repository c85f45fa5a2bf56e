//! The rating consumer: takes finished matches' results from the store and applies
//! them to the rating database, exactly once, in batches.
//!
//! One batch, per pool: claim results under a lease -> [`RatingStore::begin`]
//! (claims the match ids, locks and updates the players' rows, in one open
//! transaction) -> raise the players' freshness marks in the store -> commit ->
//! publish `rating.updated` -> acknowledge the results. A consumer that dies
//! anywhere in there leaves its results claimed until the lease runs out; the next
//! consumer applies what was not committed and, for what was, finds the match
//! already recorded and only sends the events again. A database that is down
//! fails the batch before the commit: the results stay in the store and are
//! retried, so nothing is lost and nothing is applied twice.

use crate::{Catalog, MAX_BACKOFF};
use mm_domain::{Event, EventEnvelope, Millis, Pool, RatingJob, now_ms};
use mm_ratings::{Applied, Policies, RatingStore};
use mm_store::Store;
use mm_store::outage::Backoff;
use mm_telemetry::names;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How the consumer runs.
#[derive(Debug, Clone)]
pub struct ConsumerConfig {
    /// Most results (matches) applied in one transaction.
    pub batch: usize,
    /// How long a claimed batch is ours before another consumer may take it.
    pub lease: Duration,
    /// Longest pause when there is nothing to do (starts at 5 ms, doubles).
    pub idle: Duration,
    /// How often the leaderboards' decay figures are brought up to date.
    pub decay_every: Duration,
}

impl Default for ConsumerConfig {
    fn default() -> Self {
        Self {
            batch: 200,
            lease: Duration::from_secs(10),
            idle: Duration::from_millis(100),
            decay_every: Duration::from_secs(3600),
        }
    }
}

/// Each mode's rating policy from the catalog.
pub fn policies(catalog: &Catalog) -> Policies {
    Policies::new(catalog.modes().iter().map(|m| (m.name.clone(), m.rating)))
}

/// Crash testing: with `MATCHMAKER_FAILPOINT=ratings-pause-after-STEP` (`begin`:
/// rows locked, marks raised, not committed; `commit`: committed, not
/// acknowledged) the consumer stops for good right there, so a test can SIGKILL it.
async fn pause_if(step: &str) {
    static AT: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let at = AT.get_or_init(|| {
        std::env::var("MATCHMAKER_FAILPOINT")
            .ok()
            .and_then(|v| v.strip_prefix("ratings-pause-after-").map(String::from))
    });
    if at.as_deref() == Some(step) {
        tracing::warn!(step, "failpoint: rating consumer paused for good");
        std::future::pending::<()>().await;
    }
}

/// Why a batch did not finish; its results stay in the store and come back.
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    #[error(transparent)]
    Store(#[from] mm_store::StoreError),
    #[error(transparent)]
    Ratings(#[from] mm_ratings::RatingError),
}

impl crate::Unreachable for BatchError {
    fn unreachable(&self) -> bool {
        matches!(self, BatchError::Store(e) if e.is_unreachable())
    }
}

/// Applies one claimed batch of `pool`'s results. Returns what was applied.
pub async fn apply(
    store: &dyn Store,
    ratings: &dyn RatingStore,
    policies: &Policies,
    pool: &Pool,
    jobs: &[RatingJob],
    now: Millis,
) -> Result<Vec<Applied>, BatchError> {
    let started = std::time::Instant::now();
    let pending = ratings.begin(jobs, policies, now).await?;
    let marks: Vec<_> = pending
        .applied()
        .iter()
        .filter(|a| a.now)
        .flat_map(|a| {
            a.changes
                .iter()
                .map(|c| (c.player.clone(), a.mode.clone(), c.new.version))
        })
        .collect();
    // Raised while the rows are locked: a ticket queued from here on with an older
    // rating is refused, and its fresh read waits for the commit.
    store.mark_ratings(&marks).await?;
    pause_if("begin").await;
    let applied = pending.applied().to_vec();
    pending.commit().await?;
    pause_if("commit").await;
    let events: Vec<EventEnvelope> = applied
        .iter()
        .flat_map(|a| {
            a.changes.iter().map(|c| EventEnvelope {
                player: c.player.clone(),
                event: Event::RatingUpdated {
                    mode: a.mode.clone(),
                    match_id: a.match_id.clone(),
                    old: c.old,
                    new: c.new,
                },
            })
        })
        .collect();
    if let Err(e) = store.publish(&events).await {
        warn_store!(e, "could not publish rating.updated");
    }
    let ids: Vec<_> = jobs.iter().map(|j| j.matched.id.clone()).collect();
    store.ack_results(pool, &ids).await?;
    record(jobs, &applied, now, started);
    Ok(applied)
}

/// Ratings updated, each result's time from its report to its ratings, and the
/// batch's duration.
fn record(jobs: &[RatingJob], applied: &[Applied], now: Millis, started: std::time::Instant) {
    for a in applied.iter().filter(|a| a.now) {
        metrics::counter!(names::RATING_UPDATES, "mode" => a.mode.clone())
            .increment(a.changes.len() as u64);
    }
    let lag = metrics::histogram!(names::RATING_LAG);
    for job in jobs {
        lag.record(now.saturating_sub(job.result.reported_at) as f64 / 1000.0);
    }
    metrics::histogram!(names::RATING_BATCH_DURATION).record(started.elapsed().as_secs_f64());
}

/// Runs the consumer over every pool of the catalog until `shutdown`.
pub async fn run(
    store: Arc<dyn Store>,
    ratings: Arc<dyn RatingStore>,
    catalog: Arc<Catalog>,
    cfg: ConsumerConfig,
    shutdown: CancellationToken,
) {
    let policies = policies(&catalog);
    let pools = catalog.pools();
    let mut pause = Duration::from_millis(5);
    let mut next_decay = tokio::time::Instant::now();
    tracing::info!(
        pools = pools.len(),
        batch = cfg.batch,
        "rating consumer started"
    );
    let mut backoff = Backoff::new(cfg.idle.max(Duration::from_millis(500)), MAX_BACKOFF);
    while !shutdown.is_cancelled() {
        if tokio::time::Instant::now() >= next_decay {
            decay(&*ratings, &policies).await;
            next_decay = tokio::time::Instant::now() + cfg.decay_every;
        }
        let mut applied = 0;
        let mut failed = false;
        for pool in &pools {
            let jobs = match store.claim_results(pool, cfg.batch, cfg.lease).await {
                Ok(jobs) => jobs,
                Err(e) => {
                    warn_store!(e, pool = %pool.name(), "could not claim results");
                    failed = true;
                    continue;
                }
            };
            if jobs.is_empty() {
                continue;
            }
            match apply(&*store, &*ratings, &policies, pool, &jobs, now_ms()).await {
                Ok(done) => applied += done.len(),
                Err(e) => {
                    // The results stay claimed until the lease runs out, then any
                    // consumer retries them.
                    warn_store!(e, pool = %pool.name(), matches = jobs.len(), "rating batch failed; it will be retried");
                    failed = true;
                }
            }
        }
        pause = if applied > 0 {
            Duration::from_millis(5)
        } else if failed {
            backoff.failed()
        } else {
            backoff.reset();
            (pause * 2).min(cfg.idle)
        };
        if applied == 0 {
            tokio::select! {
                _ = tokio::time::sleep(pause) => {}
                _ = shutdown.cancelled() => {}
            }
        }
    }
}

/// One decay pass over every mode that decays.
async fn decay(ratings: &dyn RatingStore, policies: &Policies) {
    for (mode, policy) in policies.modes() {
        if policy.decay.is_none() {
            continue;
        }
        match ratings.decay(mode, policy, now_ms()).await {
            Ok(n) if n > 0 => tracing::info!(mode, players = n, "rating decay applied"),
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, mode, "rating decay failed; next pass retries"),
        }
    }
}
