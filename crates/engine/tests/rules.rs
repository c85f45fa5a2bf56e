//! Rules in the engine's search, through its public API: modes from TOML,
//! tickets with attributes, proposals. Hard rules are never broken; relaxed
//! ones loosen with the longest wait of the candidate match; a ticket that fits
//! no compatible group is passed over without stranding the others.

use mm_domain::{Attributes, Millis, PlayerId, Value};
use mm_engine::rules::{MAX_RULES, Step};
use mm_engine::{
    Described, Entry, Kind, Mode, Modes, Params, Proposal, Rule, Traits, WindowPolicy, propose_with,
};
use proptest::prelude::*;

/// A ticket as the rules see it.
#[derive(Debug, Clone, Default)]
struct T {
    players: Vec<PlayerId>,
    attrs: Vec<Attributes>,
    blocks: Vec<PlayerId>,
}

impl Described for T {
    fn players(&self) -> usize {
        self.players.len()
    }
    fn value(&self, i: usize, attribute: &str) -> Option<&Value> {
        self.attrs.get(i).and_then(|a| a.get(attribute))
    }
    fn player(&self, i: usize) -> Option<&PlayerId> {
        self.players.get(i)
    }
    fn blocks(&self) -> &[PlayerId] {
        &self.blocks
    }
}

fn mode(rules: &str, teams: usize, team_size: usize) -> Mode {
    let text = format!(
        "[modes.m]\nteams = {teams}\nteam_size = {team_size}\npatience = 1.0\n\
         window = {{ initial = 100, per_second = 10, cap = 500 }}\n{rules}"
    );
    Modes::load(Some(&text), WindowPolicy::default())
        .unwrap()
        .get("m")
        .unwrap()
        .clone()
}

fn attrs(json: &str) -> Attributes {
    serde_json::from_str(json).unwrap()
}

/// A solo ticket named `name` with attributes `json`.
fn solo(name: &str, json: &str) -> T {
    T {
        players: vec![PlayerId::new(name).unwrap()],
        attrs: vec![attrs(json)],
        blocks: Vec::new(),
    }
}

fn run(mode: &Mode, tickets: &[T], entries: &[Entry], now: Millis) -> Vec<Proposal> {
    let traits = Traits::new(&mode.rules, tickets);
    propose_with(mode, entries, &traits, now)
}

fn entries(n: usize, queued: Millis) -> Vec<Entry> {
    (0..n)
        .map(|i| Entry::solo(1500.0 + i as f64, queued))
        .collect()
}

#[test]
fn a_hard_equal_keeps_builds_apart() {
    let m = mode(
        "[[modes.m.rules]]\nkind = \"equal\"\nattribute = \"build\"",
        2,
        1,
    );
    let tickets: Vec<T> = ["1.4", "1.3", "1.4", "1.3", "1.4"]
        .iter()
        .enumerate()
        .map(|(i, b)| solo(&format!("p{i}"), &format!(r#"{{"build": "{b}"}}"#)))
        .collect();
    let p = run(&m, &tickets, &entries(5, 0), 1_000);
    assert_eq!(p.len(), 2, "{p:?}");
    for prop in &p {
        let builds: Vec<&Value> = prop
            .members
            .iter()
            .map(|&e| tickets[e].value(0, "build").unwrap())
            .collect();
        assert_eq!(builds[0], builds[1], "{prop:?}");
        assert_eq!(prop.steps, vec![("equal:build".into(), 0)]);
    }
}

#[test]
fn crossplay_opens_after_the_relax_step() {
    let rules = r#"
[[modes.m.rules]]
kind = "equal"
attribute = "platform"
groups = [["xbox", "ps"], ["pc"]]
relax = [{ after = "30s", groups = [["xbox", "ps", "pc"]] }]"#;
    let m = mode(rules, 2, 1);
    let tickets = vec![
        solo("a", r#"{"platform": "pc"}"#),
        solo("b", r#"{"platform": "ps"}"#),
    ];
    assert!(run(&m, &tickets, &entries(2, 0), 10_000).is_empty());
    let p = run(&m, &tickets, &entries(2, 0), 31_000);
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].steps, vec![("equal:platform".into(), 1)]);
    // Consoles meet from the start.
    let tickets = vec![
        solo("a", r#"{"platform": "xbox"}"#),
        solo("b", r#"{"platform": "ps"}"#),
    ];
    assert_eq!(run(&m, &tickets, &entries(2, 0), 1_000).len(), 1);
}

/// A soft `equal` splits the pool like a hard one while nobody has waited
/// until it relaxes (a backlog of fresh tickets), and stops splitting it as
/// soon as one ticket has: that ticket's match may cross over.
#[test]
fn a_relaxing_equal_splits_a_pool_only_while_nobody_waited_for_the_relax() {
    let rules = r#"
[[modes.m.rules]]
kind = "equal"
attribute = "platform"
groups = [["console"], ["pc"]]
relax = [{ after = "30s", groups = [["console", "pc"]] }]"#;
    let m = mode(rules, 2, 5);
    // 10 pc players among 30 console players, alternating in rating.
    let tickets: Vec<T> = (0..40)
        .map(|i| {
            let platform = if i % 4 == 0 { "pc" } else { "console" };
            solo(
                &format!("p{i}"),
                &format!(r#"{{"platform": "{platform}"}}"#),
            )
        })
        .collect();
    let traits = Traits::new(&m.rules, &tickets);
    let parts = |longest| {
        traits
            .partition_ids(longest)
            .map(|ids| ids.into_iter().flatten().max())
    };
    assert_eq!(parts(29_999), Some(Some(1)), "two parts");
    assert_eq!(parts(30_000), None, "relaxed: one pool");
    // Fresh: a match of each platform (the pc players alone make one).
    let fresh = entries(40, 10_000);
    let p = run(&m, &tickets, &fresh, 20_000);
    assert_eq!(p.len(), 4, "{p:?}");
    for prop in &p {
        let pcs = prop.members.iter().filter(|&&e| e % 4 == 0).count();
        assert!(pcs == 0 || pcs == 10, "{prop:?}");
    }
    // One console player waited 31 s: the pool is one, and its match crosses.
    let mut waited = fresh.clone();
    waited[1].enqueued_at = 0;
    waited[1].eligible_at = 0;
    let p = run(&m, &tickets, &waited, 31_000);
    let crossed = p
        .iter()
        .find(|prop| prop.members.contains(&1))
        .expect("the long-waiting player is matched");
    assert_eq!(crossed.steps, vec![("equal:platform".into(), 1)]);
    assert!(crossed.members.iter().any(|&e| e % 4 == 0), "{crossed:?}");
}

#[test]
fn intersect_chooses_the_map_most_listed_first() {
    let rules = "[[modes.m.rules]]\nkind = \"intersect\"\nattribute = \"maps\"\n\
                 relax = [{ after = \"60s\", off = true }]";
    let m = mode(rules, 2, 2);
    let tickets = vec![
        solo("a", r#"{"maps": ["harbor", "dust"]}"#),
        solo("b", r#"{"maps": ["dust", "harbor"]}"#),
        solo("c", r#"{"maps": ["dust", "canal"]}"#),
        solo("d", r#"{"maps": ["canal", "dust", "harbor"]}"#),
    ];
    let p = run(&m, &tickets, &entries(4, 0), 1_000);
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!(p[0].chosen, vec![("maps".into(), "dust".into())]);
    // Nothing shared: no match until the rule is off; then the most listed.
    let tickets = vec![
        solo("a", r#"{"maps": ["harbor"]}"#),
        solo("b", r#"{"maps": ["dust"]}"#),
        solo("c", r#"{"maps": ["dust"]}"#),
        solo("d", r#"{"maps": ["canal", "dust"]}"#),
    ];
    assert!(run(&m, &tickets, &entries(4, 0), 1_000).is_empty());
    let p = run(&m, &tickets, &entries(4, 0), 61_000);
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].chosen, vec![("maps".into(), "dust".into())]);
}

/// Two players who share a map, with thirty who share another between them in
/// rating: growing up from the lower one meets two dozen misfits and gives up,
/// while the thirty pair off. Once they have, nothing stands between the two:
/// the same cycle passes over what is left and matches them, rather than
/// leaving them for the next.
#[test]
fn one_cycle_takes_what_its_own_matches_freed() {
    let m = mode(
        "[[modes.m.rules]]\nkind = \"intersect\"\nattribute = \"maps\"",
        2,
        1,
    );
    let mut tickets = vec![solo("low", r#"{"maps": ["dust"]}"#)];
    for i in 0..30 {
        tickets.push(solo(&format!("p{i}"), r#"{"maps": ["canal"]}"#));
    }
    tickets.push(solo("high", r#"{"maps": ["dust"]}"#));
    let entries = entries(tickets.len(), 0);
    let p = run(&m, &tickets, &entries, 1_000);
    assert_eq!(p.len(), 16, "{p:?}");
    let last = tickets.len() - 1;
    assert!(
        p.iter().any(|p| {
            let mut members = p.members.clone();
            members.sort_unstable();
            members == vec![0, last]
        }),
        "{p:?}"
    );
}

#[test]
fn distance_widens_with_wait() {
    let rules = "[[modes.m.rules]]\nkind = \"distance\"\nattribute = \"level\"\n\
                 max_distance = 5\nrelax = [{ after = \"20s\", max_distance = 50 }]";
    let m = mode(rules, 2, 1);
    let tickets = vec![solo("a", r#"{"level": 10}"#), solo("b", r#"{"level": 40}"#)];
    assert!(run(&m, &tickets, &entries(2, 0), 5_000).is_empty());
    assert_eq!(run(&m, &tickets, &entries(2, 0), 21_000).len(), 1);
    // A ticket without the number matches only once the rule is off.
    let tickets = vec![solo("a", r#"{"level": 10}"#), solo("b", "{}")];
    assert!(run(&m, &tickets, &entries(2, 0), 21_000).is_empty());
}

/// A team of five needs a tank, a healer and three damage players.
const TANK_HEALER_THREE_DAMAGE: &str = r#"
[[modes.m.rules]]
kind = "roles"
attribute = "roles"
need = { tank = 1, healer = 1, damage = 3 }"#;

/// Attributes of a player who takes the roles `list` (a JSON array).
fn role(list: &str) -> String {
    format!(r#"{{"roles": {list}}}"#)
}

#[test]
fn roles_are_filled_per_team() {
    let m = mode(TANK_HEALER_THREE_DAMAGE, 2, 5);
    let mut tickets: Vec<T> = (0..6)
        .map(|i| solo(&format!("d{i}"), &role(r#"["damage"]"#)))
        .collect();
    tickets.push(solo("t0", &role(r#"["tank", "damage"]"#)));
    tickets.push(solo("t1", &role(r#"["tank"]"#)));
    tickets.push(solo("h0", &role(r#"["healer"]"#)));
    tickets.push(solo("h1", &role(r#"["healer", "tank"]"#)));
    let p = run(&m, &tickets, &entries(10, 0), 1_000);
    assert_eq!(p.len(), 1, "{p:?}");
    let p = &p[0];
    assert_eq!(p.roles.len(), 10);
    for team in 0..2 {
        let mut got: Vec<&str> = p
            .roles
            .iter()
            .filter(|(k, ..)| p.teams[*k] == team)
            .map(|(_, _, r)| &**r)
            .collect();
        got.sort_unstable();
        assert_eq!(
            got,
            ["damage", "damage", "damage", "healer", "tank"],
            "team {team}"
        );
    }
    // Only one healer in the pool: no match.
    let mut short = tickets.clone();
    short[9] = solo("h1", &role(r#"["tank"]"#));
    assert!(run(&m, &short, &entries(10, 0), 1_000).is_empty());
}

#[test]
fn a_match_missing_its_tanks_looks_past_the_damage_players() {
    let m = mode(TANK_HEALER_THREE_DAMAGE, 2, 5);
    // Six damage players and two healers, then forty more damage players
    // (more than the search passes over as misfits), then the two tanks: all
    // inside one window.
    let mut tickets: Vec<T> = (0..6)
        .map(|i| solo(&format!("d{i}"), &role(r#"["damage"]"#)))
        .collect();
    tickets.extend((0..2).map(|i| solo(&format!("h{i}"), &role(r#"["healer"]"#))));
    tickets.extend((0..40).map(|i| solo(&format!("x{i}"), &role(r#"["damage"]"#))));
    tickets.extend((0..2).map(|i| solo(&format!("t{i}"), &role(r#"["tank", "damage"]"#))));
    let pool: Vec<Entry> = (0..tickets.len())
        .map(|i| Entry::solo(1500.0 + i as f64 * 0.5, 0))
        .collect();
    let p = run(&m, &tickets, &pool, 1_000);
    assert_eq!(p.len(), 1, "{p:?}");
    let members: Vec<&str> = p[0]
        .members
        .iter()
        .map(|&e| tickets[e].players[0].as_str())
        .collect();
    for must in ["h0", "h1", "t0", "t1"] {
        assert!(members.contains(&must), "{must} missing from {members:?}");
    }
    // The search may take none of the forty, but it needs six damage players.
    assert_eq!(members.len(), 10);
}

/// The match of ticket 0 of `tickets`, overdue (queued 40 s ago, three
/// times the initial window's growth time) among tickets queued a second
/// ago: the first `near` one point apart in rating, the rest ten points
/// further up.
fn overdue_match(m: &Mode, tickets: &[T], near: usize) -> Proposal {
    let now = 40_000;
    let pool: Vec<Entry> = tickets
        .iter()
        .enumerate()
        .map(|(i, t)| Entry {
            rating: 1500.0 + if i < near { i as f64 } else { 10.0 + i as f64 },
            size: t.players.len(),
            enqueued_at: if i == 0 { 0 } else { now - 1_000 },
            eligible_at: 0,
        })
        .collect();
    run(m, tickets, &pool, now)
        .into_iter()
        .find(|p| p.members.contains(&0))
        .expect("the overdue ticket is matched")
}

#[test]
fn a_party_that_can_tank_once_is_joined_by_a_tank_for_the_other_team() {
    let m = mode(TANK_HEALER_THREE_DAMAGE, 2, 5);
    let party = T {
        players: vec![PlayerId::new("p0").unwrap(), PlayerId::new("p1").unwrap()],
        attrs: vec![attrs(&role(r#"["tank", "damage"]"#)); 2],
        blocks: Vec::new(),
    };
    // The overdue ticket (a damage player), then nearest in rating a pair who
    // both take tank (but can tank only their own team), two healers, six
    // damage players, and further up two tanks.
    let mut tickets = vec![solo("late", &role(r#"["damage"]"#)), party];
    tickets.extend((0..2).map(|i| solo(&format!("h{i}"), &role(r#"["healer"]"#))));
    tickets.extend((0..6).map(|i| solo(&format!("d{i}"), &role(r#"["damage"]"#))));
    tickets.extend((0..2).map(|i| solo(&format!("t{i}"), &role(r#"["tank"]"#))));
    let with_late = overdue_match(&m, &tickets, 10);
    // Two tickets able to tank are needed, one a team: the pair counts once,
    // so the nearest tank beyond joins (not both tanks, which would leave the
    // pair out, nor a damage player in the tank's place, which would not
    // split).
    assert!(with_late.members.contains(&1), "{with_late:?}");
    assert!(with_late.members.contains(&10), "{with_late:?}");
    assert!(!with_late.members.contains(&11), "{with_late:?}");
    let tanks = with_late.roles.iter().filter(|(.., r)| &**r == "tank");
    let teams: std::collections::BTreeSet<usize> =
        tanks.map(|&(k, ..)| with_late.teams[k]).collect();
    assert_eq!(teams.len(), 2, "a tank on each team: {with_late:?}");
}

#[test]
fn an_overdue_ticket_s_match_leaves_out_a_party_that_keeps_it_from_splitting() {
    let m = mode(TANK_HEALER_THREE_DAMAGE, 2, 5);
    let party = |names: &[&str], roles: &[&str]| T {
        players: names.iter().map(|n| PlayerId::new(*n).unwrap()).collect(),
        attrs: roles.iter().map(|r| attrs(&role(r))).collect(),
        blocks: Vec::new(),
    };
    let (d, t, h) = (r#"["damage"]"#, r#"["tank"]"#, r#"["healer"]"#);
    // The overdue ticket (a damage player), then nearest in rating three
    // parties that pass every count (two tickets able to tank, two able to
    // heal, six damage players with the next solo) but only pack as 3 + 2
    // against 3 + 1 + 1: whichever trio joins the pair, the other trio's team
    // has one role and nobody for the other. Further up, a tank and damage
    // players.
    let mut tickets = vec![
        solo("late", &role(d)),
        party(&["a0", "a1", "a2"], &[t, d, d]),
        party(&["b0", "b1", "b2"], &[h, d, d]),
        party(&["p0", "p1"], &[t, h]),
        solo("d0", &role(d)),
        solo("t0", &role(t)),
    ];
    tickets.extend((1..4).map(|i| solo(&format!("d{i}"), &role(d))));
    let with_late = overdue_match(&m, &tickets, 5);
    // Grown again without the first trio, it takes the tank further up.
    assert!(!with_late.members.contains(&1), "{with_late:?}");
    assert!(with_late.members.contains(&5), "{with_late:?}");
    assert_eq!(with_late.roles.len(), 10, "{with_late:?}");
}

/// Rules built by hand, beyond the most a mode may declare: the last one still
/// holds, and relaxes with the wait.
#[test]
fn rules_beyond_a_modes_limit_still_hold() {
    let mut m = mode("", 2, 1);
    let distance = |attribute: &str, relaxed: f64| Rule {
        kind: Kind::Distance,
        attribute: attribute.to_string(),
        steps: vec![
            Step {
                after: 0,
                params: Params::Distance { max: 5.0 },
            },
            Step {
                after: 20_000,
                params: Params::Distance { max: relaxed },
            },
        ],
    };
    m.rules = (0..MAX_RULES)
        .map(|i| distance(&format!("a{i}"), 5.0))
        .collect();
    m.rules.push(distance("level", 100.0));
    let fields: Vec<String> = (0..MAX_RULES).map(|i| format!(r#""a{i}": 1"#)).collect();
    let with_level = |level: u32| format!(r#"{{{}, "level": {level}}}"#, fields.join(", "));
    let tickets = vec![solo("a", &with_level(10)), solo("b", &with_level(40))];
    assert!(run(&m, &tickets, &entries(2, 0), 5_000).is_empty());
    assert_eq!(run(&m, &tickets, &entries(2, 0), 21_000).len(), 1);
}

#[test]
fn a_five_stack_meets_a_big_party_not_five_solos() {
    let m = mode("[[modes.m.rules]]\nkind = \"party_balance\"", 2, 5);
    let party = |n: usize, at: f64| Entry {
        rating: at,
        size: n,
        enqueued_at: 0,
        eligible_at: 0,
    };
    let mut pool = vec![party(5, 1500.0)];
    pool.extend((0..5).map(|i| party(1, 1501.0 + i as f64)));
    let blank = vec![T::default(); pool.len()];
    assert!(
        run(&m, &blank, &pool, 1_000).is_empty(),
        "a five-stack against five solos"
    );
    pool.push(party(4, 1502.0));
    let blank = vec![T::default(); pool.len()];
    let p = run(&m, &blank, &pool, 1_000);
    assert_eq!(p.len(), 1, "{p:?}");
    let sizes: Vec<usize> = p[0].members.iter().map(|&e| pool[e].size).collect();
    assert!(sizes.contains(&5) && sizes.contains(&4), "{sizes:?}");
    // The four solos left over and six more make a match of their own.
    pool.extend((0..6).map(|i| party(1, 1510.0 + i as f64)));
    let blank = vec![T::default(); pool.len()];
    let got = run(&m, &blank, &pool, 1_000);
    assert_eq!(got.len(), 2, "{got:?}");
}

/// Only the blocker's ticket names the other (a ticket carries whom its
/// players blocked, not who blocked them): kept apart all the same, whichever
/// of the two blocked and whichever the search starts from.
#[test]
fn blocked_players_never_meet() {
    let m = mode("", 2, 1);
    for (blocker, blocked) in [(0, 1), (1, 0)] {
        let mut tickets = vec![solo("ann", "{}"), solo("bob", "{}"), solo("cy", "{}")];
        tickets[blocker].blocks = vec![tickets[blocked].players[0].clone()];
        let p = run(&m, &tickets, &entries(3, 0), 1_000);
        assert_eq!(p.len(), 1);
        let names: Vec<&str> = p[0]
            .members
            .iter()
            .map(|&e| tickets[e].players[0].as_str())
            .collect();
        assert!(
            !(names.contains(&"ann") && names.contains(&"bob")),
            "{names:?}"
        );
        // Never relaxed, however long they wait.
        let two = vec![tickets[0].clone(), tickets[1].clone()];
        assert!(run(&m, &two, &entries(2, 0), 3_600_000).is_empty());
    }
}

/// The maps (`m0`, `m1`, ... as bits) every one of `members` listed.
fn common_maps(members: &[usize], tickets: &[T]) -> u64 {
    members.iter().fold(u64::MAX, |acc, &e| {
        acc & tickets[e]
            .value(0, "maps")
            .unwrap()
            .as_list()
            .unwrap()
            .iter()
            .map(|m| 1u64 << m[1..].parse::<u32>().unwrap())
            .fold(0, |x, y| x | y)
    })
}

proptest! {
    /// Random pools of solos and parties with builds, platforms, maps and
    /// levels: every proposal keeps the hard rules, and the relaxed ones at
    /// the step its longest wait allows.
    #[test]
    fn proposals_keep_every_rule(
        seed in proptest::collection::vec((0u8..3, 0u8..3, 0u8..16, 0u32..60, 1usize..3, 0u64..90_000), 10..60),
    ) {
        let rules = r#"
[[modes.m.rules]]
kind = "equal"
attribute = "build"

[[modes.m.rules]]
kind = "equal"
attribute = "platform"
groups = [["xbox", "ps"], ["pc"]]
relax = [{ after = "30s", groups = [["xbox", "ps", "pc"]] }]

[[modes.m.rules]]
kind = "intersect"
attribute = "maps"
relax = [{ after = "45s", off = true }]

[[modes.m.rules]]
kind = "distance"
attribute = "level"
max_distance = 10
relax = [{ after = "20s", max_distance = 30 }]"#;
        let m = mode(rules, 2, 2);
        let builds = ["a", "b", "c"];
        let platforms = ["pc", "xbox", "ps"];
        let now = 100_000;
        let mut tickets = Vec::new();
        let mut pool = Vec::new();
        for (i, &(b, p, maps, level, size, waited)) in seed.iter().enumerate() {
            let list: Vec<String> = (0..4).filter(|k| maps >> k & 1 == 1).map(|k| format!("m{k}")).collect();
            let a = attrs(&serde_json::json!({
                "build": builds[b as usize], "platform": platforms[p as usize],
                "maps": list, "level": level,
            }).to_string());
            tickets.push(T {
                players: (0..size).map(|k| PlayerId::new(format!("p{i}x{k}")).unwrap()).collect(),
                attrs: vec![a; size],
                blocks: Vec::new(),
            });
            pool.push(Entry { rating: 1500.0 + (i % 7) as f64, size, enqueued_at: now - waited, eligible_at: 0 });
        }
        let props = run(&m, &tickets, &pool, now);
        let mut seen = std::collections::HashSet::new();
        for prop in &props {
            let wait = prop.members.iter().map(|&e| now - pool[e].enqueued_at).max().unwrap();
            let vals = |name: &str| -> Vec<&Value> { prop.members.iter().map(|&e| tickets[e].value(0, name).unwrap()).collect() };
            let b = vals("build");
            prop_assert!(b.iter().all(|v| *v == b[0]), "builds {:?}", b);
            let p: Vec<&str> = vals("platform").iter().map(|v| v.as_text().unwrap()).collect();
            if wait < 30_000 {
                let pc = p.iter().filter(|x| **x == "pc").count();
                prop_assert!(pc == 0 || pc == p.len(), "platforms {:?} at {}", p, wait);
            }
            if wait < 45_000 {
                prop_assert!(common_maps(&prop.members, &tickets) != 0, "no shared map at {}", wait);
            }
            let levels: Vec<f64> = vals("level").iter().map(|v| v.as_number().unwrap()).collect();
            let spread = levels.iter().cloned().fold(f64::MIN, f64::max) - levels.iter().cloned().fold(f64::MAX, f64::min);
            prop_assert!(spread <= if wait < 20_000 { 10.0 } else { 30.0 }, "levels {:?} at {}", levels, wait);
            for &e in &prop.members {
                prop_assert!(seen.insert(e), "entry {} twice", e);
            }
            let players: usize = prop.members.iter().map(|&e| pool[e].size).sum();
            prop_assert_eq!(players, 4);
        }
    }

    /// Random pools of solos and parties accepting random roles: every
    /// proposal fills each team's roles, each player in a role they accept
    /// (or one relaxed to anyone at the match's step), and nobody twice.
    #[test]
    fn proposals_fill_every_team_s_roles(
        seed in proptest::collection::vec((1u8..8, 1usize..4, 0u64..90_000, 0u32..40), 10..80),
    ) {
        let rules = r#"
[[modes.m.rules]]
kind = "roles"
attribute = "roles"
need = { tank = 1, healer = 1, damage = 3 }
relax = [{ after = "60s", any = ["tank", "healer"] }]"#;
        let m = mode(rules, 2, 5);
        let names = ["tank", "healer", "damage"];
        let now = 100_000;
        let mut tickets = Vec::new();
        let mut pool = Vec::new();
        for (i, &(set, size, waited, at)) in seed.iter().enumerate() {
            let accepts: Vec<&str> = (0..3).filter(|k| set >> k & 1 == 1).map(|k| names[k]).collect();
            let a = attrs(&serde_json::json!({ "roles": accepts }).to_string());
            tickets.push(T {
                players: (0..size).map(|k| PlayerId::new(format!("p{i}x{k}")).unwrap()).collect(),
                attrs: vec![a; size],
                blocks: Vec::new(),
            });
            pool.push(Entry { rating: 1500.0 + f64::from(at), size, enqueued_at: now - waited, eligible_at: 0 });
        }
        let props = run(&m, &tickets, &pool, now);
        let mut seen = std::collections::HashSet::new();
        for prop in &props {
            let wait = prop.members.iter().map(|&e| now - pool[e].enqueued_at).max().unwrap();
            for &e in &prop.members {
                prop_assert!(seen.insert(e), "entry {} twice", e);
            }
            let players: usize = prop.members.iter().map(|&e| pool[e].size).sum();
            prop_assert_eq!(players, 10);
            prop_assert_eq!(prop.roles.len(), 10);
            for team in 0..2 {
                let mut count = std::collections::HashMap::new();
                for (k, i, role) in prop.roles.iter().filter(|(k, ..)| prop.teams[*k] == team) {
                    let e = prop.members[*k];
                    let accepted = tickets[e].value(*i, "roles").unwrap().as_list().unwrap();
                    let relaxed = wait >= 60_000 && &**role != "damage";
                    prop_assert!(relaxed || accepted.iter().any(|r| **r == **role), "{} takes {} at {}", e, role, wait);
                    *count.entry(&**role).or_insert(0) += 1;
                }
                prop_assert_eq!(count.get("tank"), Some(&1));
                prop_assert_eq!(count.get("healer"), Some(&1));
                prop_assert_eq!(count.get("damage"), Some(&3));
            }
        }
    }

    /// Random pools spread over a wide rating range, with parties, maps, roles
    /// and party balance, many tickets overdue (their matches grow outwards
    /// from them): every member of a proposal lies in every other member's
    /// window, teams are full, nobody is in two matches, and the match shares
    /// a map until the rule is off.
    #[test]
    fn ruled_matches_keep_every_member_s_window(
        seed in proptest::collection::vec((0u8..16, 1u8..8, 1usize..4, 0u64..90_000, 1200.0f64..1800.0), 10..120),
    ) {
        let rules = r#"
[[modes.m.rules]]
kind = "intersect"
attribute = "maps"
relax = [{ after = "45s", off = true }]

[[modes.m.rules]]
kind = "roles"
attribute = "roles"
need = { tank = 1, healer = 1, damage = 3 }
relax = [{ after = "60s", any = ["tank", "healer"] }]

[[modes.m.rules]]
kind = "party_balance"
max_size_gap = 1
relax = [{ after = "30s", max_size_gap = 4 }]"#;
        let m = mode(rules, 2, 5);
        let names = ["tank", "healer", "damage"];
        let now = 100_000;
        let mut tickets = Vec::new();
        let mut pool = Vec::new();
        for (i, &(maps, set, size, waited, rating)) in seed.iter().enumerate() {
            let list: Vec<String> = (0..4).filter(|k| maps >> k & 1 == 1).map(|k| format!("m{k}")).collect();
            let accepts: Vec<&str> = (0..3).filter(|k| set >> k & 1 == 1).map(|k| names[k]).collect();
            let a = attrs(&serde_json::json!({ "maps": list, "roles": accepts }).to_string());
            tickets.push(T {
                players: (0..size).map(|k| PlayerId::new(format!("p{i}x{k}")).unwrap()).collect(),
                attrs: vec![a; size],
                blocks: Vec::new(),
            });
            pool.push(Entry { rating, size, enqueued_at: now - waited, eligible_at: 0 });
        }
        let props = run(&m, &tickets, &pool, now);
        let mut seen = std::collections::HashSet::new();
        for prop in &props {
            let wait = prop.members.iter().map(|&e| now - pool[e].enqueued_at).max().unwrap();
            let mut load = [0usize; 2];
            for (&e, &t) in prop.members.iter().zip(&prop.teams) {
                prop_assert!(seen.insert(e), "entry {} twice", e);
                load[t] += pool[e].size;
                let (lo, hi) = m.window.window(pool[e].rating, now - pool[e].enqueued_at);
                for &o in &prop.members {
                    prop_assert!(pool[o].rating >= lo && pool[o].rating <= hi,
                        "{} outside the window of {}", pool[o].rating, pool[e].rating);
                }
            }
            prop_assert_eq!(load, [5, 5]);
            if wait < 45_000 {
                prop_assert!(common_maps(&prop.members, &tickets) != 0, "no shared map at {}", wait);
            }
            prop_assert_eq!(prop.roles.len(), 10);
        }
    }
}
