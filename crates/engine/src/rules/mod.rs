//! Rules: what a match must respect beyond skill, region and party size (client
//! builds kept apart, crossplay, maps, roles, party make-up), each loosening
//! with the wait of the candidate match's longest-waiting ticket, like the
//! skill window.
//!
//! - [`config`]: rules as modes declare them, checked, as steps.

mod config;

pub use config::{Kind, MAX_RULES, MAX_STEPS, Params, Rule, Step};
pub(crate) use config::{RawRule, check_set};
