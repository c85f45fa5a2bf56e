//! One worker cycle with each formation: ours claims at least three full matches'
//! worth per poll, seed 000's baseline exactly its batch, and both commit only
//! matches that fit the mode and every member's window. An idle worker is woken
//! by new tickets long before its next poll, and without wake-ups it is not.

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
        wake_ups: true,
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

/// A worker idle long enough that its pause has grown past 5 s (5, 10, ... ms,
/// doubling: the pause from 5.1 s to 10.2 s), then two tickets that match: are
/// they matched within 3 s? Tokio's clock is paused (it jumps when every task
/// waits), so the answer depends on the wake-up alone, not on the machine's speed.
async fn matched_soon_after_an_idle_spell(wake_ups: bool) -> bool {
    let store: std::sync::Arc<dyn Store> = std::sync::Arc::new(MemoryStore::new());
    let mut cfg = config(Formation::Engine, 10);
    cfg.poll = Duration::from_secs(3600);
    cfg.wake_ups = wake_ups;
    let shutdown = tokio_util::sync::CancellationToken::new();
    let worker = tokio::spawn(mm_server::worker::run(store.clone(), cfg, shutdown.clone()));
    tokio::time::sleep(Duration::from_secs(6)).await;
    let tickets: Vec<Ticket> = (0..2)
        .map(|i| {
            Ticket::solo(
                TicketId::new(format!("late-{i}")).unwrap(),
                PlayerId::new(format!("late-{i}")).unwrap(),
                "ffa",
                "eu",
                1500.0,
                now_ms(),
            )
        })
        .collect();
    for t in &tickets {
        store.enqueue(t).await.unwrap();
    }
    let mut matched = false;
    for _ in 0..30 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let view = store
            .ticket(&tickets[0].owner, &tickets[0].id)
            .await
            .unwrap();
        if view.is_some_and(|v| v.match_id.is_some()) {
            matched = true;
            break;
        }
    }
    shutdown.cancel();
    worker.await.unwrap();
    matched
}

#[tokio::test(start_paused = true)]
async fn a_new_ticket_wakes_an_idle_worker() {
    assert!(matched_soon_after_an_idle_spell(true).await);
}

#[tokio::test(start_paused = true)]
async fn without_wake_ups_an_idle_worker_waits_for_its_poll() {
    assert!(!matched_soon_after_an_idle_spell(false).await);
}
