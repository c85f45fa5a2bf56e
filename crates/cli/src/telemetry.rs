//! The telemetry options every service process shares: the log format, metrics
//! on or off, and where processes without an HTTP API serve `/metrics`.

use anyhow::{Context, Result};
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
    /// Serve /metrics on this address (needed by worker, supervisor, server-manager
    /// and rating-service; the ingress and serve also answer on their HTTP port).
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

    /// Installs the recorder (if on) and serves `/metrics` on `METRICS_ADDR` (if
    /// set) for as long as the process lives.
    pub async fn start_metrics(&self) -> Result<Metrics> {
        if !self.metrics {
            return Ok(Metrics::off());
        }
        let metrics = Metrics::install()?;
        if let Some(addr) = self.metrics_addr {
            metrics
                .serve(addr, CancellationToken::new())
                .await
                .with_context(|| {
                    format!("METRICS_ADDR (--metrics-addr): cannot listen on {addr}")
                })?;
        }
        Ok(metrics)
    }
}
