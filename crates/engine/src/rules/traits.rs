//! What the rules read of a pool's entries, laid out by rule for the search
//! (from the tickets' [`Compiled`] rows); the state of a candidate match as it
//! grows, with the check that a ticket may join it; and the judgement of a
//! formed match against every rule.
//!
//! A missing attribute: for `equal`, a value of its own (tickets without it
//! match each other); for `intersect`, no values (it matches once the rule is
//! off); for `distance`, no number (it matches only once the rule is off); for
//! `roles`, every role. A ticket whose players' `equal` values differ matches
//! only where they all count as equal (one group at the step).

use super::compile::{Compiled, Compiler, Described, MAX_LIST_VALUES};
use super::config::{Kind, MAX_RULES, Params, Rule};
use super::roles::Need;
use super::room::Room;

#[cfg(test)]
mod fixture;
mod kinship;
mod partition;
mod permute;
mod plan;
mod room_check;
mod settle;
use mm_domain::Millis;
use std::sync::Arc;

/// One rule, compiled over a snapshot.
#[derive(Debug)]
pub(super) enum Column {
    /// Per entry, the distinct values of its players (from `start[e]` to
    /// `start[e + 1]` in `values`); per step, each value's group.
    Equal {
        start: Vec<u32>,
        values: Vec<u32>,
        /// `group[step][value]`; a value in no group is a group of its own.
        group: Vec<Vec<u32>>,
    },
    /// Per entry, the values all its players listed (bit set), and the one its
    /// first player listed first (`u8::MAX`: none).
    Intersect {
        sets: Vec<u64>,
        firsts: Vec<u8>,
        names: Vec<Arc<str>>,
    },
    /// Per entry, the lowest and highest of its players' numbers (NaN: missing).
    Distance { lo: Vec<f64>, hi: Vec<f64> },
    /// Per entry, the first of its players' role sets in `sets`; per step,
    /// what a team needs (`None`: off).
    Roles {
        start: Vec<u32>,
        sets: Vec<u16>,
        names: Vec<Arc<str>>,
        needs: Vec<Option<Vec<Need>>>,
        /// With the room check: each player's set as needed roles (beside
        /// `sets`).
        room: Option<(Room, Vec<u8>)>,
    },
    /// Party make-up: reads only the tickets' sizes.
    PartyBalance,
}

impl Column {
    /// For an `equal` rule: the group of entry `e`'s values at the rule's
    /// first step, `None` when its players' values lie in different groups
    /// there (it can meet nobody before the rule relaxes) or it has none.
    /// `None` for any other rule.
    #[inline]
    fn first_group(&self, e: usize) -> Option<u32> {
        let Column::Equal {
            start,
            values,
            group,
        } = self
        else {
            return None;
        };
        let at = group.first()?;
        let mine = &values[start[e] as usize..start[e + 1] as usize];
        let g = at[*mine.first()? as usize];
        mine.iter().all(|&v| at[v as usize] == g).then_some(g)
    }
}

/// The rules' view of a snapshot's entries.
#[derive(Debug, Default)]
pub struct Traits {
    rules: Vec<(Rule, Column)>,
    /// Per rule, its label (`kind:attribute`) and attribute, shared by every
    /// match that names them.
    labels: Vec<(Arc<str>, Arc<str>)>,
    /// Per entry, its players (for judging party make-up).
    sizes: Vec<u16>,
    /// Per entry, its players' numbers (in `people`), and those it blocks.
    people_start: Vec<u32>,
    people: Vec<u32>,
    blocks_start: Vec<u32>,
    blocked: Vec<u32>,
    /// Bit `r`: rule number `r` is an `equal` rule the snapshot's partitions
    /// settle (see [`Traits::settle`]).
    settled: u64,
    /// The rules a candidate is asked about (see [`plan::Plan`]).
    plan: plan::Plan,
    /// The rules' steps by spans of wait, and what a candidate is asked in
    /// each (see [`Traits::step_table`]).
    steps: Vec<Steps>,
    ops: Vec<plan::Ops>,
    /// The number of the roles rule that keeps the room check, if any (see
    /// [`Traits::room_rule`]): asked of nearly every candidate.
    room: Option<usize>,
}

impl Traits {
    /// No rules: every check passes.
    pub fn none() -> Self {
        Self::default()
    }

    /// Only the rules that read no attribute (party make-up), for callers
    /// that know nothing of the tickets but their sizes.
    pub fn shape_only(rules: &[Rule]) -> Self {
        let mut traits = Traits::default();
        for r in rules.iter().filter(|r| r.kind == Kind::PartyBalance) {
            traits.push_rule(r.clone(), Column::PartyBalance);
        }
        traits
    }

    /// Compiles `rules` over `tickets` (in the order of the engine's entries),
    /// numbering their values afresh (see [`Compiler`] to number once and
    /// reuse).
    pub fn new<T: Described>(rules: &[Rule], tickets: &[T]) -> Self {
        let blocks = tickets.iter().any(|t| !t.blocks().is_empty());
        let mut compiler = Compiler::with_people(rules, blocks);
        let rows: Vec<Compiled> = tickets.iter().map(|t| compiler.compile(t)).collect();
        compiler.traits(rows.iter())
    }

    pub(super) fn push_rule(&mut self, rule: Rule, column: Column) {
        self.labels
            .push((Arc::from(rule.label()), Arc::from(rule.attribute.as_str())));
        self.rules.push((rule, column));
        self.make_plan();
    }

    /// The entries' sizes, players and block lists, from their rows.
    pub(super) fn set_people<'a>(&mut self, rows: impl Iterator<Item = &'a Compiled> + Clone) {
        self.sizes = rows.clone().map(|r| r.size).collect();
        if rows.clone().all(|r| r.blocked.is_empty()) {
            return;
        }
        for r in rows {
            self.people_start.push(self.people.len() as u32);
            self.people.extend_from_slice(&r.people);
            self.blocks_start.push(self.blocked.len() as u32);
            self.blocked.extend_from_slice(&r.blocked);
        }
        self.people_start.push(self.people.len() as u32);
        self.blocks_start.push(self.blocked.len() as u32);
    }

    /// Whether any rule (or block list) applies.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty() && self.blocked.is_empty()
    }

    pub fn rules(&self) -> impl Iterator<Item = &Rule> {
        self.rules.iter().map(|(r, _)| r)
    }

    fn people(&self, e: usize) -> &[u32] {
        if self.people_start.is_empty() {
            return &[];
        }
        &self.people[self.people_start[e] as usize..self.people_start[e + 1] as usize]
    }

    fn blocked(&self, e: usize) -> &[u32] {
        if self.blocks_start.is_empty() {
            return &[];
        }
        &self.blocked[self.blocks_start[e] as usize..self.blocks_start[e + 1] as usize]
    }

    /// Whether every player of entry `e` lists the value a running match
    /// chose (`chosen`: attribute -> value) under each `intersect` rule still
    /// in force at `wait`: a filler joins the map being played, not just one
    /// its players share.
    pub fn lists_chosen(
        &self,
        e: usize,
        wait: Millis,
        chosen: &std::collections::BTreeMap<String, String>,
    ) -> bool {
        self.rules.iter().all(|(rule, column)| match column {
            Column::Intersect { sets, names, .. } => {
                let Some(value) = chosen.get(&rule.attribute) else {
                    return true;
                };
                if rule.steps[rule.step(wait)].params == Params::Off {
                    return true;
                }
                names
                    .iter()
                    .position(|n| **n == **value)
                    .is_some_and(|b| sets[e] >> b & 1 == 1)
            }
            _ => true,
        })
    }

    /// The roles rule at `wait`, with its compiled sets (`None`: no such rule,
    /// or off).
    pub(crate) fn roles_at(&self, wait: Millis) -> Option<RolesAt<'_>> {
        self.rules.iter().find_map(|(rule, column)| match column {
            Column::Roles {
                start,
                sets,
                names,
                needs,
                ..
            } => needs[rule.step(wait)].as_deref().map(|need| RolesAt {
                start,
                sets,
                need,
                names,
            }),
            _ => None,
        })
    }

    /// Whether the mode balances parties at some step.
    pub(crate) fn balances_parties(&self) -> bool {
        self.rules.iter().any(|(r, _)| r.kind == Kind::PartyBalance)
    }

    /// The party-balance gap at `wait` (`None`: no such rule, or off).
    pub(crate) fn party_gap(&self, wait: Millis) -> Option<usize> {
        self.steps_at(wait).party_gap
    }

    /// [`Traits::party_gap`] at `steps`.
    pub(crate) fn party_gap_at(&self, steps: &Steps) -> Option<usize> {
        steps.party_gap
    }

    /// Each rule's step at `wait`, and the waits around it with the same
    /// steps: looked up in the table [`Traits::make_plan`] keeps.
    pub(crate) fn steps_at(&self, wait: Millis) -> Steps {
        // A few spans (a mode's relaxations): a walk, not a binary search.
        let k = self.steps.iter().take_while(|s| s.until <= wait).count();
        self.steps.get(k).copied().unwrap_or(Steps {
            from: 0,
            until: Millis::MAX,
            ..Steps::default()
        })
    }

    /// The steps of every rule for each span of waits in which none of them
    /// changes, in order of wait: a growing match looks them up once for
    /// each candidate older than its members, a few times a match.
    fn step_table(&self) -> (Vec<Steps>, Vec<plan::Ops>) {
        let mut bounds: Vec<Millis> = self
            .rules
            .iter()
            .flat_map(|(rule, _)| rule.steps.iter().map(|s| s.after))
            .chain([0])
            .collect();
        bounds.sort_unstable();
        bounds.dedup();
        let until = bounds.iter().skip(1).copied().chain([Millis::MAX]);
        bounds
            .iter()
            .zip(until)
            .enumerate()
            .map(|(span, (&from, until))| {
                let mut steps = Steps {
                    from,
                    until,
                    span: span as u32,
                    ..Steps::default()
                };
                for (k, (rule, _)) in self.rules.iter().enumerate() {
                    let step = rule.step(from);
                    if let (None, Params::PartyBalance { max_size_gap }) =
                        (steps.party_gap, &rule.steps[step].params)
                    {
                        steps.party_gap = Some(*max_size_gap);
                    }
                    if let Some(at) = steps.at.get_mut(k) {
                        *at = step as u8;
                    }
                }
                let ops = self.resolve(&steps);
                (steps, ops)
            })
            .unzip()
    }
}

/// The roles rule at one step: each player's accepted roles, and what a team
/// needs.
pub(crate) struct RolesAt<'a> {
    start: &'a [u32],
    sets: &'a [u16],
    pub need: &'a [Need],
    pub names: &'a [Arc<str>],
}

impl RolesAt<'_> {
    /// The role sets of entry `e`'s players.
    pub fn of(&self, e: usize) -> &[u16] {
        &self.sets[self.start[e] as usize..self.start[e + 1] as usize]
    }
}

/// Each rule's step for every wait in `from..until`: looked up once for the
/// many candidates a growing match checks (nearly all of which leave its
/// longest wait, and so its steps, as they are).
///
/// One span of [`Traits::step_table`]. A checked mode has at most
/// [`MAX_RULES`] rules; the steps of rules built by hand beyond that are
/// looked up when asked for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Steps {
    at: [u8; MAX_RULES],
    from: Millis,
    until: Millis,
    /// The first party-balance rule's gap at these steps (`None`: no such
    /// rule, or off), looked up once (the search asks it of every candidate).
    party_gap: Option<usize>,
    /// The span's number: what [`Traits::admits_at`] checks at these steps
    /// is the `span`th of [`Traits::ops`] (none past the end).
    span: u32,
}

impl Default for Steps {
    /// Holds for no wait.
    fn default() -> Self {
        Steps {
            at: [0; MAX_RULES],
            from: Millis::MAX,
            until: 0,
            party_gap: None,
            span: u32::MAX,
        }
    }
}

impl Steps {
    /// Whether these are the steps at `wait`.
    pub(crate) fn hold(&self, wait: Millis) -> bool {
        self.from <= wait && wait < self.until
    }

    /// The step of rule number `k`, `rule`.
    fn of(&self, k: usize, rule: &Rule) -> usize {
        match self.at.get(k) {
            Some(&step) => usize::from(step),
            // Beyond the array: the step at any wait the steps hold for.
            None => rule.step(self.from),
        }
    }
}

/// A candidate match's rule state, kept as it grows.
#[derive(Debug, Default, Clone)]
pub(crate) struct Grown {
    /// Per rule: equal: the distinct values so far; intersect: the common set;
    /// distance: lowest and highest.
    values: Vec<Vec<u32>>,
    sets: Vec<u64>,
    bounds: Vec<(f64, f64)>,
    people: Vec<u32>,
    blocked: Vec<u32>,
    /// With a roles rule's room check: for each set of needed roles, the
    /// players so far who accept one of them.
    room: Vec<u16>,
    /// Grown inside one partition: hard and settled `equal` rules are not
    /// kept.
    in_part: bool,
}

impl Traits {
    /// A fresh state for a match starting with entry `e`.
    pub(crate) fn start(&self, g: &mut Grown, e: usize) {
        self.start_state(g, e, false);
    }

    /// [`Traits::start`] for a match grown inside one partition of the pool
    /// (see [`Traits::partition_ids`]): its hard `equal` rules, and those the
    /// partitions settle ([`Traits::settle`]), hold already, and are neither
    /// kept nor checked again.
    pub(crate) fn start_in_part(&self, g: &mut Grown, e: usize) {
        self.start_state(g, e, true);
    }

    /// Whether a candidate match keeps any rule state as it grows: an
    /// `equal` rule that relaxes (a hard one is the pool's partition), an
    /// `intersect` or `distance` rule, the roles' room check, or block lists.
    /// When none does, [`Traits::start_in_part`], [`Traits::add`],
    /// [`Traits::admits`] and [`Traits::roles_room`] have nothing to do.
    pub(crate) fn tracks(&self) -> bool {
        !self.blocked.is_empty()
            || self.rules.iter().any(|(rule, column)| match column {
                Column::Equal { .. } => !rule.is_hard(),
                Column::Intersect { .. } | Column::Distance { .. } => true,
                Column::Roles { room, .. } => room.is_some(),
                Column::PartyBalance => false,
            })
    }

    /// Whether entry `e` may join the match in state `g` whose longest wait,
    /// `e` included, is `wait`.
    pub(crate) fn admits(&self, g: &Grown, e: usize, wait: Millis) -> bool {
        self.admits_at(g, e, &self.steps_at(wait))
    }

    /// Whether the members `members` (entries) meet every group rule at `wait`:
    /// what a match must pass after it was cut or rebuilt.
    pub(crate) fn meets(&self, members: &[usize], wait: Millis) -> bool {
        let Some((&first, rest)) = members.split_first() else {
            return true;
        };
        let mut g = Grown::default();
        self.start(&mut g, first);
        let steps = self.steps_at(wait);
        for &m in rest {
            if !self.admits_at(&g, m, &steps) {
                return false;
            }
            self.add(&mut g, m);
        }
        true
    }

    /// What the match of `members` (entries) gets from the rules: for each
    /// `intersect` rule, the shared value most of its tickets listed first (the
    /// most listed value when the rule is off), ties broken by `seed` (the same
    /// match always gets the same value; different matches spread over the
    /// tied ones).
    pub fn chosen(&self, members: &[usize], wait: Millis, seed: u64) -> Vec<(Arc<str>, Arc<str>)> {
        let mut out = Vec::new();
        for ((rule, column), (_, attribute)) in self.rules.iter().zip(&self.labels) {
            let Column::Intersect {
                sets,
                firsts,
                names,
            } = column
            else {
                continue;
            };
            let common = members.iter().fold(u64::MAX, |s, &m| s & sets[m]);
            let pool = if common != 0 && rule.steps[rule.step(wait)].params != Params::Off {
                common
            } else {
                // Off (or nothing shared): the value most tickets listed at all.
                let mut best = (0, 0u64);
                for bit in 0..names.len() {
                    let n = members.iter().filter(|&&m| sets[m] >> bit & 1 == 1).count();
                    if n > best.0 {
                        best = (n, 1 << bit);
                    }
                }
                best.1
            };
            if pool == 0 {
                continue;
            }
            let mut votes = [0u32; MAX_LIST_VALUES];
            for &m in members {
                let f = firsts[m];
                if f != u8::MAX && pool >> f & 1 == 1 {
                    votes[f as usize] += 1;
                }
            }
            let tie = |b: usize| {
                (seed ^ (b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
                    .wrapping_mul(0xBF58_476D_1CE4_E5B9)
                    .rotate_left(31)
            };
            let pick = (0..names.len())
                .filter(|&b| pool >> b & 1 == 1)
                .max_by_key(|&b| (votes[b], tie(b)))
                .expect("a value in the pool");
            out.push((attribute.clone(), names[pick].clone()));
        }
        out
    }

    /// How a formed match (`teams` of entries, whose longest wait is `wait`)
    /// stands with each rule: the rule, the step it was at, and whether the
    /// match breaks it there. What the simulator counts for any strategy,
    /// the seed-000 baseline's included.
    pub fn judge(&self, teams: &[Vec<usize>], wait: Millis) -> Vec<(&Rule, usize, bool)> {
        let members: Vec<usize> = teams.iter().flatten().copied().collect();
        self.rules
            .iter()
            .map(|(rule, column)| {
                let step = rule.step(wait);
                let broken = match (column, &rule.steps[step].params) {
                    (_, Params::Off) => false,
                    (
                        Column::Equal {
                            start,
                            values,
                            group,
                        },
                        _,
                    ) => {
                        let at = &group[step];
                        let mut all = members
                            .iter()
                            .flat_map(|&e| &values[start[e] as usize..start[e + 1] as usize])
                            .map(|&v| at[v as usize]);
                        let first = all.next();
                        all.any(|g| Some(g) != first)
                    }
                    (Column::Intersect { sets, .. }, Params::Intersect { min }) => {
                        let common = members.iter().fold(u64::MAX, |s, &e| s & sets[e]);
                        (common.count_ones() as usize) < *min
                    }
                    (Column::Distance { lo, hi }, Params::Distance { max }) => {
                        let low = members.iter().map(|&e| lo[e]).fold(f64::INFINITY, f64::min);
                        let high = members
                            .iter()
                            .map(|&e| hi[e])
                            .fold(f64::NEG_INFINITY, f64::max);
                        members.iter().any(|&e| lo[e].is_nan()) || high - low > *max
                    }
                    (Column::Roles { .. }, Params::Roles { .. }) => {
                        let roles = self.roles_at(wait).expect("a roles rule");
                        teams.iter().any(|team| {
                            let sets: Vec<u16> = team
                                .iter()
                                .flat_map(|&e| roles.of(e).iter().copied())
                                .collect();
                            super::roles::assign(&sets, roles.need).is_none()
                        })
                    }
                    (Column::PartyBalance, Params::PartyBalance { max_size_gap }) => {
                        let largest: Vec<u16> = teams
                            .iter()
                            .map(|t| {
                                t.iter()
                                    .map(|&e| self.sizes.get(e).copied().unwrap_or(1))
                                    .max()
                                    .unwrap_or(0)
                            })
                            .collect();
                        let hi = largest.iter().max().copied().unwrap_or(0);
                        let lo = largest.iter().min().copied().unwrap_or(0);
                        usize::from(hi - lo) > *max_size_gap
                    }
                    _ => false,
                };
                (rule, step, broken)
            })
            .collect()
    }

    /// Whether two players of `members` (entries) are kept apart by a block.
    pub fn blocked_within(&self, members: &[usize]) -> bool {
        members.iter().any(|&a| {
            members
                .iter()
                .any(|&b| a != b && self.blocked(a).iter().any(|x| self.people(b).contains(x)))
        })
    }

    /// The step each rule was at for a match whose longest wait is `wait`.
    pub fn steps(&self, wait: Millis) -> Vec<(Arc<str>, usize)> {
        self.rules
            .iter()
            .zip(&self.labels)
            .map(|((r, _), (label, _))| (label.clone(), r.step(wait)))
            .collect()
    }
}
