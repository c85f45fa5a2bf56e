//! What `deploy/` ships matches what the processes export: every metric the Grafana
//! dashboard and the Prometheus alert rules use is scraped from a running Redis
//! deployment (ingress, worker, supervisor, server manager, rating service and a
//! game server, after a match with a ready check and one without), and
//! `promtool check rules` accepts the rules.

use crate::lifecycle::{game_server, pair, path};
use crate::metrics::{redis_with_metrics_ports, scrape};
use reqwest::StatusCode;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

fn deploy_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../deploy")
}

/// Every `matchmaker_*` name in a PromQL expression.
fn names_in(expr: &str, into: &mut BTreeSet<String>) {
    let mut rest = expr;
    while let Some(at) = rest.find("matchmaker_") {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        into.insert(tail[..end].to_string());
        rest = &tail[end..];
    }
}

/// Every `expr` string anywhere in the dashboard.
fn dashboard_exprs(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("expr", serde_json::Value::String(e)) => out.push(e.clone()),
                    _ => dashboard_exprs(v, out),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|i| dashboard_exprs(i, out)),
        _ => {}
    }
}

#[derive(serde::Deserialize)]
struct RuleFile {
    groups: Vec<RuleGroup>,
}

#[derive(serde::Deserialize)]
struct RuleGroup {
    rules: Vec<Rule>,
}

#[derive(serde::Deserialize)]
struct Rule {
    alert: String,
    expr: String,
}

/// The metric names the dashboard and the alert rules use, and the alerts.
fn used_names() -> (BTreeSet<String>, Vec<String>) {
    let dir = deploy_dir();
    let dashboard: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("grafana/matchmaker.json")).unwrap(),
    )
    .expect("the dashboard is JSON");
    let mut exprs = Vec::new();
    dashboard_exprs(&dashboard, &mut exprs);
    assert!(
        exprs.len() >= 20,
        "only {} queries in the dashboard",
        exprs.len()
    );
    let rules: RuleFile = serde_saphyr::from_str(
        &std::fs::read_to_string(dir.join("prometheus/alerts.yml")).unwrap(),
    )
    .expect("the rules are YAML");
    let alerts: Vec<String> = rules
        .groups
        .iter()
        .flat_map(|g| g.rules.iter().map(|r| r.alert.clone()))
        .collect();
    let mut names = BTreeSet::new();
    for e in exprs.iter().chain(
        rules
            .groups
            .iter()
            .flat_map(|g| g.rules.iter().map(|r| &r.expr)),
    ) {
        names_in(e, &mut names);
    }
    (names, alerts)
}

/// The series names a scrape exports (histograms as their `_bucket`, `_sum` and
/// `_count` series).
fn exported(text: &str, into: &mut BTreeSet<String>) {
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        if let Some(name) = line.split(['{', ' ']).next()
            && !name.is_empty()
        {
            into.insert(name.to_string());
        }
    }
}

#[test]
fn the_alert_rules_pass_promtool() {
    let (ok, text) = promtool("check", "prometheus/alerts.yml");
    assert!(ok, "{text}");
    let (_, alerts) = used_names();
    assert!(
        text.contains(&format!("SUCCESS: {} rules found", alerts.len())),
        "{text}"
    );
    // The alerts the issue asks for are there.
    for wanted in [
        "MatchmakerQueueWaitHigh",
        "MatchmakerReclaimsSpiking",
        "MatchmakerNoMatchesWhileTicketsWait",
        "MatchmakerRedisErrors",
        "MatchmakerGameServersLost",
    ] {
        assert!(
            alerts.iter().any(|a| a == wanted),
            "no {wanted} in {alerts:?}"
        );
    }
}

/// The alert rules' own unit tests (`deploy/prometheus/alerts_test.yml`): series
/// in, alerts out, for claim workers and for pool leaders.
#[test]
fn the_alert_rules_fire_on_their_unit_tests() {
    let (ok, text) = promtool("test", "prometheus/alerts_test.yml");
    assert!(ok && text.contains("SUCCESS"), "{text}");
}

/// `promtool <verb> rules deploy/<file>`: whether it succeeded, and what it said.
fn promtool(verb: &str, file: &str) -> (bool, String) {
    let out = Command::new("promtool")
        .args([verb, "rules"])
        .arg(deploy_dir().join(file))
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run promtool: {e}. Install it (scripts/test.sh does: apt-get install -y prometheus)")
        });
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[tokio::test(flavor = "multi_thread")]
async fn every_metric_the_dashboard_and_alerts_use_is_exported() {
    let (used, _) = used_names();
    assert!(
        used.len() >= 25,
        "only {} metrics used: {used:?}",
        used.len()
    );
    let (d, ports) = redis_with_metrics_ports().await;
    let _gs = game_server(&d, "gs-deploy", "1s").await;
    // A match with a ready check, both accepting; one placed at once.
    let (_da, _db, ev) = pair(&d, "duel", "da", "db", "match.ready_check").await;
    for p in ["da", "db"] {
        let (status, body) = d
            .client(p)
            .send(reqwest::Method::POST, &path(&ev, "/accept"), None)
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let (_ra, _rb, _) = pair(&d, "rush", "ra", "rb", "match.assigned").await;

    let addrs: Vec<&str> = ports.iter().map(String::as_str).collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    let started = Instant::now();
    let missing = loop {
        let mut have = BTreeSet::new();
        for a in &addrs {
            let (status, text) = scrape(a).await;
            assert_eq!(status, StatusCode::OK, "{a}");
            exported(&text, &mut have);
        }
        let missing: Vec<&String> = used.iter().filter(|n| !have.contains(*n)).collect();
        if missing.is_empty() || Instant::now() > deadline {
            break missing.into_iter().cloned().collect::<Vec<_>>();
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    eprintln!(
        "{} metrics used by deploy/, all exported after {:?}",
        used.len(),
        started.elapsed()
    );
    assert!(
        missing.is_empty(),
        "used by deploy/ but exported by no process: {missing:?}"
    );
    // And each name is one we describe (not a typo that happens to exist).
    let known: BTreeSet<&str> = mm_telemetry::names::ALL.iter().map(|(n, ..)| *n).collect();
    for name in &used {
        let base = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|s| name.strip_suffix(s).filter(|b| known.contains(b)))
            .unwrap_or(name);
        assert!(known.contains(base), "{name} is not in names::ALL");
    }
}
