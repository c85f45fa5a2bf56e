//! The engine's tests: examples, and properties over random pools.

use super::snapshot::{Packed, order_key, rating_of};
use super::walk::{FreeAbove, Upward};
use super::*;
use crate::{Modes, PartyRating, WindowPolicy};
use proptest::prelude::*;

fn mode(teams: usize, team_size: usize) -> Mode {
    Mode {
        name: "t".into(),
        teams,
        team_size,
        min_players: teams * team_size,
        start_below_max_after: 60_000,
        party_rating: PartyRating::Highest,
        window: WindowPolicy::default(),
        cross_region_after: 20_000,
        max_latency_ms: 150,
        max_party: team_size.min(5),
        overdue_after: 15_000,
        patience: 1.0,
        lifecycle: mm_domain::Lifecycle::default(),
        rating: mm_domain::RatingPolicy::ELO,
        rules: Vec::new(),
        give_up_after: None,
        closed: false,
        max_match_duration: None,
        cancel_offline_after: None,
        from_claims: Vec::new(),
        backfill: crate::BackfillPolicy::Off,
        backfill_ready_check_ms: None,
        backfill_ttl_ms: crate::mode::DEFAULT_BACKFILL_TTL,
        max_team_gap: None,
    }
}

#[test]
fn ten_close_players_make_a_balanced_5v5() {
    let m = Modes::defaults().get("5v5").unwrap().clone();
    let entries: Vec<Entry> = (0..10)
        .map(|i| Entry::solo(1500.0 + i as f64 * 5.0, 0))
        .collect();
    let p = propose(&m, &entries, 1000);
    assert_eq!(p.len(), 1);
    let teams = p[0].by_team();
    let avg = |t: &Vec<usize>| t.iter().map(|&i| entries[i].rating).sum::<f64>() / 5.0;
    assert_eq!(teams.len(), 2);
    assert!((avg(&teams[0]) - avg(&teams[1])).abs() <= 5.0);
}

#[test]
fn rating_keys_keep_the_order() {
    let xs = [-5.0, -0.5, 0.0, 0.25, 1.0, 1500.0, 3000.0];
    for w in xs.windows(2) {
        assert!(order_key(w[0]) < order_key(w[1]), "{w:?}");
    }
    for x in xs.into_iter().chain([-0.0, f64::MIN, f64::MAX, 1e-300]) {
        assert_eq!(rating_of(order_key(x)).to_bits(), x.to_bits());
    }
}

#[test]
fn anchors_go_longest_wait_first_then_in_entry_order_however_far_apart() {
    let m = mode(2, 1);
    for spread in [1_000, 1 << 40] {
        let now = 1 << 41;
        let entries = [
            Entry::solo(1500.0, now - 20_000),
            Entry::solo(1400.0, now - spread),
            Entry::solo(1600.0, now - 20_000),
            Entry::solo(1450.0, now - 16_000),
            Entry::solo(1550.0, now - 10_000),
        ];
        let none = Traits::none();
        let pool = Snapshot::new(&m, &entries, &none, now, super::Parts::Find(0)).unwrap();
        let order: Vec<u32> = pool
            .anchors(15_000)
            .iter()
            .map(|&(_, p)| pool.at[p as usize].order)
            .collect();
        // A ticket that waited 1 s is not overdue; one that waited 2^40 ms is
        // the longest waiting and takes the far slower path.
        let expected: &[u32] = if spread > 20_000 {
            &[1, 0, 2, 3]
        } else {
            &[0, 2, 3]
        };
        assert_eq!(order, expected, "spread {spread}");
    }
}

#[test]
fn size_and_wait_pack_when_they_fit() {
    let now = 1 << 40;
    let e = |size, enqueued_at| Entry {
        rating: 1500.0,
        size,
        enqueued_at,
        eligible_at: 0,
    };
    assert_eq!(
        Packed::open(Packed::of(&e(5, now - 1234), now)),
        Some((5, 1234))
    );
    assert_eq!(Packed::open(Packed::of(&e(1, now), now)), Some((1, 0)));
    // Too long a wait, too big a party, or queued after now: looked up instead.
    assert_eq!(Packed::of(&e(1, 0), now), Packed::NONE);
    assert_eq!(Packed::of(&e(16, now), now), Packed::NONE);
    assert_eq!(Packed::of(&e(1, now + 1), now), Packed::NONE);
}

#[test]
fn far_apart_players_wait_until_their_windows_meet() {
    let m = mode(2, 1);
    let entries = [Entry::solo(1500.0, 0), Entry::solo(1700.0, 0)];
    assert!(propose(&m, &entries, 0).is_empty());
    assert_eq!(propose(&m, &entries, 15_000).len(), 1);
}

#[test]
fn the_longest_waiting_ticket_is_served_first() {
    let m = mode(2, 1);
    // 1500 waited longest; 1510 and 1490 are both close, 1490 is as close and
    // was there first among equals.
    let entries = [
        Entry::solo(1510.0, 5_000),
        Entry::solo(1500.0, 0),
        Entry::solo(1490.0, 5_000),
    ];
    let p = propose(&m, &entries, 6_000);
    assert_eq!(p.len(), 1);
    assert!(p[0].members.contains(&1));
}

#[test]
fn not_yet_eligible_entries_are_ignored() {
    let m = mode(2, 1);
    let mut b = Entry::solo(1500.0, 0);
    b.eligible_at = 20_000;
    let entries = [Entry::solo(1500.0, 0), b];
    assert!(propose(&m, &entries, 10_000).is_empty());
    assert_eq!(propose(&m, &entries, 20_000).len(), 1);
}

#[test]
fn battle_royale_starts_below_full_only_after_the_wait() {
    let m = Modes::defaults().get("br100").unwrap().clone();
    let entries: Vec<Entry> = (0..70).map(|i| Entry::solo(1500.0 + i as f64, 0)).collect();
    assert!(propose(&m, &entries, 59_000).is_empty());
    let p = propose(&m, &entries, 60_000);
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].members.len(), 70);
    let full: Vec<Entry> = (0..100)
        .map(|i| Entry::solo(1500.0 + i as f64 * 0.5, 0))
        .collect();
    assert_eq!(propose(&m, &full, 0)[0].members.len(), 100);
}

fn check(
    mode: &Mode,
    entries: &[Entry],
    now: Millis,
    props: &[Proposal],
) -> Result<(), TestCaseError> {
    let mut seen = std::collections::HashSet::new();
    for p in props {
        prop_assert_eq!(p.members.len(), p.teams.len());
        let players: usize = p.members.iter().map(|&i| entries[i].size).sum();
        prop_assert!(players >= mode.min_players && players <= mode.max_players());
        prop_assert_eq!(players % mode.team_size, 0);
        let n_teams = players / mode.team_size;
        let mut load = vec![0; n_teams];
        for (&i, &t) in p.members.iter().zip(&p.teams) {
            prop_assert!(seen.insert(i), "entry {} in two matches", i);
            prop_assert!(entries[i].eligible_at <= now);
            prop_assert!(t < n_teams);
            // A party is one entry, so it is whole and on one team by construction;
            // its size counts against that one team.
            load[t] += entries[i].size;
            let (lo, hi) = mode
                .window
                .window(entries[i].rating, now - entries[i].enqueued_at);
            for &j in &p.members {
                prop_assert!(
                    entries[j].rating >= lo && entries[j].rating <= hi,
                    "{} outside the window of {}",
                    entries[j].rating,
                    entries[i].rating
                );
            }
        }
        prop_assert!(
            load.iter().all(|&l| l == mode.team_size),
            "team loads {:?}",
            load
        );
        if players < mode.max_players() {
            let oldest = p
                .members
                .iter()
                .map(|&i| entries[i].enqueued_at)
                .min()
                .unwrap();
            prop_assert!(now - oldest >= mode.start_below_max_after);
        }
    }
    Ok(())
}

fn entries_strategy(max_party: usize) -> impl Strategy<Value = Vec<Entry>> {
    proptest::collection::vec(
        (
            1200.0f64..1800.0,
            1..=max_party,
            0u64..90_000,
            0u64..30_000,
            any::<bool>(),
        ),
        0..250,
    )
    .prop_map(|v| {
        v.into_iter()
            .map(|(r, s, wait, late, cross)| {
                let enqueued_at = 100_000 - wait;
                Entry {
                    rating: r,
                    size: if s > 1 && !(r as u64).is_multiple_of(5) {
                        1
                    } else {
                        s
                    },
                    enqueued_at,
                    eligible_at: if cross {
                        enqueued_at + late
                    } else {
                        enqueued_at
                    },
                }
            })
            .collect()
    })
}

proptest! {
    #[test]
    fn a_climb_up_the_ladder_meets_the_free_positions_in_order(
        taken in proptest::collection::vec(any::<bool>(), 1..80),
        pick in any::<proptest::sample::Index>(),
    ) {
        let m = mode(2, 5);
        let entries: Vec<Entry> =
            (0..taken.len()).map(|i| Entry::solo(1000.0 + i as f64, 0)).collect();
        let none = Traits::none();
        let mut pool = Snapshot::new(&m, &entries, &none, 0, super::Parts::Find(0)).unwrap();
        for (p, &t) in taken.iter().enumerate() {
            if t {
                pool.take_out(p);
            }
        }
        let free: Vec<usize> = (0..pool.n).filter(|&p| !pool.at[p].used).collect();
        prop_assume!(!free.is_empty());
        let a = free[pick.index(free.len())];
        // As the overdue search does: starts at the anchor, then each next free
        // position below it, each walk read from the one ladder.
        let mut ladder = Ladder::default();
        ladder.reset(a);
        let mut start = Some(a);
        while let Some(s) = start {
            let mut climb = ladder.climb();
            let mut plain = FreeAbove(s);
            loop {
                let (x, y) = (climb.next(&mut pool.free, pool.n), plain.next(&mut pool.free, pool.n));
                prop_assert_eq!(x, y, "from start {}", s);
                if x.is_none() {
                    break;
                }
            }
            start = pool.free.left_of(s.checked_sub(1));
            ladder.push_below(start);
        }
    }

    #[test]
    fn five_v_five_invariants(entries in entries_strategy(5)) {
        let m = Modes::defaults().get("5v5").unwrap().clone();
        let props = propose(&m, &entries, 100_000);
        check(&m, &entries, 100_000, &props)?;
    }

    #[test]
    fn battle_royale_duos_invariants(entries in entries_strategy(2)) {
        let mut m = mode(20, 2);
        m.min_players = 16;
        let props = propose(&m, &entries, 100_000);
        check(&m, &entries, 100_000, &props)?;
    }

    #[test]
    fn three_teams_of_three_invariants(entries in entries_strategy(3)) {
        let m = mode(3, 3);
        let props = propose(&m, &entries, 100_000);
        check(&m, &entries, 100_000, &props)?;
    }

    #[test]
    fn deterministic(entries in entries_strategy(5)) {
        let m = Modes::defaults().get("5v5").unwrap().clone();
        prop_assert_eq!(propose(&m, &entries, 100_000), propose(&m, &entries, 100_000));
    }
}

#[test]
fn max_team_gap_holds_an_uneven_match_until_the_wait_allows_it() {
    // A four-stack at 1540 and six solos at 1500..=1525: the best split puts the
    // stack with the lowest solo, 17 points above the other team.
    let mut entries = vec![Entry {
        rating: 1540.0,
        size: 4,
        enqueued_at: 0,
        eligible_at: 0,
    }];
    entries.extend((0..6).map(|i| Entry::solo(1500.0 + 5.0 * i as f64, 0)));
    let mut m = mode(2, 5);
    assert_eq!(propose(&m, &entries, 1_000).len(), 1, "no limit: it forms");
    m.max_team_gap = Some(WindowPolicy {
        initial: 5.0,
        per_second: 1.0,
        cap: 500.0,
    });
    // 6 points allowed after 1 s, 11 after 6 s: held.
    assert!(propose(&m, &entries, 1_000).is_empty());
    assert!(propose(&m, &entries, 6_000).is_empty());
    // 25 after 20 s (overdue by then): formed, with the gap it had.
    let p = propose(&m, &entries, 20_000);
    assert_eq!(p.len(), 1);
    let avg = |t: &Vec<usize>| {
        let (s, n) = t.iter().fold((0.0, 0), |(s, n), &i| {
            (
                s + entries[i].rating * entries[i].size as f64,
                n + entries[i].size,
            )
        });
        s / n as f64
    };
    let teams = p[0].by_team();
    assert!((avg(&teams[0]) - avg(&teams[1])).abs() <= 25.0);
}

/// The team averages of proposal `p` over `entries`, largest minus smallest.
fn gap_of(entries: &[Entry], p: &Proposal) -> f64 {
    let avgs: Vec<f64> = p
        .by_team()
        .iter()
        .map(|t| {
            let (s, n) = t.iter().fold((0.0, 0), |(s, n), &i| {
                (
                    s + entries[i].rating * entries[i].size as f64,
                    n + entries[i].size,
                )
            });
            s / n as f64
        })
        .collect();
    avgs.iter().copied().fold(f64::NEG_INFINITY, f64::max)
        - avgs.iter().copied().fold(f64::INFINITY, f64::min)
}

#[test]
fn a_match_fixed_by_its_parties_trades_solos_to_narrow_the_gap() {
    // Four-stacks at 1500 and 1540 and solos at 1510 and 1530: the tightest
    // match, and its only split puts the stacks apart, 28 points between the
    // teams' averages.
    let party = |rating| Entry {
        rating,
        size: 4,
        enqueued_at: 0,
        eligible_at: 0,
    };
    let mut entries = vec![
        party(1500.0),
        party(1540.0),
        Entry::solo(1510.0, 0),
        Entry::solo(1530.0, 0),
    ];
    let m = mode(2, 5);
    let alone = propose(&m, &entries, 10_000);
    assert_eq!(alone.len(), 1);
    assert!((gap_of(&entries, &alone[0]) - 28.0).abs() < 1e-9);
    // Two more solos in everyone's window (150 points after 10 s), far enough
    // out that the tightest match does not take them: traded in, the teams
    // come within 10 points, and the match stays inside every window.
    entries.push(Entry::solo(1410.0, 0));
    entries.push(Entry::solo(1630.0, 0));
    let p = propose(&m, &entries, 10_000);
    assert_eq!(p.len(), 1);
    assert!(gap_of(&entries, &p[0]) <= 10.0, "{p:?}");
    assert!(p[0].members.contains(&0) && p[0].members.contains(&1));
    let ratings: Vec<f64> = p[0].members.iter().map(|&i| entries[i].rating).collect();
    let spread = ratings.iter().copied().fold(f64::NEG_INFINITY, f64::max)
        - ratings.iter().copied().fold(f64::INFINITY, f64::min);
    assert!(spread <= 150.0);
}

#[test]
fn a_trade_never_takes_out_the_longest_waiting_member() {
    // The match of the test above, every window wide (18 s of wait): moving the
    // solo at 1510 out for the one at 1410 or the solo at 1530 out for the one
    // at 1630 would each narrow the gap as much, but the solo at 1510 has waited
    // longest.
    let at = |rating, size, enqueued_at| Entry {
        rating,
        size,
        enqueued_at,
        eligible_at: enqueued_at,
    };
    let entries = vec![
        at(1500.0, 4, 2_000),
        at(1540.0, 4, 2_000),
        at(1510.0, 1, 0),
        at(1530.0, 1, 2_000),
        at(1410.0, 1, 2_000),
        at(1630.0, 1, 2_000),
    ];
    let mut m = mode(2, 5);
    m.overdue_after = 60_000;
    let p = propose(&m, &entries, 20_000);
    assert_eq!(p.len(), 1);
    assert!(p[0].members.contains(&2), "{p:?}");
    assert!(!p[0].members.contains(&3), "{p:?}");
    assert!(gap_of(&entries, &p[0]) <= 10.0, "{p:?}");
}
