//! The matching engine: pure functions from a batch of candidates and the current
//! time to proposed matches. No I/O, deterministic for the same input.
//!
//! This is seed 000's engine: every ticket searches inside a rating window that
//! grows with its wait ([`window`]), and a claimed batch is turned into matches by
//! repeatedly taking the contiguous run of tickets (in rating order) with the
//! smallest spread ([`batch`]).

pub mod batch;
pub mod window;

pub use batch::{BatchConfig, Candidate, form_matches};
pub use window::WindowPolicy;
