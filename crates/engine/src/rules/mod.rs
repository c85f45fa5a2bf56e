//! Rules: what a match must respect beyond skill, region and party size (client
//! builds kept apart, crossplay, maps, roles, party make-up), each loosening
//! with the wait of the candidate match's longest-waiting ticket, like the
//! skill window.
//!
//! - [`config`]: rules as modes declare them, checked, as steps.
//! - [`compile`]: a ticket read for the rules once, as numbers and bit sets.
//! - [`traits`]: what the rules read of a pool's tickets, and the check that a
//!   ticket may join a candidate match.
//! - [`roles`]: filling a team's roles from what its players accept.
//! - [`room`]: whether a growing match can still fill its teams' roles.
//! - [`never`]: tickets the rules could never match, told apart at the door.

mod compile;
mod config;
pub mod lane;
pub mod never;
pub mod roles;
mod room;
mod traits;

pub use compile::{Compiled, Compiler, Described, MAX_LIST_VALUES, MAX_ROLES};
pub use config::{Kind, MAX_RULES, MAX_STEPS, Params, Rule, Step};
pub(crate) use config::{RawRule, check_set};
pub use traits::Traits;
pub(crate) use traits::{Grown, RolesAt, Steps};

/// Appends `values` to `out`: a push for the one value a solo's cell mostly
/// holds, where `extend_from_slice` calls out to copy memory (the ruled
/// search does this for every ticket it compiles, moves or adds, and the
/// calls were 2-3% of a ruled cycle's time).
#[inline]
pub(crate) fn append<T: Copy>(out: &mut Vec<T>, values: &[T]) {
    match values {
        [] => {}
        [one] => out.push(*one),
        _ => out.extend_from_slice(values),
    }
}
