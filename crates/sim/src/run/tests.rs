//! The simulator's runs: rules, wake-ups, timing, parties, starvation and
//! backfill, on short streams.

use super::*;
use crate::backfill::Leaving;
use crate::{CLAIM, LEADER, SEED000, scenarios};

/// Our strategies never form a match that breaks a rule (hard, or relaxed
/// at the step its longest wait allowed) on a generated stream with
/// attributes; the seed-000 baseline, knowing no rules, breaks many.
#[test]
fn ours_never_break_a_rule() {
    let mut s = short("rules", 30);
    s.drain_s = 60;
    for engine in [LEADER, CLAIM] {
        let r = run(&s, engine);
        assert!(r.matches > 0);
        assert!(!r.rules.is_empty());
        for f in &r.rules {
            assert_eq!(f.broken(), 0, "{engine:?} broke {f:?}");
        }
    }
    let base = run(&s, SEED000);
    let broken: usize = base.rules.iter().map(|f| f.broken()).sum();
    assert!(broken > 0, "{:?}", base.rules);
}

fn short(name: &str, seconds: u64) -> Scenario {
    let mut s = scenarios::all(&Modes::defaults())
        .into_iter()
        .find(|s| s.name == name)
        .unwrap();
    s.stream.duration_s = seconds;
    s.drain_s = 120;
    s
}

/// Pairs of 1v1 players of equal rating in one region: the second of a pair
/// arrives 10 ms after the first, a pair every 10 s.
fn trickle() -> Scenario {
    let mut s = short("quiet", 0);
    s.drain_s = 5;
    s.stream.regions.truncate(1);
    s.trace = Some(
        (0..20u64)
            .flat_map(|i| [i * 10_000 + 3, i * 10_000 + 13])
            .map(|at_ms| Arrival {
                at_ms,
                ratings: vec![1500.0],
                modes: vec!["1v1".into()],
                latency_ms: vec![30],
                cancel_at_ms: None,
                attributes: Default::default(),
                player_attributes: Vec::new(),
            })
            .collect(),
    );
    s
}

fn without_wake_ups(engine: Engine) -> Engine {
    let timing = Timing {
        wake_ups: false,
        ..engine.timing()
    };
    match engine {
        Engine::Leader { .. } => Engine::Leader { timing },
        Engine::Claim {
            batch,
            workers,
            seed,
            ..
        } => Engine::Claim {
            batch,
            workers,
            seed,
            timing,
        },
        Engine::Seed000 { batch, workers, .. } => Engine::Seed000 {
            batch,
            workers,
            timing,
        },
    }
}

#[test]
fn a_wake_up_matches_a_pair_within_one_cycle_of_the_second_arrival() {
    let s = trickle();
    for engine in [LEADER, CLAIM] {
        let woken = run(&s, engine);
        assert_eq!(woken.matches, 20, "{engine:?} {woken:?}");
        // The second arrival wakes the matcher, whose cycle ends 1 ms later:
        // the first of the pair waited 11 ms, the second 1 ms.
        assert_eq!(woken.wait_max_s, 0.011, "{engine:?} {woken:?}");
        assert_eq!(woken.wait_p50_s, 0.001, "{engine:?} {woken:?}");
        // Polling alone, the pair waits for the next poll, up to 100 ms after
        // a quiet spell.
        let polled = run(&s, without_wake_ups(engine));
        assert_eq!(polled.matches, 20, "{engine:?} {polled:?}");
        assert!(polled.wait_max_s > 0.05, "{engine:?} {polled:?}");
        assert!(
            polled.wait_p50_s > woken.wait_p50_s,
            "{engine:?} {polled:?}"
        );
    }
    // Seed 000 sleeps 100 ms whenever a claim formed nothing.
    let seed = run(&s, SEED000);
    assert_eq!(seed.matches, 20, "{seed:?}");
    assert!(seed.wait_max_s > 0.05, "{seed:?}");
}

#[test]
fn a_longer_poll_without_wake_ups_waits_longer() {
    let s = trickle();
    let poll = |poll_ms| {
        run(
            &s,
            Engine::Leader {
                timing: Timing {
                    poll_ms,
                    wake_ups: false,
                    ..Timing::SERVICE
                },
            },
        )
    };
    // The pair waits for the first poll after the second arrives: 10 ms
    // between them, then up to one poll and one cycle.
    let (fast, slow) = (poll(20), poll(1000));
    assert!(fast.wait_max_s <= 0.032, "{fast:?}");
    assert!(slow.wait_max_s > 0.5, "{slow:?}");
}

#[test]
fn the_same_scenario_gives_the_same_figures() {
    let s = short("mixed", 30);
    assert_eq!(run(&s, LEADER), run(&s, LEADER));
    assert_eq!(run(&s, SEED000), run(&s, SEED000));
    assert_eq!(run(&s, CLAIM), run(&s, CLAIM));
}

#[test]
fn parties_stay_whole_and_nobody_plays_twice() {
    let s = short("mixed", 60);
    let ours = run(&s, LEADER);
    assert!(ours.matches > 100, "{ours:?}");
    assert!(ours.parties_matched > 50, "{ours:?}");
    assert_eq!(ours.parties_split, 0);
    assert_eq!(ours.double_booked, 0);
    // Claim batches keep the same rules on fewer tickets at a time.
    let claim = run(&s, CLAIM);
    assert!(claim.matches > 100, "{claim:?}");
    assert_eq!(claim.parties_split, 0);
    assert_eq!(claim.double_booked, 0);
    // The baseline knows no parties: it splits them.
    let base = run(&s, SEED000);
    assert!(base.parties_split > 0);
    assert_eq!(base.double_booked, 0);
}

#[test]
fn nobody_waits_without_bound_under_sustained_arrivals() {
    // Five minutes of normal 5v5 traffic: every group is matched, cancelled,
    // or still within its last few minutes of waiting at the end.
    let s = short("normal", 300);
    for engine in [LEADER, CLAIM] {
        let r = run(&s, engine);
        assert!(r.wait_max_s < 300.0, "{engine:?} {r:?}");
        assert!(r.never_matched * 100 < r.groups, "{engine:?} {r:?}");
    }
}

/// Normal's stream for two minutes, players leaving 5% a minute of 3-minute
/// matches.
fn leaving(backfill: bool) -> Scenario {
    let mut s = short("normal", 120);
    s.leaving = Some(Leaving {
        per_minute: 0.05,
        match_ms: 180_000,
        backfill,
    });
    s
}

#[test]
fn backfill_fills_open_seats_and_books_nobody_twice() {
    for engine in [LEADER, CLAIM] {
        let r = run(&leaving(true), engine);
        let b = r.backfill.clone().expect("seats opened");
        assert!(b.seats_opened > 50, "{engine:?} {b:?}");
        // Seats that open once arrivals stop (after 2 minutes, in 3-minute
        // matches) find nobody waiting: a third or more are filled.
        assert!(b.seats_filled * 3 > b.seats_opened, "{engine:?} {b:?}");
        assert!(b.seats_filled <= b.seats_opened, "{engine:?} {b:?}");
        assert_eq!(r.double_booked, 0, "{engine:?}");
        assert_eq!(r.parties_split, 0, "{engine:?}");
        // A filler is within its window of the match's average: the cap.
        assert!(b.distance_p95 <= 500.0, "{engine:?} {b:?}");
        assert_eq!(run(&leaving(true), engine), r, "deterministic");
    }
    // The baseline has no backfill.
    let base = run(&leaving(true), SEED000).backfill.expect("seats opened");
    assert_eq!(base.seats_filled, 0);
}

#[test]
fn without_backfill_leaving_changes_no_match() {
    // Open seats left open: the matches are those of the run where nobody
    // leaves.
    let plain = run(&short("normal", 120), LEADER);
    let mut off = run(&leaving(false), LEADER);
    assert!(off.backfill.take().is_some_and(|b| b.seats_filled == 0));
    assert_eq!(off, plain);
}

#[test]
fn backfill_under_rules_fills_seats() {
    // The rules scenario's attributes: fillers must share the match's build,
    // platform (before crossplay) and list the map it chose (the engine's fill_with;
    // see mm_engine::backfill's tests), and some are found.
    let mut s = short("rules", 60);
    s.leaving = Some(Leaving {
        per_minute: 0.2,
        match_ms: 120_000,
        backfill: true,
    });
    let r = run(&s, LEADER);
    let b = r.backfill.expect("seats opened");
    assert!(b.seats_filled > 0, "{b:?}");
    assert_eq!(r.double_booked, 0);
    for f in &r.rules {
        assert_eq!(f.broken(), 0, "{f:?}");
    }
}
