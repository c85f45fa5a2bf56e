//! The Prometheus recorder of a process and the `/metrics` route that renders it
//! (on the ingress's own port, or on `METRICS_ADDR` for the other processes).
//! Durations (`*_seconds`) and rating spreads are real histograms, so Grafana can
//! sum them across processes.

use crate::names;
use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Upper bounds of the duration buckets, in seconds: from a fast store call to a
/// long queue.
const SECONDS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
    60.0, 120.0, 300.0, 600.0,
];
/// Upper bounds of the rating-spread buckets, in rating points.
const POINTS: &[f64] = &[10.0, 25.0, 50.0, 100.0, 150.0, 200.0, 300.0, 500.0, 1000.0];
/// How often idle histogram data is tidied.
const UPKEEP: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    #[error("metrics: {0}")]
    Build(#[from] metrics_exporter_prometheus::BuildError),
    #[error("metrics endpoint {addr}: {source}")]
    Listen {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// The process's metrics: on (a recorder renders them) or off (nothing recorded).
#[derive(Clone)]
pub struct Metrics {
    handle: Option<PrometheusHandle>,
}

/// One recorder per process, however many times it is asked for.
static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

impl Metrics {
    /// Installs the process-wide recorder (once; later calls share it) and
    /// describes every metric.
    pub fn install() -> Result<Self, MetricsError> {
        if let Some(h) = HANDLE.get() {
            return Ok(Self {
                handle: Some(h.clone()),
            });
        }
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), SECONDS)?
            .set_buckets_for_metric(Matcher::Suffix("_spread".into()), POINTS)?
            .build_recorder();
        let handle = HANDLE.get_or_init(|| {
            let handle = recorder.handle();
            // Ours is the only recorder the binary installs.
            let _ = metrics::set_global_recorder(recorder);
            names::describe();
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                let h = handle.clone();
                rt.spawn(async move {
                    let mut tick = tokio::time::interval(UPKEEP);
                    loop {
                        tick.tick().await;
                        h.run_upkeep();
                    }
                });
            }
            handle
        });
        Ok(Self {
            handle: Some(handle.clone()),
        })
    }

    /// Metrics off: nothing is recorded and `/metrics` answers 404.
    pub fn off() -> Self {
        Self { handle: None }
    }

    pub fn is_on(&self) -> bool {
        self.handle.is_some()
    }

    /// The Prometheus text exposition of every metric recorded so far.
    pub fn render(&self) -> Option<String> {
        self.handle.as_ref().map(PrometheusHandle::render)
    }

    /// `GET /metrics`.
    pub fn router<S: Clone + Send + Sync + 'static>(&self) -> Router<S> {
        let me = self.clone();
        Router::new().route(
            "/metrics",
            get(move || {
                let me = me.clone();
                async move {
                    match me.render() {
                        Some(text) => ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text)
                            .into_response(),
                        None => axum::http::StatusCode::NOT_FOUND.into_response(),
                    }
                }
            }),
        )
    }

    /// Serves `/metrics` on `addr` until `stop` (for processes without an HTTP API).
    pub async fn serve(
        &self,
        addr: SocketAddr,
        stop: CancellationToken,
    ) -> Result<(), MetricsError> {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| MetricsError::Listen { addr, source })?;
        let bound = listener.local_addr().unwrap_or(addr);
        tracing::info!(addr = %bound, "metrics endpoint listening");
        let app = self.router::<()>();
        tokio::spawn(async move {
            let served = axum::serve(listener, app)
                .with_graceful_shutdown(async move { stop.cancelled().await })
                .await;
            if let Err(e) = served {
                tracing::warn!(error = %e, "metrics endpoint stopped");
            }
        });
        Ok(())
    }
}
