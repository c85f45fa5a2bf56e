//! The quality simulator behind `matchmaker simulate`: a seeded synthetic arrival
//! stream ([`stream`]) or a studio's trace ([`trace`]) is replayed on a simulated
//! clock ([`mod@run`]) through the strategies the service runs, with the service's
//! poll and wake-up timing: pool leaders (our engine on whole pools), `claim`
//! workers (our engine on claim batches), and seed 000's baseline; the outcomes
//! are compared ([`report`]). Matches may run, lose players and be backfilled
//! ([`backfill`]). No Redis, no wall clock: the same scenario gives the
//! same figures.

pub mod attrs;
pub mod backfill;
pub mod estimates;
mod form;
pub mod report;
pub mod run;
pub mod scenarios;
pub mod stream;
pub mod trace;

pub use report::{Report, side_by_side};
pub use run::{Engine, Scenario, Timing, run};

/// Pool leaders (`COORDINATION=leader`) with the service's default timing.
pub const LEADER: Engine = Engine::Leader {
    timing: Timing::SERVICE,
};

/// Our `claim` workers as deployed by default: 3 worker processes (as in the
/// benchmarks) of 2 consumers each, claiming `CLAIM_BATCH_SIZE` = 100, with the
/// service's default timing.
pub const CLAIM: Engine = Engine::Claim {
    batch: 100,
    workers: 6,
    seed: 1,
    timing: Timing::SERVICE,
};

/// The baseline the issue asks us to beat: seed 000 with 3 workers (as in its
/// benchmark) claiming 100 tickets each per tick.
pub const SEED000: Engine = Engine::Seed000 {
    batch: 100,
    workers: 3,
    timing: Timing::SEED000,
};
