//! The supervisor: every interval, for every pool, returns the tickets of workers
//! whose lease expired to the queue, fans out matches whose worker died between
//! commit and fan-out, takes the due steps of match sagas (expired ready checks,
//! placements or unwinds whose driver died), fails the matches of game servers
//! whose heartbeat lapsed, ends the tickets that waited their mode's
//! `give_up_after` and every ticket of a closed mode, takes the tickets out
//! of a closed region (ending those that wait in no open one), every few passes looks
//! for the tickets of players who left the game ([`crate::offline::sweep`]) and
//! for those their mode could no longer match ([`misfits`]), and forgets
//! finished tickets past their retention. It notes the pools it serves in the store,
//! and now and then warns of pools nobody serves any more ([`crate::stranded`]).
//! Every step is idempotent, so any number of supervisors may run at once.

use crate::{saga, stranded};
use mm_domain::{Event, EventEnvelope, Pool, reasons};
use mm_store::Store;
use mm_store::outage::Backoff;
use mm_telemetry::names;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

#[derive(Debug, Clone)]
pub struct SupervisorConfig {
    pub pools: Vec<Pool>,
    /// Time between cycles (`SUPERVISE_INTERVAL`).
    pub interval: Duration,
    /// A committed match not fanned out after this long is fanned out by the supervisor.
    pub outbox_grace: Duration,
    /// Finished tickets and matches stay readable this long (`TICKET_RETENTION`).
    pub retention: Duration,
    /// The pools workers should serve: those of every mode not closed. One
    /// whose tickets wait a minute with no live worker is warned of.
    pub worked: Vec<Pool>,
    /// Pools whose tickets are given up, after how long and why: a mode's
    /// `give_up_after` (`no_match_found`), or at once when the mode is closed
    /// (`mode_closed`) or the region (`region_closed`: a ticket that also
    /// waits in an open region only leaves the closed one).
    pub give_up: Vec<GiveUpAfter>,
    /// Pools whose modes cancel the tickets of players who left, with the
    /// grace (`cancel_offline_after`): swept every few passes
    /// ([`crate::offline::sweep`]).
    pub offline: Vec<(Pool, mm_domain::Millis)>,
    /// What each open pool's mode takes now: the oldest tickets it could
    /// never match (a party larger than `max_party`, attributes its rules
    /// could never match, queued before the mode changed) are ended every few
    /// passes ([`misfits`]).
    pub fits: Vec<Fit>,
    /// How long such a ticket waits before it is ended (`UNMATCHABLE_AFTER`):
    /// a rolling deploy that loosens a mode reaches every supervisor meanwhile.
    pub misfit_after: mm_domain::Millis,
}

/// What one cycle did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CycleReport {
    pub reclaimed: usize,
    pub fanned_out: usize,
    /// Saga steps taken for matches that were due.
    pub saga_steps: usize,
    /// Game servers removed because their heartbeat lapsed.
    pub servers_lost: usize,
    /// Matches failed because their game server was lost.
    pub matches_failed: usize,
    pub purged: usize,
    /// Tickets ended after waiting their mode's `give_up_after`, because
    /// their mode is closed, or because a player of theirs left the game.
    pub given_up: usize,
}

/// Most due sagas stepped per pool per cycle.
const SAGAS_PER_CYCLE: usize = 500;
/// Most tickets given up per pool per cycle.
const GIVE_UPS_PER_CYCLE: usize = 1000;
/// Passes between two sweeps of the oldest tickets: for those of players who
/// left (the ingresses look at those they saw leave at the grace; the sweep
/// is for an ingress that crashed with its players' sockets), and for tickets
/// their mode could no longer match.
const SWEEP_PASSES: u32 = 6;
/// The oldest tickets of a pool looked at for those its mode could never match
/// (parties too large, attributes its rules never match): they never match,
/// so they become a pool's oldest.
const MISFITS_PER_SWEEP: usize = 100;

/// Runs supervisor cycles until `shutdown` is cancelled.
pub async fn run(store: Arc<dyn Store>, cfg: SupervisorConfig, shutdown: CancellationToken) {
    tracing::info!(pools = cfg.pools.len(), interval = ?cfg.interval, "supervisor started");
    // Counters exist from the start, so rates and alerts see a zero, not no series.
    metrics::counter!(names::RECLAIM_FAILURES).increment(0);
    metrics::counter!(names::GAME_SERVERS_LOST).increment(0);
    for pool in &cfg.pools {
        metrics::counter!(names::RECLAIMED_TICKETS, "pool" => pool.name()).increment(0);
        metrics::gauge!(names::UNSERVED_TICKETS, "pool" => pool.name()).set(0.0);
    }
    let mut tick = tokio::time::interval(cfg.interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut backoff = Backoff::new(Duration::ZERO, crate::MAX_BACKOFF);
    let mut passes: u32 = 0;
    let mut stranded = std::collections::BTreeSet::new();
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            _ = tick.tick() => {}
        }
        let sweep = passes.is_multiple_of(SWEEP_PASSES);
        let report = cycle_with(&*store, &cfg, sweep).await;
        passes = passes.wrapping_add(1);
        if passes.is_multiple_of(stranded::CHECK_PASSES) {
            let now = mm_domain::now_ms();
            let stale = (cfg.interval * stranded::STALE_PASSES).as_millis() as mm_domain::Millis;
            let before = now.saturating_sub(stale);
            match stranded::find(&*store, &cfg.pools, &cfg.worked, before).await {
                Ok(found) => stranded = stranded::report(&found, &stranded, now),
                Err(e) => warn_store!(e, "looking for pools nobody serves failed"),
            }
        }
        if mm_store::outage::is_down() {
            // Each pass while the store is unreachable waits longer before the next.
            tokio::select! {
                _ = shutdown.cancelled() => break,
                _ = tokio::time::sleep(backoff.failed()) => {}
            }
            continue;
        }
        backoff.reset();
        if report.reclaimed > 0
            || report.fanned_out > 0
            || report.saga_steps > 0
            || report.servers_lost > 0
            || report.given_up > 0
        {
            tracing::info!(
                reclaimed = report.reclaimed,
                fanned_out = report.fanned_out,
                saga_steps = report.saga_steps,
                servers_lost = report.servers_lost,
                matches_failed = report.matches_failed,
                purged = report.purged,
                given_up = report.given_up,
                "supervisor cycle"
            );
        }
    }
    tracing::info!("supervisor stopped");
}

/// One pass over every pool. Errors are logged and the pass goes on.
pub async fn cycle(store: &dyn Store, cfg: &SupervisorConfig) -> CycleReport {
    cycle_with(store, cfg, true).await
}

/// One pass, sweeping the oldest tickets or not.
async fn cycle_with(store: &dyn Store, cfg: &SupervisorConfig, sweep: bool) -> CycleReport {
    let mut report = CycleReport::default();
    // Noted first: a pool this pass serves is nobody's no more (see `stranded`).
    if let Err(e) = store.supervised(&cfg.pools, mm_domain::now_ms()).await {
        warn_store!(e, "noting the pools served failed");
    }
    for pool in &cfg.pools {
        metrics::counter!(names::RECLAIM_ATTEMPTS).increment(1);
        let started = Instant::now();
        match store.expired_workers(pool).await {
            Ok(workers) => {
                for w in workers {
                    match store.reclaim(&w, pool).await {
                        Ok(Some(n)) => {
                            if n > 0 {
                                tracing::info!(worker = %w, pool = %pool.name(), tickets = n, "reclaimed tickets of a dead worker");
                            }
                            report.reclaimed += n;
                            metrics::counter!(names::RECLAIMED_TICKETS, "pool" => pool.name())
                                .increment(n as u64);
                        }
                        Ok(None) => {}
                        Err(e) => {
                            metrics::counter!(names::RECLAIM_FAILURES).increment(1);
                            warn_store!(e, worker = %w, "reclaim failed")
                        }
                    }
                }
            }
            Err(e) => {
                metrics::counter!(names::RECLAIM_FAILURES).increment(1);
                warn_store!(e, pool = %pool.name(), "listing expired leases failed")
            }
        }
        metrics::histogram!(names::RECLAIM_DURATION).record(started.elapsed().as_secs_f64());
        // Shared state, reported from here rather than by every worker.
        match store.depths(pool).await {
            Ok(d) => {
                metrics::gauge!(names::QUEUE_DEPTH, "pool" => pool.name()).set(d.queued as f64);
                metrics::gauge!(names::QUEUE_HELD, "pool" => pool.name()).set(d.processing as f64);
                let oldest = d
                    .oldest_enqueued_at
                    .map_or(0, |at| mm_domain::now_ms().saturating_sub(at));
                metrics::gauge!(names::QUEUE_OLDEST_WAIT, "pool" => pool.name())
                    .set(oldest as f64 / 1000.0);
            }
            Err(e) => {
                warn_store!(e, pool = %pool.name(), "reading the queue depth failed")
            }
        }
        match store.stale_outbox(pool, cfg.outbox_grace).await {
            Ok(matches) => match store.fan_out(pool, &matches).await {
                Ok(()) => report.fanned_out += matches.len(),
                Err(e) => warn_store!(e, pool = %pool.name(), "fan-out retry failed"),
            },
            Err(e) => warn_store!(e, pool = %pool.name(), "reading the outbox failed"),
        }
        match store.due(pool, SAGAS_PER_CYCLE).await {
            Ok(ids) => {
                for id in ids {
                    match saga::advance(store, pool, &id).await {
                        Ok(_) => report.saga_steps += 1,
                        Err(e) => warn_store!(e, match_id = %id, "saga step failed"),
                    }
                }
            }
            Err(e) => warn_store!(e, pool = %pool.name(), "reading due sagas failed"),
        }
        match store.purge(pool, cfg.retention).await {
            Ok(n) => report.purged += n,
            Err(e) => warn_store!(e, pool = %pool.name(), "purge failed"),
        }
    }
    for g in &cfg.give_up {
        report.given_up += give_up(store, g).await;
    }
    // Asked here, not at the pass's start: a pass may outlast an outage.
    // Ingresses' notes of themselves may have run out during one; they note
    // themselves again within a second of its end.
    if sweep {
        for fit in &cfg.fits {
            report.given_up += misfits(store, fit, cfg.misfit_after).await;
        }
    }
    if sweep && !mm_store::outage::down_within(crate::offline::SETTLE_AFTER_OUTAGE) {
        for (pool, grace) in &cfg.offline {
            report.given_up += crate::offline::sweep(store, pool, *grace).await;
        }
    }
    match store.lapsed_servers().await {
        Ok(servers) => {
            for server in servers {
                match store.remove_lapsed(&server).await {
                    Ok(Some(allocations)) => {
                        metrics::counter!(names::GAME_SERVERS_LOST).increment(1);
                        tracing::warn!(server = %server, matches = allocations.len(), "game server stopped heartbeating; removed");
                        report.servers_lost += 1;
                        report.matches_failed += saga::server_lost(store, &allocations).await;
                    }
                    Ok(None) => {}
                    Err(e) => {
                        warn_store!(e, server = %server, "removing a lapsed server failed")
                    }
                }
            }
        }
        Err(e) => warn_store!(e, "listing lapsed game servers failed"),
    }
    report_fleet(store, cfg).await;
    report
}

/// Which tickets of a pool the supervisor ends: those that waited `after`
/// (every one when 0), as `timed_out` with `reason`; but a ticket that also
/// waits in one of the `open_elsewhere` regions only leaves this pool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GiveUpAfter {
    pub pool: Pool,
    pub after: mm_domain::Millis,
    pub reason: &'static str,
    /// The regions still open, for a closed region's pool (empty otherwise).
    pub open_elsewhere: Vec<String>,
}

impl GiveUpAfter {
    /// The pools of `catalog` whose tickets are given up: a closed mode's and
    /// a closed region's at once, else after the mode's `give_up_after` if it
    /// sets one.
    pub fn of(catalog: &crate::catalog::Catalog) -> Vec<Self> {
        catalog
            .pools()
            .into_iter()
            .filter_map(|pool| {
                let mode = catalog.mode(&pool.mode)?;
                let mut open_elsewhere = Vec::new();
                let (after, reason) = if mode.closed {
                    (0, reasons::MODE_CLOSED)
                } else if catalog.region_closed(&pool.region) {
                    open_elsewhere = catalog
                        .regions()
                        .iter()
                        .filter(|r| catalog.region_open(r))
                        .cloned()
                        .collect();
                    (0, reasons::REGION_CLOSED)
                } else {
                    (mode.give_up_after?, reasons::NO_MATCH_FOUND)
                };
                Some(Self {
                    pool,
                    after,
                    reason,
                    open_elsewhere,
                })
            })
            .collect()
    }

    /// Whether `t` waits on elsewhere once out of this pool: it also waits
    /// in an open region.
    fn waits_elsewhere(&self, t: &mm_domain::Ticket) -> bool {
        t.queues
            .iter()
            .any(|q| q.region != self.pool.region && self.open_elsewhere.contains(&q.region))
    }
}

/// What an open pool's mode takes now (see [`SupervisorConfig::fits`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    pub pool: Pool,
    pub max_party: usize,
    pub rules: Vec<mm_engine::Rule>,
}

impl Fit {
    /// What each open pool of `catalog` takes now.
    pub fn of(catalog: &crate::catalog::Catalog) -> Vec<Self> {
        catalog
            .open_pools()
            .into_iter()
            .filter_map(|pool| {
                let mode = catalog.mode(&pool.mode)?;
                Some(Self {
                    pool,
                    max_party: mode.max_party,
                    rules: mode.rules.clone(),
                })
            })
            .collect()
    }

    /// Why `t` could never be matched in this pool, if so.
    fn misfit(&self, t: &mm_domain::Ticket) -> Option<&'static str> {
        if t.players.len() > self.max_party {
            return Some(reasons::PARTY_TOO_LARGE);
        }
        mm_engine::rules::never::unmatchable(&self.rules, t).map(|_| reasons::UNMATCHABLE)
    }
}

/// Ends the tickets of `g`'s pool that waited its `after` without a match, as
/// `timed_out` with its reason, and tells their players; a ticket that also
/// waits in an open region only leaves the pool, untold (it still waits).
/// Returns how many ended.
async fn give_up(store: &dyn Store, g: &GiveUpAfter) -> usize {
    let pool = &g.pool;
    let before = mm_domain::now_ms().saturating_sub(g.after);
    let tickets = match store.overdue(pool, before, GIVE_UPS_PER_CYCLE).await {
        Ok(t) => t,
        Err(e) => {
            warn_store!(e, pool = %pool.name(), "listing tickets to give up failed");
            return 0;
        }
    };
    let (moved, ended): (Vec<_>, Vec<_>) = tickets.into_iter().partition(|t| g.waits_elsewhere(t));
    let mut left = 0;
    for t in &moved {
        match store.leave_pool(pool, &t.owner, &t.id, g.reason).await {
            Ok(true) => left += 1,
            Ok(false) => {}
            Err(e) => {
                warn_store!(e, ticket_id = %t.id, "taking a ticket out of a closed region failed")
            }
        }
    }
    if left > 0 {
        tracing::info!(
            pool = %pool.name(),
            tickets = left,
            "took tickets out of a closed region: they wait on in their other regions"
        );
    }
    end(store, pool, ended, g.reason).await
}

/// Ends the tickets among `fit`'s pool's oldest that waited `after` and that
/// its mode could never match now (a party larger than it takes, attributes
/// its rules could never match: the mode changed while they waited), as
/// `timed_out` (`party_too_large`, `unmatchable`). Returns how many ended.
async fn misfits(store: &dyn Store, fit: &Fit, after: mm_domain::Millis) -> usize {
    let pool = &fit.pool;
    let before = mm_domain::now_ms().saturating_sub(after);
    let tickets = match store.overdue(pool, before, MISFITS_PER_SWEEP).await {
        Ok(t) => t,
        Err(e) => {
            warn_store!(e, pool = %pool.name(), "listing the oldest tickets failed");
            return 0;
        }
    };
    // Each ticket judged once, then ended by reason.
    let (mut too_large, mut unmatchable) = (Vec::new(), Vec::new());
    for t in tickets {
        match fit.misfit(&t) {
            Some(reasons::PARTY_TOO_LARGE) => too_large.push(t),
            Some(_) => unmatchable.push(t),
            None => {}
        }
    }
    let mut ended = 0;
    for (reason, these) in [
        (reasons::PARTY_TOO_LARGE, too_large),
        (reasons::UNMATCHABLE, unmatchable),
    ] {
        if these.is_empty() {
            continue;
        }
        let n = end(store, pool, these, reason).await;
        ended += n;
        if reason == reasons::PARTY_TOO_LARGE {
            tracing::warn!(
                pool = %pool.name(),
                ended = n,
                max_party = fit.max_party,
                "ended tickets of parties larger than the mode takes now (its max_party or team_size was lowered while they waited)"
            );
        } else {
            tracing::warn!(
                pool = %pool.name(),
                ended = n,
                "ended tickets whose attributes the mode's rules could never match (its rules changed while they waited, or an older ingress took them)"
            );
        }
    }
    ended
}

/// Ends `tickets` of `pool` as `timed_out` with `reason`, unless in a match,
/// and tells their players. Returns how many ended.
async fn end(
    store: &dyn Store,
    pool: &Pool,
    tickets: Vec<mm_domain::Ticket>,
    reason: &'static str,
) -> usize {
    let mut ended = 0;
    for t in tickets {
        match store.give_up(&t.owner, &t.id, reason).await {
            Ok(mm_store::CancelOutcome::Cancelled) => {
                ended += 1;
                metrics::counter!(names::TICKETS_GIVEN_UP, "pool" => pool.name(), "reason" => reason)
                    .increment(1);
                let events: Vec<EventEnvelope> = t
                    .players
                    .iter()
                    .map(|p| EventEnvelope {
                        player: p.clone(),
                        event: Event::TimedOut {
                            ticket_id: t.id.clone(),
                            reason: reason.to_string(),
                        },
                    })
                    .collect();
                if let Err(e) = store.publish(&events).await {
                    warn_store!(e, "could not publish ticket.timed_out");
                }
            }
            Ok(_) => {}
            Err(e) => warn_store!(e, ticket_id = %t.id, "giving a ticket up failed"),
        }
    }
    ended
}

/// Game servers and free slots by region: shared state, reported from here. Every
/// region of the pools gets a figure, zero when it has no live server.
async fn report_fleet(store: &dyn Store, cfg: &SupervisorConfig) {
    let census = match store.census().await {
        Ok(c) => c,
        Err(e) => {
            warn_store!(e, "counting game servers failed");
            return;
        }
    };
    let mut regions: std::collections::BTreeSet<String> =
        cfg.pools.iter().map(|p| p.region.clone()).collect();
    regions.extend(census.iter().map(|c| c.region.clone()));
    for region in regions {
        let c = census.iter().find(|c| c.region == region);
        metrics::gauge!(names::GAME_SERVERS, "region" => region.clone())
            .set(c.map_or(0, |c| c.servers) as f64);
        metrics::gauge!(names::FREE_SLOTS, "region" => region)
            .set(c.map_or(0, |c| c.free_slots) as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mm_domain::{PlayerId, RegionQueue, Ticket, TicketId};

    /// A ticket waiting in `regions` (the first its best).
    fn waiting_in(regions: &[&str]) -> Ticket {
        let mut t = Ticket::solo(
            TicketId::new("t-1").unwrap(),
            PlayerId::new("p").unwrap(),
            "1v1",
            regions[0],
            1500.0,
            0,
        );
        t.queues = regions
            .iter()
            .map(|r| RegionQueue {
                region: r.to_string(),
                eligible_at: 0,
            })
            .collect();
        t
    }

    #[test]
    fn a_closed_region_s_tickets_leave_it_or_end() {
        let catalog = crate::Catalog::new(
            mm_engine::Modes::defaults(),
            vec!["eu".into(), "na".into(), "asia".into()],
        )
        .unwrap()
        .with_closed(vec!["na".into(), "asia".into()])
        .unwrap();
        let all = GiveUpAfter::of(&catalog);
        let na = all
            .iter()
            .find(|g| g.pool == Pool::new("1v1", "na"))
            .expect("the closed region's pool");
        assert_eq!((na.after, na.reason), (0, reasons::REGION_CLOSED));
        assert_eq!(na.open_elsewhere, ["eu"]);
        // Waits on in eu; closed everywhere it waits: ends.
        assert!(na.waits_elsewhere(&waiting_in(&["na", "eu"])));
        assert!(na.waits_elsewhere(&waiting_in(&["eu", "na"])));
        assert!(!na.waits_elsewhere(&waiting_in(&["na"])));
        assert!(!na.waits_elsewhere(&waiting_in(&["na", "asia"])));
        // An open region's pools give up as their mode says (the shipped
        // modes after `give_up_after`), and never move a ticket.
        let eu = all
            .iter()
            .find(|g| g.pool == Pool::new("1v1", "eu"))
            .expect("the shipped 1v1 gives up");
        assert_eq!(eu.reason, reasons::NO_MATCH_FOUND);
        assert!(eu.open_elsewhere.is_empty());
        assert!(!eu.waits_elsewhere(&waiting_in(&["eu", "na"])));
    }
}
