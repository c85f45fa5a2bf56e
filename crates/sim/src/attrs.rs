//! Attributes for generated streams (`matchmaker simulate --attributes FILE`): a
//! TOML table per attribute saying how its values are drawn.
//!
//! ```toml
//! [build]                  # one value per group, by share
//! values = { "1.4.2" = 0.6, "1.4.1" = 0.3, "1.3.9" = 0.1 }
//!
//! [maps]                   # a list per group: between 2 and 3 of these, at random
//! list = ["dust", "harbor", "canal", "port", "mill"]
//! pick = [2, 3]
//!
//! [roles]                  # a list per player: each role with its chance
//! accept = { tank = 0.2, healer = 0.2, damage = 1.0 }
//!
//! [level]                  # a number per group, uniform in the range
//! range = [1, 60]
//! ```
//!
//! The draws use a random stream of their own (from the scenario's seed), so a
//! stream with attributes has the same arrivals, ratings and parties as the
//! same stream without.

use mm_domain::{Attributes, Value, valid_name};
use rand::Rng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use serde::Deserialize;
use std::collections::BTreeMap;

/// How one attribute is drawn.
#[derive(Debug, Clone, PartialEq)]
pub enum Draw {
    /// One value per group, by share.
    Values(Vec<(String, f64)>),
    /// Per group, between `min` and `max` distinct values of `list`.
    Pick {
        list: Vec<String>,
        min: usize,
        max: usize,
    },
    /// Per player, each value with its chance.
    Accept(Vec<(String, f64)>),
    /// A number per group, uniform in `lo..=hi`.
    Range(f64, f64),
}

/// The attributes of a generated stream, by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AttributeMix(pub Vec<(String, Draw)>);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    values: Option<BTreeMap<String, f64>>,
    list: Option<Vec<String>>,
    pick: Option<[usize; 2]>,
    accept: Option<BTreeMap<String, f64>>,
    range: Option<[f64; 2]>,
}

impl AttributeMix {
    /// Reads the TOML (see the module doc).
    pub fn parse(text: &str) -> Result<Self, String> {
        let raw: BTreeMap<String, Raw> = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        for (name, r) in raw {
            if !valid_name(&name) {
                return Err(format!(
                    "{name:?} is not an attribute name ([a-z0-9_]{{1,32}})"
                ));
            }
            let share = |m: BTreeMap<String, f64>| -> Result<Vec<(String, f64)>, String> {
                if m.is_empty() || m.values().any(|w| !(w.is_finite() && *w >= 0.0)) {
                    return Err(format!("{name}: shares must be numbers >= 0"));
                }
                Ok(m.into_iter().collect())
            };
            let draw = match (r.values, r.list, r.accept, r.range) {
                (Some(v), None, None, None) if r.pick.is_none() => Draw::Values(share(v)?),
                (None, Some(list), None, None) => {
                    let [min, max] = r.pick.unwrap_or([1, 1]);
                    if list.is_empty() || min == 0 || min > max || max > list.len() {
                        return Err(format!(
                            "{name}: pick = [min, max] with 1 <= min <= max <= {} values",
                            list.len()
                        ));
                    }
                    Draw::Pick { list, min, max }
                }
                (None, None, Some(a), None) if r.pick.is_none() => {
                    if a.values().any(|p| !(0.0..=1.0).contains(p)) {
                        return Err(format!("{name}: accept chances are between 0 and 1"));
                    }
                    Draw::Accept(a.into_iter().collect())
                }
                (None, None, None, Some([lo, hi])) if r.pick.is_none() && lo <= hi => {
                    Draw::Range(lo, hi)
                }
                _ => {
                    return Err(format!(
                        "{name}: give exactly one of values, list (with pick), accept, range"
                    ));
                }
            };
            out.push((name, draw));
        }
        Ok(Self(out))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// A group of `size` players' attributes: the group's, and each player's
    /// own (empty when no attribute is drawn per player).
    pub fn draw(&self, rng: &mut StdRng, size: usize) -> (Attributes, Vec<Attributes>) {
        let mut group = Attributes::default();
        let mut players = vec![Attributes::default(); size];
        let mut per_player = false;
        for (name, draw) in &self.0 {
            match draw {
                Draw::Values(shares) => {
                    let total: f64 = shares.iter().map(|(_, w)| w).sum();
                    let mut x = rng.random::<f64>() * total;
                    let mut pick = &shares[shares.len() - 1].0;
                    for (v, w) in shares {
                        if x < *w {
                            pick = v;
                            break;
                        }
                        x -= w;
                    }
                    group.insert(name.clone(), Value::Text(pick.clone()));
                }
                Draw::Pick { list, min, max } => {
                    let n = rng.random_range(*min..=*max);
                    let mut all = list.clone();
                    all.shuffle(rng);
                    all.truncate(n);
                    group.insert(name.clone(), Value::List(all));
                }
                Draw::Accept(chances) => {
                    per_player = true;
                    for p in &mut players {
                        let list: Vec<String> = chances
                            .iter()
                            .filter(|(_, c)| rng.random::<f64>() < *c)
                            .map(|(v, _)| v.clone())
                            .collect();
                        p.insert(name.clone(), Value::List(list));
                    }
                }
                Draw::Range(lo, hi) => {
                    let v = if lo == hi {
                        *lo
                    } else {
                        rng.random_range(*lo..=*hi).round()
                    };
                    group.insert(name.clone(), Value::Number(v));
                }
            }
        }
        if !per_player {
            players.clear();
        }
        (group, players)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    const RULES: &str = r#"
[build]
values = { "1.4.2" = 0.6, "1.4.1" = 0.3, "1.3.9" = 0.1 }
[maps]
list = ["dust", "harbor", "canal", "port", "mill"]
pick = [2, 3]
[roles]
accept = { tank = 0.2, healer = 0.2, damage = 1.0 }
[level]
range = [1, 60]
"#;

    #[test]
    fn draws_follow_the_file() {
        let mix = AttributeMix::parse(RULES).unwrap();
        let mut rng = StdRng::seed_from_u64(1);
        let mut builds = BTreeMap::new();
        let mut tanks = 0;
        for _ in 0..2000 {
            let (g, p) = mix.draw(&mut rng, 2);
            *builds
                .entry(g.get("build").unwrap().as_text().unwrap().to_string())
                .or_insert(0) += 1;
            let maps = g.get("maps").unwrap().as_list().unwrap();
            assert!((2..=3).contains(&maps.len()));
            let level = g.get("level").unwrap().as_number().unwrap();
            assert!((1.0..=60.0).contains(&level));
            assert_eq!(p.len(), 2);
            for a in &p {
                let roles = a.get("roles").unwrap().as_list().unwrap();
                assert!(roles.contains(&"damage".to_string()));
                tanks += usize::from(roles.contains(&"tank".to_string()));
            }
        }
        assert!((1050..1350).contains(&builds["1.4.2"]), "{builds:?}");
        assert!((600..1000).contains(&tanks), "{tanks}");
    }

    #[test]
    fn mistakes_are_named() {
        for (text, says) in [
            ("[Build]\nvalues = { a = 1 }", "not an attribute name"),
            ("[maps]\nlist = [\"a\"]\npick = [2, 3]", "pick"),
            ("[x]\nvalues = { a = 1 }\nrange = [1, 2]", "exactly one"),
            ("[r]\naccept = { a = 2.0 }", "between 0 and 1"),
        ] {
            let e = AttributeMix::parse(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }
}
