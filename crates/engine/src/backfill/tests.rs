//! Backfill's tests: examples, and properties over random pools.

use super::*;
use crate::rules::Described;
use crate::{Modes, Rule};
use mm_domain::{PlayerId, Value};
use proptest::prelude::*;

fn five() -> Mode {
    Modes::defaults().get("5v5").unwrap().clone()
}

/// A 5v5 whose team 0 lost one player: four at 1500 against five at 1500.
/// The 5v5 of a modes file whose `rules` key is `rules` (a TOML array).
fn five_ruled(rules: &str) -> Mode {
    let toml = format!("[modes.5v5]\nteams = 2\nteam_size = 5\nrules = {rules}\n");
    Modes::load(Some(&toml), crate::WindowPolicy::default())
        .unwrap()
        .get("5v5")
        .unwrap()
        .clone()
}

fn one_seat() -> Backfill {
    Backfill {
        teams: vec![vec![1500.0; 4], vec![1500.0; 5]],
        open: vec![1, 0],
        opened_at: 0,
        held_roles: Vec::new(),
        parties: Vec::new(),
        chosen: Default::default(),
    }
}

#[test]
fn the_closest_ticket_takes_the_seat() {
    let entries = [
        Entry::solo(1530.0, 0),
        Entry::solo(1490.0, 0),
        Entry::solo(1510.0, 0),
    ];
    assert_eq!(fill(&five(), &one_seat(), &entries, 1_000), vec![(1, 0)]);
}

#[test]
fn only_inside_both_windows() {
    // 1,000 ms after opening, both windows are 60 wide: 1570 is outside.
    let entries = [Entry::solo(1570.0, 0)];
    assert!(fill(&five(), &one_seat(), &entries, 1_000).is_empty());
    // Three seconds later both are 90: it fits.
    assert_eq!(fill(&five(), &one_seat(), &entries, 4_000), vec![(0, 0)]);
    // A fresh ticket has a narrow window of its own, however old the backfill.
    let fresh = [Entry::solo(1570.0, 4_000)];
    assert!(fill(&five(), &one_seat(), &fresh, 4_000).is_empty());
}

#[test]
fn overdue_tickets_go_first() {
    let m = five();
    let entries = [Entry::solo(1500.0, 59_000), Entry::solo(1520.0, 0)];
    // At 60 s the second has waited 60 s (overdue), the first 1 s.
    assert_eq!(fill(&m, &one_seat(), &entries, 60_000), vec![(1, 0)]);
}

#[test]
fn a_party_is_never_split_and_goes_where_it_fits() {
    let b = Backfill {
        teams: vec![vec![1500.0; 4], vec![1500.0; 3]],
        open: vec![1, 2],
        opened_at: 0,
        held_roles: Vec::new(),
        parties: Vec::new(),
        chosen: Default::default(),
    };
    let duo = Entry {
        size: 2,
        ..Entry::solo(1500.0, 0)
    };
    let trio = Entry {
        size: 3,
        ..Entry::solo(1500.0, 0)
    };
    let placed = fill(&five(), &b, &[trio, duo, Entry::solo(1501.0, 0)], 1_000);
    // The trio fits no team; the duo only team 1; the solo takes team 0's seat.
    assert_eq!(placed, vec![(1, 1), (2, 0)]);
}

#[test]
fn fillers_go_where_the_team_averages_stay_closest() {
    // Team 0 is weaker: the stronger filler joins it, the weaker the other.
    let b = Backfill {
        teams: vec![vec![1450.0; 4], vec![1550.0; 4]],
        open: vec![1, 1],
        opened_at: 0,
        held_roles: Vec::new(),
        parties: Vec::new(),
        chosen: Default::default(),
    };
    let entries = [Entry::solo(1540.0, 0), Entry::solo(1460.0, 0)];
    let placed = fill(&five(), &b, &entries, 10_000);
    assert_eq!(placed.len(), 2);
    assert!(
        placed.contains(&(0, 0)) && placed.contains(&(1, 1)),
        "{placed:?}"
    );
}

#[test]
fn a_full_or_empty_match_takes_nobody() {
    let entries = [Entry::solo(1500.0, 0)];
    let full = Backfill {
        open: vec![0, 0],
        ..one_seat()
    };
    assert!(fill(&five(), &full, &entries, 1_000).is_empty());
    let empty = Backfill {
        teams: vec![vec![], vec![]],
        open: vec![5, 5],
        opened_at: 0,
        held_roles: Vec::new(),
        parties: Vec::new(),
        chosen: Default::default(),
    };
    assert!(fill(&five(), &empty, &entries, 1_000).is_empty());
}

/// A row for the rules: its players, a build, whom it blocks.
struct Row {
    players: Vec<PlayerId>,
    build: Value,
    blocks: Vec<PlayerId>,
}

impl Described for Row {
    fn players(&self) -> usize {
        self.players.len()
    }
    fn value(&self, _: usize, attribute: &str) -> Option<&Value> {
        (attribute == "build").then_some(&self.build)
    }
    fn player(&self, i: usize) -> Option<&PlayerId> {
        self.players.get(i)
    }
    fn blocks(&self) -> &[PlayerId] {
        &self.blocks
    }
}

fn row(players: &[&str], build: &str, blocks: &[&str]) -> Row {
    let ids = |names: &[&str]| names.iter().map(|n| PlayerId::new(*n).unwrap()).collect();
    Row {
        players: ids(players),
        build: Value::Text(build.into()),
        blocks: ids(blocks),
    }
}

#[test]
fn rules_and_block_lists_hold_against_the_match() {
    let rules: Vec<Rule> = five_ruled(r#"[{ kind = "equal", attribute = "build" }]"#).rules;
    let mut m = five();
    m.rules = rules.clone();
    let entries = [
        Entry::solo(1500.0, 0),
        Entry::solo(1501.0, 0),
        Entry::solo(1502.0, 0),
        Entry::solo(1503.0, 0),
    ];
    let rows = [
        row(&["old"], "1.3", &[]),        // another build
        row(&["rude"], "1.4", &[]),       // blocked by a player in the match
        row(&["picky"], "1.4", &["ann"]), // blocks a player in the match
        row(&["fine"], "1.4", &[]),
        // The match's players, as one more row.
        row(&["ann", "bob", "cid"], "1.4", &["rude"]),
    ];
    let traits = Traits::new(&rules, &rows);
    let placed = fill_with(&m, &one_seat(), &entries, &traits, 1_000);
    assert_eq!(placed, vec![(3, 0)]);
}

/// A row whose players list the same values of one attribute (roles they
/// accept, maps they would play).
struct Listed(&'static str, Vec<PlayerId>, Value);

impl Described for Listed {
    fn players(&self) -> usize {
        self.1.len()
    }
    fn value(&self, _: usize, attribute: &str) -> Option<&Value> {
        (attribute == self.0).then_some(&self.2)
    }
    fn player(&self, i: usize) -> Option<&PlayerId> {
        self.1.get(i)
    }
}

fn listed(attribute: &'static str, players: &[&str], values: &[&str]) -> Listed {
    Listed(
        attribute,
        players.iter().map(|n| PlayerId::new(*n).unwrap()).collect(),
        Value::List(values.iter().map(|r| r.to_string()).collect()),
    )
}

fn roles(players: &[&str], accepted: &[&str]) -> Listed {
    listed("roles", players, accepted)
}

fn maps(players: &[&str], listed_maps: &[&str]) -> Listed {
    listed("maps", players, listed_maps)
}

#[test]
fn a_filler_takes_a_role_its_team_misses() {
    let mut m = five_ruled(
        r#"[{ kind = "roles", attribute = "roles", need = { tank = 1, healer = 1, damage = 3 } }]"#,
    );
    m.rules.truncate(1);
    // Team 0's tank left: a healer and three damage remain.
    let mut b = one_seat();
    b.held_roles = vec![
        vec![
            "healer".into(),
            "damage".into(),
            "damage".into(),
            "damage".into(),
        ],
        vec![
            "tank".into(),
            "healer".into(),
            "damage".into(),
            "damage".into(),
            "damage".into(),
        ],
    ];
    let entries = [Entry::solo(1500.0, 0), Entry::solo(1520.0, 0)];
    let rows = [
        roles(&["dps"], &["damage"]),
        roles(&["tanky"], &["damage", "tank"]),
        roles(&["ann", "bob"], &["tank", "healer", "damage"]),
    ];
    let traits = Traits::new(&m.rules, &rows);
    // The closest can only deal damage: the tank takes the seat.
    let placed = fill_with(&m, &b, &entries, &traits, 1_000);
    assert_eq!(placed, vec![(1, 0)]);
    assert_eq!(
        fill_roles(&b, &entries, &traits, &placed, 1_000),
        vec![(1, 0, "tank".to_string())]
    );
    // Nobody holds a role (none recorded): any needed role will do.
    b.held_roles = Vec::new();
    assert_eq!(fill_with(&m, &b, &entries, &traits, 1_000), vec![(0, 0)]);
}

#[test]
fn a_party_joins_only_if_the_teams_stay_alike() {
    // The shipped 5v5 balances parties (largest parties at most 2 apart).
    let m = five();
    let traits = Traits::shape_only(&m.rules);
    // Team 0 kept one solo and has four seats; team 1 is five solos.
    let b = Backfill {
        teams: vec![vec![1500.0], vec![1500.0; 5]],
        open: vec![4, 0],
        opened_at: 0,
        held_roles: Vec::new(),
        parties: vec![1, 1],
        chosen: Default::default(),
    };
    let four = Entry {
        size: 4,
        ..Entry::solo(1500.0, 0)
    };
    let entries = [four, Entry::solo(1510.0, 0), Entry::solo(1520.0, 0)];
    // The four-stack is closest, but against solos it is too big: the solos
    // go.
    assert_eq!(
        fill_with(&m, &b, &entries, &traits, 1_000),
        vec![(1, 0), (2, 0)]
    );
    // Make-ups not known: the four-stack goes.
    let unknown = Backfill {
        parties: Vec::new(),
        chosen: Default::default(),
        ..b
    };
    assert_eq!(
        fill_with(&m, &unknown, &entries, &traits, 1_000),
        vec![(0, 0)]
    );
}

proptest! {
    #[test]
    fn never_overfills_splits_or_places_twice(
        team0 in prop::collection::vec(1200.0f64..1800.0, 0..5),
        team1 in prop::collection::vec(1200.0f64..1800.0, 0..5),
        pool in prop::collection::vec((1000.0f64..2000.0, 1usize..=5, 0u64..60_000), 0..40),
        opened in 0u64..60_000,
    ) {
        let m = five();
        let b = Backfill {
            open: vec![5 - team0.len(), 5 - team1.len()],
            teams: vec![team0, team1],
            opened_at: opened,
            held_roles: Vec::new(),
            parties: Vec::new(),
            chosen: Default::default(),
        };
        let now = 60_000;
        let entries: Vec<Entry> = pool
            .iter()
            .map(|&(rating, size, at)| Entry { size, ..Entry::solo(rating, at) })
            .collect();
        let placed = fill(&m, &b, &entries, now);
        let mut seats = b.open.clone();
        let mut seen = std::collections::HashSet::new();
        let average = b.average();
        for &(i, team) in &placed {
            prop_assert!(seen.insert(i), "placed twice");
            prop_assert!(seats[team] >= entries[i].size, "overfilled");
            seats[team] -= entries[i].size;
            let e = &entries[i];
            let reach = m.window.delta(now - opened).min(m.window.delta(now - e.enqueued_at));
            prop_assert!((e.rating - average.unwrap()).abs() <= reach);
        }
        // Whatever fits and is in both windows is taken while seats are open:
        // a ticket left out found no team with room for its whole party.
        if let Some(avg) = average {
            for (i, e) in entries.iter().enumerate() {
                let reach = m.window.delta(now - opened).min(m.window.delta(now - e.enqueued_at));
                if !seen.contains(&i) && (e.rating - avg).abs() <= reach {
                    prop_assert!(seats.iter().all(|&s| s < e.size), "{i} left out");
                }
            }
        }
    }
}

#[test]
fn a_filler_must_list_the_map_the_match_is_played_on() {
    let mut m = five();
    m.rules = five_ruled(
        r#"[{ kind = "intersect", attribute = "maps", relax = [{ after = "30s", off = true }] }]"#,
    )
    .rules;
    // The match's players all listed dust and harbor; it is played on dust.
    let rows = [
        maps(&["hal"], &["harbor"]),
        maps(&["dot"], &["canal", "dust"]),
        maps(&["ann", "bob", "cid"], &["dust", "harbor"]),
    ];
    let traits = Traits::new(&m.rules, &rows);
    let mut b = one_seat();
    b.chosen.insert("maps".into(), "dust".into());
    let entries = [Entry::solo(1500.0, 0), Entry::solo(1510.0, 0)];
    // hal shares harbor with the players, but the game is on dust.
    assert_eq!(fill_with(&m, &b, &entries, &traits, 1_000), vec![(1, 0)]);
    // dot far outside every window: hal alone.
    let only_hal = [Entry::solo(1500.0, 0), Entry::solo(3000.0, 0)];
    assert!(fill_with(&m, &b, &only_hal, &traits, 1_000).is_empty());
    // Once the rule is off (the backfill waited 30 s), anyone may take it.
    assert_eq!(fill_with(&m, &b, &only_hal, &traits, 31_000), vec![(0, 0)]);
    // Without a choice recorded, sharing a value is enough.
    assert_eq!(
        fill_with(&m, &one_seat(), &only_hal, &traits, 1_000),
        vec![(0, 0)]
    );
}
