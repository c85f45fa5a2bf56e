//! The telemetry options every service process shares: the log format, metrics
//! on or off, and the operator listener (`OPS_LISTEN_ADDR`, or its older name
//! `METRICS_ADDR`) where `/metrics` (and on the ingress, the dashboard) is served.

use anyhow::{Context, Result, bail};
use clap::{ArgAction, Args, ValueEnum};
use mm_telemetry::{LogFormat, Metrics};
use std::net::SocketAddr;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Lines for people.
    Text,
    /// One JSON object per line, span fields (ticket, match, player ids) included.
    Json,
}

#[derive(Debug, Clone, Args)]
pub struct TelemetryArgs {
    /// Log format.
    #[arg(
        long = "log-format",
        env = "LOG_FORMAT",
        value_enum,
        default_value = "text",
        global = true
    )]
    pub log_format: Format,
    /// Record Prometheus metrics (false: none are recorded and /metrics answers 404).
    #[arg(long = "metrics", env = "METRICS", default_value_t = true, action = ArgAction::Set, global = true)]
    pub metrics: bool,
    /// The operator listener: /metrics (open) and, on the ingress and serve, the
    /// live dashboard (operators only). Never the port players reach.
    #[arg(long = "ops-listen", env = "OPS_LISTEN_ADDR", global = true)]
    pub ops_listen: Option<SocketAddr>,
    /// The operator listener's older name (same as OPS_LISTEN_ADDR).
    #[arg(long = "metrics-addr", env = "METRICS_ADDR", global = true)]
    pub metrics_addr: Option<SocketAddr>,
}

impl TelemetryArgs {
    pub fn init_logs(&self) {
        mm_telemetry::init_logs(match self.log_format {
            Format::Text => LogFormat::Text,
            Format::Json => LogFormat::Json,
        });
    }

    /// Installs the recorder (if on).
    pub fn start_metrics(&self) -> Result<Metrics> {
        if !self.metrics {
            return Ok(Metrics::off());
        }
        Ok(Metrics::install()?)
    }

    /// The operator listener's address: OPS_LISTEN_ADDR, or METRICS_ADDR.
    pub fn ops_addr(&self) -> Result<Option<SocketAddr>> {
        match (self.ops_listen, self.metrics_addr) {
            (Some(a), Some(b)) if a != b => bail!(
                "OPS_LISTEN_ADDR ({a}) and METRICS_ADDR ({b}) name two listeners: METRICS_ADDR is the older name of OPS_LISTEN_ADDR; set one"
            ),
            (a, b) => Ok(a.or(b)),
        }
    }

    /// Serves `/metrics` alone on the operator listener (processes without an
    /// HTTP API) for as long as the process lives.
    pub async fn serve_metrics(&self, metrics: &Metrics) -> Result<()> {
        if let Some(addr) = self.ops_addr()? {
            metrics
                .serve(addr, CancellationToken::new())
                .await
                .with_context(|| format!("OPS_LISTEN_ADDR: cannot listen on {addr}"))?;
        }
        Ok(())
    }
}
