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
//! are checked in. At each set of steps ([`Steps`]) the plan is resolved into
//! [`Op`]s, each rule's parameters at its step looked up once for the many
//! candidates a match asks about, and the rules off at their step left out.

use super::{Column, Grown, Steps, Traits};
use crate::rules::append;
use crate::rules::config::Params;

/// A list read whole for a match grown across partitions and its first
/// `in_part` for one grown inside one (what a partition leaves alone comes
/// last).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Listed<T> {
    list: Vec<T>,
    in_part: usize,
}

impl<T> Default for Listed<T> {
    fn default() -> Self {
        Listed {
            list: Vec::new(),
            in_part: 0,
        }
    }
}

impl<T> Listed<T> {
    /// What a match grown inside a partition (`in_part`) or across them reads.
    fn read(&self, in_part: bool) -> &[T] {
        if in_part {
            &self.list[..self.in_part]
        } else {
            &self.list
        }
    }
}

/// The rules [`Traits::admits_at`] and [`Traits::add`] read, cheapest first
/// (the `equal` rules a partition leaves alone last).
pub(super) type Plan = Listed<Check>;

/// One rule to read: its number, and the place of its state in a [`Grown`]
/// among the rules of its kind (`values` for `equal`, `sets` for
/// `intersect`, `bounds` for `distance`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Check {
    rule: usize,
    kept: usize,
}

/// One check of [`Traits::admits_at`] at a set of steps: the rule's number,
/// the place of its state in a [`Grown`] (as [`Check`]), and its parameters
/// at its step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Op {
    /// An `intersect` rule: at least `min` values shared.
    Shares { rule: u16, kept: u16, min: u32 },
    /// A `distance` rule: the numbers at most `max` apart.
    Within { rule: u16, kept: u16, max: f64 },
    /// An `equal` rule at step `step` (whose groups count as one value).
    Equal { rule: u16, kept: u16, step: u16 },
}

/// The checks at one span of steps.
pub(super) type Ops = Listed<Op>;

impl Traits {
    /// Lists the rules to read anew: after a rule is added, and once the
    /// partitions have settled some (see [`Traits::settle`]).
    pub(super) fn make_plan(&mut self) {
        // Each rule to read, and whether a partition leaves it alone.
        let mut checks: Vec<(Check, bool)> = Vec::new();
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
            checks.push((Check { rule: r, kept }, alone));
        }
        // Cheapest first: a shared value is one AND of two sets, a distance
        // two comparisons, an `equal` a walk over both sides' values; those
        // left alone inside a partition last (a stable sort: rule order
        // otherwise).
        let cost = |&(c, alone): &(Check, bool)| match &self.rules[c.rule].1 {
            Column::Intersect { .. } => 0,
            Column::Distance { .. } => 1,
            _ => 2 + u8::from(alone),
        };
        checks.sort_by_key(cost);
        self.plan = Plan {
            in_part: checks.iter().filter(|(_, alone)| !alone).count(),
            list: checks.into_iter().map(|(c, _)| c).collect(),
        };
        (self.steps, self.ops) = self.step_table();
        self.room = self
            .rules
            .iter()
            .position(|(_, column)| matches!(column, Column::Roles { room: Some(_), .. }));
    }

    /// The checks at `steps` (each rule at its step there), from the plan.
    pub(super) fn resolve(&self, steps: &Steps) -> Ops {
        let op = |&Check { rule: r, kept: k }: &Check| {
            let (rule, column) = &self.rules[r];
            let step = steps.of(r, rule);
            let (r, k) = (narrow(r), narrow(k));
            match (column, &rule.steps[step].params) {
                (_, Params::Off) => None,
                (Column::Equal { .. }, _) => Some(Op::Equal {
                    rule: r,
                    kept: k,
                    step: narrow(step),
                }),
                (Column::Intersect { .. }, Params::Intersect { min }) => Some(Op::Shares {
                    rule: r,
                    kept: k,
                    min: u32::try_from(*min).unwrap_or(u32::MAX),
                }),
                (Column::Distance { .. }, Params::Distance { max }) => Some(Op::Within {
                    rule: r,
                    kept: k,
                    max: *max,
                }),
                _ => None,
            }
        };
        let mut ops = Ops::default();
        for (k, check) in self.plan.list.iter().enumerate() {
            if let Some(op) = op(check) {
                ops.list.push(op);
                ops.in_part += usize::from(k < self.plan.in_part);
            }
        }
        ops
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
        for &Check { rule: r, kept: k } in &self.plan.list {
            match &self.rules[r].1 {
                Column::Equal { start, values, .. } => {
                    // The value lists are kept from match to match (cleared,
                    // not dropped); the plan may read them out of slot order.
                    if g.values.len() <= k {
                        g.values.resize_with(k + 1, Vec::new);
                    }
                    let kept = &mut g.values[k];
                    kept.clear();
                    if !(in_part && self.left_alone(r)) {
                        append(kept, &values[start[e] as usize..start[e + 1] as usize]);
                    }
                }
                // In rule order, as the plan numbered them.
                Column::Intersect { sets, .. } => g.sets.push(sets[e]),
                Column::Distance { lo, hi } => g.bounds.push((lo[e], hi[e])),
                Column::Roles { .. } | Column::PartyBalance => {}
            }
        }
        append(&mut g.people, self.people(e));
        append(&mut g.blocked, self.blocked(e));
        g.room.clear();
        self.count_roles(g, e);
    }

    /// [`Traits::admits`] at `steps`.
    pub(crate) fn admits_at(&self, g: &Grown, e: usize, steps: &Steps) -> bool {
        let ops = self
            .ops
            .get(steps.span as usize)
            .map_or(&[][..], |ops| ops.read(g.in_part));
        for &op in ops {
            let ok = match op {
                Op::Shares { rule, kept, min } => {
                    let Column::Intersect { sets, .. } = &self.rules[usize::from(rule)].1 else {
                        unreachable!("a shared-values check of an intersect rule")
                    };
                    let common = g.sets[usize::from(kept)] & sets[e];
                    // Mostly one value shared: a test, not a count (without
                    // the `popcnt` instruction a count is a dozen).
                    if min == 1 {
                        common != 0
                    } else {
                        common.count_ones() >= min
                    }
                }
                Op::Within { rule, kept, max } => {
                    let Column::Distance { lo, hi } = &self.rules[usize::from(rule)].1 else {
                        unreachable!("a distance check of a distance rule")
                    };
                    let (a, b) = g.bounds[usize::from(kept)];
                    // A missing number (NaN) on either side never fits.
                    !(a.is_nan() || lo[e].is_nan()) && b.max(hi[e]) - a.min(lo[e]) <= max
                }
                Op::Equal { rule, kept, step } => {
                    let Column::Equal {
                        start,
                        values,
                        group,
                    } = &self.rules[usize::from(rule)].1
                    else {
                        unreachable!("an equal check of an equal rule")
                    };
                    let at = &group[usize::from(step)];
                    let kept = &g.values[usize::from(kept)];
                    let g0 = at[kept[0] as usize];
                    values[start[e] as usize..start[e + 1] as usize]
                        .iter()
                        .chain(kept)
                        .all(|&v| at[v as usize] == g0)
                }
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
        for &Check { rule: r, kept: k } in self.plan.read(g.in_part) {
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
        append(&mut g.people, self.people(e));
        append(&mut g.blocked, self.blocked(e));
        self.count_roles(g, e);
    }
}

/// A rule's number, slot or step as an [`Op`] keeps it: a checked mode has
/// at most [`crate::rules::MAX_RULES`] rules of at most
/// [`crate::rules::MAX_STEPS`] steps.
fn narrow(n: usize) -> u16 {
    u16::try_from(n).expect("fewer than 65,536 rules and steps")
}

#[cfg(test)]
mod tests {
    use super::{Check, Op};
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

    /// The plan's checks: for a match grown across partitions, and inside one.
    fn listed(t: &Traits) -> (Vec<Check>, Vec<Check>) {
        let p = &t.plan;
        (p.read(false).to_vec(), p.read(true).to_vec())
    }

    #[test]
    fn the_plan_leaves_out_the_room_checks_rules_and_inside_a_part_the_settled_ones() {
        let mut t = compile(
            MODE,
            &[ticket("1", "pc"), ticket("1", "pc"), ticket("2", "xbox")],
        );
        // Party balance is the room check's; the build's equal is hard, left
        // alone inside a part, so read last. The cheapest first: the shared
        // value, the distance, then the equals.
        let (everywhere, in_part) = listed(&t);
        assert_eq!(everywhere, vec![at(2, 0), at(4, 0), at(3, 1), at(1, 0)]);
        assert_eq!(in_part, vec![at(2, 0), at(4, 0), at(3, 1)]);
        // Partitions by build whose platforms are one group each: the
        // platform rule is settled as well.
        t.settle(&[0, 0, 1]);
        let (everywhere, in_part) = listed(&t);
        assert_eq!(everywhere, vec![at(2, 0), at(4, 0), at(1, 0), at(3, 1)]);
        assert_eq!(in_part, vec![at(2, 0), at(4, 0)]);
        t.settle(&[0, 0, 0]);
        assert_eq!(listed(&t).1, vec![at(2, 0), at(4, 0), at(3, 1)]);
    }

    #[test]
    fn the_checks_at_a_wait_leave_out_the_rules_off_there() {
        let t = compile(MODE, &[ticket("1", "pc"), ticket("1", "xbox")]);
        let ops = |wait: u64| {
            let ops = &t.ops[t.steps_at(wait).span as usize];
            (ops.list.clone(), ops.in_part)
        };
        let shares = Op::Shares {
            rule: 2,
            kept: 0,
            min: 1,
        };
        let within = Op::Within {
            rule: 4,
            kept: 0,
            max: 5.0,
        };
        let equal = |rule, kept| Op::Equal {
            rule,
            kept,
            step: 0,
        };
        assert_eq!(
            ops(29_999),
            (vec![shares, within, equal(3, 1), equal(1, 0)], 3)
        );
        // The platform's rule is off from 30 s on: nothing to check in it.
        assert_eq!(ops(30_000), (vec![shares, within, equal(1, 0)], 2));
        // Which the search reads: at 0 s an xbox player may not join a pc
        // player, at 30 s they may.
        let mut g = super::Grown::default();
        t.start(&mut g, 0);
        assert!(!t.admits(&g, 1, 0));
        assert!(t.admits(&g, 1, 30_000));
    }

    #[test]
    fn the_steps_hold_between_the_rules_relaxations() {
        let t = maps(&[&["dust"]]);
        let span = |wait| {
            let s = t.steps_at(wait);
            (s.from, s.until)
        };
        assert_eq!(span(0), (0, 20_000));
        assert_eq!(span(19_999), (0, 20_000));
        assert_eq!(span(20_000), (20_000, 40_000));
        assert_eq!(span(40_000), (40_000, u64::MAX));
        assert!(t.steps_at(25_000).hold(39_999));
        assert!(!t.steps_at(25_000).hold(40_000));
        let none = Traits::none();
        assert!(none.steps_at(5).hold(0) && none.steps_at(5).hold(u64::MAX - 1));
    }

    #[test]
    fn rules_beyond_the_step_array_relax_too() {
        use crate::rules::{Kind, MAX_RULES, Params, Rule, Step};
        let intersect = |steps: &[(u64, usize)]| Rule {
            kind: Kind::Intersect,
            attribute: "maps".into(),
            steps: steps
                .iter()
                .map(|&(after, min)| Step {
                    after,
                    params: Params::Intersect { min },
                })
                .collect(),
        };
        let mut rules = vec![intersect(&[(0, 1)]); MAX_RULES];
        rules.push(intersect(&[(0, 2), (50_000, 1)]));
        let list = |l: &[&str]| {
            let mut a = Attributes::default();
            a.insert(
                "maps",
                Value::List(l.iter().map(|m| m.to_string()).collect()),
            );
            T(a)
        };
        let t = Traits::new(&rules, &[list(&["dust", "harbor"]), list(&["dust"])]);
        let mut g = super::Grown::default();
        t.start(&mut g, 0);
        assert!(!t.admits(&g, 1, 49_999), "the last rule asks for two maps");
        assert!(t.admits(&g, 1, 50_000), "then for one");
        assert_eq!(t.steps_at(50_000).from, 50_000);
    }
}
