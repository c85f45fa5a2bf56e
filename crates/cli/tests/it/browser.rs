//! A real headless Chromium (Debian's `chromium`, or `$CHROMIUM_BIN`) driven over
//! the DevTools protocol: open a page, evaluate script in it, take a screenshot.
//! Killed on drop.

use base64::Engine;
use futures_util::{SinkExt, StreamExt};
use mm_testkit::Proc;
use serde_json::{Value, json};
use std::process::Command;
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

pub struct Browser {
    _proc: Proc,
    _profile: tempfile::TempDir,
    page: Socket,
    next_id: u64,
}

impl Browser {
    /// Starts Chromium headless with a `width` x `height` window and connects to
    /// its first page.
    pub async fn start(width: u32, height: u32, logs: &std::path::Path) -> Self {
        let bin = std::env::var("CHROMIUM_BIN").unwrap_or_else(|_| "chromium".into());
        let profile = tempfile::tempdir().unwrap();
        let mut cmd = Command::new(&bin);
        cmd.args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--hide-scrollbars",
            "--remote-debugging-port=0",
        ])
        .arg(format!("--window-size={width},{height}"))
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("about:blank")
        // Its singleton socket folder too, so that it goes with the profile
        // (a killed Chromium cannot remove it).
        .env("TMPDIR", profile.path());
        if Command::new(&bin).arg("--version").output().is_err() {
            panic!(
                "cannot run {bin}. Install it (scripts/test.sh does: apt-get install -y chromium)"
            );
        }
        let proc = Proc::spawn("chromium", cmd, logs);
        let deadline = Instant::now() + Duration::from_secs(30);
        let port = loop {
            let log = proc.log();
            if let Some(line) = log
                .lines()
                .find(|l| l.contains("DevTools listening on ws://"))
            {
                let addr = line.split("ws://").nth(1).unwrap();
                break addr.split('/').next().unwrap().to_string();
            }
            assert!(Instant::now() < deadline, "Chromium did not start:\n{log}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let targets: Vec<Value> = reqwest::get(format!("http://{port}/json/list"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let url = targets
            .iter()
            .find(|t| t["type"] == "page")
            .and_then(|t| t["webSocketDebuggerUrl"].as_str())
            .expect("a page target")
            .to_string();
        let (page, _) = tokio_tungstenite::connect_async(url).await.unwrap();
        let mut b = Self {
            _proc: proc,
            _profile: profile,
            page,
            next_id: 0,
        };
        b.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        )
        .await;
        b
    }

    /// Sends one DevTools command and returns its result (events in between are
    /// skipped).
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let msg = json!({"id": id, "method": method, "params": params});
        self.page
            .send(Message::Text(msg.to_string().into()))
            .await
            .unwrap();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let next = tokio::time::timeout_at(deadline, self.page.next())
                .await
                .unwrap_or_else(|_| panic!("no answer to {method}"));
            let Some(Ok(Message::Text(text))) = next else {
                continue;
            };
            let v: Value = serde_json::from_str(&text).unwrap();
            if v["id"] == id {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
        }
    }

    pub async fn navigate(&mut self, url: &str) {
        self.call("Page.navigate", json!({"url": url})).await;
    }

    /// The value of a script expression in the page.
    pub async fn eval(&mut self, expression: &str) -> Value {
        let r = self
            .call(
                "Runtime.evaluate",
                json!({"expression": expression, "returnByValue": true}),
            )
            .await;
        assert!(r.get("exceptionDetails").is_none(), "{expression}: {r}");
        r["result"]["value"].clone()
    }

    /// Evaluates `expression` until it is true (an exception, e.g. while the page
    /// is still loading, counts as not yet); panics with `what` after `timeout`.
    pub async fn wait_until(&mut self, expression: &str, timeout: Duration, what: &str) {
        let deadline = Instant::now() + timeout;
        let guarded =
            format!("(() => {{ try {{ return {expression}; }} catch (e) {{ return false; }} }})()");
        loop {
            if self.eval(&guarded).await == Value::Bool(true) {
                return;
            }
            assert!(Instant::now() < deadline, "{what}: {expression} never held");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// A PNG of the page as shown.
    pub async fn screenshot(&mut self) -> Vec<u8> {
        let r = self
            .call("Page.captureScreenshot", json!({"format": "png"}))
            .await;
        base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().unwrap())
            .unwrap()
    }
}
