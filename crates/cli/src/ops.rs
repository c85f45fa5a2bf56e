//! Where the operator plane of the ingress and `serve` goes (`OPS_LISTEN_ADDR`,
//! `OPS_TOKEN_FILE`, `DASHBOARD`): a listener of its own, or, for `serve` in dev
//! mode on loopback with no listener given, the player port (for the
//! walk-through); otherwise nowhere, and the log says so.

use anyhow::{Context, Result, bail};
use clap::Args;
use mm_server::ops::{self, OperatorAuth, OpsPlane};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Clone, Args)]
pub struct OpsArgs {
    /// File holding the operator secret (32 bytes or more of printable ASCII
    /// without spaces, quotes, commas or semicolons, e.g. base64): a bearer
    /// token for the dashboard. With AUTH=jwt, tokens with role "operator" are
    /// accepted too.
    #[arg(long, env = "OPS_TOKEN_FILE")]
    pub ops_token_file: Option<PathBuf>,
}

impl OpsArgs {
    fn secret(&self) -> Result<Option<Vec<u8>>> {
        let Some(path) = &self.ops_token_file else {
            return Ok(None);
        };
        let secret =
            mm_auth::read_secret_file(path).context("OPS_TOKEN_FILE (--ops-token-file)")?;
        if secret.len() < mm_auth::MIN_SECRET_BYTES {
            bail!(
                "OPS_TOKEN_FILE {}: the secret has {} bytes; use {} or more",
                path.display(),
                secret.len(),
                mm_auth::MIN_SECRET_BYTES
            );
        }
        if !ops::cookie_safe(&secret) {
            bail!(
                "OPS_TOKEN_FILE {}: use printable ASCII without spaces, quotes, commas, semicolons or backslashes (e.g. `head -c 32 /dev/urandom | base64`)",
                path.display()
            );
        }
        Ok(Some(secret))
    }
}

/// What the process serves on its operator plane.
pub struct Plane {
    pub metrics: mm_telemetry::Metrics,
    pub dashboard: Option<(Arc<dyn mm_store::Store>, mm_server::dashboard::Shown)>,
    pub proxies: mm_server::ingress::TrustedProxies,
    /// Verifies players' tokens; its operator tokens open the dashboard.
    pub tokens: Arc<dyn mm_auth::Authenticator>,
}

/// Starts the operator plane on `addr`, or returns its routes for the player
/// port when `serve` runs in dev mode on loopback (`single_port`) without one.
pub async fn start(
    args: &OpsArgs,
    addr: Option<SocketAddr>,
    plane: Plane,
    single_port: bool,
    shutdown: CancellationToken,
) -> Result<Option<ops::Routes>> {
    let secret = args.secret()?;
    let dev = plane.tokens.is_dev();
    let auth = match (secret, dev) {
        (None, true) => OperatorAuth::open(),
        (secret, _) => OperatorAuth::new(secret, Some(plane.tokens.clone())),
    };
    let dashboard = plane.dashboard.is_some();
    if dashboard && !auth.admits_anyone() {
        tracing::warn!(
            "no operator credential can open the dashboard: set OPS_TOKEN_FILE, or use AUTH=jwt with tokens whose role is operator"
        );
    }
    let open = auth.is_open();
    let app = ops::router(OpsPlane {
        metrics: plane.metrics,
        dashboard: plane.dashboard,
        auth,
        proxies: plane.proxies,
    });
    let Some(addr) = addr else {
        if single_port {
            tracing::info!(
                "operator plane (/metrics, /dashboard) on the API's port: dev mode on loopback; set OPS_LISTEN_ADDR to move it"
            );
            return Ok(Some(app));
        }
        tracing::info!(
            "OPS_LISTEN_ADDR is not set: /metrics and the dashboard are not served (they never share the players' port)"
        );
        return Ok(None);
    };
    if dashboard && open && !addr.ip().is_loopback() {
        bail!(
            "OPS_LISTEN_ADDR {addr} is not a loopback address and dev mode has no operator credential: set OPS_TOKEN_FILE (or DASHBOARD=false)"
        );
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("OPS_LISTEN_ADDR: cannot listen on {addr}"))?;
    tracing::info!(addr = %listener.local_addr()?, dashboard, open, "operator plane listening");
    tokio::spawn(async move {
        if let Err(e) = ops::serve(listener, app, shutdown).await {
            tracing::warn!(error = %e, "operator plane stopped");
        }
    });
    Ok(None)
}
