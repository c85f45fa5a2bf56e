//! Retiring a mode (`closed = true`): a closed mode takes no new ticket (409
//! `mode_closed`), forms no match, and the tickets that waited in it when it
//! closed end `timed_out` with reason `mode_closed`, their players told; the
//! deployment's other modes go on. A mode taken out of the configuration with
//! tickets still in it, and a pool no worker serves, are warned of. A party
//! larger than its mode takes after a change is ended. Retiring a region
//! (`CLOSED_REGIONS`): it takes no new ticket (409 `region_closed` when the
//! ticket lists no open one), its waiting tickets leave it, those waiting in
//! no open region end `timed_out` (`region_closed`), the others are matched
//! in their open regions.

use crate::Deployment;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::time::Duration;

/// A 1v1 mode whose window keeps 1000 and 2000 apart while it is open.
const OPEN: &str = r#"
[modes.seasonal]
teams = 2
team_size = 1
ready_check = false
placement = "none"
window = { initial = 10, per_second = 1, cap = 20 }
"#;

/// The same mode closed, its window now wide enough to match them: only the
/// closing keeps them apart.
const CLOSED: &str = r#"
[modes.seasonal]
teams = 2
team_size = 1
ready_check = false
placement = "none"
window = { initial = 2000, per_second = 100, cap = 3000 }
closed = true
"#;

async fn create(d: &Deployment, player: &str, mode: &str, rating: f64) -> (StatusCode, Value) {
    let body = json!({"mode": mode, "players": [player], "regions": ["eu"], "rating": rating});
    d.client(player)
        .send(Method::POST, "/v1/tickets", Some(body))
        .await
}

/// The status of `player`'s ticket `id`.
async fn ticket(d: &Deployment, player: &str, id: &str) -> Value {
    let (s, v) = d.client(player).get(&format!("/v1/tickets/{id}")).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    v
}

/// The dashboard's figures now, from the operator plane at `addr`.
async fn dashboard(addr: &str) -> Value {
    reqwest::get(format!("http://{addr}/dashboard/snapshot"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// `field` of `pool` in a dashboard `snapshot`, if it shows the pool.
fn shown(snapshot: &Value, pool: &str, field: &str) -> Option<Value> {
    snapshot["pools"]
        .as_array()
        .unwrap_or_else(|| panic!("{snapshot}"))
        .iter()
        .find(|p| p["pool"] == pool)
        .map(|p| p[field].clone())
}

/// Waits until each of `tickets` (player, id) reads `timed_out` with `reason`,
/// never matched.
async fn ended(d: &Deployment, tickets: &[(&str, &str)], reason: &str) {
    for &(p, id) in tickets {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let v = ticket(d, p, id).await;
            if v["status"] == "timed_out" {
                assert_eq!(v["reason"], reason, "{v}");
                assert!(v["match_id"].is_null(), "{v}");
                break;
            }
            assert!(std::time::Instant::now() < deadline, "{p} still waits: {v}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_closed_mode_takes_no_ticket() {
    let modes = crate::shared_file("closed-modes", CLOSED);
    let d = Deployment::embedded_with(&[("MODES_FILE", &modes)]).await;
    let (s, v) = create(&d, "cl-ann", "seasonal", 1500.0).await;
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
    assert_eq!(v["error"]["code"], "mode_closed", "{v}");
    // The shipped modes are open as ever.
    let (s, v) = create(&d, "cl-ann", "1v1", 1500.0).await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    // Clients can tell from the queue figures.
    for (mode, closed) in [("seasonal", true), ("1v1", false)] {
        let (s, v) = d.client("cl-ann").get(&format!("/v1/queues/{mode}")).await;
        assert_eq!((s, &v["closed"]), (StatusCode::OK, &json!(closed)), "{v}");
    }
    // And operators, from the dashboard (on the API's port in dev mode).
    let snapshot = dashboard(&d.addr).await;
    for (pool, closed) in [("seasonal:eu", true), ("1v1:eu", false)] {
        let shown = shown(&snapshot, pool, "closed");
        assert_eq!(shown, Some(json!(closed)), "{pool}: {snapshot}");
    }
}

/// Processes restarted with the mode closed: the worker forms nothing in it,
/// the supervisor ends its waiting tickets, each player hears why.
#[tokio::test(flavor = "multi_thread")]
async fn closing_a_mode_ends_its_waiting_tickets() {
    let open = crate::shared_file("seasonal-open", OPEN);
    let closed = crate::shared_file("seasonal-closed", CLOSED);
    let mut d = Deployment::redis_processes_env(&[("*", "MODES_FILE", &open)]).await;
    let mut ws = d.socket("cl-low").await;
    let (s, low) = create(&d, "cl-low", "seasonal", 1000.0).await;
    assert_eq!(s, StatusCode::CREATED, "{low}");
    let (s, high) = create(&d, "cl-high", "seasonal", 2000.0).await;
    assert_eq!(s, StatusCode::CREATED, "{high}");
    let (low, high) = (low["id"].as_str().unwrap(), high["id"].as_str().unwrap());

    // A worker that knows the mode closed: with its window wide it would match
    // the two at once, but it does not serve a closed mode.
    d.proc("worker").kill();
    d.respawn("worker", &[("MODES_FILE", &closed)]).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    for (p, id) in [("cl-low", low), ("cl-high", high)] {
        let v = ticket(&d, p, id).await;
        assert!(v["match_id"].is_null(), "{p} matched in a closed mode: {v}");
        assert!(
            ["queued", "searching"].contains(&v["status"].as_str().unwrap()),
            "{v}"
        );
    }

    // The supervisor that knows it ends both.
    d.proc("supervisor").kill();
    d.respawn("supervisor", &[("MODES_FILE", &closed)]).await;
    let ev = ws
        .wait_for("ticket.timed_out", Duration::from_secs(10))
        .await;
    assert_eq!(
        (&ev["ticket_id"], &ev["reason"]),
        (&json!(low), &json!("mode_closed")),
        "{ev}"
    );
    ended(&d, &[("cl-low", low), ("cl-high", high)], "mode_closed").await;
    // The ingress still has the mode open (an older process in a rolling
    // upgrade): a ticket it takes is ended the same way.
    let (s, late) = create(&d, "cl-late", "seasonal", 1500.0).await;
    assert_eq!(s, StatusCode::CREATED, "{late}");
    let late = late["id"].as_str().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while ticket(&d, "cl-late", late).await["reason"] != "mode_closed" {
        assert!(
            std::time::Instant::now() < deadline,
            "the late ticket still waits"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Other modes are served as before.
    let (s, a) = create(&d, "cl-a", "1v1", 1500.0).await;
    assert_eq!(s, StatusCode::CREATED, "{a}");
    let (s, b) = create(&d, "cl-b", "1v1", 1500.0).await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    let id = a["id"].as_str().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while ticket(&d, "cl-a", id).await["match_id"].is_null() {
        assert!(
            std::time::Instant::now() < deadline,
            "1v1 no longer matches"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A mode taken out of every process's modes file while a ticket waits in
/// it: the supervisor warns that nobody serves its pool; once the mode is
/// defined again, closed, the ticket ends and the warning stops.
#[tokio::test(flavor = "multi_thread")]
async fn a_removed_mode_with_tickets_is_warned_of() {
    let open = crate::shared_file("seasonal-open", OPEN);
    let closed = crate::shared_file("seasonal-closed", CLOSED);
    let mut d = Deployment::redis_processes_env(&[("*", "MODES_FILE", &open)]).await;
    let (s, t) = create(&d, "rm-ann", "seasonal", 1500.0).await;
    assert_eq!(s, StatusCode::CREATED, "{t}");
    let id = t["id"].as_str().unwrap();

    // The registry knows only pools a supervisor served: wait for the first
    // supervisor's first pass to have noted this one (a loaded machine may
    // not have run it yet).
    let mut redis = redis::Client::open(d.redis.as_ref().unwrap().url())
        .unwrap()
        .get_connection()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let noted: Option<f64> = redis::cmd("ZSCORE")
            .arg(mm_store::keys::POOL_REGISTRY)
            .arg("seasonal:eu")
            .query(&mut redis)
            .unwrap();
        if noted.is_some() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the pool was never noted"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // The supervisor restarted without the mode (the tests' default modes).
    d.proc("supervisor").kill();
    d.respawn("supervisor", &[]).await;
    let warned = |log: &str| {
        log.lines()
            .filter(|l| l.contains("no supervisor serves this pool") && l.contains("seasonal:eu"))
            .count()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        let log = d.proc("supervisor-again").log();
        if warned(&log) > 0 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no warning:\n{log}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let v = ticket(&d, "rm-ann", id).await;
    assert!(
        ["queued", "searching"].contains(&v["status"].as_str().unwrap()),
        "{v}"
    );

    // Defined again, closed: the ticket ends, and the pool is served again.
    d.proc("supervisor-again").kill();
    d.respawn("supervisor", &[("MODES_FILE", &closed)]).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while ticket(&d, "rm-ann", id).await["reason"] != "mode_closed" {
        assert!(
            std::time::Instant::now() < deadline,
            "the ticket still waits"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Several checks later (one every 1.2 s here) no warning came from the
    // supervisor that serves it.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let logs: Vec<String> = d
        .procs
        .iter()
        .filter(|p| p.name() == "supervisor-again")
        .map(|p| p.log())
        .collect();
    assert_eq!(logs.len(), 2);
    assert_eq!(warned(&logs[1]), 0, "{}", logs[1]);
}

/// Workers started with fewer modes than the ingress takes: a ticket of a
/// mode no worker serves is warned of by the supervisor once it has waited
/// twelve intervals; a mode workers serve is not.
#[tokio::test(flavor = "multi_thread")]
async fn a_pool_no_worker_serves_is_warned_of() {
    let open = crate::shared_file("seasonal-open", OPEN);
    let ops = format!("127.0.0.1:{}", mm_testkit::free_port());
    let mut d = Deployment::redis_processes_env(&[
        ("*", "MODES_FILE", &open),
        ("worker", "MODES", "1v1"),
        ("ingress", "OPS_LISTEN_ADDR", &ops),
    ])
    .await;
    let (s, t) = create(&d, "nw-ann", "seasonal", 1500.0).await;
    assert_eq!(s, StatusCode::CREATED, "{t}");
    let (s, t) = create(&d, "nw-bob", "1v1", 1500.0).await;
    assert_eq!(s, StatusCode::CREATED, "{t}");
    let warned = |log: &str, pool: &str| {
        log.lines()
            .any(|l| l.contains("no worker serves this pool") && l.contains(pool))
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        let log = d.proc("supervisor").log();
        if warned(&log, "seasonal:eu") {
            assert!(!warned(&log, "1v1:eu"), "{log}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no warning:\n{log}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The dashboard shows who serves each pool.
    let snapshot = dashboard(&ops).await;
    let workers = |pool: &str| shown(&snapshot, pool, "workers").map(|n| n.as_u64().unwrap());
    assert_eq!(workers("seasonal:eu"), Some(0), "{snapshot}");
    assert!(workers("1v1:eu").is_some_and(|n| n >= 1), "{snapshot}");
}

/// Three a side; parties of up to three.
const SQUADS: &str = r#"
[modes.squads]
teams = 2
team_size = 3
ready_check = false
placement = "none"
"#;

/// The same with parties of two at most, and every ticket must list maps.
const PAIRS: &str = r#"
[modes.squads]
teams = 2
team_size = 3
max_party = 2
ready_check = false
placement = "none"
rules = [{ kind = "intersect", attribute = "maps" }]
"#;

/// `max_party` lowered and a rule added while a trio and two solos wait: the
/// trio and the solo without the rule's attribute could never be matched, so
/// a supervisor that knows ends their tickets (`party_too_large`,
/// `unmatchable`) once they waited `UNMATCHABLE_AFTER`; the solo that lists
/// maps waits on.
#[tokio::test(flavor = "multi_thread")]
async fn tickets_the_mode_could_no_longer_match_are_ended() {
    let trios = crate::shared_file("squads-trios", SQUADS);
    let pairs = crate::shared_file("squads-pairs", PAIRS);
    let mut d = Deployment::redis_processes_env(&[("*", "MODES_FILE", &trios)]).await;
    d.party("pt-lead", &["pt-two", "pt-three"]).await;
    let mut ws = d.socket("pt-two").await;
    let body = json!({"mode": "squads", "players": ["pt-lead", "pt-two", "pt-three"], "regions": ["eu"], "rating": 1500.0});
    let (s, trio) = d
        .client("pt-lead")
        .send(Method::POST, "/v1/tickets", Some(body))
        .await;
    assert_eq!(s, StatusCode::CREATED, "{trio}");
    let (s, bare) = create(&d, "pt-bare", "squads", 1500.0).await;
    assert_eq!(s, StatusCode::CREATED, "{bare}");
    let body = json!({"mode": "squads", "players": ["pt-solo"], "regions": ["eu"], "rating": 1500.0,
                      "attributes": {"maps": ["dust"]}});
    let (s, solo) = d
        .client("pt-solo")
        .send(Method::POST, "/v1/tickets", Some(body))
        .await;
    assert_eq!(s, StatusCode::CREATED, "{solo}");
    let (trio, solo) = (trio["id"].as_str().unwrap(), solo["id"].as_str().unwrap());
    let bare = bare["id"].as_str().unwrap();

    d.proc("supervisor").kill();
    d.respawn(
        "supervisor",
        &[("MODES_FILE", &pairs), ("UNMATCHABLE_AFTER", "2s")],
    )
    .await;
    let ev = ws
        .wait_for("ticket.timed_out", Duration::from_secs(15))
        .await;
    assert_eq!(
        (&ev["ticket_id"], &ev["reason"]),
        (&json!(trio), &json!("party_too_large")),
        "{ev}"
    );
    let v = ticket(&d, "pt-three", trio).await;
    assert_eq!(
        (&v["status"], &v["reason"]),
        (&json!("timed_out"), &json!("party_too_large")),
        "{v}"
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        let v = ticket(&d, "pt-bare", bare).await;
        if v["status"] == "timed_out" {
            assert_eq!(v["reason"], "unmatchable", "{v}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{v}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let v = ticket(&d, "pt-solo", solo).await;
    assert!(
        ["queued", "searching"].contains(&v["status"].as_str().unwrap()),
        "{v}"
    );
    let log = d.proc("supervisor-again").log();
    assert!(
        log.contains("ended tickets of parties larger than the mode takes now"),
        "{log}"
    );
    assert!(
        log.contains("ended tickets whose attributes the mode's rules could never match"),
        "{log}"
    );
}

/// A 1v1 whose window keeps 1000 and 2000 apart, and whose tickets may be
/// matched in their other regions a second after queueing.
const REGIONAL: &str = r#"
[modes.regional]
teams = 2
team_size = 1
ready_check = false
placement = "none"
window = { initial = 10, per_second = 1, cap = 20 }
cross_region_after = "1s"
"#;

/// `player`'s ticket in `regions` (JSON: names or measured latencies).
async fn create_in(
    d: &Deployment,
    player: &str,
    regions: Value,
    rating: f64,
) -> (StatusCode, Value) {
    let body =
        json!({"mode": "regional", "players": [player], "regions": regions, "rating": rating});
    d.client(player)
        .send(Method::POST, "/v1/tickets", Some(body))
        .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_closed_region_takes_no_ticket() {
    let modes = crate::shared_file("regional-modes", REGIONAL);
    let d = Deployment::embedded_with(&[("MODES_FILE", &modes), ("CLOSED_REGIONS", "na")]).await;
    let (s, v) = create_in(&d, "rc-ann", json!(["na"]), 1500.0).await;
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
    assert_eq!(v["error"]["code"], "region_closed", "{v}");
    // Not served at all is another refusal, as before.
    let (s, v) = create_in(&d, "rc-ann", json!(["mars"]), 1500.0).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    assert_eq!(v["error"]["code"], "unknown_region", "{v}");
    // Listed beside an open region, the closed one is passed over.
    let regions = json!([{"region": "na", "latency_ms": 20}, {"region": "eu", "latency_ms": 40}]);
    let (s, v) = create_in(&d, "rc-ann", regions, 1500.0).await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    assert_eq!(v["region"], "eu", "{v}");
    // Clients can tell from the queue figures.
    let (s, v) = d.client("rc-ann").get("/v1/queues/regional").await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let closed: Vec<(String, bool)> = v["regions"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|r| {
            (
                r["region"].as_str().unwrap().to_string(),
                r["closed"].as_bool().unwrap(),
            )
        })
        .collect();
    assert!(closed.contains(&("na".into(), true)), "{v}");
    assert!(closed.contains(&("eu".into(), false)), "{v}");
    assert_eq!(v["closed"], false, "{v}");
    // So can operators, from the dashboard (on the API's port in dev mode).
    let snapshot = dashboard(&d.addr).await;
    let closed = |pool: &str| shown(&snapshot, pool, "closed");
    assert_eq!(closed("regional:na"), Some(json!(true)), "{snapshot}");
    assert_eq!(closed("regional:eu"), Some(json!(false)), "{snapshot}");
}

/// Processes restarted with a region closed: the worker forms nothing there,
/// the supervisor ends the tickets that wait there alone (each player told
/// why) and takes the others out of it, untold; those are matched in their
/// open region. A ticket an ingress that still takes the region queues there
/// (a rolling upgrade) is ended the same way.
#[tokio::test(flavor = "multi_thread")]
async fn closing_a_region_ends_or_moves_its_waiting_tickets() {
    let modes = crate::shared_file("regional-modes", REGIONAL);
    let mut d = Deployment::redis_processes_env(&[("*", "MODES_FILE", &modes)]).await;
    let mut alone_ws = d.socket("rg-alone").await;
    let mut both_ws = d.socket("rg-both").await;
    let (s, alone) = create_in(&d, "rg-alone", json!(["na"]), 1000.0).await;
    assert_eq!(s, StatusCode::CREATED, "{alone}");
    let regions = json!([{"region": "na", "latency_ms": 20}, {"region": "eu", "latency_ms": 40}]);
    let (s, both) = create_in(&d, "rg-both", regions, 2000.0).await;
    assert_eq!(s, StatusCode::CREATED, "{both}");
    let (alone, both) = (alone["id"].as_str().unwrap(), both["id"].as_str().unwrap());

    let closed = [("MODES_FILE", modes.as_str()), ("CLOSED_REGIONS", "na")];
    d.proc("worker").kill();
    d.respawn("worker", &closed).await;
    // A ticket in na alone, at the rating of the one that also waits there:
    // a worker serving na would match the two, one that closed it does not.
    let (s, twin) = create_in(&d, "rg-twin", json!(["na"]), 2000.0).await;
    assert_eq!(s, StatusCode::CREATED, "{twin}");
    let twin = twin["id"].as_str().unwrap();
    d.proc("supervisor").kill();
    d.respawn("supervisor", &closed).await;

    let ev = alone_ws
        .wait_for("ticket.timed_out", Duration::from_secs(10))
        .await;
    assert_eq!(
        (&ev["ticket_id"], &ev["reason"]),
        (&json!(alone), &json!("region_closed")),
        "{ev}"
    );
    ended(
        &d,
        &[("rg-alone", alone), ("rg-twin", twin)],
        "region_closed",
    )
    .await;
    // The two-region ticket waits on, in eu.
    let log_says = |d: &mut Deployment| {
        d.proc("supervisor-again")
            .log()
            .contains("took tickets out of a closed region")
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !log_says(&mut d) {
        assert!(std::time::Instant::now() < deadline, "not taken out of na");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let v = ticket(&d, "rg-both", both).await;
    assert!(
        ["queued", "searching"].contains(&v["status"].as_str().unwrap()),
        "{v}"
    );
    assert!(v["reason"].is_null(), "{v}");
    assert_eq!(v["region"], "eu", "it names the region it waits in: {v}");
    // An opponent in eu: the two meet there.
    let (s, eu) = create_in(&d, "rg-eu", json!(["eu"]), 2000.0).await;
    assert_eq!(s, StatusCode::CREATED, "{eu}");
    let eu = eu["id"].as_str().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let matched = loop {
        let v = ticket(&d, "rg-eu", eu).await;
        if let Some(m) = v["match_id"].as_str() {
            break m.to_string();
        }
        assert!(std::time::Instant::now() < deadline, "no match in eu: {v}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let v = ticket(&d, "rg-both", both).await;
    assert_eq!(v["match_id"], json!(matched), "{v}");
    // Its player heard of the match, in eu, and never that the ticket ended.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let ev = both_ws
            .next_event(left)
            .await
            .expect("no match.completed for rg-both");
        assert!(
            !["ticket.cancelled", "ticket.timed_out"].contains(&ev["type"].as_str().unwrap()),
            "rg-both was told its ticket ended: {ev}"
        );
        if ev["type"] == "match.completed" {
            assert_eq!(ev["match_id"], json!(matched), "{ev}");
            assert_eq!(ev["match"]["region"], "eu", "{ev}");
            break;
        }
    }
}
