//! Ratings: the skill the matchmaker matches on, learned from results.
//!
//! - [`model`]: seed 004's team Elo and Weng-Lin (from `skillratings`), scoring a
//!   finished match against the skill snapshots the players were matched on.
//! - [`RatingStore`]: rating storage with two implementations, [`PgRatings`]
//!   (PostgreSQL, for deployments) and [`SqliteRatings`] (the embedded default),
//!   each applying a batch of matches exactly once in one transaction.
//! - [`open`]: picks the implementation from a `DATABASE_URL`.

pub mod model;
mod plan;
mod postgres;
mod rows;
mod sqlite;
mod storage;

pub use model::{Change, Unscored};
pub use postgres::PgRatings;
pub use sqlite::SqliteRatings;
pub use storage::{
    Applied, BoardRow, HistoryEntry, ModeRating, Pending, Policies, RatingError, RatingStore,
    Stored,
};

use std::sync::Arc;

/// Opens the rating store a URL names: `postgres://...` / `postgresql://...`, or
/// `sqlite://PATH` (created if missing); runs the migrations.
pub async fn open(url: &str) -> Result<Arc<dyn RatingStore>, RatingError> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(Arc::new(PgRatings::connect(url, 8).await?))
    } else if url.starts_with("sqlite:") {
        Ok(Arc::new(SqliteRatings::open(url).await?))
    } else {
        Err(RatingError::Url(format!(
            "DATABASE_URL must start with postgres://, postgresql:// or sqlite:, got {:?}",
            url.split(':').next().unwrap_or("")
        )))
    }
}
