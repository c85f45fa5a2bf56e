//! Tickets a mode's rules could never match, told apart before they are
//! queued: a value of the wrong kind for the rule that reads it (a list where an
//! `equal` rule reads one value, a string where `distance` reads a number), an
//! attribute that a rule which never turns off needs and the ticket lacks
//! (`maps` for a hard `intersect`, `level` for a hard `distance`), and players of
//! one ticket who could not meet a rule even at its loosest step (builds of
//! different groups, lists sharing fewer than `min` values, numbers further
//! apart than `max_distance`, roles that cannot all be played in one team).
//! Such a ticket would wait for ever, or until `give_up_after`, with no word of
//! why; the ingress refuses it naming the attribute, and the supervisor ends one
//! queued before its mode's rules changed.

use super::compile::{Described, MAX_ROLES, equal_key};
use super::config::{Kind, Params, Rule};
use super::roles::{self, Need};
use mm_domain::Value;

/// Why a ticket could never be matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// A value the rule cannot use: of a kind it does not read, a list with
    /// fewer values than an `intersect` needs, or no role a `roles` rule needs.
    Invalid,
    /// No value, and the rule never turns off.
    Missing,
    /// Its players' values could never meet the rule together.
    Apart,
}

/// A rule a ticket could never meet, and why, in words for the player.
#[derive(Debug, Clone, PartialEq)]
pub struct Unmatchable {
    /// The rule's attribute (empty for none).
    pub attribute: String,
    pub why: Why,
    pub message: String,
}

/// What the ingress refuses of ticket `t`: a value of the wrong kind for a
/// rule that reads it, whatever the step (a client's mistake), or else the
/// first rule it could never meet ([`unmatchable`]).
pub fn refused(rules: &[Rule], t: &impl Described) -> Option<Unmatchable> {
    rules
        .iter()
        .find_map(|rule| wrong_kind(rule, t))
        .or_else(|| unmatchable(rules, t))
}

/// The first of `rules` that ticket `t` could never meet, at the rule's
/// loosest step (a relax step only loosens the one before it), its values
/// read as the engine reads them (a string where a `distance` rule reads a
/// number counts as none).
pub fn unmatchable(rules: &[Rule], t: &impl Described) -> Option<Unmatchable> {
    rules.iter().find_map(|rule| check(rule, t))
}

fn who(t: &impl Described, i: usize) -> String {
    match t.player(i) {
        Some(p) => format!("player {p}"),
        None => format!("player {}", i + 1),
    }
}

/// A value of ticket `t` of a kind `rule` does not read.
fn wrong_kind(rule: &Rule, t: &impl Described) -> Option<Unmatchable> {
    let a = rule.attribute.as_str();
    let values = (0..t.players().max(1)).map(|i| t.value(i, a));
    let wrong = match rule.kind {
        Kind::Equal => values
            .clone()
            .position(|v| matches!(v, Some(Value::List(l)) if l.len() != 1))
            .map(|i| (i, "one string or number")),
        Kind::Intersect | Kind::Roles => values
            .clone()
            .position(|v| matches!(v, Some(Value::Number(_))))
            .map(|i| (i, "a list of strings")),
        Kind::Distance => values
            .clone()
            .position(|v| matches!(v, Some(Value::Text(_) | Value::List(_))))
            .map(|i| (i, "a number")),
        Kind::PartyBalance => None,
    };
    let (i, wanted) = wrong?;
    Some(Unmatchable {
        attribute: a.to_string(),
        why: Why::Invalid,
        message: format!(
            "attribute {a} of {} must be {wanted}: the mode's {} rule reads it",
            who(t, i),
            rule.kind.name()
        ),
    })
}

fn check(rule: &Rule, t: &impl Described) -> Option<Unmatchable> {
    let a = rule.attribute.as_str();
    let kind = rule.kind.name();
    let fault = |why, message: String| {
        Some(Unmatchable {
            attribute: a.to_string(),
            why,
            message,
        })
    };
    let players = t.players().max(1);
    let values = (0..players).map(|i| t.value(i, a));
    let loosest = &rule.steps.last().expect("a rule has a first step").params;
    let required = |i: usize| {
        fault(
            Why::Missing,
            format!(
                "attribute {a} of {} is needed: the mode's {kind} rule never turns off, so a ticket without it would never be matched",
                who(t, i)
            ),
        )
    };
    match loosest {
        Params::Off | Params::PartyBalance { .. } => None,
        Params::Equal { groups } => {
            let group = |v| {
                let key = equal_key(v).into_owned();
                groups.iter().position(|g| g.contains(&key)).ok_or(key)
            };
            let first = group(t.value(0, a));
            let other = (1..players).find(|&i| group(t.value(i, a)) != first)?;
            fault(
                Why::Apart,
                format!(
                    "{} and {} disagree on attribute {a}, which the mode requires to be equal within a match",
                    who(t, 0),
                    who(t, other)
                ),
            )
        }
        Params::Intersect { min } => {
            let listless = values
                .clone()
                .position(|v| v.and_then(Value::as_list).is_none());
            if let Some(i) = listless {
                return required(i);
            }
            let mut shared: Vec<&str> = Vec::new();
            for (i, v) in values.enumerate() {
                let list = v.and_then(Value::as_list).unwrap_or(&[]);
                if i == 0 {
                    for x in list {
                        if !shared.contains(&x.as_str()) {
                            shared.push(x);
                        }
                    }
                } else {
                    shared.retain(|x| list.iter().any(|y| y == x));
                }
            }
            if shared.len() >= *min {
                return None;
            }
            if players == 1 {
                return fault(
                    Why::Invalid,
                    format!(
                        "attribute {a} lists {} distinct values; the mode's intersect rule needs at least {min} in common",
                        shared.len()
                    ),
                );
            }
            fault(
                Why::Apart,
                format!(
                    "the players' {a} have {} values in common; the mode's intersect rule needs at least {min}",
                    shared.len()
                ),
            )
        }
        Params::Distance { max } => {
            let numberless = values
                .clone()
                .position(|v| v.and_then(Value::as_number).is_none());
            if let Some(i) = numberless {
                return required(i);
            }
            let numbers = values.filter_map(|v| v.and_then(Value::as_number));
            let (lo, hi) = numbers.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), n| {
                (lo.min(n), hi.max(n))
            });
            if hi - lo <= *max {
                return None;
            }
            fault(
                Why::Apart,
                format!(
                    "the players' {a} lie {} apart; the mode's distance rule allows at most {max} within a match",
                    hi - lo
                ),
            )
        }
        Params::Roles { any, .. } => {
            let roles: Vec<&(String, usize)> = need_of(loosest).collect();
            let need: Vec<Need> = roles
                .iter()
                .enumerate()
                .map(|(bit, (r, count))| Need {
                    bit,
                    count: *count,
                    any: any.contains(r),
                })
                .collect();
            let names: Vec<&str> = roles.iter().map(|(r, _)| r.as_str()).collect();
            let slots: usize = need.iter().map(|n| n.count).sum();
            let every = u16::MAX;
            let mut masks: Vec<u16> = Vec::with_capacity(slots);
            for (i, v) in values.enumerate() {
                let mask = match v.and_then(Value::as_list) {
                    None => every,
                    Some(list) => list
                        .iter()
                        .filter_map(|r| names.iter().position(|n| n == r))
                        .fold(0u16, |s, b| s | 1 << b),
                };
                let playable = need.iter().any(|n| n.any || mask >> n.bit & 1 == 1);
                if !playable {
                    return fault(
                        Why::Invalid,
                        format!(
                            "{} lists no role the mode's roles rule needs ({})",
                            who(t, i),
                            names.join(", ")
                        ),
                    );
                }
                masks.push(mask);
            }
            // A party plays in one team: it must fit that team's roles, the
            // places it leaves taken by players who accept anything.
            if masks.len() > slots {
                return None;
            }
            masks.resize(slots, every);
            if roles::assign(&masks, &need).is_some() {
                return None;
            }
            fault(
                Why::Apart,
                format!(
                    "the players' {a} cannot all be played in one team: the mode's roles rule needs {}",
                    need_text(loosest)
                ),
            )
        }
    }
}

/// The roles a `roles` step needs, with their counts.
fn need_of(p: &Params) -> impl Iterator<Item = &(String, usize)> {
    match p {
        Params::Roles { need, .. } => need.as_slice(),
        _ => &[],
    }
    .iter()
    .take(MAX_ROLES)
}

/// `tank 1, healer 1, damage 3`.
fn need_text(p: &Params) -> String {
    need_of(p)
        .map(|(r, n)| format!("{r} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Mode;
    use mm_domain::{Attributes, PlayerId};
    use serde_json::json;

    /// A ticket of players with attributes (the ticket's own, then each
    /// player's).
    struct T {
        ids: Vec<PlayerId>,
        shared: Attributes,
        own: Vec<Attributes>,
    }

    impl Described for T {
        fn players(&self) -> usize {
            self.ids.len()
        }
        fn value(&self, i: usize, attribute: &str) -> Option<&Value> {
            self.own
                .get(i)
                .and_then(|a| a.get(attribute))
                .or_else(|| self.shared.get(attribute))
        }
        fn player(&self, i: usize) -> Option<&PlayerId> {
            self.ids.get(i)
        }
    }

    fn attrs(json: serde_json::Value) -> Attributes {
        let map = serde_json::from_value(json).unwrap();
        Attributes::from_json(map).unwrap()
    }

    fn ticket(shared: serde_json::Value, own: &[serde_json::Value]) -> T {
        let n = own.len().max(1);
        T {
            ids: (0..n)
                .map(|i| PlayerId::new(format!("p{i}")).unwrap())
                .collect(),
            shared: attrs(shared),
            own: own.iter().cloned().map(attrs).collect(),
        }
    }

    fn rules(toml_rules: &str) -> Vec<Rule> {
        let text = format!("[modes.m]\nteams = 2\nteam_size = 5\n{toml_rules}");
        let modes = crate::Modes::load(Some(&text), crate::WindowPolicy::default()).unwrap();
        let m: &Mode = modes.get("m").unwrap();
        m.rules.clone()
    }

    fn why(rules: &[Rule], t: &T) -> Option<(String, Why)> {
        refused(rules, t).map(|u| (u.attribute, u.why))
    }

    #[test]
    fn values_of_the_wrong_kind_are_named_whatever_the_step() {
        let r = rules(
            r#"rules = [
              { kind = "equal", attribute = "build", relax = [{ after = "1s", off = true }] },
              { kind = "intersect", attribute = "maps", relax = [{ after = "1s", off = true }] },
              { kind = "distance", attribute = "level", max_distance = 5.0, relax = [{ after = "1s", off = true }] },
            ]"#,
        );
        assert_eq!(why(&r, &ticket(json!({}), &[])), None);
        assert_eq!(
            why(&r, &ticket(json!({"build": ["1", "2"]}), &[])),
            Some(("build".into(), Why::Invalid))
        );
        assert_eq!(why(&r, &ticket(json!({"build": ["1"]}), &[])), None);
        assert_eq!(why(&r, &ticket(json!({"build": 142}), &[])), None);
        assert_eq!(
            why(&r, &ticket(json!({"maps": 3}), &[])),
            Some(("maps".into(), Why::Invalid))
        );
        assert_eq!(why(&r, &ticket(json!({"maps": "dust"}), &[])), None);
        assert_eq!(
            why(&r, &ticket(json!({"level": "37"}), &[])),
            Some(("level".into(), Why::Invalid))
        );
        let u = refused(
            &r,
            &ticket(json!({}), &[json!({}), json!({"level": ["x"]})]),
        )
        .unwrap();
        assert!(u.message.contains("player p1"), "{}", u.message);
        // Not that the engine could never match them: each rule turns off.
        for bad in [
            json!({"build": ["1", "2"]}),
            json!({"maps": 3}),
            json!({"level": "37"}),
        ] {
            assert_eq!(unmatchable(&r, &ticket(bad, &[])), None);
        }
        // Under a hard distance, a string is no number: never matched.
        let hard =
            rules(r#"rules = [{ kind = "distance", attribute = "level", max_distance = 5.0 }]"#);
        let u = unmatchable(&hard, &ticket(json!({"level": "37"}), &[])).unwrap();
        assert_eq!(u.why, Why::Missing);
    }

    #[test]
    fn an_attribute_a_rule_that_never_turns_off_needs_is_required() {
        let hard = rules(
            r#"rules = [
              { kind = "intersect", attribute = "maps" },
              { kind = "distance", attribute = "level", max_distance = 5.0, relax = [{ after = "1s", max_distance = 50.0 }] },
            ]"#,
        );
        let full = json!({"maps": ["dust"], "level": 3});
        assert_eq!(why(&hard, &ticket(full, &[])), None);
        assert_eq!(
            why(&hard, &ticket(json!({"level": 3}), &[])),
            Some(("maps".into(), Why::Missing))
        );
        assert_eq!(
            why(&hard, &ticket(json!({"maps": ["dust"]}), &[])),
            Some(("level".into(), Why::Missing))
        );
        // One member without it is enough.
        let u = refused(
            &hard,
            &ticket(json!({"maps": ["dust"]}), &[json!({"level": 1}), json!({})]),
        )
        .unwrap();
        assert_eq!((u.attribute.as_str(), u.why), ("level", Why::Missing));
        assert!(u.message.contains("player p1"), "{}", u.message);
        // A rule that turns off in the end matches the ticket then.
        let soft = rules(
            r#"rules = [{ kind = "intersect", attribute = "maps", relax = [{ after = "60s", off = true }] }]"#,
        );
        assert_eq!(why(&soft, &ticket(json!({}), &[])), None);
    }

    #[test]
    fn a_party_that_could_never_meet_a_rule_at_its_loosest_is_told_apart() {
        let r = rules(
            r#"rules = [
              { kind = "equal", attribute = "platform", groups = [["xbox"], ["ps"], ["pc"]], relax = [{ after = "30s", groups = [["xbox", "ps"], ["pc"]] }] },
              { kind = "intersect", attribute = "maps", min = 2, relax = [{ after = "30s", min = 1 }] },
              { kind = "distance", attribute = "level", max_distance = 5.0, relax = [{ after = "30s", max_distance = 20.0 }] },
            ]"#,
        );
        let base = json!({"maps": ["dust", "harbor"], "level": 10});
        let two = |a: serde_json::Value, b: serde_json::Value| ticket(base.clone(), &[a, b]);
        // Consoles meet after 30 s: a party of both is fine; with a PC is not.
        assert_eq!(
            why(
                &r,
                &two(json!({"platform": "xbox"}), json!({"platform": "ps"}))
            ),
            None
        );
        assert_eq!(
            why(
                &r,
                &two(json!({"platform": "xbox"}), json!({"platform": "pc"}))
            ),
            Some(("platform".into(), Why::Apart))
        );
        // One map in common meets the loosest min.
        assert_eq!(
            why(
                &r,
                &two(json!({"maps": ["dust"]}), json!({"maps": ["dust", "x"]}))
            ),
            None
        );
        assert_eq!(
            why(
                &r,
                &two(json!({"maps": ["dust"]}), json!({"maps": ["harbor"]}))
            ),
            Some(("maps".into(), Why::Apart))
        );
        assert_eq!(
            why(&r, &ticket(json!({"maps": [], "level": 1}), &[])),
            Some(("maps".into(), Why::Invalid))
        );
        // Levels 20 apart meet the loosest distance; 21 do not.
        assert_eq!(
            why(&r, &two(json!({"level": 1}), json!({"level": 21}))),
            None
        );
        assert_eq!(
            why(&r, &two(json!({"level": 1}), json!({"level": 22}))),
            Some(("level".into(), Why::Apart))
        );
    }

    #[test]
    fn roles_a_team_could_never_fill() {
        let hard = rules(
            r#"rules = [{ kind = "roles", attribute = "roles", need = { tank = 1, healer = 1, damage = 3 } }]"#,
        );
        let solo = |roles: serde_json::Value| ticket(json!({"roles": roles}), &[]);
        assert_eq!(why(&hard, &solo(json!(["tank", "damage"]))), None);
        assert_eq!(
            why(&hard, &ticket(json!({}), &[])),
            None,
            "no list: any role"
        );
        let u = refused(&hard, &solo(json!(["tnak"]))).unwrap();
        assert_eq!((u.attribute.as_str(), u.why), ("roles", Why::Invalid));
        assert!(
            u.message.contains("(damage, healer, tank)"),
            "{}",
            u.message
        );
        // Two tanks in one party: a team has one tank's place.
        let tanks = ticket(json!({"roles": ["tank"]}), &[json!({}), json!({})]);
        assert_eq!(why(&hard, &tanks), Some(("roles".into(), Why::Apart)));
        let pair = ticket(
            json!({}),
            &[
                json!({"roles": ["tank"]}),
                json!({"roles": ["tank", "healer"]}),
            ],
        );
        assert_eq!(why(&hard, &pair), None);
        // Once anyone may take a damage place, the other tanks take those.
        let loose = rules(
            r#"rules = [{ kind = "roles", attribute = "roles", need = { tank = 1, healer = 1, damage = 3 }, relax = [{ after = "30s", any = ["damage"] }] }]"#,
        );
        assert_eq!(why(&loose, &tanks), None);
        assert_eq!(why(&loose, &solo(json!(["tnak"]))), None);
    }

    #[test]
    fn numbers_read_by_an_equal_rule_are_their_decimal_text() {
        let r = rules(r#"rules = [{ kind = "equal", attribute = "build" }]"#);
        let two = |a: serde_json::Value, b: serde_json::Value| {
            ticket(json!({}), &[json!({ "build": a }), json!({ "build": b })])
        };
        assert_eq!(why(&r, &two(json!(142), json!("142"))), None);
        assert_eq!(
            why(&r, &two(json!(142), json!(143))),
            Some(("build".into(), Why::Apart))
        );
    }
}
