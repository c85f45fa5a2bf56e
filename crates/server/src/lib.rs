//! The matchmaker's processes, each a function that runs until its shutdown token
//! is cancelled:
//!
//! - [`ingress`]: the HTTP/JSON + WebSocket API for game clients (stateless);
//! - [`worker`]: claims tickets, forms matches, commits them (stateless; leases in the store);
//! - [`leader`]: the worker's pool leaders, with `COORDINATION=leader`;
//! - [`supervisor`]: reclaims tickets of dead workers, finishes interrupted fan-outs
//!   and sagas, fails the matches of lost game servers, forgets old finished tickets;
//! - [`server_manager`]: the gRPC control plane for game servers;
//! - [`saga`]: the match's life after it is formed, driven by all of the above;
//! - [`ops`]: the operator plane on a listener of its own: `/metrics` and the
//!   live dashboard ([`dashboard`]), for operators only;
//! - [`ratings`]: the rating consumer (results -> ratings, exactly once) and the
//!   rating lookup the ingress queues tickets with.
//!
//! `matchmaker serve` runs all of them in one process over one store.

// Module docs are a code map for contributors: they name private modules and
// constants too (`cargo doc --document-private-items` follows those links).
#![allow(rustdoc::private_intra_doc_links)]

/// Logs a failed store call: at warn, or at debug when the store could not be
/// reached (the outage itself is logged once, by `mm_store::outage`).
macro_rules! warn_store {
    ($e:expr, $($rest:tt)+) => {{
        let e = &$e;
        if $crate::Unreachable::unreachable(e) {
            tracing::debug!(error = %e, $($rest)+)
        } else {
            tracing::warn!(error = %e, $($rest)+)
        }
    }};
}

/// The longest a loop waits between tries while the store is unreachable.
pub const MAX_BACKOFF: std::time::Duration = std::time::Duration::from_secs(5);

/// Errors that may mean the store could not be reached.
pub trait Unreachable {
    fn unreachable(&self) -> bool;
}

impl Unreachable for mm_store::StoreError {
    fn unreachable(&self) -> bool {
        self.is_unreachable()
    }
}

pub mod backfill;
pub mod catalog;
pub mod dashboard;
pub mod ingress;
pub mod leader;
pub mod offline;
pub mod ops;
pub mod ratings;
pub mod saga;
pub mod server_manager;
pub mod stranded;
pub mod supervisor;
pub mod worker;

pub use catalog::{Catalog, CatalogError};
