//! The matching engine: pure functions from a pool snapshot and the current time to
//! proposed matches. No I/O, deterministic for the same input.
//!
//! - [`mode`]: game modes as data (TOML), party rating policies.
//! - [`window`]: the rating window a ticket accepts, growing with its wait.
//! - [`region`]: which regions a ticket is matched in, and from when.
//! - [`engine`]: our match formation (oldest first, fair windows, parties, teams).
//! - [`rules`]: attributes, roles and party make-up a match must respect.
//! - [`teams`]: splitting a match into balanced teams with parties intact.
//! - [`backfill`]: filling the open seats of running matches.
//! - [`claim`]: how many tickets a claim worker takes of a pool at a time.
//! - [`batch`]: seed 000's tightest-spread batch algorithm, kept as the baseline.

// Module docs are a code map for contributors: they name private modules and
// constants too (`cargo doc --document-private-items` follows those links).
#![allow(rustdoc::private_intra_doc_links)]

pub mod backfill;
pub mod batch;
pub mod claim;
pub mod engine;
pub mod estimate;
pub mod mode;
pub mod region;
pub mod rules;
pub mod teams;
pub mod window;

pub use backfill::{Backfill, Placed, fill, fill_with};
pub use batch::{BatchConfig, Candidate, form_matches};
pub use engine::{Entry, Proposal, SPLIT_FROM, propose, propose_each, propose_with};
pub use mode::{BackfillPolicy, DEFAULT_MODES, MAX_PARTY, Mode, ModeError, Modes, PartyRating};
pub use region::{RegionChoice, plan};
pub use rules::{Compiled, Compiler, Described, Kind, Params, Rule, Traits};
pub use window::WindowPolicy;
