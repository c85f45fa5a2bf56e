//! Rules as a mode declares them (`[[modes.NAME.rules]]`), checked and turned
//! into steps: a rule's parameters at each wait of the candidate match's
//! longest-waiting ticket. A relax step only ever loosens the step before it (a
//! wider distance, a lower `min`, coarser groups, more roles turned into "any",
//! a larger party gap, or off), so a match that met a rule at one step meets it
//! at every later one.

use mm_domain::{MAX_TEXT, Millis, valid_name};
use serde::Deserialize;
use std::collections::BTreeMap;

/// Most rules a mode may have.
pub const MAX_RULES: usize = 16;
/// Most relax steps a rule may have.
pub const MAX_STEPS: usize = 8;

/// What a rule asks of a match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// Every player has the same value (or values of one group).
    Equal,
    /// The players' lists share at least `min` values; the match gets the shared
    /// value most of its tickets listed first.
    Intersect,
    /// The players' numbers lie within `max_distance` of each other.
    Distance,
    /// Every team can fill the roles it needs from what its players accept.
    Roles,
    /// The teams' party make-ups are alike.
    PartyBalance,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Equal => "equal",
            Kind::Intersect => "intersect",
            Kind::Distance => "distance",
            Kind::Roles => "roles",
            Kind::PartyBalance => "party_balance",
        }
    }
}

/// A rule's parameters from one wait on.
#[derive(Debug, Clone, PartialEq)]
pub enum Params {
    /// The rule no longer applies.
    Off,
    /// Values in one group count as equal; a value in no group is a group of
    /// its own.
    Equal {
        groups: Vec<Vec<String>>,
    },
    Intersect {
        min: usize,
    },
    Distance {
        max: f64,
    },
    /// Per team, how many players of each role; roles in `any` may be filled
    /// by any player.
    Roles {
        need: Vec<(String, usize)>,
        any: Vec<String>,
    },
    /// The largest parties of any two teams differ by at most this many players.
    PartyBalance {
        max_size_gap: usize,
    },
}

/// One step: from `after` of wait on, `params`.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub after: Millis,
    pub params: Params,
}

/// One rule of a mode.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub kind: Kind,
    /// The attribute it reads (empty for `party_balance`).
    pub attribute: String,
    /// The first step starts at 0; each later one loosens the one before.
    pub steps: Vec<Step>,
}

impl Rule {
    /// A rule with no relaxation is hard: it never loosens.
    pub fn is_hard(&self) -> bool {
        self.steps.len() == 1
    }

    /// The step in force for a match whose longest-waiting ticket waited `wait`.
    pub fn step(&self, wait: Millis) -> usize {
        self.steps
            .iter()
            .rposition(|s| s.after <= wait)
            .unwrap_or(0)
    }

    /// A name for the rule in reports and metrics: `kind:attribute`.
    pub fn label(&self) -> String {
        if self.attribute.is_empty() {
            self.kind.name().to_string()
        } else {
            format!("{}:{}", self.kind.name(), self.attribute)
        }
    }
}

/// `[[modes.NAME.rules]]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRule {
    kind: String,
    attribute: Option<String>,
    groups: Option<Vec<Vec<String>>>,
    min: Option<usize>,
    max_distance: Option<f64>,
    need: Option<BTreeMap<String, usize>>,
    max_size_gap: Option<usize>,
    #[serde(default)]
    relax: Vec<RawStep>,
}

/// One `relax` step as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    after: String,
    #[serde(default)]
    off: bool,
    groups: Option<Vec<Vec<String>>>,
    min: Option<usize>,
    max_distance: Option<f64>,
    any: Option<Vec<String>>,
    max_size_gap: Option<usize>,
}

impl RawStep {
    /// The keys set on this step, for refusing those that do not apply.
    fn given(&self) -> [(&'static str, bool); 5] {
        [
            ("groups", self.groups.is_some()),
            ("min", self.min.is_some()),
            ("max_distance", self.max_distance.is_some()),
            ("any", self.any.is_some()),
            ("max_size_gap", self.max_size_gap.is_some()),
        ]
    }
}

fn duration(s: &str) -> Result<Millis, String> {
    humantime::parse_duration(s)
        .map(|d| d.as_millis() as Millis)
        .map_err(|e| format!("{e} (use e.g. 20s, 1m)"))
}

/// Whether every group of `finer` lies inside one group of `coarser` (values in
/// no group being groups of their own).
fn coarsens(finer: &[Vec<String>], coarser: &[Vec<String>]) -> bool {
    let group_of = |v: &str| coarser.iter().position(|g| g.iter().any(|x| x == v));
    finer.iter().all(|g| {
        let first = group_of(&g[0]);
        first.is_some() && g.iter().all(|v| group_of(v) == first)
    })
}

fn check_groups(groups: &[Vec<String>]) -> Result<(), String> {
    let mut seen = std::collections::BTreeSet::new();
    for g in groups {
        if g.is_empty() {
            return Err("a group must list at least one value".into());
        }
        for v in g {
            if v.len() > MAX_TEXT {
                return Err(format!("group value {v:?} is longer than {MAX_TEXT} bytes"));
            }
            if !seen.insert(v.as_str()) {
                return Err(format!("value {v:?} is in two groups"));
            }
        }
    }
    Ok(())
}

impl RawRule {
    /// The rule, checked against a mode of `teams` teams of `team_size`.
    pub(crate) fn build(self, teams: usize, team_size: usize) -> Result<Rule, String> {
        let kind = match self.kind.as_str() {
            "equal" => Kind::Equal,
            "intersect" => Kind::Intersect,
            "distance" => Kind::Distance,
            "roles" => Kind::Roles,
            "party_balance" => Kind::PartyBalance,
            other => {
                return Err(format!(
                    "unknown rule kind {other:?} (equal, intersect, distance, roles, party_balance)"
                ));
            }
        };
        let at = |what: &str| format!("{} rule: {what}", kind.name());
        let attribute = match (kind, self.attribute) {
            (Kind::PartyBalance, None) => String::new(),
            (Kind::PartyBalance, Some(_)) => {
                return Err(at("reads no attribute (leave out `attribute`)"));
            }
            (_, None) => return Err(at("needs an `attribute`")),
            (_, Some(a)) if !valid_name(&a) => {
                return Err(at(&format!(
                    "attribute {a:?} must be 1-32 characters of a-z, 0-9 or '_'"
                )));
            }
            (_, Some(a)) => a,
        };
        let keys = [
            ("groups", self.groups.is_some(), Kind::Equal),
            ("min", self.min.is_some(), Kind::Intersect),
            ("max_distance", self.max_distance.is_some(), Kind::Distance),
            ("need", self.need.is_some(), Kind::Roles),
            (
                "max_size_gap",
                self.max_size_gap.is_some(),
                Kind::PartyBalance,
            ),
        ];
        if let Some((key, ..)) = keys.iter().find(|(_, set, k)| *set && *k != kind) {
            return Err(at(&format!("`{key}` does not apply")));
        }
        let first = match kind {
            Kind::Equal => {
                let groups = self.groups.unwrap_or_default();
                check_groups(&groups).map_err(|e| at(&e))?;
                Params::Equal { groups }
            }
            Kind::Intersect => {
                let min = self.min.unwrap_or(1);
                if !(1..=mm_domain::MAX_ITEMS).contains(&min) {
                    return Err(at(&format!("min must be 1..={}", mm_domain::MAX_ITEMS)));
                }
                Params::Intersect { min }
            }
            Kind::Distance => match self.max_distance {
                Some(max) if max.is_finite() && max >= 0.0 => Params::Distance { max },
                Some(_) => return Err(at("max_distance must be a number >= 0")),
                None => return Err(at("needs `max_distance`")),
            },
            Kind::Roles => {
                let need: Vec<(String, usize)> = self
                    .need
                    .ok_or_else(|| at("needs `need`, e.g. { tank = 1, healer = 1, damage = 3 }"))?
                    .into_iter()
                    .filter(|(_, n)| *n > 0)
                    .collect();
                if let Some((r, _)) = need.iter().find(|(r, _)| !valid_name(r)) {
                    return Err(at(&format!(
                        "role {r:?} must be 1-32 characters of a-z, 0-9 or '_'"
                    )));
                }
                let total: usize = need.iter().map(|(_, n)| n).sum();
                if total != team_size {
                    return Err(at(&format!(
                        "need adds up to {total} players, but a team has {team_size}"
                    )));
                }
                Params::Roles {
                    need,
                    any: Vec::new(),
                }
            }
            Kind::PartyBalance => {
                if teams < 2 || team_size < 2 {
                    return Err(at("needs teams of more than one player"));
                }
                let gap = self.max_size_gap.unwrap_or(1);
                if gap >= team_size {
                    return Err(at(&format!(
                        "max_size_gap must be below team_size ({team_size})"
                    )));
                }
                Params::PartyBalance { max_size_gap: gap }
            }
        };
        let mut steps = vec![Step {
            after: 0,
            params: first,
        }];
        if self.relax.len() > MAX_STEPS {
            return Err(at(&format!("at most {MAX_STEPS} relax steps")));
        }
        for raw in self.relax {
            let after = duration(&raw.after).map_err(|e| at(&format!("relax after: {e}")))?;
            let last = steps.last().expect("the first step");
            if after <= last.after {
                return Err(at(
                    "relax steps must come in order of `after`, each later than the one before and than 0",
                ));
            }
            if last.params == Params::Off {
                return Err(at("no step may follow one that turns the rule off"));
            }
            let allowed: &[&str] = match kind {
                Kind::Equal => &["groups"],
                Kind::Intersect => &["min"],
                Kind::Distance => &["max_distance"],
                Kind::Roles => &["any"],
                Kind::PartyBalance => &["max_size_gap"],
            };
            if let Some((key, _)) = raw
                .given()
                .into_iter()
                .find(|(k, set)| *set && (raw.off || !allowed.contains(k)))
            {
                return Err(at(&format!(
                    "relax: `{key}` does not apply{}",
                    if raw.off { " with off = true" } else { "" }
                )));
            }
            let params = if raw.off {
                Params::Off
            } else {
                loosen(&last.params, raw).map_err(|e| at(&format!("relax: {e}")))?
            };
            steps.push(Step { after, params });
        }
        Ok(Rule {
            kind,
            attribute,
            steps,
        })
    }
}

/// The step after `before` with `raw`'s changes, which must only loosen it.
fn loosen(before: &Params, raw: RawStep) -> Result<Params, String> {
    Ok(match before.clone() {
        Params::Equal { groups } => {
            let wider = raw
                .groups
                .ok_or("an equal step sets `groups` (or off = true)")?;
            check_groups(&wider)?;
            if !coarsens(&groups, &wider) {
                return Err("the new groups must keep every value of an old group together".into());
            }
            Params::Equal { groups: wider }
        }
        Params::Intersect { min } => {
            let lower = raw
                .min
                .ok_or("an intersect step sets `min` (or off = true)")?;
            if lower == 0 || lower > min {
                return Err(format!(
                    "min may only go down (from {min}), and stays at least 1"
                ));
            }
            Params::Intersect { min: lower }
        }
        Params::Distance { max } => {
            let wider = raw
                .max_distance
                .ok_or("a distance step sets `max_distance` (or off = true)")?;
            if !(wider.is_finite() && wider >= max) {
                return Err(format!("max_distance may only grow (from {max})"));
            }
            Params::Distance { max: wider }
        }
        Params::Roles { need, mut any } => {
            let more = raw.any.ok_or("a roles step sets `any` (or off = true)")?;
            for r in more {
                if !need.iter().any(|(n, _)| *n == r) {
                    return Err(format!("role {r:?} is not in need"));
                }
                if !any.contains(&r) {
                    any.push(r);
                }
            }
            Params::Roles { need, any }
        }
        Params::PartyBalance { max_size_gap } => {
            let gap = raw
                .max_size_gap
                .ok_or("a party_balance step sets `max_size_gap` (or off = true)")?;
            if gap < max_size_gap {
                return Err(format!("max_size_gap may only grow (from {max_size_gap})"));
            }
            Params::PartyBalance { max_size_gap: gap }
        }
        Params::Off => Params::Off,
    })
}

/// Checks a mode's rules together: at most [`MAX_RULES`], at most one `roles`
/// and one `party_balance`, and no attribute read by two rules of one kind.
pub(crate) fn check_set(rules: &[Rule]) -> Result<(), String> {
    if rules.len() > MAX_RULES {
        return Err(format!("at most {MAX_RULES} rules"));
    }
    for kind in [Kind::Roles, Kind::PartyBalance] {
        if rules.iter().filter(|r| r.kind == kind).count() > 1 {
            return Err(format!("at most one {} rule", kind.name()));
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    for r in rules {
        if !seen.insert((r.kind, r.attribute.as_str())) {
            return Err(format!("two {} rules read {}", r.kind.name(), r.attribute));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(toml_text: &str) -> Result<Rule, String> {
        let raw: RawRule = toml::from_str(toml_text).map_err(|e| e.to_string())?;
        raw.build(2, 5)
    }

    #[test]
    fn each_kind_with_its_relax_steps() {
        let r = rule(
            r#"kind = "distance"
               attribute = "level"
               max_distance = 10
               relax = [{ after = "20s", max_distance = 20 }, { after = "60s", off = true }]"#,
        )
        .unwrap();
        assert_eq!(r.steps.len(), 3);
        assert_eq!(
            (r.step(0), r.step(19_999), r.step(20_000), r.step(90_000)),
            (0, 0, 1, 2)
        );
        assert_eq!(r.steps[1].params, Params::Distance { max: 20.0 });
        assert_eq!(r.steps[2].params, Params::Off);
        assert!(!r.is_hard());
        let r = rule(
            r#"kind = "equal"
               attribute = "platform"
               groups = [["xbox", "ps"], ["pc"]]
               relax = [{ after = "30s", groups = [["xbox", "ps", "pc"]] }]"#,
        )
        .unwrap();
        assert_eq!(r.label(), "equal:platform");
        let r = rule(
            r#"kind = "equal"
                        attribute = "build""#,
        )
        .unwrap();
        assert!(r.is_hard());
        let r = rule(
            r#"kind = "roles"
               attribute = "roles"
               need = { tank = 1, healer = 1, damage = 3 }
               relax = [{ after = "40s", any = ["healer"] }, { after = "80s", any = ["tank"] }]"#,
        )
        .unwrap();
        let Params::Roles { any, .. } = &r.steps[2].params else {
            panic!("{r:?}");
        };
        assert_eq!(any, &["healer".to_string(), "tank".to_string()]);
        let r = rule(r#"kind = "party_balance""#).unwrap();
        assert_eq!(r.steps[0].params, Params::PartyBalance { max_size_gap: 1 });
        assert_eq!(r.label(), "party_balance");
        let r = rule(
            r#"kind = "intersect"
                        attribute = "maps""#,
        )
        .unwrap();
        assert_eq!(r.steps[0].params, Params::Intersect { min: 1 });
    }

    #[test]
    fn mistakes_are_named() {
        let cases = [
            (
                r#"kind = "near"
                attribute = "x""#,
                "unknown rule kind",
            ),
            (r#"kind = "equal""#, "needs an `attribute`"),
            (
                r#"kind = "equal"
                attribute = "Build""#,
                "must be 1-32 characters",
            ),
            (
                r#"kind = "party_balance"
                attribute = "x""#,
                "reads no attribute",
            ),
            (
                r#"kind = "equal"
                attribute = "b"
                min = 2"#,
                "`min` does not apply",
            ),
            (
                r#"kind = "distance"
                attribute = "level""#,
                "needs `max_distance`",
            ),
            (
                r#"kind = "roles"
                attribute = "roles"
                need = { tank = 1, damage = 3 }"#,
                "adds up to 4 players, but a team has 5",
            ),
            (
                r#"kind = "distance"
                attribute = "level"
                max_distance = 10
                relax = [{ after = "20s", max_distance = 5 }]"#,
                "may only grow",
            ),
            (
                r#"kind = "intersect"
                attribute = "maps"
                relax = [{ after = "20s", min = 2 }]"#,
                "may only go down",
            ),
            (
                r#"kind = "equal"
                attribute = "p"
                groups = [["a", "b"], ["c"]]
                relax = [{ after = "9s", groups = [["a"], ["b", "c"]] }]"#,
                "keep every value",
            ),
            (
                r#"kind = "equal"
                attribute = "p"
                groups = [["a", "b"], ["b"]]"#,
                "in two groups",
            ),
            (
                r#"kind = "distance"
                attribute = "level"
                max_distance = 1
                relax = [{ after = "20s", off = true }, { after = "30s", max_distance = 9 }]"#,
                "no step may follow",
            ),
            (
                r#"kind = "distance"
                attribute = "level"
                max_distance = 1
                relax = [{ after = "20s", max_distance = 2 }, { after = "10s", max_distance = 3 }]"#,
                "in order of `after`",
            ),
            (
                r#"kind = "distance"
                attribute = "level"
                max_distance = 1
                relax = [{ after = "soon", max_distance = 2 }]"#,
                "relax after",
            ),
            (
                r#"kind = "roles"
                attribute = "roles"
                need = { tank = 1, damage = 4 }
                relax = [{ after = "9s", any = ["healer"] }]"#,
                "not in need",
            ),
            (
                r#"kind = "party_balance"
                max_size_gap = 5"#,
                "below team_size",
            ),
        ];
        for (text, says) in cases {
            let e = rule(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn a_set_has_one_roles_rule_and_no_repeats() {
        let r = |t: &str| rule(t).unwrap();
        let build = r(r#"kind = "equal"
                         attribute = "build""#);
        let balance = r(r#"kind = "party_balance""#);
        assert!(check_set(&[build.clone(), balance.clone()]).is_ok());
        assert!(
            check_set(&[build.clone(), build.clone()])
                .unwrap_err()
                .contains("two equal rules")
        );
        assert!(
            check_set(&[balance.clone(), balance])
                .unwrap_err()
                .contains("at most one")
        );
    }
}
