//! Ratings through real processes: results reported by the example game server
//! become ratings exactly once; a player's next ticket carries the new rating as
//! soon as `rating.updated` arrives (read-your-writes), on `serve` (SQLite) and on
//! separate processes over Redis and PostgreSQL; a rating consumer SIGKILLed
//! mid-batch is finished by another; PostgreSQL stopped in the middle of a stream
//! of results loses nothing and applies nothing twice; the rating endpoints and
//! their bad input.

use crate::{BIN, Deployment, Socket, fast_env};
use mm_testkit::{PostgresServer, Proc};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::time::{Duration, Instant};

/// Ratings from the rating service only.
const NO_CLIENT_RATINGS: (&str, &str) = ("ALLOW_CLIENT_RATINGS", "false");

/// The example game server hosting `rush` (two players, no ready check), each
/// match lasting `duration`.
async fn game_server(d: &Deployment, name: &str, duration: &str) -> Proc {
    let mut cmd = Command::new(BIN);
    cmd.arg("example-game-server")
        .env("SERVER_MANAGER_URL", &d.grpc)
        .env("GAME_SERVER_ID", name)
        .env("GAME_SERVER_REGION", "eu")
        .env("GAME_SERVER_MODES", "rush")
        .env("GAME_SERVER_CAPACITY", "20")
        .env("MATCH_DURATION", duration);
    let p = Proc::spawn(name, cmd, d.logs.path());
    let deadline = Instant::now() + Duration::from_secs(20);
    while !p.log().contains("\"registered\"") {
        assert!(
            Instant::now() < deadline,
            "game server never registered:\n{}",
            p.log()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    p
}

/// Queues `player` for rush with no rating of its own; retries while the rating
/// database is unavailable (503). Returns the ticket.
async fn queue(d: &Deployment, player: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, t) = d
            .client(player)
            .send(
                Method::POST,
                "/v1/tickets",
                Some(json!({"mode": "rush", "players": [player], "regions": ["eu"]})),
            )
            .await;
        if status == StatusCode::CREATED {
            return t;
        }
        assert!(
            status == StatusCode::SERVICE_UNAVAILABLE && Instant::now() < deadline,
            "{player}: {status} {t}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Events of one player's socket, keeping every `rating.updated` by match id
/// (it may come before or after the match's other events).
struct Events {
    socket: Socket,
    rated: BTreeMap<String, Value>,
}

impl Events {
    async fn open(d: &Deployment, player: &str) -> Self {
        Self {
            socket: d.socket(player).await,
            rated: BTreeMap::new(),
        }
    }

    /// The next event of type `kind`, remembering rating updates met on the way.
    async fn until(&mut self, kind: &str, timeout: Duration) -> Value {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline
                .checked_duration_since(Instant::now())
                .unwrap_or_else(|| panic!("no {kind} event within {timeout:?}"));
            let e = self
                .socket
                .next_event(left)
                .await
                .unwrap_or_else(|| panic!("no {kind} event within {timeout:?}"));
            if e["type"] == "rating.updated" {
                let id = e["match_id"].as_str().unwrap_or_default().to_string();
                self.rated.insert(id, e.clone());
            }
            if e["type"] == kind {
                return e;
            }
        }
    }

    /// The player's `rating.updated` for match `id`.
    async fn updated(&mut self, id: &str) -> Value {
        while !self.rated.contains_key(id) {
            self.until("rating.updated", Duration::from_secs(30)).await;
        }
        self.rated[id].clone()
    }
}

/// One rush match between `a` and `b` played to its result; returns the match id
/// and the `rating.updated` each got.
async fn play(d: &Deployment, a: &str, b: &str) -> (String, Value, Value) {
    let (mut wa, mut wb) = (Events::open(d, a).await, Events::open(d, b).await);
    queue(d, a).await;
    queue(d, b).await;
    let done = wa.until("match.completed", Duration::from_secs(20)).await;
    let id = done["match_id"].as_str().unwrap().to_string();
    let ua = wa.updated(&id).await;
    let ub = wb.updated(&id).await;
    (id, ua, ub)
}

/// The whole loop, twice: a result becomes a rating (Elo, seed 004: +-16 from
/// 1500), the event says so, and right after it the player's next ticket carries
/// the new rating (the ingress had cached the old one).
async fn results_become_ratings(d: &Deployment) {
    let _gs = game_server(d, "gs-rate", "200ms").await;
    let (id, ua, ub) = play(d, "ra", "rb").await;
    assert_eq!(ua["mode"], "rush");
    assert_eq!(
        (ua["old"]["version"].as_u64(), ua["new"]["version"].as_u64()),
        (Some(0), Some(1))
    );
    assert_eq!(ua["old"]["rating"], 1500.0);
    let (na, nb) = (
        ua["new"]["rating"].as_f64().unwrap(),
        ub["new"]["rating"].as_f64().unwrap(),
    );
    let mut pair = [na, nb];
    pair.sort_by(f64::total_cmp);
    assert!(
        pair == [1484.0, 1516.0] || pair == [1500.0, 1500.0],
        "{ua} {ub}"
    );
    // Read-your-writes: the very next ticket is built on the new rating.
    let t = queue(d, "ra").await;
    assert_eq!(t["rating"].as_f64(), Some(na), "{t}");
    let (status, _) = d
        .client("ra")
        .delete(&format!("/v1/tickets/{}", t["id"].as_str().unwrap()))
        .await;
    assert_eq!(status, StatusCode::OK);
    // The player's view.
    let (status, r) = d.client("ra").get("/v1/players/me/ratings").await;
    assert_eq!(status, StatusCode::OK, "{r}");
    let rush = r["ratings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["mode"] == "rush")
        .unwrap()
        .clone();
    assert_eq!(rush["rating"].as_f64(), Some(na), "{r}");
    assert_eq!(
        (rush["version"].as_u64(), rush["games"].as_u64()),
        (Some(1), Some(1)),
        "{r}"
    );
    assert_eq!(rush["model"], "elo");
    assert!(rush["last_played"].as_u64().is_some());
    let (_, h) = d
        .client("ra")
        .get("/v1/players/ra/ratings/history?mode=rush")
        .await;
    assert_eq!(h["history"][0]["match_id"], id.as_str(), "{h}");
    assert_eq!(h["history"][0]["new"]["rating"].as_f64(), Some(na), "{h}");
    let (_, board) = d.client("rb").get("/v1/leaderboards/rush?around=me").await;
    let names: BTreeSet<&str> = board["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["player_id"].as_str().unwrap())
        .collect();
    assert!(names.contains("ra") && names.contains("rb"), "{board}");
    assert!(board["player_rank"].as_u64().is_some(), "{board}");
    assert!(board["max_age_ms"].as_u64().unwrap() > 0, "{board}");
    // A second match starts from the first's result.
    let (_, ua2, _) = play(d, "ra", "rb").await;
    assert_eq!(ua2["old"]["rating"].as_f64(), Some(na), "{ua2}");
    assert_eq!(ua2["new"]["version"].as_u64(), Some(2), "{ua2}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_become_ratings_on_serve() {
    let d = Deployment::embedded_with(&[NO_CLIENT_RATINGS]).await;
    results_become_ratings(&d).await;
    // The consumer counts what it applied and how long results waited.
    let (_, text) = crate::metrics::scrape(&d.addr).await;
    let total = |prefix: &str| -> f64 {
        text.lines()
            .filter(|l| l.starts_with(prefix))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    };
    assert!(total("matchmaker_rating_updates_total{") >= 2.0, "{text}");
    assert!(
        total("matchmaker_rating_lag_seconds_count") >= 1.0,
        "{text}"
    );
    assert!(
        total("matchmaker_rating_batch_duration_seconds_count") >= 1.0,
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_become_ratings_on_redis_and_postgres() {
    let pg = PostgresServer::start();
    let url = pg.create_database("e2e");
    let d = Deployment::redis_processes_env(&[
        ("*", "DATABASE_URL", &url),
        ("*", NO_CLIENT_RATINGS.0, NO_CLIENT_RATINGS.1),
    ])
    .await;
    results_become_ratings(&d).await;
}

/// `serve` keeps its ratings in a SQLite file: they survive a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ratings_survive_a_restart_of_serve() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path().to_str().unwrap();
    let version = {
        let d = Deployment::embedded_with(&[NO_CLIENT_RATINGS, ("DATA_DIR", dir)]).await;
        let _gs = game_server(&d, "gs-restart", "100ms").await;
        let (_, ua, _) = play(&d, "sa", "sb").await;
        ua["new"]["rating"].clone()
    };
    let d = Deployment::embedded_with(&[NO_CLIENT_RATINGS, ("DATA_DIR", dir)]).await;
    let t = queue(&d, "sa").await;
    assert_eq!(t["rating"], version, "{t}");
}

/// A rating consumer SIGKILLed mid-batch (`begin`: rows locked, not committed;
/// `commit`: committed, not acknowledged) leaves the batch to another, which
/// applies it exactly once.
async fn consumer_killed_at(step: &str) {
    let pg = PostgresServer::start();
    let url = pg.create_database("crash");
    let failpoint = format!("ratings-pause-after-{step}");
    let mut d = Deployment::redis_processes_env(&[
        ("*", "DATABASE_URL", &url),
        ("*", NO_CLIENT_RATINGS.0, NO_CLIENT_RATINGS.1),
        ("rating-service", "MATCHMAKER_FAILPOINT", &failpoint),
    ])
    .await;
    let _gs = game_server(&d, "gs-crash", "100ms").await;
    let (mut wa, mut wb) = (Events::open(&d, "ka").await, Events::open(&d, "kb").await);
    queue(&d, "ka").await;
    queue(&d, "kb").await;
    let done = wa.until("match.completed", Duration::from_secs(20)).await;
    let id = done["match_id"].as_str().unwrap().to_string();
    let consumer = d
        .procs
        .iter_mut()
        .find(|p| p.log().contains("rating consumer started"))
        .expect("the rating service");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !consumer.log().contains("rating consumer paused for good") {
        assert!(
            Instant::now() < deadline,
            "failpoint not reached:\n{}",
            consumer.log()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    consumer.kill();
    // Another rating service takes the batch over once the lease runs out.
    let mut cmd = Command::new(BIN);
    cmd.arg("rating-service")
        .env("REDIS_URL", d.redis.as_ref().unwrap().url())
        .env("DATABASE_URL", &url);
    fast_env(&mut cmd);
    d.procs
        .push(Proc::spawn("rating-service-2", cmd, d.logs.path()));
    let ua = wa.updated(&id).await;
    let ub = wb.updated(&id).await;
    assert_eq!(ua["new"]["version"].as_u64(), Some(1), "{ua}");
    assert_eq!(ub["new"]["version"].as_u64(), Some(1), "{ub}");
    // Exactly once: one history row per player, the stored version is 1.
    for p in ["ka", "kb"] {
        let (_, h) = d
            .client(p)
            .get("/v1/players/me/ratings/history?mode=rush")
            .await;
        assert_eq!(h["history"].as_array().map(Vec::len), Some(1), "{h}");
        let (_, r) = d.client(p).get("/v1/players/me/ratings").await;
        let rush = &r["ratings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["mode"] == "rush")
            .unwrap()
            .clone();
        assert_eq!(rush["version"].as_u64(), Some(1), "{r}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consumer_killed_before_its_commit_is_replaced() {
    consumer_killed_at("begin").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consumer_killed_after_its_commit_is_replaced_without_a_second_apply() {
    consumer_killed_at("commit").await;
}

/// PostgreSQL stops in the middle of a stream of results and starts again: every
/// result is applied, none twice. Audited per player: the versions in the
/// rating history run 1..n without a gap, n is the number of matches the player
/// completed, and every completed match is in the history of both its players.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_down_mid_stream_loses_nothing_and_applies_nothing_twice() {
    let pg = std::sync::Arc::new(PostgresServer::start());
    let url = pg.create_database("outage");
    let d = Deployment::redis_processes_env(&[
        ("*", "DATABASE_URL", &url),
        ("*", NO_CLIENT_RATINGS.0, NO_CLIENT_RATINGS.1),
        ("*", "RATING_BATCH", "4"),
    ])
    .await;
    // Games last a second: long enough for the database to be stopped while
    // the third round plays, however busy the machine.
    let _gs = game_server(&d, "gs-outage", "1s").await;
    const PLAYERS: usize = 8;
    const ROUNDS: usize = 6;
    let players: Vec<String> = (0..PLAYERS).map(|i| format!("o{i}")).collect();
    let mut sockets = Vec::new();
    for p in &players {
        sockets.push(Events::open(&d, p).await);
    }
    // Each player plays ROUNDS matches back to back. Once the third round is
    // queued the database goes away (stopped before its games end): their
    // results come in while it is down, and it comes back a second after they
    // were seen waiting, while the next round queues on the last applied
    // ratings. (It used to be down for two seconds from when it was told to
    // stop: on a busy machine the round's results were applied before it
    // stopped, or after it came back.)
    let mut completed: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut outage = None;
    for round in 0..ROUNDS {
        for p in &players {
            queue(&d, p).await;
        }
        if round == 2 {
            let pg = pg.clone();
            tokio::task::spawn_blocking(move || pg.stop())
                .await
                .unwrap();
        }
        for (p, w) in players.iter().zip(sockets.iter_mut()) {
            // This round's match: events may come twice (a saga step that two
            // processes both finish announces twice), so skip ones already seen.
            let done = completed.entry(p.clone()).or_default();
            loop {
                let e = w.until("match.completed", Duration::from_secs(30)).await;
                if done.insert(e["match_id"].as_str().unwrap().to_string()) {
                    break;
                }
            }
        }
        if round == 2 {
            // The round's results were acknowledged while the database was down:
            // they wait in the store.
            assert!(
                pending_results(&d).await > 0,
                "no result waited for the database"
            );
            let pg = pg.clone();
            outage = Some(std::thread::spawn(move || {
                std::thread::sleep(Duration::from_secs(1));
                pg.restart();
            }));
        }
    }
    outage.unwrap().join().unwrap();
    // Every result reaches its players as rating.updated, eventually.
    let mut seen: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (p, w) in players.iter().zip(sockets.iter_mut()) {
        for id in &completed[p] {
            w.updated(id).await;
        }
        seen.insert(p.clone(), w.rated.keys().cloned().collect());
    }
    assert_eq!(seen, completed, "every completed match was rated");
    // Acknowledged too (the consumer acknowledges right after publishing).
    let deadline = Instant::now() + Duration::from_secs(10);
    while pending_results(&d).await > 0 {
        assert!(Instant::now() < deadline, "results were never acknowledged");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for p in &players {
        let (status, h) = d
            .client(p)
            .get(&format!(
                "/v1/players/me/ratings/history?mode=rush&limit={}",
                ROUNDS + 5
            ))
            .await;
        assert_eq!(status, StatusCode::OK, "{h}");
        let rows = h["history"].as_array().unwrap();
        let versions: Vec<u64> = rows
            .iter()
            .rev()
            .map(|r| r["new"]["version"].as_u64().unwrap())
            .collect();
        let expected: Vec<u64> = (1..=completed[p].len() as u64).collect();
        assert_eq!(versions, expected, "{p}: {h}");
        let ids: BTreeSet<String> = rows
            .iter()
            .map(|r| r["match_id"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(ids, completed[p], "{p}");
        // Each step starts where the previous one ended.
        for pair in rows.windows(2) {
            assert_eq!(pair[0]["old"], pair[1]["new"], "{p}: {h}");
        }
    }
}

/// Results of the rush pool waiting for the rating service (held or not).
pub(crate) async fn pending_results(d: &Deployment) -> u64 {
    let client = redis::Client::open(d.redis.as_ref().unwrap().url()).unwrap();
    let mut c = client.get_multiplexed_async_connection().await.unwrap();
    redis::cmd("ZCARD")
        .arg(mm_store::keys::PoolKeys::new(&mm_domain::Pool::new("rush", "eu")).results_queue)
        .query_async(&mut c)
        .await
        .unwrap()
}

/// Every rating endpoint tried without a token, as another player, and with bad
/// input; a client rating is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rating_endpoints_refuse_bad_callers_and_input() {
    let d = Deployment::embedded_with(&[NO_CLIENT_RATINGS]).await;
    let me = d.client("bi-a");
    for path in [
        "/v1/players/me/ratings",
        "/v1/players/me/ratings/history?mode=rush",
        "/v1/leaderboards/rush",
    ] {
        let anon = reqwest::get(format!("http://{}{path}", d.addr))
            .await
            .unwrap();
        assert_eq!(anon.status(), StatusCode::UNAUTHORIZED, "{path}");
        let body: Value = anon.json().await.unwrap();
        assert_eq!(body["error"]["code"], "unauthorized");
        let (status, body) = me.get(path).await;
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
    }
    for path in [
        "/v1/players/bi-b/ratings",
        "/v1/players/bi-b/ratings/history?mode=rush",
    ] {
        let (status, body) = me.get(path).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{path}: {body}");
    }
    for (path, code, status) in [
        (
            "/v1/players/me/ratings/history",
            "invalid_query",
            StatusCode::BAD_REQUEST,
        ),
        (
            "/v1/players/me/ratings/history?mode=nope",
            "unknown_mode",
            StatusCode::NOT_FOUND,
        ),
        (
            "/v1/players/me/ratings/history?mode=rush&limit=0",
            "invalid_query",
            StatusCode::BAD_REQUEST,
        ),
        (
            "/v1/players/me/ratings/history?mode=rush&limit=x",
            "invalid_query",
            StatusCode::BAD_REQUEST,
        ),
        (
            "/v1/leaderboards/nope",
            "unknown_mode",
            StatusCode::NOT_FOUND,
        ),
        (
            "/v1/leaderboards/rush?limit=1000",
            "invalid_query",
            StatusCode::BAD_REQUEST,
        ),
        (
            "/v1/leaderboards/rush?around=bi-b",
            "invalid_query",
            StatusCode::BAD_REQUEST,
        ),
        (
            "/v1/leaderboards/rush?colour=red",
            "invalid_query",
            StatusCode::BAD_REQUEST,
        ),
    ] {
        let (got, body) = me.get(path).await;
        assert_eq!(got, status, "{path}: {body}");
        assert_eq!(body["error"]["code"], code, "{path}: {body}");
    }
    // Never rated: every mode at its default, version 0.
    let (_, r) = me.get("/v1/players/me/ratings").await;
    let modes = r["ratings"].as_array().unwrap();
    assert!(
        modes.iter().all(|m| m["version"] == 0 && m["games"] == 0),
        "{r}"
    );
    let br = modes.iter().find(|m| m["mode"] == "br100").unwrap();
    assert_eq!(br["model"], "weng_lin", "{r}");
    assert!(br["uncertainty"].as_f64().is_some(), "{r}");
    // Ratings come from the rating service, not the client.
    for body in [
        json!({"mode": "rush", "players": ["bi-a"], "regions": ["eu"], "rating": 2900}),
        json!({"mode": "rush", "players": [{"id": "bi-a", "rating": 2900}], "regions": ["eu"]}),
    ] {
        let (status, e) = me.send(Method::POST, "/v1/tickets", Some(body)).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{e}");
        assert_eq!(e["error"]["code"], "rating_not_allowed", "{e}");
    }
    let t = queue(&d, "bi-a").await;
    assert_eq!(t["rating"], 1500.0, "{t}");
}

/// PostgreSQL down: what needs it answers `503 ratings_unavailable` with
/// `Retry-After` (after the pool's 5 s wait for a connection), the rest of the
/// API carries on, and it answers again once the database is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_down_answers_503_ratings_unavailable() {
    let pg = PostgresServer::start();
    let url = pg.create_database("down");
    let d = Deployment::embedded_with(&[("DATABASE_URL", &url), NO_CLIENT_RATINGS]).await;
    let me = d.client("pd-a");
    let (status, body) = me.get("/v1/players/me/ratings").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    pg.stop();
    let r = reqwest::Client::new()
        .get(format!("http://{}/v1/players/me/ratings", d.addr))
        .bearer_auth("pd-a")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(r.headers()["retry-after"], "1");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "ratings_unavailable", "{body}");
    // The store's side of the API still answers.
    let (status, _) = me.get("/v1/players/me/matches").await;
    assert_eq!(status, StatusCode::OK);
    pg.restart();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, _) = me.get("/v1/players/me/ratings").await;
        if status == StatusCode::OK {
            break;
        }
        assert!(Instant::now() < deadline, "ratings never came back");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
