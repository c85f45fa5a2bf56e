//! The match saga (seed 004): remove from queue -> ready check -> allocate a game
//! server (the pivot) -> record -> notify players with the address.
//!
//! The saga's state is the match's lifecycle in the store, so any process can take
//! the next step: the worker that formed the match, the ingress that took the last
//! ready-check answer, the server manager that got a result, or the supervisor for
//! a match whose driver died ([`mm_store::Lifecycle::due`]). [`advance`] reads the record and
//! applies the step its status calls for; every step is a compare-and-set in the
//! store, so two drivers racing on one match cannot both apply it.
//!
//! Before the pivot every failure compensates: a declined or expired ready check
//! sends the tickets of players not at fault back to the queue with their wait,
//! ends the others' and bans the players at fault; no free server sends everyone
//! back. After the pivot steps only go forward: the assignment is retried until the
//! players are told; a lost game server fails the match without a rating change and
//! frees its players.
//!
//! A fill (players taking open seats of a running match, issue 34) has the same
//! saga with one change: its pivot joins the running match and its game server
//! ([`mm_store::Backfills::join_fill`]) instead of allocating one. A fill that
//! cannot join (the match ended meanwhile) fails with `backfill_closed` and its
//! players go back to the queue; one that ends before joining gives its seats
//! back. Its players are told as soon as it joins; the server must then
//! acknowledge them within the fill's placement timeout (`AckBackfill`), or
//! they leave the match and go back to the queue with their wait. A joined
//! fill ends when its match ends, with the match's result.

use mm_domain::{
    Answer, Event, EventEnvelope, MatchId, MatchRecord, MatchStatus, PLACEMENT_RETRY_MS, Pool,
    TicketFate, now_ms, reasons,
};
use mm_store::{
    AllocateOutcome, Allocation, FillMark, JoinOutcome, Store, StoreError, Transition,
    UnjoinOutcome,
};
use mm_telemetry::names;
use std::time::Duration;

/// What one call to [`advance`] left behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Waiting for players (ready check) or for the game (assigned).
    Waiting(MatchStatus),
    /// Over and settled.
    Over(MatchStatus),
    /// Not ready for the saga yet: its commit is still being settled.
    Unsettled,
    /// No such match.
    Missing,
}

/// Crash testing: with `MATCHMAKER_FAILPOINT=saga-pause-after-STEP` (STEP one of
/// `commit` (the worker, before it drives a match it committed), `allocate`,
/// `assign`, `join` (a fill joined its match), `unwind`) the process driving a
/// saga stops for good right after that step, so a test can SIGKILL it exactly
/// there.
fn failpoint(step: &str) -> bool {
    static AT: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    AT.get_or_init(|| {
        std::env::var("MATCHMAKER_FAILPOINT")
            .ok()
            .and_then(|v| v.strip_prefix("saga-pause-after-").map(String::from))
    })
    .as_deref()
        == Some(step)
}

pub(crate) async fn pause_if(step: &str, id: &MatchId) {
    if failpoint(step) {
        tracing::warn!(match_id = %id, step, "failpoint: saga paused for good");
        std::future::pending::<()>().await;
    }
}

/// Takes every step of the match's saga that is due now, until it waits for
/// players or the game, or is over.
pub async fn advance(store: &dyn Store, pool: &Pool, id: &MatchId) -> Result<Progress, StoreError> {
    // Each pass applies at most one move; a few passes reach a resting state.
    for _ in 0..8 {
        let Some((record, in_outbox)) = store.match_record(pool, id).await? else {
            return Ok(Progress::Missing);
        };
        if in_outbox {
            return Ok(Progress::Unsettled);
        }
        let resting = !matches!(
            record.status,
            MatchStatus::RequiresAcceptance | MatchStatus::Placing | MatchStatus::Assigned
        );
        if record.settled && resting {
            return Ok(Progress::Over(record.status));
        }
        let name = step_name(record.status);
        let started = std::time::Instant::now();
        let result = step(store, pool, id, record, now_ms()).await;
        metrics::histogram!(names::SAGA_STEP_DURATION, "step" => name)
            .record(started.elapsed().as_secs_f64());
        let outcome = match &result {
            Ok(None) => "applied",
            Ok(Some(Progress::Waiting(_))) => "waiting",
            Ok(Some(_)) => "ended",
            Err(_) => "failed",
        };
        metrics::counter!(names::SAGA_STEPS, "step" => name, "outcome" => outcome).increment(1);
        if let Some(progress) = result? {
            return Ok(progress);
        }
    }
    Ok(Progress::Waiting(MatchStatus::Placing))
}

/// The saga step a match in `status` is due for (a metric label).
fn step_name(status: MatchStatus) -> &'static str {
    match status {
        MatchStatus::RequiresAcceptance => "ready_check",
        MatchStatus::Placing => "allocate",
        MatchStatus::Assigned => "notify",
        _ => "unwind",
    }
}

/// Applies the one move a match in `record.status` is due for. `None` when it
/// moved and the next pass should look again.
async fn step(
    store: &dyn Store,
    pool: &Pool,
    id: &MatchId,
    record: MatchRecord,
    now: mm_domain::Millis,
) -> Result<Option<Progress>, StoreError> {
    match record.status {
        MatchStatus::RequiresAcceptance => {
            let gone = record.gone(now);
            let expired = record.deadline.is_some_and(|d| now >= d);
            let outcome = if !gone.is_empty() {
                "disconnected"
            } else {
                "timed_out"
            };
            let t = if !gone.is_empty() {
                let mut t =
                    Transition::new(&[MatchStatus::RequiresAcceptance], MatchStatus::Cancelled)
                        .reason(reasons::DISCONNECTED)
                        .due(now);
                t.answers = gone.into_iter().map(|p| (p, Answer::Declined)).collect();
                t
            } else if expired {
                Transition::new(&[MatchStatus::RequiresAcceptance], MatchStatus::TimedOut)
                    .reason(reasons::READY_CHECK_EXPIRED)
                    .due(now)
            } else {
                if let Some(at) = record.next_check() {
                    store.reschedule(pool, id, at).await?;
                }
                return Ok(Some(Progress::Waiting(record.status)));
            };
            if store.transition(pool, id, t).await? {
                metrics::counter!(names::READY_CHECKS, "outcome" => outcome).increment(1);
            }
        }
        MatchStatus::Placing => {
            if !place(store, pool, &record).await? {
                return Ok(Some(Progress::Waiting(MatchStatus::Placing)));
            }
        }
        MatchStatus::Assigned => {
            if let Some(joined) = record.joined.filter(|_| record.matched.fills().is_some()) {
                return fill_assigned(store, pool, id, &record, joined, now).await;
            }
            store.publish(&assigned_events(&record)).await?;
            store.step_done(pool, id, MatchStatus::Assigned).await?;
            return Ok(Some(Progress::Waiting(MatchStatus::Assigned)));
        }
        status if record.settled => return Ok(Some(Progress::Over(status))),
        status => {
            // Only a match that failed could have been placing when a driver
            // took a slot; the others were never placing or hold their slot.
            if status == MatchStatus::Failed && record.matched.fills().is_none() {
                release_orphan(store, &record).await?;
            }
            end_fills(store, pool, &record, now).await?;
            let ban_until = now + record.matched.lifecycle.decline_ban_ms;
            store.unwind(pool, &record, ban_until).await?;
            pause_if("unwind", id).await;
            store.publish(&ended_events(&record, ban_until)).await?;
            // Counted by the driver that settles it, once however many raced here.
            if store.step_done(pool, id, status).await? {
                metrics::counter!(names::MATCHES_ENDED, "status" => status.as_str()).increment(1);
            }
            return Ok(Some(Progress::Over(status)));
        }
    }
    Ok(None)
}

/// Gives back a slot held under the match's id that the match does not use: a
/// driver took it and died before recording it, and the match ended meanwhile
/// (a driver that lives gives it back itself, in [`place`]). Runs before the step
/// is marked done, so a crash here repeats it.
async fn release_orphan(store: &dyn Store, record: &MatchRecord) -> Result<(), StoreError> {
    let id = record.matched.id.as_str();
    if let Some(a) = store.allocation(id).await?
        && record.server.as_ref() != Some(&a.server)
    {
        tracing::info!(match_id = %id, server = %a.server.server_id, "giving back a slot the match never used");
        store.release_slot(&a.server.server_id, id).await?;
    }
    Ok(())
}

/// The pivot: a slot on a game server, then the assignment. Without a free slot it
/// tries again until the mode's placement timeout, then the match fails and
/// everyone goes back to the queue. Returns false when it is waiting for a slot.
async fn place(store: &dyn Store, pool: &Pool, record: &MatchRecord) -> Result<bool, StoreError> {
    let m = &record.matched;
    if m.fills().is_some() {
        return join(store, pool, record).await;
    }
    let teams = (0..m.tickets.iter().map(|t| t.team + 1).max().unwrap_or(0))
        .map(|team| {
            m.tickets
                .iter()
                .filter(|t| t.team == team)
                .flat_map(|t| t.players.iter().map(|p| p.to_string()))
                .collect()
        })
        .collect();
    let request = Allocation {
        id: m.id.to_string(),
        server: Default::default(),
        region: m.region.clone(),
        mode: m.mode.clone(),
        pool: Some(pool.name()),
        teams,
        allocated_at: 0,
        decided: m.decided.clone(),
    };
    let now = now_ms();
    let outcome = store.allocate(&request).await?;
    let label = match outcome {
        AllocateOutcome::Allocated(_) => "allocated",
        AllocateOutcome::NoCapacity => "no_capacity",
    };
    metrics::counter!(names::ALLOCATIONS, "region" => m.region.clone(), "outcome" => label)
        .increment(1);
    match outcome {
        AllocateOutcome::Allocated(a) => {
            pause_if("allocate", &m.id).await;
            let mut t = Transition::new(&[MatchStatus::Placing], MatchStatus::Assigned).due(now);
            t.server = Some(a.server.clone());
            if store.transition(pool, &m.id, t).await? {
                pause_if("assign", &m.id).await;
                open_empty_seats(store, pool, m).await;
                return Ok(true);
            }
            // The match moved on without us (failed meanwhile, or another driver
            // assigned it): give the slot back unless it is the match's.
            let theirs = store
                .match_record(pool, &m.id)
                .await?
                .and_then(|(r, _)| r.server);
            if theirs.as_ref() != Some(&a.server) {
                store.release_slot(&a.server.server_id, &a.id).await?;
            }
        }
        AllocateOutcome::NoCapacity => {
            let give_up =
                record.placing_since.unwrap_or(m.created_at) + m.lifecycle.placement_timeout_ms;
            if now < give_up {
                // Keep trying until the placement timeout; the driver (or the
                // supervisor) comes back then.
                store
                    .reschedule(pool, &m.id, (now + PLACEMENT_RETRY_MS).min(give_up))
                    .await?;
                return Ok(false);
            }
            tracing::info!(match_id = %m.id, region = %m.region, mode = %m.mode, "no free game server; players go back to the queue");
            let t = Transition::new(&[MatchStatus::Placing], MatchStatus::Failed)
                .reason(reasons::NO_SERVER)
                .due(now);
            store.transition(pool, &m.id, t).await?;
        }
    }
    Ok(true)
}

/// What the players of an assigned match are told: where to connect.
fn assigned_events(record: &MatchRecord) -> Vec<EventEnvelope> {
    let Some(server) = &record.server else {
        return Vec::new();
    };
    let id = &record.matched.id;
    record
        .matched
        .tickets
        .iter()
        .flat_map(|t| {
            t.players.iter().map(|p| EventEnvelope {
                player: p.clone(),
                event: Event::Assigned {
                    ticket_id: t.ticket_id.clone(),
                    match_id: id.clone(),
                    server: server.clone(),
                    matched: record.matched.clone(),
                },
            })
        })
        .collect()
}

/// A fill that joined its running match: its players are told at once; then
/// the game server must acknowledge them within the fill's placement timeout,
/// or the fill leaves the match and its players go back to the queue with
/// their wait.
async fn fill_assigned(
    store: &dyn Store,
    pool: &Pool,
    id: &MatchId,
    record: &MatchRecord,
    joined: mm_domain::Joined,
    now: mm_domain::Millis,
) -> Result<Option<Progress>, StoreError> {
    if !joined.notified {
        store.publish(&assigned_events(record)).await?;
        store.mark_fill(pool, id, FillMark::Notified).await?;
    }
    let waiting = Ok(Some(Progress::Waiting(MatchStatus::Assigned)));
    if joined.acknowledged {
        store.step_done(pool, id, MatchStatus::Assigned).await?;
        return waiting;
    }
    let deadline = joined.at + record.matched.lifecycle.placement_timeout_ms;
    if now < deadline {
        store.reschedule(pool, id, deadline).await?;
        return waiting;
    }
    tracing::info!(match_id = %id, "the game server did not acknowledge a fill's players in time; they go back to the queue");
    match store
        .unjoin_fill(pool, id, reasons::BACKFILL_UNACKNOWLEDGED)
        .await?
    {
        // Failed now: the next pass unwinds it.
        UnjoinOutcome::Done => {
            metrics::counter!(names::BACKFILL_JOINS, "outcome" => "unacknowledged").increment(1);
            Ok(None)
        }
        // Acknowledged meanwhile: look again.
        UnjoinOutcome::Moved => Ok(None),
        // Its match is over: the fill ends with it (see `end_fills`).
        UnjoinOutcome::Closed => {
            store.step_done(pool, id, MatchStatus::Assigned).await?;
            waiting
        }
    }
}

/// In a `backfill = "auto"` mode, a match placed below full opens a backfill
/// for its empty seats. A failure is logged: the game server can still open
/// one (and a player leaving opens one too).
async fn open_empty_seats(store: &dyn Store, pool: &Pool, m: &mm_domain::Match) {
    let Some(auto) = m.lifecycle.auto_backfill else {
        return;
    };
    let sizes = m.team_sizes();
    let open: Vec<u32> = (0..auto.teams as usize)
        .map(|k| {
            auto.team_size
                .saturating_sub(sizes.get(k).copied().unwrap_or(0))
        })
        .collect();
    if open.iter().all(|&o| o == 0) {
        return;
    }
    let ttl = Duration::from_millis(auto.ttl_ms);
    match store.open_backfill(pool, &m.id, None, &open, ttl).await {
        Ok(_) => tracing::info!(match_id = %m.id, ?open, "placed below full: backfill opened"),
        Err(e) => {
            warn_store!(e, match_id = %m.id, "could not open the backfill of a match placed below full")
        }
    }
}

/// A fill's pivot: it joins its running match and that match's server, or,
/// if the match is over, fails and its players go back to the queue.
async fn join(store: &dyn Store, pool: &Pool, record: &MatchRecord) -> Result<bool, StoreError> {
    let id = &record.matched.id;
    let outcome = store.join_fill(pool, id).await?;
    let label = match outcome {
        JoinOutcome::Joined(_) => "joined",
        JoinOutcome::Closed => "closed",
        JoinOutcome::Moved => "moved",
    };
    metrics::counter!(names::BACKFILL_JOINS, "outcome" => label).increment(1);
    if outcome == JoinOutcome::Closed {
        tracing::info!(match_id = %id, "the running match ended before its fill joined; players go back to the queue");
        let t = Transition::new(&[MatchStatus::Placing], MatchStatus::Failed)
            .reason(reasons::BACKFILL_CLOSED)
            .due(now_ms());
        store.transition(pool, id, t).await?;
    } else {
        pause_if("join", id).await;
    }
    Ok(true)
}

/// What ending `record` means for fills: a fill that ended before it joined
/// gives its seats back; a running match that ended ends the fills that
/// joined it, with its status, reason and result (the result was rated with
/// the match: a fill adds no rating of its own). Repeated safely.
async fn end_fills(
    store: &dyn Store,
    pool: &Pool,
    record: &MatchRecord,
    now: mm_domain::Millis,
) -> Result<(), StoreError> {
    // A fill its server refused (or never acknowledged) leaves the seats
    // closed: the server opens them again if it wants them filled.
    let refused = matches!(
        record.reason.as_deref(),
        Some(reasons::BACKFILL_REFUSED | reasons::BACKFILL_UNACKNOWLEDGED)
    );
    if record.matched.fills().is_some() && record.server.is_none() && !refused {
        store.return_seats(pool, &record.matched).await?;
    }
    for fill in &record.fills {
        let mut t = Transition::new(&[MatchStatus::Assigned], record.status).due(now);
        t.reason = record.reason.clone();
        t.result = record.result.clone();
        if store.transition(pool, fill, t).await? {
            // Its own driver: the supervisor would come for it too.
            if let Err(e) = Box::pin(advance(store, pool, fill)).await {
                warn_store!(e, match_id = %fill, "could not end a fill; the supervisor will");
            }
        }
    }
    Ok(())
}

/// Runs [`advance`] until the saga rests, retrying placement while it waits for a
/// free game server (bounded by the mode's placement timeout). For drivers that
/// own the match for now: the worker that formed it, the ingress that took the
/// last answer. The supervisor calls [`advance`] once per due step instead.
pub async fn drive(store: &dyn Store, pool: &Pool, id: &MatchId) -> Result<Progress, StoreError> {
    loop {
        match advance(store, pool, id).await? {
            Progress::Waiting(MatchStatus::Placing) => {
                tokio::time::sleep(Duration::from_millis(PLACEMENT_RETRY_MS)).await
            }
            other => return Ok(other),
        }
    }
}

/// What every player of a match that ended is told.
pub fn ended_events(record: &MatchRecord, ban_until: u64) -> Vec<EventEnvelope> {
    let m = &record.matched;
    let at_fault = record.at_fault();
    let reason = record.reason.clone().unwrap_or_default();
    m.tickets
        .iter()
        .flat_map(|t| {
            let requeued = record.fate(&t.players) == TicketFate::Requeue;
            let (at_fault, reason) = (&at_fault, &reason);
            t.players.iter().map(move |p| EventEnvelope {
                player: p.clone(),
                event: match record.status {
                    MatchStatus::Cancelled | MatchStatus::TimedOut => Event::MatchCancelled {
                        ticket_id: t.ticket_id.clone(),
                        match_id: m.id.clone(),
                        reason: reason.clone(),
                        requeued,
                        banned_until: at_fault.contains(p).then_some(ban_until),
                    },
                    MatchStatus::Failed => Event::MatchFailed {
                        ticket_id: t.ticket_id.clone(),
                        match_id: m.id.clone(),
                        reason: reason.clone(),
                        requeued,
                    },
                    _ => Event::Completed {
                        ticket_id: t.ticket_id.clone(),
                        match_id: m.id.clone(),
                        matched: m.clone(),
                        result: record.result.clone(),
                    },
                },
            })
        })
        .collect()
}

/// Fails the matches a lost game server held (its heartbeat lapsed): players are
/// told, ratings do not change, and they may queue again (or, if the match was
/// still being placed, go back to the queue). Returns how many matches failed.
pub async fn server_lost(store: &dyn Store, allocations: &[Allocation]) -> usize {
    let mut failed = 0;
    for a in allocations {
        let (Some(pool), Ok(id)) = (
            a.pool.as_deref().and_then(Pool::parse),
            MatchId::new(a.id.clone()),
        ) else {
            continue;
        };
        let t = Transition::new(
            &[MatchStatus::Placing, MatchStatus::Assigned],
            MatchStatus::Failed,
        )
        .reason(reasons::SERVER_LOST)
        .due(now_ms());
        match store.transition(&pool, &id, t).await {
            Ok(true) => {
                failed += 1;
                if let Err(e) = advance(store, &pool, &id).await {
                    warn_store!(e, match_id = %id, "could not finish a failed match; the supervisor will");
                }
            }
            Ok(false) => {}
            Err(e) => warn_store!(e, match_id = %id, "could not fail a match"),
        }
    }
    failed
}
