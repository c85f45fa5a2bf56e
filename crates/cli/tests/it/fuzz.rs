//! Property-based fuzzing of the HTTP API from its own OpenAPI document, with
//! schemathesis (PyPI), against a real `serve` verifying signed tokens. Every
//! check must pass: no 5xx, every response conforms to its documented schema,
//! status code, content type and headers, requests with bad credentials are
//! refused, and so on. One check is left out: `positive_data_acceptance` expects
//! every schema-valid body to be accepted, but mode and region names are
//! configuration the schema cannot enumerate (an unknown one is a documented 400).

use crate::Deployment;
use mm_auth::TokenSigner;
use mm_testkit::keys::SECRET;
use std::path::PathBuf;
use std::process::Command;

const SCHEMATHESIS: &str = "schemathesis==4.32.5";

/// The schemathesis executable: `$SCHEMATHESIS`, or the one `scripts/test.sh`
/// put in `target/fuzz-venv` (installed here if it is not there yet).
fn schemathesis() -> PathBuf {
    if let Ok(p) = std::env::var("SCHEMATHESIS") {
        return PathBuf::from(p);
    }
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/fuzz-venv");
    let exe = venv.join("bin/schemathesis");
    if !exe.exists() {
        let ok = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .is_ok_and(|s| s.success())
            && Command::new(venv.join("bin/pip"))
                .args(["install", "-q", SCHEMATHESIS])
                .status()
                .is_ok_and(|s| s.success());
        assert!(
            ok,
            "could not install {SCHEMATHESIS} into {}: run scripts/test.sh (it installs python3-venv)",
            venv.display()
        );
    }
    exe
}

#[tokio::test(flavor = "multi_thread")]
async fn the_api_survives_schemathesis_with_every_check() {
    let exe = schemathesis();
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret");
    std::fs::write(&secret, SECRET).unwrap();
    let d = Deployment::embedded_with(&[
        ("AUTH", "jwt"),
        ("ALLOW_CLIENT_RATINGS", "false"),
        ("JWT_SECRET_FILE", secret.to_str().unwrap()),
    ])
    .await;
    let token = TokenSigner::hs256(SECRET, "matchmaker", "matchmaker")
        .unwrap()
        .sign("fuzzer", None, std::time::Duration::from_secs(3600))
        .unwrap();
    let out = Command::new(&exe)
        .args(["run", &format!("http://{}/openapi.json", d.addr)])
        .args(["-H", &format!("Authorization: Bearer {token}")])
        .args([
            "--checks",
            "all",
            "--exclude-checks",
            "positive_data_acceptance",
        ])
        // One worker: with two, hypothesis describes its filters by parsing
        // source with `ast.parse` from both threads at once, and CPython 3.11
        // then fails now and then with "SystemError: AST constructor recursion
        // depth mismatch" (a Runtime Error in the report, about 1 run in 10
        // here, none in 12 with one worker, which is no slower). One worker
        // also makes the fixed seed replay the same requests in the same order.
        .args([
            "--max-examples",
            "40",
            "--seed",
            "20261123",
            "--workers",
            "1",
        ])
        .env("NO_COLOR", "1")
        .current_dir(dir.path())
        .output()
        .expect("run schemathesis");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "schemathesis found failures:\n{text}");
    assert!(text.contains(" passed"), "{text}");
    // The service is still up and logged no panic.
    let (status, _) = d.client("x").get("/healthz").await;
    assert_eq!(status, reqwest::StatusCode::OK);
    for p in &d.procs {
        assert!(!p.log().contains("panicked"), "{}", p.log());
    }
}
