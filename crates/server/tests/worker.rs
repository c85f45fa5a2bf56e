//! One worker cycle with each formation: ours claims at least three full matches'
//! worth per poll, seed 000's baseline exactly its batch, and both commit only
//! matches that fit the mode and every member's window.

use mm_domain::{PlayerId, Pool, Ticket, TicketId, now_ms};
use mm_engine::{Modes, WindowPolicy};
use mm_server::worker::{Formation, WorkerConfig, WorkerStats, cycle};
use mm_store::{MemoryStore, Store};
use std::sync::atomic::Ordering;
use std::time::Duration;

const MODE: &str = r#"
[modes.ffa]
teams = 8
team_size = 1
min_players = 2
start_below_max_after = "0s"
ready_check = false
placement = "none"
"#;

fn config(formation: Formation, batch_size: usize) -> WorkerConfig {
    let modes = Modes::load(Some(MODE), WindowPolicy::default()).unwrap();
    let ffa = modes.get("ffa").unwrap().clone();
    WorkerConfig {
        id: "w".into(),
        pools: vec![Pool::new("ffa", "eu")],
        pool_size: 1,
        batch_size,
        lease: Duration::from_secs(30),
        heartbeat: Duration::from_secs(2),
        poll: Duration::from_millis(100),
        modes: Modes::of([ffa]).unwrap(),
        formation,
    }
}

/// 60 solo tickets: six clusters of ten, 1,000 rating apart (no window spans two).
async fn seeded() -> MemoryStore {
    let store = MemoryStore::new();
    let now = now_ms();
    for i in 0..60 {
        let t = Ticket::solo(
            TicketId::new(format!("t-{i}")).unwrap(),
            PlayerId::new(format!("p-{i}")).unwrap(),
            "ffa",
            "eu",
            (i % 6) as f64 * 1000.0 + (i / 6) as f64,
            now,
        );
        store.enqueue(&t).await.unwrap();
    }
    store
}

async fn one_cycle(formation: Formation, batch: usize) -> (u64, Vec<mm_domain::Match>) {
    let store = seeded().await;
    let cfg = config(formation, batch);
    let stats = WorkerStats::default();
    let formed = cycle(&store, &cfg, &stats, &cfg.pools[0]).await.unwrap();
    (stats.claimed.load(Ordering::Relaxed), formed.matches)
}

fn check(matches: &[mm_domain::Match]) {
    assert!(!matches.is_empty());
    for m in matches {
        let n = m.player_count();
        assert!((2..=8).contains(&n), "{n} players");
        // The window at time zero is +-50: nobody more than 50 from anyone.
        assert!(m.rating_spread() <= 50.0, "spread {}", m.rating_spread());
        let mut teams: Vec<usize> = m.tickets.iter().map(|t| t.team).collect();
        teams.sort_unstable();
        teams.dedup();
        assert_eq!(teams.len(), n, "one player per team");
    }
}

#[tokio::test]
async fn seed000_formation_claims_exactly_its_batch_and_takes_tight_runs() {
    let (claimed, matches) = one_cycle(Formation::Seed000, 10).await;
    assert_eq!(claimed, 10);
    check(&matches);
    assert!(matches.iter().map(|m| m.player_count()).sum::<usize>() <= 10);
}

#[tokio::test]
async fn engine_formation_claims_three_full_matches_worth() {
    let (claimed, matches) = one_cycle(Formation::Engine, 10).await;
    assert_eq!(claimed, 24);
    check(&matches);
}
