//! A pool's partitions: the `equal` rules that hold for a whole cycle (hard
//! ones, and those no ticket waited long enough to relax) split the pool into
//! parts no match spans, each formed on its own ([`crate::engine`]'s parts).

use super::{Column, Traits};
use crate::rules::config::{Params, Rule};
use mm_domain::Millis;

impl Traits {
    /// Each entry's partition under the `equal` rules that hold for a whole
    /// cycle whose longest wait is `longest` (see [`Traits::parts_rule`]):
    /// tickets whose values differ there cannot meet this cycle, so the pool
    /// splits along them. Numbered in order of first sight; `None` for an
    /// entry that can meet nobody (its own players' values are in different
    /// groups). `None` in all when no such rule applies.
    pub fn partition_ids(&self, longest: Millis) -> Option<Vec<Option<u32>>> {
        let mut ids: Option<Vec<Option<u32>>> = None;
        // How many partitions the rules so far made.
        let mut parts = 1usize;
        for (rule, column) in &self.rules {
            let (true, Column::Equal { start, group, .. }) =
                (Self::parts_rule(rule, longest), column)
            else {
                continue;
            };
            let n = start.len().saturating_sub(1);
            let before = ids.take().unwrap_or_else(|| vec![Some(0); n]);
            // (partition so far, group here) numbered anew by first sight:
            // after the last rule, the numbers follow the whole key's first
            // sight. Groups are numbered densely, so the pairs index a table
            // (a hash map where the pairs are too many: a pool's worth, each
            // hashed, was a tenth of the time before its parts are formed).
            let groups = group
                .first()
                .and_then(|g| g.iter().max())
                .map_or(0, |&g| g as usize + 1);
            let mut seen = Seen::new(parts.saturating_mul(groups), n);
            let next = (0..n)
                .map(|e| {
                    let id = before[e]?;
                    let g = column.first_group(e)?;
                    Some(seen.number(id as usize * groups + g as usize))
                })
                .collect();
            parts = seen.len();
            ids = Some(next);
        }
        ids
    }

    /// Whether `rule` keeps its first step's `equal` for every match of a
    /// cycle whose longest wait is `longest`: a hard rule always, one that
    /// relaxes when no ticket has waited until its first relaxation (a
    /// backlog of fresh tickets keeps platforms apart as surely as builds).
    fn parts_rule(rule: &Rule, longest: Millis) -> bool {
        matches!(rule.steps[0].params, Params::Equal { .. })
            && rule.steps.get(1).is_none_or(|next| longest < next.after)
    }
}

/// Keys numbered in order of first sight: in a table where the keys are few
/// (below about a pool's size), else in a hash map.
enum Seen {
    Table { numbers: Vec<u32>, count: u32 },
    Map(std::collections::HashMap<usize, u32, foldhash::fast::RandomState>),
}

impl Seen {
    /// For keys below `keys`, among `n` entries.
    fn new(keys: usize, n: usize) -> Self {
        if keys <= n.saturating_mul(4).max(1 << 16) {
            Seen::Table {
                numbers: vec![u32::MAX; keys],
                count: 0,
            }
        } else {
            Seen::Map(Default::default())
        }
    }

    /// The number of `key`: the next one if it is new.
    fn number(&mut self, key: usize) -> u32 {
        match self {
            Seen::Table { numbers, count } => {
                let slot = &mut numbers[key];
                if *slot == u32::MAX {
                    *slot = *count;
                    *count += 1;
                }
                *slot
            }
            Seen::Map(map) => {
                let count = map.len() as u32;
                *map.entry(key).or_insert(count)
            }
        }
    }

    /// How many keys were numbered.
    fn len(&self) -> usize {
        match self {
            Seen::Table { count, .. } => *count as usize,
            Seen::Map(map) => map.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::traits::fixture::{T, compile};

    fn ticket(build: &str, platform: &str) -> T {
        T::texts(&[("build", build), ("platform", platform)])
    }

    const MODE: &str = r#"
[modes.m]
teams = 2
team_size = 2
rules = [
  { kind = "equal", attribute = "build" },
  { kind = "equal", attribute = "platform", groups = [["pc"], ["xbox", "ps"]],
    relax = [{ after = "30s", groups = [["pc", "xbox", "ps"]] }] },
]
"#;

    #[test]
    fn builds_and_platform_groups_number_parts_in_order_of_first_sight() {
        let tickets = [
            ticket("1.2", "xbox"),
            ticket("1.1", "pc"),
            ticket("1.2", "ps"),
            ticket("1.2", "pc"),
            ticket("1.1", "pc"),
        ];
        let traits = compile(MODE, &tickets);
        // Before the platforms relax, both rules split the pool.
        assert_eq!(
            traits.partition_ids(10_000),
            Some(vec![Some(0), Some(1), Some(0), Some(2), Some(1)])
        );
        // After, only the builds do.
        assert_eq!(
            traits.partition_ids(40_000),
            Some(vec![Some(0), Some(1), Some(0), Some(0), Some(1)])
        );
    }

    #[test]
    fn numeric_builds_are_kept_apart_and_meet_their_text() {
        let number = |n: f64| {
            let mut t = T::texts(&[("platform", "pc")]);
            t.0.insert("build", mm_domain::Value::Number(n));
            t
        };
        let tickets = [
            number(142.0),
            number(143.0),
            ticket("142", "pc"),
            number(142.0),
        ];
        let traits = compile(MODE, &tickets);
        assert_eq!(
            traits.partition_ids(10_000),
            Some(vec![Some(0), Some(1), Some(0), Some(0)])
        );
    }

    #[test]
    fn a_table_and_a_map_number_alike() {
        let keys = [7usize, 3, 7, 0, 9, 3, 11, 0];
        let mut table = Seen::new(12, 8);
        let mut map = Seen::Map(Default::default());
        let by_table: Vec<u32> = keys.iter().map(|&k| table.number(k)).collect();
        let by_map: Vec<u32> = keys.iter().map(|&k| map.number(k)).collect();
        assert_eq!(by_table, vec![0, 1, 0, 2, 3, 1, 4, 2]);
        assert_eq!(by_table, by_map);
        assert_eq!((table.len(), map.len()), (5, 5));
        assert!(matches!(Seen::new(usize::MAX, 8), Seen::Map(_)));
    }
}
