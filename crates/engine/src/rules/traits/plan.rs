//! The rules a candidate is asked about, listed once per snapshot. A growing
//! match asks [`Traits::admits_at`] of every ticket it looks at (nearly three
//! million times in a 100k-ticket ruled cycle) and [`Traits::add`] of every
//! one that joins, yet most rules are not theirs to check: party make-up and
//! roles are the room check's, and inside a partition a hard `equal` rule
//! (and one the partitions settle, [`Traits::settle`]) holds already. Passing
//! over those rule by rule, for each candidate, was about a tenth of a ruled
//! cycle's instructions; the plan lists the others, so each call walks only
//! them, the cheapest to check first (a shared value is one AND of two sets,
//! an `equal` a walk over both sides' values). It also
//! numbers each rule's slot in a match's state ([`Grown`]), which starting a
//! match fills: in rule order among the rules of a kind, whatever order they
//! are checked in.

use super::{Column, Grown, Steps, Traits};
use crate::rules::config::Params;

/// The rules [`Traits::admits_at`] and [`Traits::add`] read, in rule order:
/// for a match grown across partitions, and for one grown inside one.
#[derive(Debug, Default, Clone)]
pub(super) struct Plan {
    everywhere: Vec<Check>,
    in_part: Vec<Check>,
}

/// One rule to read: its number, and the place of its state in a [`Grown`]
/// among the rules of its kind (`values` for `equal`, `sets` for
/// `intersect`, `bounds` for `distance`).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Check {
    rule: usize,
    kept: usize,
}

impl Traits {
    /// Lists the rules to read anew: after a rule is added, and once the
    /// partitions have settled some (see [`Traits::settle`]).
    pub(super) fn make_plan(&mut self) {
        let mut plan = Plan::default();
        let (mut ev, mut es, mut ed) = (0, 0, 0);
        for (r, (_, column)) in self.rules.iter().enumerate() {
            let (kept, alone) = match column {
                Column::Equal { .. } => {
                    ev += 1;
                    (ev - 1, self.left_alone(r))
                }
                Column::Intersect { .. } => {
                    es += 1;
                    (es - 1, false)
                }
                Column::Distance { .. } => {
                    ed += 1;
                    (ed - 1, false)
                }
                Column::Roles { .. } | Column::PartyBalance => continue,
            };
            let check = Check { rule: r, kept };
            plan.everywhere.push(check);
            if !alone {
                plan.in_part.push(check);
            }
        }
        // Cheapest first: a shared value is one AND of two sets, a distance
        // two comparisons, an `equal` a walk over both sides' values.
        let cost = |c: &Check| match &self.rules[c.rule].1 {
            Column::Intersect { .. } => 0,
            Column::Distance { .. } => 1,
            _ => 2,
        };
        plan.everywhere.sort_by_key(cost);
        plan.in_part.sort_by_key(cost);
        self.plan = plan;
    }

    /// The rules to read for a match in state `g`.
    fn checks(&self, g: &Grown) -> &[Check] {
        if g.in_part {
            &self.plan.in_part
        } else {
            &self.plan.everywhere
        }
    }

    /// Starts state `g` with entry `e` alone (see [`Traits::start`] and
    /// [`Traits::start_in_part`]): each kept slot the plan numbered holds its
    /// values, but an `equal` rule left alone inside a partition keeps none.
    pub(super) fn start_state(&self, g: &mut Grown, e: usize, in_part: bool) {
        g.in_part = in_part;
        g.sets.clear();
        g.bounds.clear();
        g.people.clear();
        g.blocked.clear();
        for &Check { rule: r, kept: k } in &self.plan.everywhere {
            match &self.rules[r].1 {
                Column::Equal { start, values, .. } => {
                    // The value lists are kept from match to match (cleared,
                    // not dropped).
                    if g.values.len() <= k {
                        g.values.push(Vec::new());
                    }
                    let kept = &mut g.values[k];
                    kept.clear();
                    if !(in_part && self.left_alone(r)) {
                        kept.extend_from_slice(&values[start[e] as usize..start[e + 1] as usize]);
                    }
                }
                // In rule order, as the plan numbered them.
                Column::Intersect { sets, .. } => g.sets.push(sets[e]),
                Column::Distance { lo, hi } => g.bounds.push((lo[e], hi[e])),
                Column::Roles { .. } | Column::PartyBalance => {}
            }
        }
        g.people.extend_from_slice(self.people(e));
        g.blocked.extend_from_slice(self.blocked(e));
        g.room.clear();
        self.count_roles(g, e);
    }

    /// [`Traits::admits`] at `steps`.
    pub(crate) fn admits_at(&self, g: &Grown, e: usize, steps: &Steps) -> bool {
        for &Check { rule: r, kept: k } in self.checks(g) {
            let (rule, column) = &self.rules[r];
            let step = steps.of(r, rule);
            let ok = match (column, &rule.steps[step].params) {
                (_, Params::Off) => true,
                (
                    Column::Equal {
                        start,
                        values,
                        group,
                    },
                    _,
                ) => {
                    let at = &group[step];
                    let g0 = at[g.values[k][0] as usize];
                    values[start[e] as usize..start[e + 1] as usize]
                        .iter()
                        .chain(&g.values[k])
                        .all(|&v| at[v as usize] == g0)
                }
                (Column::Intersect { sets, .. }, Params::Intersect { min }) => {
                    let common = g.sets[k] & sets[e];
                    // Mostly one value shared: a test, not a count (without
                    // the `popcnt` instruction a count is a dozen).
                    if *min == 1 {
                        common != 0
                    } else {
                        common.count_ones() as usize >= *min
                    }
                }
                (Column::Distance { lo, hi }, Params::Distance { max }) => {
                    let (a, b) = g.bounds[k];
                    // A missing number (NaN) on either side never fits.
                    !(a.is_nan() || lo[e].is_nan()) && b.max(hi[e]) - a.min(lo[e]) <= *max
                }
                _ => true,
            };
            if !ok {
                return false;
            }
        }
        let (people, blocked) = (self.people(e), self.blocked(e));
        !people.iter().any(|p| g.blocked.contains(p))
            && !blocked.iter().any(|b| g.people.contains(b))
    }

    /// Adds entry `e` to the match in state `g`.
    pub(crate) fn add(&self, g: &mut Grown, e: usize) {
        for &Check { rule: r, kept: k } in self.checks(g) {
            match &self.rules[r].1 {
                Column::Equal { start, values, .. } => {
                    for &v in &values[start[e] as usize..start[e + 1] as usize] {
                        if !g.values[k].contains(&v) {
                            g.values[k].push(v);
                        }
                    }
                }
                Column::Intersect { sets, .. } => g.sets[k] &= sets[e],
                Column::Distance { lo, hi } => {
                    let (a, b) = g.bounds[k];
                    g.bounds[k] = (a.min(lo[e]), b.max(hi[e]));
                }
                Column::Roles { .. } | Column::PartyBalance => {}
            }
        }
        g.people.extend_from_slice(self.people(e));
        g.blocked.extend_from_slice(self.blocked(e));
        self.count_roles(g, e);
    }
}

#[cfg(test)]
mod tests {
    use super::Check;
    use crate::rules::Traits;
    use crate::rules::traits::fixture::{T, compile};
    use mm_domain::{Attributes, Value};

    fn ticket(build: &str, platform: &str) -> T {
        let mut t = T::texts(&[("build", build), ("platform", platform)]);
        t.0.insert("maps", Value::List(vec!["dust".into()]));
        t.0.insert("level", Value::Number(3.0));
        t
    }

    const MODE: &str = r#"
[modes.m]
teams = 2
team_size = 2
[[modes.m.rules]]
kind = "party_balance"
[[modes.m.rules]]
kind = "equal"
attribute = "build"
[[modes.m.rules]]
kind = "intersect"
attribute = "maps"
[[modes.m.rules]]
kind = "equal"
attribute = "platform"
relax = [{ after = "30s", off = true }]
[[modes.m.rules]]
kind = "distance"
attribute = "level"
max_distance = 5
"#;

    const MAPS: &str = r#"
[modes.m]
teams = 2
team_size = 2
[[modes.m.rules]]
kind = "intersect"
attribute = "maps"
min = 2
relax = [{ after = "20s", min = 1 }, { after = "40s", off = true }]
"#;

    /// Tickets listing `maps`, under [`MAPS`].
    fn maps(lists: &[&[&str]]) -> Traits {
        let tickets: Vec<T> = lists
            .iter()
            .map(|l| {
                let mut a = Attributes::default();
                a.insert(
                    "maps",
                    Value::List(l.iter().map(|m| m.to_string()).collect()),
                );
                T(a)
            })
            .collect();
        compile(MAPS, &tickets)
    }

    #[test]
    fn an_intersect_asks_for_min_shared_values_then_one_then_none() {
        let t = maps(&[
            &["dust", "harbor", "mill"],
            &["dust", "harbor"],
            &["dust", "mill"],
            &["pier"],
        ]);
        let mut g = super::Grown::default();
        t.start(&mut g, 0);
        let admits = |g: &super::Grown, e, s: u64| t.admits(g, e, s * 1_000);
        assert!(admits(&g, 1, 0), "two shared at min 2");
        assert!(admits(&g, 2, 0), "two shared at min 2");
        t.add(&mut g, 1);
        assert!(!admits(&g, 2, 0), "only dust left in common: one, at min 2");
        assert!(admits(&g, 2, 20), "one is enough at min 1");
        assert!(!admits(&g, 3, 20), "nothing shared at min 1");
        assert!(admits(&g, 3, 40), "the rule is off");
    }

    fn at(rule: usize, kept: usize) -> Check {
        Check { rule, kept }
    }

    #[test]
    fn the_plan_leaves_out_the_room_checks_rules_and_inside_a_part_the_settled_ones() {
        let mut t = compile(
            MODE,
            &[ticket("1", "pc"), ticket("1", "pc"), ticket("2", "xbox")],
        );
        // Party balance is the room check's; the build's equal is hard. The
        // cheapest first: the shared value, the distance, then the equals in
        // rule order.
        let everywhere = vec![at(2, 0), at(4, 0), at(1, 0), at(3, 1)];
        assert_eq!(t.plan.everywhere, everywhere);
        assert_eq!(t.plan.in_part, vec![at(2, 0), at(4, 0), at(3, 1)]);
        // Partitions by build whose platforms are one group each: the
        // platform rule is settled as well.
        t.settle(&[0, 0, 1]);
        assert_eq!(t.plan.everywhere, everywhere);
        assert_eq!(t.plan.in_part, vec![at(2, 0), at(4, 0)]);
        t.settle(&[0, 0, 0]);
        assert_eq!(t.plan.in_part, vec![at(2, 0), at(4, 0), at(3, 1)]);
    }
}
