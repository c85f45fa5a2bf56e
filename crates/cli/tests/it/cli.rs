//! The command line: help lists every option with its variable; bad values are
//! refused at start-up with a message naming the variable.

use crate::BIN;
use std::process::Command;

fn run(args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    let mut cmd = Command::new(BIN);
    cmd.args(args).env_remove("REDIS_URL");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn help_lists_every_option_with_its_variable() {
    let (ok, top) = run(&["--help"], &[]);
    assert!(ok);
    for sub in ["serve", "ingress", "worker", "supervisor", "bench"] {
        assert!(top.contains(sub), "{sub} missing from --help");
    }
    let (_, serve) = run(&["serve", "--help"], &[]);
    for var in [
        "REDIS_URL",
        "LISTEN_ADDR",
        "MMR_DELTA_INITIAL",
        "MMR_SCALING_FACTOR",
        "LOCK_TTL",
        "HEARTBEAT_INTERVAL",
        "CLAIM_BATCH_SIZE",
        "MIN_PLAYERS_PER_MATCH",
        "MAX_PLAYERS_PER_MATCH",
        "WORKER_POOL_SIZE",
        "SUPERVISE_INTERVAL",
    ] {
        assert!(
            serve.contains(&format!("[env: {var}")),
            "serve --help lacks {var}:\n{serve}"
        );
    }
    let (_, worker) = run(&["worker", "--help"], &[]);
    assert!(worker.contains("[env: REDIS_URL") && worker.contains("[env: LOCK_TTL"));
    let (_, sup) = run(&["supervisor", "--help"], &[]);
    assert!(sup.contains("[env: SUPERVISE_INTERVAL"));
    let (_, ingress) = run(&["ingress", "--help"], &[]);
    assert!(ingress.contains("[env: LISTEN_ADDR"));
}

#[test]
fn invalid_values_are_refused_naming_the_variable() {
    let cases: &[(&str, &str, &str)] = &[
        ("LOCK_TTL", "soon", "LOCK_TTL"),
        ("HEARTBEAT_INTERVAL", "1m", "HEARTBEAT_INTERVAL"),
        ("CLAIM_BATCH_SIZE", "0", "CLAIM_BATCH_SIZE"),
        ("CLAIM_BATCH_SIZE", "many", "CLAIM_BATCH_SIZE"),
        ("MIN_PLAYERS_PER_MATCH", "9", "MAX_PLAYERS_PER_MATCH"),
        ("MMR_DELTA_INITIAL", "-3", "MMR_DELTA_INITIAL"),
        ("MMR_SCALING_FACTOR", "NaN", "MMR_SCALING_FACTOR"),
        ("WORKER_POOL_SIZE", "0", "WORKER_POOL_SIZE"),
        ("LISTEN_ADDR", "nowhere", "LISTEN_ADDR"),
        ("MODES", "Ranked!", "MODES"),
        ("SUPERVISE_INTERVAL", "0s", "SUPERVISE_INTERVAL"),
    ];
    for (var, value, named) in cases {
        let (ok, text) = run(&["serve"], &[(var, value)]);
        assert!(!ok, "{var}={value} was accepted");
        assert!(
            text.contains(named),
            "{var}={value}: message does not name {named}:\n{text}"
        );
    }
    let (ok, text) = run(&["worker"], &[]);
    assert!(
        !ok && text.contains("REDIS_URL"),
        "worker without REDIS_URL:\n{text}"
    );
    let (ok, text) = run(&["worker", "--redis-url", "redis://127.0.0.1:1"], &[]);
    assert!(
        !ok && text.contains("REDIS_URL"),
        "unreachable Redis:\n{text}"
    );
}
