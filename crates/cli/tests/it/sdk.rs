//! The client SDKs' own test suites, run against this build of the binary: the
//! TypeScript one with Node's test runner (`sdk/typescript`, `npm test`), the C#
//! one with Debian's mono (`sdk/csharp/build.sh`). Each suite starts its own
//! `serve` and example game server on free ports.

use crate::BIN;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn sdk(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../sdk")
        .join(dir)
        .canonicalize()
        .unwrap()
}

fn report(what: &str, out: &Output) -> String {
    format!(
        "{what} exited {}:\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn the_typescript_sdk_passes_its_tests_against_a_real_serve() {
    assert!(
        have("npm"),
        "npm is missing: run scripts/test.sh (it installs nodejs and npm)"
    );
    let dir = sdk("typescript");
    if !dir.join("node_modules/.package-lock.json").exists() {
        // The lockfile pins every package; scripts/test.sh runs this too.
        let out = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&dir)
            .output()
            .expect("run npm ci");
        assert!(out.status.success(), "{}", report("npm ci", &out));
    }
    let out = Command::new("npm")
        .arg("test")
        .env("MATCHMAKER_BIN", BIN)
        .current_dir(&dir)
        .output()
        .expect("run npm test");
    let text = report("npm test", &out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("# fail 0"), "{text}");
}

#[test]
fn the_csharp_sdk_passes_its_tests_against_a_real_serve() {
    assert!(
        have("mcs") && have("mono"),
        "mono is missing: run scripts/test.sh (it installs mono-complete)"
    );
    let dir = sdk("csharp");
    let out = Command::new(dir.join("build.sh"))
        .env("MATCHMAKER_BIN", BIN)
        .env(
            "CSHARP_OUT",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("sdk-csharp"),
        )
        .current_dir(&dir)
        .output()
        .expect("run sdk/csharp/build.sh");
    let text = report("sdk/csharp/build.sh", &out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains(" passed, 0 failed"), "{text}");
}
