//! `equal` rules that a snapshot's partitions already settle: a rule whose
//! values, at its first step, fall in one group for every entry of each
//! partition holds for every match grown inside one (its steps only coarsen
//! the groups), so the search neither keeps nor checks it, as it does not
//! check a hard rule that made the partitions. Before anyone has waited for
//! crossplay, a platform rule that relaxes splits the pool as a build rule
//! does, and was still asked of every candidate.

use super::{Column, Traits};

impl Traits {
    /// Marks the `equal` rules settled by the partitions `part` (per entry;
    /// empty: the entries are one partition; each partition's entries are
    /// contiguous, as a snapshot lays them out).
    pub(crate) fn settle(&mut self, part: &[u32]) {
        self.settled = 0;
        for (r, (_, column)) in self.rules.iter().enumerate().take(64) {
            let Column::Equal { start, .. } = column else {
                continue;
            };
            let n = start.len().saturating_sub(1);
            let mut current: Option<(u32, u32)> = None;
            let uniform = (0..n).all(|e| {
                let id = part.get(e).copied().unwrap_or(0);
                let Some(g) = column.first_group(e) else {
                    return false;
                };
                match current {
                    Some((at, held)) if at == id => held == g,
                    _ => {
                        current = Some((id, g));
                        true
                    }
                }
            });
            if uniform {
                self.settled |= 1 << r;
            }
        }
        self.make_plan();
    }

    /// Whether the search inside one partition may leave rule number `r`
    /// alone: a hard rule (it made the partitions), or one [`Traits::settle`]
    /// marked.
    pub(super) fn left_alone(&self, r: usize) -> bool {
        self.rules[r].0.is_hard() || (r < 64 && self.settled >> r & 1 == 1)
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::{Compiler, Described, Traits};
    use crate::{Modes, WindowPolicy};
    use mm_domain::{Attributes, Value};

    /// A ticket: each player's platform.
    struct T(Vec<Attributes>);

    fn ticket(platforms: &[&str]) -> T {
        T(platforms
            .iter()
            .map(|p| {
                let mut a = Attributes::default();
                a.insert("platform", Value::Text(p.to_string()));
                a
            })
            .collect())
    }

    impl Described for T {
        fn players(&self) -> usize {
            self.0.len()
        }
        fn value(&self, i: usize, name: &str) -> Option<&Value> {
            self.0[i].get(name)
        }
    }

    const MODE: &str = r#"
[modes.m]
teams = 2
team_size = 2
rules = [
  { kind = "equal", attribute = "platform", groups = [["pc"], ["xbox", "ps"]],
    relax = [{ after = "30s", groups = [["pc", "xbox", "ps"]] }] },
]
"#;

    fn traits(tickets: &[&[&str]]) -> Traits {
        let modes = Modes::load(Some(MODE), WindowPolicy::default()).unwrap();
        let mut compiler = Compiler::new(&modes.get("m").unwrap().rules);
        let tickets: Vec<T> = tickets.iter().map(|t| ticket(t)).collect();
        let rows: Vec<_> = tickets.iter().map(|t| compiler.compile(t)).collect();
        compiler.traits(rows.iter())
    }

    #[test]
    fn a_rule_one_group_holds_in_each_partition_is_settled() {
        let mut t = traits(&[&["pc"], &["pc", "pc"], &["xbox"], &["ps", "xbox"]]);
        t.settle(&[0, 0, 1, 1]);
        assert!(t.left_alone(0), "pc | xbox and ps");
        t.settle(&[]);
        assert!(!t.left_alone(0), "one partition of both groups");
        t.settle(&[0, 0, 0, 1]);
        assert!(!t.left_alone(0), "pc and xbox in one partition");
        let mut one = traits(&[&["xbox"], &["ps"]]);
        one.settle(&[]);
        assert!(one.left_alone(0), "one group: settled without partitions");
    }

    #[test]
    fn a_ticket_whose_players_differ_keeps_the_rule() {
        let mut t = traits(&[&["pc"], &["pc", "xbox"]]);
        t.settle(&[]);
        assert!(!t.left_alone(0));
        // A settled rule is left alone inside a partition: admitted as before.
        let mut t = traits(&[&["xbox"], &["ps"], &["xbox", "ps"]]);
        t.settle(&[]);
        assert!(t.left_alone(0));
        let mut g = crate::rules::Grown::default();
        t.start_in_part(&mut g, 0);
        assert!(t.admits(&g, 1, 0) && t.admits(&g, 2, 0));
    }
}
