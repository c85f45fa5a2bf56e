//! The matchmaker's processes, each a function that runs until its shutdown token
//! is cancelled:
//!
//! - [`ingress`]: the HTTP/JSON + WebSocket API for game clients (stateless);
//! - [`worker`]: claims tickets, forms matches, commits them (stateless; leases in the store);
//! - [`supervisor`]: reclaims tickets of dead workers, finishes interrupted fan-outs,
//!   forgets old finished tickets.
//!
//! `matchmaker serve` runs all three in one process over one store.

pub mod catalog;
pub mod ingress;
pub mod supervisor;
pub mod worker;

pub use catalog::{Catalog, CatalogError};
