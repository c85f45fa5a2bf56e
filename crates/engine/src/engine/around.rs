//! An overdue ticket's match grown outwards from the ticket itself, for modes
//! whose rules keep state as a match grows (maps, roles, platforms, block
//! lists): the ticket is the match's first member, so every candidate is judged
//! against a match that already holds it, and the nearest free ticket in rating
//! on either side is looked at next.
//!
//! Growing up from a dozen starts below the ticket (what [`super::propose_with`]
//! does for modes without such rules) builds matches out of tickets that suit
//! each other, then finds that the overdue ticket does not suit them (a match of
//! players who share a map it did not pick), or passes two dozen misfits and
//! gives up, a dozen times over: most of a ruled cycle went there. Growing from
//! the ticket asks each candidate the one question that matters (does it fit a
//! match with this ticket in it) once. A full match that does not split into
//! teams meeting the rules is nearly always held back by a party (the room
//! check counts each team's tickets for every role, but not how the parties
//! pack: a trio with a tank and a trio with a healer, of whom only one can
//! sit with the pair): it is grown again without one of its parties.

use super::SKIP_LIMIT;
use super::snapshot::{Group, Snapshot};

/// How many parties a match that does not split is grown again without.
const RETRIES: usize = 3;

impl Snapshot<'_> {
    /// Grows a match around free position `a`: the free tickets nearest in
    /// rating, above or below, join while the match's spread stays within every
    /// member's window half-width, their party fits the team shape and the
    /// rules admit them. Stops when full, when neither side's next ticket is
    /// within the members' common window, or after `SKIP_LIMIT` misfits. Once
    /// the match's last places can only go to players of certain roles, each
    /// side jumps to its next ticket with such a player. The members end in
    /// rating order. Under a party-balance rule, a match that took a big party
    /// and stopped short of full is grown once more without it (as
    /// [`Snapshot::grow_along`] does).
    pub(super) fn grow_around(&mut self, a: usize, g: &mut Group) -> bool {
        let grown = self.grow_around_once(a, g, None);
        if grown
            && g.players < self.mode.max_players()
            && self.ruled
            && self.traits.balances_parties()
            && let Some(needy) = self.needy_party(g)
            && needy != a
        {
            return self.grow_around_once(a, g, Some(needy));
        }
        grown
    }

    /// Grows the full match `g` around `a`, which did not split into teams
    /// that meet the rules, again without one of its parties (the largest
    /// first, up to [`RETRIES`]) until one formable match splits. Not inlined:
    /// in the overdue pass's loop, which pools without such rules share, it
    /// made their cycle half as slow again (measured: 26 -> 43 ms on the
    /// no-rules bench pool).
    #[inline(never)]
    pub(super) fn regrow_without_parties(&mut self, a: usize, g: &mut Group) -> bool {
        let mut parties: Vec<usize> = g
            .members
            .iter()
            .copied()
            .filter(|&m| m != a && self.at[m].size() > 1)
            .collect();
        parties.sort_by_key(|&m| std::cmp::Reverse(self.at[m].size()));
        for p in parties.into_iter().take(RETRIES) {
            if self.grow_around_once(a, g, Some(p)) && self.formable(g) && self.splits(g) {
                return true;
            }
        }
        false
    }

    fn grow_around_once(&mut self, a: usize, g: &mut Group, exclude: Option<usize>) -> bool {
        let max = self.mode.max_players();
        if !self.begin(g, a) {
            return false;
        }
        let mut reach = self.at[a].delta;
        let (mut low, mut high) = (self.at[a].rating, self.at[a].rating);
        let mut below = self.free.left_of(a.checked_sub(1));
        let mut above = self.free.right_of(a + 1, self.n);
        let mut skipped = 0;
        let mut needs = self.roles_needed(g);
        let (begin, end) = self.seek_span(a);
        while g.players < max {
            if let Some(set) = needs {
                below = below.and_then(|p| self.seek_free_below(p, set, begin, high - reach));
                above = above.and_then(|p| self.seek_free(p, set, end, low + reach));
            }
            // Out of the common window stays out: it only narrows as the match
            // widens.
            below = below.filter(|&p| high - self.at[p].rating <= reach && self.same_part(p, a));
            above = above.filter(|&p| self.at[p].rating - low <= reach && self.same_part(p, a));
            let Some(c) = self.step_out(&mut below, &mut above, low, high) else {
                break;
            };
            let r = self.at[c].rating;
            let (new_low, new_high) = (low.min(r), high.max(r));
            if !self.may_join(g, c, new_high - new_low, exclude) {
                skipped += 1;
                if skipped > SKIP_LIMIT {
                    break;
                }
                continue;
            }
            self.join(g, c);
            reach = reach.min(self.at[c].delta);
            (low, high) = (new_low, new_high);
            needs = self.roles_needed(g);
        }
        // In rating order, as a match grown upwards is.
        g.members.sort_unstable();
        g.split = None;
        g.sizes.clear();
        g.sizes.extend(g.members.iter().map(|&m| self.at[m].size()));
        g.spread = high - low;
        g.reach = reach;
        true
    }
}
