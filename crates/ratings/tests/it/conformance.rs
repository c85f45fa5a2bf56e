//! The rating storage contract, checked the same way against both
//! implementations. Each check gets an empty database of its own.

use mm_domain::{
    Decay, Lifecycle, Match, MatchId, MatchResult, MatchTicket, Outcome, PlayerId, RatingJob,
    RatingPolicy, Skill, TeamResult, TicketId,
};
use mm_ratings::{PgRatings, Policies, RatingStore, SqliteRatings};
use mm_testkit::PostgresServer;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

type Store = Arc<dyn RatingStore>;
type Make<'a> = &'a (dyn Fn() -> Pin<Box<dyn Future<Output = Store> + Send>> + Sync);

const DAY: u64 = 86_400_000;

fn pid(s: &str) -> PlayerId {
    PlayerId::new(s).unwrap()
}

fn policies() -> Policies {
    Policies::new([
        ("duel".to_string(), RatingPolicy::ELO),
        ("br".to_string(), RatingPolicy::WENG_LIN),
        (
            "decaying".to_string(),
            RatingPolicy {
                decay: Some(Decay {
                    after_ms: 10 * DAY,
                    per_day: 10.0,
                    floor: 1200.0,
                }),
                ..RatingPolicy::ELO
            },
        ),
    ])
}

/// A match of `mode` between teams of players with snapshot `skills`, won by team 0
/// (`None`: no result at all).
fn game(id: &str, mode: &str, teams: &[&[(&str, Skill)]], winner: Option<usize>) -> RatingJob {
    let tickets = teams
        .iter()
        .enumerate()
        .flat_map(|(team, members)| {
            members.iter().map(move |(p, s)| MatchTicket {
                ticket_id: TicketId::new(format!("t-{id}-{p}")).unwrap(),
                players: vec![pid(p)],
                rating: s.rating,
                enqueued_at: 0,
                team,
                skills: vec![*s],
                attributes: Default::default(),
                player_attributes: Vec::new(),
            })
        })
        .collect();
    let created_at = id.trim_start_matches("m-").parse().unwrap_or(0);
    RatingJob {
        matched: Match {
            id: MatchId::new(id).unwrap(),
            mode: mode.into(),
            region: "eu".into(),
            tickets,
            created_at,
            lifecycle: Lifecycle::default(),
            decided: Default::default(),
        },
        result: MatchResult {
            teams: winner
                .map(|team| TeamResult {
                    team,
                    outcome: Some(Outcome::Win),
                    placement: None,
                })
                .into_iter()
                .collect(),
            ..Default::default()
        },
    }
}

fn elo(r: f64, v: u64) -> Skill {
    Skill {
        rating: r,
        uncertainty: None,
        version: v,
    }
}

fn duel(id: &str, a: &str, b: &str) -> RatingJob {
    game(
        id,
        "duel",
        &[&[(a, elo(1500.0, 0))], &[(b, elo(1500.0, 0))]],
        Some(0),
    )
}

async fn apply(s: &Store, jobs: &[RatingJob], now: u64) -> Vec<mm_ratings::Applied> {
    let pending = s.begin(jobs, &policies(), now).await.unwrap();
    let applied = pending.applied().to_vec();
    pending.commit().await.unwrap();
    applied
}

async fn rating(s: &Store, mode: &str, p: &str) -> Option<Skill> {
    s.skills(mode, &[pid(p)]).await.unwrap()[0].map(|x| x.skill)
}

async fn applies_a_match_once(s: Store) {
    assert_eq!(rating(&s, "duel", "a").await, None);
    let j = duel("m-1", "a", "b");
    let first = apply(&s, std::slice::from_ref(&j), 1_000).await;
    assert!(first[0].now);
    assert_eq!(first[0].changes.len(), 2);
    assert_eq!(rating(&s, "duel", "a").await, Some(elo(1516.0, 1)));
    assert_eq!(rating(&s, "duel", "b").await, Some(elo(1484.0, 1)));
    // Delivered again: nothing changes, the earlier changes come back for the events.
    let again = apply(&s, std::slice::from_ref(&j), 2_000).await;
    assert!(!again[0].now);
    let mut a = first[0].changes.clone();
    let mut b = again[0].changes.clone();
    a.sort_by(|x, y| x.player.cmp(&y.player));
    b.sort_by(|x, y| x.player.cmp(&y.player));
    assert_eq!(a, b);
    assert_eq!(rating(&s, "duel", "a").await, Some(elo(1516.0, 1)));
    assert!(s.is_applied(&j.matched.id).await.unwrap());
    // Twice in one batch counts once.
    let twice = apply(&s, &[duel("m-2", "a", "b"), duel("m-2", "a", "b")], 3_000).await;
    assert_eq!(twice.len(), 1);
    assert_eq!(rating(&s, "duel", "a").await.unwrap().version, 2);
}

async fn a_batch_applies_a_players_matches_in_order(s: Store) {
    // c plays twice in one batch: the second match starts from the first's result.
    let jobs = [duel("m-20", "c", "e"), duel("m-10", "c", "d")];
    let applied = apply(&s, &jobs, 1_000).await;
    assert_eq!(applied.len(), 2);
    assert_eq!(applied[0].match_id.as_str(), "m-10");
    let c = rating(&s, "duel", "c").await.unwrap();
    assert_eq!(c.version, 2);
    // 1500 -> 1516 (even), then 1516 beats e at 1500 (snapshot 1500 vs 1500: +16).
    assert_eq!(c.rating, 1532.0);
    let hist = s.history(&pid("c"), "duel", 10).await.unwrap();
    assert_eq!(hist.len(), 2);
    assert_eq!(hist[0].match_id.as_str(), "m-20");
    assert_eq!((hist[0].old.version, hist[0].new.version), (1, 2));
    assert_eq!((hist[0].old.rating, hist[0].new.rating), (1516.0, 1532.0));
    assert_eq!(s.history(&pid("c"), "duel", 1).await.unwrap().len(), 1);
    let audit = s.audit("duel").await.unwrap();
    let versions: Vec<u64> = audit
        .iter()
        .filter(|(p, ..)| p.as_str() == "c")
        .map(|(_, v, _)| *v)
        .collect();
    assert_eq!(versions, [1, 2]);
}

async fn an_unscored_match_changes_nothing(s: Store) {
    let j = game(
        "m-1",
        "duel",
        &[&[("a", elo(1500.0, 0))], &[("b", elo(1500.0, 0))]],
        None,
    );
    let applied = apply(&s, std::slice::from_ref(&j), 1_000).await;
    assert!(applied[0].changes.is_empty());
    assert_eq!(
        applied[0].unscored.as_deref(),
        Some("the result ranks no team")
    );
    assert_eq!(rating(&s, "duel", "a").await, None);
    assert!(s.is_applied(&j.matched.id).await.unwrap());
    let again = apply(&s, &[j], 2_000).await;
    assert!(!again[0].now && again[0].unscored.is_some());
}

async fn a_rolled_back_batch_leaves_no_trace(s: Store) {
    let j = duel("m-1", "a", "b");
    let pending = s
        .begin(std::slice::from_ref(&j), &policies(), 1_000)
        .await
        .unwrap();
    assert_eq!(pending.applied().len(), 1);
    drop(pending);
    assert!(!s.is_applied(&j.matched.id).await.unwrap());
    assert_eq!(rating(&s, "duel", "a").await, None);
    let applied = apply(&s, &[j], 2_000).await;
    assert!(applied[0].now);
    assert_eq!(rating(&s, "duel", "a").await, Some(elo(1516.0, 1)));
}

async fn a_fresh_read_waits_for_a_batch_in_flight(s: Store) {
    apply(&s, &[duel("m-1", "a", "b")], 1_000).await;
    let pending = s
        .begin(&[duel("m-2", "a", "b")], &policies(), 2_000)
        .await
        .unwrap();
    let reader = {
        let s = s.clone();
        tokio::spawn(async move { s.skills_fresh("duel", &[pid("a"), pid("z")]).await })
    };
    // Give the reader time to reach the locked rows before the commit.
    tokio::time::sleep(Duration::from_millis(300)).await;
    pending.commit().await.unwrap();
    let got = reader.await.unwrap().unwrap();
    assert_eq!(
        got[0].unwrap().skill.version,
        2,
        "the fresh read saw the batch"
    );
    assert_eq!(got[1], None);
}

async fn concurrent_batches_lose_no_update(s: Store) {
    // Eight batches at once over four shared players: every version lands once.
    let players = ["p0", "p1", "p2", "p3"];
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let s = s.clone();
            let a = players[i % 4];
            let b = players[(i + 1) % 4];
            tokio::spawn(async move {
                let j = duel(&format!("m-{}", 100 + i), a, b);
                loop {
                    match s.begin(std::slice::from_ref(&j), &policies(), 1_000).await {
                        Ok(p) => match p.commit().await {
                            Ok(()) => break,
                            Err(e) => eprintln!("retrying after {e}"),
                        },
                        Err(e) => eprintln!("retrying after {e}"),
                    }
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let audit = s.audit("duel").await.unwrap();
    for p in players {
        let v: Vec<u64> = audit
            .iter()
            .filter(|(q, ..)| q.as_str() == p)
            .map(|(_, v, _)| *v)
            .collect();
        assert_eq!(v, [1, 2, 3, 4], "{p} played four matches");
        assert_eq!(rating(&s, "duel", p).await.unwrap().version, 4);
    }
}

async fn reads_for_the_api(s: Store) {
    apply(&s, &[duel("m-1", "a", "b"), duel("m-2", "c", "d")], 1_000).await;
    let br = game(
        "m-3",
        "br",
        &[
            &[("a", RatingPolicy::WENG_LIN.initial())],
            &[("c", RatingPolicy::WENG_LIN.initial())],
            &[("e", RatingPolicy::WENG_LIN.initial())],
        ],
        Some(0),
    );
    apply(&s, &[br], 2_000).await;
    let a = s.player(&pid("a")).await.unwrap();
    assert_eq!(
        a.iter().map(|r| r.mode.as_str()).collect::<Vec<_>>(),
        ["br", "duel"]
    );
    let br_a = a[0].stored;
    assert!(br_a.skill.rating > 1500.0);
    assert!(br_a.skill.uncertainty.unwrap() < 500.0);
    assert_eq!((br_a.games, br_a.last_played), (1, 2_000));
    assert!(s.player(&pid("nobody")).await.unwrap().is_empty());
    let board = s.leaderboard("duel", 0, 10).await.unwrap();
    let names: Vec<&str> = board.iter().map(|r| r.player.as_str()).collect();
    assert_eq!(names, ["a", "c", "b", "d"], "ties by player id");
    assert_eq!(board[0].rank, 1);
    assert_eq!(board[0].value, 1516.0);
    let page = s.leaderboard("duel", 2, 10).await.unwrap();
    assert_eq!(page[0].rank, 3);
    assert_eq!(page[0].player.as_str(), "b");
    assert_eq!(s.rank("duel", &pid("b")).await.unwrap(), Some(3));
    assert_eq!(s.rank("duel", &pid("nobody")).await.unwrap(), None);
    let mut versions = s.versions().await.unwrap();
    versions.sort();
    assert_eq!(versions.len(), 7, "{versions:?}");
    assert!(versions.contains(&(pid("a"), "br".to_string(), 1)));
    assert!(versions.contains(&(pid("d"), "duel".to_string(), 1)));
}

async fn decay_lowers_idle_players_idempotently(s: Store) {
    let j = game(
        "m-1",
        "decaying",
        &[&[("a", elo(1500.0, 0))], &[("b", elo(1500.0, 0))]],
        Some(0),
    );
    apply(&s, &[j], 0).await;
    let policy = policies().get("decaying");
    assert_eq!(s.decay("decaying", &policy, 5 * DAY).await.unwrap(), 0);
    // 15 days idle: 5 days past the period, 50 points lost.
    let now = 15 * DAY;
    assert_eq!(s.decay("decaying", &policy, now).await.unwrap(), 2);
    assert_eq!(s.decay("decaying", &policy, now).await.unwrap(), 0);
    let board = s.leaderboard("decaying", 0, 10).await.unwrap();
    assert_eq!(board[0].value, 1466.0);
    assert_eq!(board[1].value, 1434.0);
    // The stored rating is what the last match left; decay is computed from it.
    assert_eq!(board[0].skill.rating, 1516.0);
    let later = 1000 * DAY;
    s.decay("decaying", &policy, later).await.unwrap();
    let board = s.leaderboard("decaying", 0, 10).await.unwrap();
    assert!(board.iter().all(|r| r.value == 1200.0));
    // The next match starts from the decayed rating.
    let next = game(
        "m-2",
        "decaying",
        &[&[("a", elo(1200.0, 1))], &[("b", elo(1200.0, 1))]],
        Some(0),
    );
    apply(&s, &[next], later).await;
    assert_eq!(rating(&s, "decaying", "a").await, Some(elo(1216.0, 2)));
}

/// Every check, each on a store of its own from `make`.
async fn suite(make: Make<'_>) {
    applies_a_match_once(make().await).await;
    a_batch_applies_a_players_matches_in_order(make().await).await;
    an_unscored_match_changes_nothing(make().await).await;
    a_rolled_back_batch_leaves_no_trace(make().await).await;
    a_fresh_read_waits_for_a_batch_in_flight(make().await).await;
    concurrent_batches_lose_no_update(make().await).await;
    reads_for_the_api(make().await).await;
    decay_lowers_idle_players_idempotently(make().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_conformance() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let n = Arc::new(std::sync::atomic::AtomicU32::new(0));
    suite(&move || {
        let dir = dir.clone();
        let i = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Box::pin(async move {
            let url = format!("sqlite://{}", dir.path().join(format!("r{i}.db")).display());
            Arc::new(SqliteRatings::open(&url).await.unwrap()) as Store
        })
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_conformance() {
    let pg = Arc::new(PostgresServer::start());
    let server = pg.clone();
    suite(&move || {
        let url = server.create_database("conf");
        Box::pin(async move { Arc::new(PgRatings::connect(&url, 8).await.unwrap()) as Store })
    })
    .await;
}

#[tokio::test]
async fn sqlite_ratings_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("ratings.db").display());
    {
        let s: Store = Arc::new(SqliteRatings::open(&url).await.unwrap());
        apply(&s, &[duel("m-1", "a", "b")], 1_000).await;
    }
    let s: Store = Arc::new(SqliteRatings::open(&url).await.unwrap());
    assert_eq!(rating(&s, "duel", "a").await, Some(elo(1516.0, 1)));
}

#[tokio::test]
async fn open_picks_the_store_from_the_url() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("x.db").display());
    assert!(mm_ratings::open(&url).await.is_ok());
    let err = match mm_ratings::open("mysql://x").await {
        Ok(_) => panic!("accepted mysql"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("DATABASE_URL"), "{err}");
}

/// A PostgreSQL that takes TLS connections only, as managed ones often do:
/// the store connects with `sslmode=verify-full` against the server's CA (and
/// with `require`), and a connection that asks for no TLS is refused by the
/// server, so the first two did use it.
#[tokio::test]
async fn postgres_over_tls() {
    let pg = PostgresServer::start_tls();
    let url = pg.create_database("tls");
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, mm_testkit::keys::tls::CA).unwrap();
    for query in [
        format!("sslmode=verify-full&sslrootcert={}", ca.display()),
        "sslmode=require".to_string(),
    ] {
        let store = PgRatings::connect(&format!("{url}?{query}"), 2)
            .await
            .unwrap_or_else(|e| panic!("{query}: {e}"));
        let got = store.player(&pid("ann")).await.unwrap();
        assert!(got.is_empty(), "{query}");
    }
    let refused = PgRatings::connect(&format!("{url}?sslmode=disable"), 2).await;
    let why = refused
        .err()
        .expect("a plain connection was let in")
        .to_string();
    assert!(why.contains("no encryption"), "{why}");
    // The test CA is no root the system trusts: verifying without it fails.
    let untrusted = PgRatings::connect(&format!("{url}?sslmode=verify-full"), 2).await;
    let why = untrusted
        .err()
        .expect("an unknown CA was trusted")
        .to_string();
    assert!(why.to_lowercase().contains("certificate"), "{why}");
}
