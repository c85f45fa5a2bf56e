//! A ticket's lane in its queues ([`mm_domain::Ticket::lane`]): tickets that a
//! mode's hard `equal` rules keep apart for good (client builds; values in one
//! of the rule's groups count as one) get different lanes, so a queue ordered
//! by lane, then rating, holds each build's tickets together and a claim
//! worker's run of neighbours is made of tickets that may meet. A rule that
//! relaxes (crossplay after a wait) is no part of it. The lane is a hash of
//! what those rules read, the same in every process: two builds may share a
//! lane now and then (1 in 16 million a pair), which costs a claim some of its
//! neighbours, never a wrong match (the engine checks every rule as before).

use super::compile::equal_key;
use super::{Described, Kind, Params, Rule};
use mm_domain::{LANES, Value};

/// The lane of ticket `t` under `rules`: 0 when none of them is a hard
/// `equal`, else from 1 to [`LANES`] - 1.
pub fn lane(rules: &[Rule], t: &impl Described) -> u32 {
    let mut hash = Fnv::new();
    let mut any = false;
    let mut labels: Vec<Vec<u8>> = Vec::new();
    for rule in rules {
        let Some(groups) = hard_groups(rule) else {
            continue;
        };
        any = true;
        hash.write(rule.attribute.as_bytes());
        // The distinct values of the ticket's players: a party of one build is
        // in that build's lane, as a solo player of it is.
        labels.clear();
        for i in 0..t.players().max(1) {
            let label = label(groups, t.value(i, &rule.attribute));
            if !labels.contains(&label) {
                labels.push(label);
            }
        }
        labels.sort_unstable();
        for label in &labels {
            hash.write(&[0xfe]);
            hash.write(label);
        }
    }
    if !any {
        return 0;
    }
    1 + (hash.finish() % u64::from(LANES - 1)) as u32
}

/// What a hard `equal` rule with `groups` reads of one value, as bytes.
fn label(groups: &[Vec<String>], v: Option<&Value>) -> Vec<u8> {
    let mut out = Vec::new();
    match v {
        None => out.push(0),
        Some(Value::List(l)) if l.len() != 1 => {
            out.push(3);
            for v in l {
                out.extend_from_slice(v.as_bytes());
                out.push(0xff);
            }
        }
        // As the engine reads it (`equal_key`): a list of one is its string,
        // a number its decimal text.
        Some(v) => text(&mut out, groups, &equal_key(Some(v))),
    }
    out
}

/// The groups of a hard `equal` rule (one step, never off); `None` for any
/// other rule.
fn hard_groups(rule: &Rule) -> Option<&[Vec<String>]> {
    match (rule.kind, rule.is_hard(), &rule.steps[0].params) {
        (Kind::Equal, true, Params::Equal { groups }) => Some(groups),
        _ => None,
    }
}

/// A text value: its group's number if it is in one, else the text.
fn text(out: &mut Vec<u8>, groups: &[Vec<String>], v: &str) {
    match groups.iter().position(|g| g.iter().any(|x| x == v)) {
        Some(g) => {
            out.push(2);
            out.extend_from_slice(&(g as u64).to_le_bytes());
        }
        None => {
            out.push(4);
            out.extend_from_slice(v.as_bytes());
        }
    }
}

/// FNV-1a, 64 bits, then a finalizer so that similar builds spread.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Modes, WindowPolicy};
    use mm_domain::Attributes;

    /// A ticket of `players` players sharing `attrs`.
    struct T(usize, Attributes);

    impl Described for T {
        fn players(&self) -> usize {
            self.0
        }
        fn value(&self, _: usize, attribute: &str) -> Option<&Value> {
            self.1.get(attribute)
        }
    }

    fn t(players: usize, pairs: &[(&str, &str)]) -> T {
        let mut attrs = Attributes::default();
        for (k, v) in pairs {
            attrs.insert(k.to_string(), Value::Text(v.to_string()));
        }
        T(players, attrs)
    }

    fn rules(toml: &str) -> Vec<Rule> {
        let text = format!("[modes.m]\nteams = 2\nteam_size = 1\n{toml}");
        Modes::load(Some(&text), WindowPolicy::default())
            .unwrap()
            .get("m")
            .unwrap()
            .rules
            .clone()
    }

    #[test]
    fn builds_get_lanes_of_their_own_and_the_rest_is_no_part_of_it() {
        let r = rules(
            r#"
[[modes.m.rules]]
kind = "equal"
attribute = "build"

[[modes.m.rules]]
kind = "equal"
attribute = "platform"
groups = [["xbox", "ps"], ["pc"]]
relax = [{ after = "30s", groups = [["xbox", "ps", "pc"]] }]
"#,
        );
        let a = lane(&r, &t(1, &[("build", "1.4.2"), ("platform", "pc")]));
        let b = lane(&r, &t(1, &[("build", "1.4.2"), ("platform", "xbox")]));
        let c = lane(&r, &t(2, &[("build", "1.4.3"), ("platform", "pc")]));
        let none = lane(&r, &t(1, &[("platform", "pc")]));
        // The crossplay rule relaxes: it is no part of the lane.
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, none);
        for l in [a, c, none] {
            assert!((1..LANES).contains(&l));
        }
        // The same in every process: a hash of the values, nothing drawn.
        assert_eq!(
            a,
            lane(&r, &t(1, &[("build", "1.4.2"), ("platform", "ps")]))
        );
        // A party of one build is in that build's lane.
        assert_eq!(
            a,
            lane(&r, &t(5, &[("build", "1.4.2"), ("platform", "pc")]))
        );
    }

    #[test]
    fn values_of_one_group_share_a_lane() {
        let r = rules(
            r#"
[[modes.m.rules]]
kind = "equal"
attribute = "platform"
groups = [["xbox", "ps"], ["pc"]]
"#,
        );
        let xbox = lane(&r, &t(1, &[("platform", "xbox")]));
        assert_eq!(xbox, lane(&r, &t(1, &[("platform", "ps")])));
        assert_ne!(xbox, lane(&r, &t(1, &[("platform", "pc")])));
        assert_ne!(xbox, lane(&r, &t(1, &[("platform", "switch")])));
    }

    #[test]
    fn a_number_is_in_its_decimal_text_s_lane() {
        let r = rules(
            r#"
[[modes.m.rules]]
kind = "equal"
attribute = "build"
groups = [["142", "141"]]
"#,
        );
        let number = |n: f64| {
            let mut attrs = Attributes::default();
            attrs.insert("build", Value::Number(n));
            T(1, attrs)
        };
        let n142 = lane(&r, &number(142.0));
        assert_eq!(n142, lane(&r, &t(1, &[("build", "142")])));
        assert_eq!(n142, lane(&r, &number(141.0)), "one group");
        assert_ne!(n142, lane(&r, &number(143.0)));
    }

    #[test]
    fn a_mode_without_a_hard_equal_rule_has_lane_0() {
        assert_eq!(lane(&[], &t(1, &[("build", "1.4.2")])), 0);
        let r = rules(
            r#"
[[modes.m.rules]]
kind = "equal"
attribute = "build"
relax = [{ after = "60s", off = true }]
"#,
        );
        assert_eq!(lane(&r, &t(1, &[("build", "1.4.2")])), 0);
    }
}
