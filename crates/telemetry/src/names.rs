//! Every metric's name, with its help text and unit ([`describe`]): one list, for
//! the dashboard and alert rules to be checked against once they ship. Names
//! follow Prometheus conventions (`matchmaker_` prefix, `_seconds`, `_total`);
//! seed 000's reclaim and heartbeat metrics keep its names.
//!
//! Labels: `pool` is `MODE:REGION`; `mode`, `region`; `route` is the matched
//! route template (`/v1/tickets/{id}`), never a raw path.

use metrics::{Unit, describe_counter, describe_gauge, describe_histogram};

// Ingress.
pub const HTTP_REQUESTS: &str = "matchmaker_http_requests_total";
pub const HTTP_DURATION: &str = "matchmaker_http_request_duration_seconds";
pub const TICKETS_CREATED: &str = "matchmaker_tickets_created_total";
pub const TICKET_CREATE_DURATION: &str = "matchmaker_ticket_create_duration_seconds";
pub const RATE_LIMITED: &str = "matchmaker_rate_limited_total";
pub const WS_CONNECTIONS: &str = "matchmaker_websocket_connections";
pub const WS_EVENTS: &str = "matchmaker_websocket_events_total";

// Workers.
pub const TICKETS_CLAIMED: &str = "matchmaker_tickets_claimed_total";
pub const TICKETS_RELEASED: &str = "matchmaker_tickets_released_total";
pub const MATCHES_FORMED: &str = "matchmaker_matches_formed_total";
pub const TIME_TO_MATCH: &str = "matchmaker_time_to_match_seconds";
pub const MATCH_RATING_SPREAD: &str = "matchmaker_match_rating_spread";
pub const WORKER_CYCLE: &str = "matchmaker_worker_cycle_duration_seconds";
pub const HEARTBEAT_FAILURES: &str = "matchmaker_heartbeat_failures_total";
pub const LOCKS_REFRESHED: &str = "matchmaker_locks_refreshed";
pub const POOLS_LED: &str = "matchmaker_pool_leader";
pub const POOLS_LEFT_TO_LEADER: &str = "matchmaker_pool_left_to_leader";

// Supervisor.
pub const RECLAIM_ATTEMPTS: &str = "matchmaker_reclaim_attempts_total";
pub const RECLAIM_FAILURES: &str = "matchmaker_reclaim_failures_total";
pub const RECLAIMED_TICKETS: &str = "matchmaker_reclaimed_tickets_total";
pub const TICKETS_GIVEN_UP: &str = "matchmaker_tickets_given_up_total";
pub const UNSERVED_TICKETS: &str = "matchmaker_unserved_tickets";
pub const RULE_STEPS: &str = "matchmaker_rule_steps_total";
pub const RECLAIM_DURATION: &str = "matchmaker_reclaim_duration_seconds";
pub const QUEUE_DEPTH: &str = "matchmaker_queue_depth";
pub const QUEUE_HELD: &str = "matchmaker_queue_held";
pub const QUEUE_OLDEST_WAIT: &str = "matchmaker_queue_oldest_wait_seconds";

// Match lifecycle.
pub const READY_CHECKS: &str = "matchmaker_ready_checks_total";
pub const MATCHES_ENDED: &str = "matchmaker_matches_ended_total";
pub const SAGA_STEPS: &str = "matchmaker_saga_steps_total";
pub const SAGA_STEP_DURATION: &str = "matchmaker_saga_step_duration_seconds";

// Backfill.
pub const BACKFILL_FILLS: &str = "matchmaker_backfill_fills_total";
pub const BACKFILL_JOINS: &str = "matchmaker_backfill_joins_total";

// Game servers.
pub const GAME_SERVERS_LOST: &str = "matchmaker_game_servers_lost_total";
pub const ALLOCATIONS: &str = "matchmaker_allocations_total";
pub const GAME_SERVERS: &str = "matchmaker_game_servers";
pub const FREE_SLOTS: &str = "matchmaker_free_slots";

// Store.
pub const STORE_CALL_DURATION: &str = "matchmaker_store_call_duration_seconds";
pub const STORE_ERRORS: &str = "matchmaker_store_errors_total";
pub const STORE_OUTAGES: &str = "matchmaker_store_outages_total";

// Ratings.
pub const RATING_UPDATES: &str = "matchmaker_rating_updates_total";
pub const RATING_LAG: &str = "matchmaker_rating_lag_seconds";
pub const RATING_BATCH_DURATION: &str = "matchmaker_rating_batch_duration_seconds";

/// Every metric: (name, kind, help).
pub const ALL: &[(&str, Kind, &str)] = &[
    (
        HTTP_REQUESTS,
        Kind::Counter,
        "HTTP responses, by route, method and status.",
    ),
    (
        HTTP_DURATION,
        Kind::Histogram,
        "Time to answer an HTTP request, by route and method.",
    ),
    (
        TICKETS_CREATED,
        Kind::Counter,
        "Tickets accepted (201), by mode.",
    ),
    (
        TICKET_CREATE_DURATION,
        Kind::Histogram,
        "Time to accept a ticket, by mode.",
    ),
    (
        RATE_LIMITED,
        Kind::Counter,
        "Calls refused by a rate limit, by class and scope.",
    ),
    (WS_CONNECTIONS, Kind::Gauge, "Open WebSockets."),
    (
        WS_EVENTS,
        Kind::Counter,
        "Events pushed to WebSockets, by event type.",
    ),
    (
        TICKETS_CLAIMED,
        Kind::Counter,
        "Tickets a worker claimed, by pool.",
    ),
    (
        TICKETS_RELEASED,
        Kind::Counter,
        "Claimed tickets a worker gave back unmatched, by pool.",
    ),
    (
        MATCHES_FORMED,
        Kind::Counter,
        "Matches committed by workers, by mode.",
    ),
    (
        TIME_TO_MATCH,
        Kind::Histogram,
        "From a ticket's creation to its match, by mode.",
    ),
    (
        MATCH_RATING_SPREAD,
        Kind::Histogram,
        "Highest minus lowest rating in a match, by mode.",
    ),
    (
        WORKER_CYCLE,
        Kind::Histogram,
        "One worker cycle: claim, form, commit, release.",
    ),
    (
        HEARTBEAT_FAILURES,
        Kind::Counter,
        "Worker lease refreshes that failed.",
    ),
    (
        LOCKS_REFRESHED,
        Kind::Gauge,
        "Tickets whose lease the worker's last heartbeat refreshed.",
    ),
    (
        POOLS_LED,
        Kind::Gauge,
        "1 while this worker leads the pool (COORDINATION=leader), else 0.",
    ),
    (
        POOLS_LEFT_TO_LEADER,
        Kind::Gauge,
        "1 while this COORDINATION=claim worker leaves the pool to a pool leader (a deployment running both), else 0.",
    ),
    (
        RECLAIM_ATTEMPTS,
        Kind::Counter,
        "Supervisor reclaim passes (one per pool per cycle).",
    ),
    (
        RECLAIM_FAILURES,
        Kind::Counter,
        "Supervisor reclaim steps that failed.",
    ),
    (
        RECLAIMED_TICKETS,
        Kind::Counter,
        "Tickets returned to the queue from dead workers.",
    ),
    (
        RECLAIM_DURATION,
        Kind::Histogram,
        "One supervisor reclaim pass over a pool.",
    ),
    (
        TICKETS_GIVEN_UP,
        Kind::Counter,
        "Tickets ended without a match by the service, by pool and reason: no_match_found (they waited their mode's give_up_after), mode_closed, region_closed (every region they waited in was closed), disconnected (a player had no event socket open for the mode's cancel_offline_after), party_too_large (the mode's max_party was lowered while they waited), or unmatchable (their attributes could never meet the mode's rules as they are now).",
    ),
    (
        UNSERVED_TICKETS,
        Kind::Gauge,
        "Tickets waiting in a pool no supervisor has served for a minute (its mode or region was removed from every process's configuration), or that no worker serves while its oldest ticket has waited as long, by pool.",
    ),
    (
        RULE_STEPS,
        Kind::Counter,
        "Matches formed, by mode, rule (kind:attribute) and the relax step it was at (0: not relaxed).",
    ),
    (
        QUEUE_DEPTH,
        Kind::Gauge,
        "Tickets in the queue, by pool; those a worker holds are counted apart (reported by supervisors only).",
    ),
    (
        QUEUE_HELD,
        Kind::Gauge,
        "Tickets held by workers, by pool: claim batches being matched, or every ticket a pool leader has taken in (reported by supervisors only).",
    ),
    (
        QUEUE_OLDEST_WAIT,
        Kind::Gauge,
        "How long the longest-waiting ticket has waited, by pool (supervisors only).",
    ),
    (
        READY_CHECKS,
        Kind::Counter,
        "Ready-check answers and ends, by outcome (accepted, declined, timed_out, disconnected).",
    ),
    (
        MATCHES_ENDED,
        Kind::Counter,
        "Matches that reached a final state, by status.",
    ),
    (
        SAGA_STEPS,
        Kind::Counter,
        "Match saga steps run, by step and outcome (applied, skipped, failed).",
    ),
    (
        SAGA_STEP_DURATION,
        Kind::Histogram,
        "Time to run one match saga step, by step.",
    ),
    (
        BACKFILL_FILLS,
        Kind::Counter,
        "Fills committed into running matches' open seats, and players in them, by mode (label what: fills, players).",
    ),
    (
        BACKFILL_JOINS,
        Kind::Counter,
        "Fills reaching their running match, by outcome (joined; closed: the match ended first; moved: another driver did it; refused or unacknowledged by the game server: players requeued).",
    ),
    (
        GAME_SERVERS_LOST,
        Kind::Counter,
        "Game servers dropped after missing their heartbeats.",
    ),
    (
        ALLOCATIONS,
        Kind::Counter,
        "Game-server slot allocations, by region and outcome (allocated, no_capacity).",
    ),
    (
        GAME_SERVERS,
        Kind::Gauge,
        "Registered game servers, by region (supervisors only).",
    ),
    (
        FREE_SLOTS,
        Kind::Gauge,
        "Free match slots on registered game servers, by region (supervisors only).",
    ),
    (
        STORE_CALL_DURATION,
        Kind::Histogram,
        "Time of one call to Redis, by command.",
    ),
    (
        STORE_ERRORS,
        Kind::Counter,
        "Calls to Redis that failed, by command.",
    ),
    (
        STORE_OUTAGES,
        Kind::Counter,
        "Times this process found Redis unreachable after reaching it.",
    ),
    (
        RATING_UPDATES,
        Kind::Counter,
        "Players' ratings updated from match results, by mode.",
    ),
    (
        RATING_LAG,
        Kind::Histogram,
        "From a result's report to its ratings being applied.",
    ),
    (
        RATING_BATCH_DURATION,
        Kind::Histogram,
        "Time to apply one batch of results to the rating database.",
    ),
];

/// What kind of metric a name is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    Histogram,
}

/// Registers every metric's help text and unit with the recorder.
pub fn describe() {
    for &(name, kind, help) in ALL {
        match kind {
            Kind::Counter => describe_counter!(name, Unit::Count, help),
            Kind::Gauge => describe_gauge!(name, help),
            Kind::Histogram if name.ends_with("_seconds") => {
                describe_histogram!(name, Unit::Seconds, help)
            }
            Kind::Histogram => describe_histogram!(name, help),
        }
    }
}
