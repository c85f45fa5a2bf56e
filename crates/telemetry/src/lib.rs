//! Telemetry for every matchmaker process: Prometheus metrics (their names and
//! help in [`names`], the recorder and its `/metrics` route in [`Metrics`]) and
//! the logs ([`init_logs`], plain text or JSON).
//!
//! Code records through the `metrics` macros with the names from [`names`]; a
//! process that installed no recorder (metrics off) records nothing.

mod exporter;
mod logs;
pub mod names;

pub use exporter::{Metrics, MetricsError};
pub use logs::{LogFormat, init_logs};
