//! The quality simulator behind `matchmaker simulate`: a seeded synthetic arrival
//! stream ([`stream`]) is replayed through our engine and through seed 000's
//! baseline on a simulated clock ([`run`]), and the outcomes are compared
//! ([`report`]). No Redis, no wall clock: the same scenario gives the same figures.

pub mod report;
pub mod run;
pub mod scenarios;
pub mod stream;

pub use report::{Report, side_by_side};
pub use run::{Engine, Scenario, run};

/// The baseline the issue asks us to beat: seed 000 with 3 workers (as in its
/// benchmark) claiming 100 tickets each per tick.
pub const SEED000: Engine = Engine::Seed000 {
    batch: 100,
    workers: 3,
};
