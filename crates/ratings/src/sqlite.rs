//! Rating storage in SQLite, the embedded default of `matchmaker serve` (a file,
//! so ratings survive a restart). Batches take the write lock up front
//! (`BEGIN IMMEDIATE`, WAL, a busy timeout), which also makes a fresh read wait
//! for a batch in flight.

use crate::model::scorable;
use crate::plan::{self, Plan};
use crate::rows::{
    TxPending, board_row, change, decode, history_entry, in_order, migrator, stored, versioned,
};
use crate::storage::{
    BoardRow, HistoryEntry, ModeRating, Pending, Policies, RatingError, RatingStore, Stored,
};
use async_trait::async_trait;
use mm_domain::{MatchId, Millis, PlayerId, RatingJob, RatingPolicy};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{Row, Sqlite, Transaction};
use std::collections::{HashMap, HashSet};
use std::str::FromStr;
use std::time::Duration;

/// SQLite rating storage.
#[derive(Clone)]
pub struct SqliteRatings {
    pool: SqlitePool,
}

impl SqliteRatings {
    /// Opens (creating if missing) the database at `url` (`sqlite://PATH` or
    /// `sqlite::memory:`) and runs the migrations.
    pub async fn open(url: &str) -> Result<Self, RatingError> {
        let options = SqliteConnectOptions::from_str(url)
            .map_err(|e| RatingError::Url(e.to_string()))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(10));
        // Several processes may open one file at once (tests, one-machine
        // deployments): switching a new file to WAL takes a lock the busy timeout
        // does not cover, and SQLite has no migration lock. The loser of either
        // race finds the work done when it tries again.
        let mut tries = 0;
        let pool = loop {
            let attempt = async {
                let pool = SqlitePoolOptions::new()
                    .max_connections(4)
                    .connect_with(options.clone())
                    .await?;
                migrator(include_str!("../migrations/sqlite/0001_ratings.sql"))
                    .run(&pool)
                    .await?;
                Ok::<_, RatingError>(pool)
            };
            match attempt.await {
                Ok(pool) => break pool,
                Err(e) if tries < 10 => {
                    tries += 1;
                    tracing::debug!(error = %e, "opening SQLite raced another process; retrying");
                    tokio::time::sleep(Duration::from_millis(50 * tries)).await;
                }
                Err(e) => return Err(e),
            }
        };
        Ok(Self { pool })
    }
}

fn json_ids(players: &[PlayerId]) -> String {
    serde_json::to_string(&players.iter().map(PlayerId::as_str).collect::<Vec<_>>())
        .unwrap_or_else(|_| "[]".into())
}

const SELECT_SKILLS: &str = "SELECT player_id, rating, uncertainty, version, games, last_played_ms
     FROM ratings WHERE mode = ?1 AND player_id IN (SELECT value FROM json_each(?2))";

#[async_trait]
impl RatingStore for SqliteRatings {
    async fn skills(
        &self,
        mode: &str,
        players: &[PlayerId],
    ) -> Result<Vec<Option<Stored>>, RatingError> {
        let rows = sqlx::query(SELECT_SKILLS)
            .bind(mode)
            .bind(json_ids(players))
            .fetch_all(&self.pool)
            .await?;
        in_order(players, &rows)
    }

    async fn skills_fresh(
        &self,
        mode: &str,
        players: &[PlayerId],
    ) -> Result<Vec<Option<Stored>>, RatingError> {
        // The write lock waits for a batch in flight to commit or roll back.
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let rows = sqlx::query(SELECT_SKILLS)
            .bind(mode)
            .bind(json_ids(players))
            .fetch_all(&mut *tx)
            .await?;
        tx.commit().await?;
        in_order(players, &rows)
    }

    async fn begin(
        &self,
        jobs: &[RatingJob],
        policies: &Policies,
        now: Millis,
    ) -> Result<Box<dyn Pending>, RatingError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let mut seen = HashSet::new();
        let (mut fresh, mut old) = (Vec::new(), Vec::new());
        for j in jobs {
            if !seen.insert(j.matched.id.clone()) {
                continue;
            }
            let outcome = scorable(j).map_or_else(|e| e.to_string(), |()| "scored".into());
            let claimed = sqlx::query(
                "INSERT INTO rated_matches (match_id, mode, outcome, applied_ms) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT DO NOTHING",
            )
            .bind(j.matched.id.as_str())
            .bind(&j.matched.mode)
            .bind(outcome)
            .bind(now as i64)
            .execute(&mut *tx)
            .await?
            .rows_affected()
                == 1;
            if claimed {
                fresh.push(j.clone());
            } else {
                old.push(j.clone());
            }
        }
        let mut applied = Vec::new();
        if !old.is_empty() {
            let ids = serde_json::to_string(
                &old.iter()
                    .map(|j| j.matched.id.as_str())
                    .collect::<Vec<_>>(),
            )
            .unwrap_or_else(|_| "[]".into());
            let earlier = sqlx::query(
                "SELECT mode, match_id, player_id, version, old_rating, old_uncertainty, old_version,
                        new_rating, new_uncertainty, rank, abandoned
                 FROM rating_history WHERE match_id IN (SELECT value FROM json_each(?1))
                 ORDER BY player_id",
            )
            .bind(&ids)
            .fetch_all(&mut *tx)
            .await?
            .iter()
            .map(change)
            .collect::<Result<Vec<_>, _>>()?;
            let outcomes: HashMap<String, String> = sqlx::query(
                "SELECT match_id, outcome FROM rated_matches WHERE match_id IN (SELECT value FROM json_each(?1))",
            )
            .bind(&ids)
            .fetch_all(&mut *tx)
            .await?
            .iter()
            .map(|r| Ok((r.try_get("match_id")?, r.try_get("outcome")?)))
            .collect::<Result<_, sqlx::Error>>()?;
            applied.extend(plan::replay(&old, earlier, &outcomes));
        }
        if !fresh.is_empty() {
            let mut rows = HashMap::new();
            for (mode, player) in plan::keys(&fresh) {
                let row = sqlx::query(
                    "SELECT rating, uncertainty, version, games, last_played_ms
                     FROM ratings WHERE mode = ?1 AND player_id = ?2",
                )
                .bind(&mode)
                .bind(player.as_str())
                .fetch_optional(&mut *tx)
                .await?;
                if let Some(r) = row {
                    rows.insert((mode, player), stored(&r)?);
                }
            }
            let p = plan::plan(&fresh, &rows, policies, now);
            write(&mut tx, &p, now).await?;
            applied.extend(p.applied);
        }
        Ok(Box::new(TxPending { tx, applied }))
    }

    async fn player(&self, player: &PlayerId) -> Result<Vec<ModeRating>, RatingError> {
        let rows = sqlx::query(
            "SELECT mode, rating, uncertainty, version, games, last_played_ms
             FROM ratings WHERE player_id = ?1 AND version > 0 ORDER BY mode",
        )
        .bind(player.as_str())
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(ModeRating {
                    mode: r.try_get("mode")?,
                    stored: stored(r)?,
                })
            })
            .collect()
    }

    async fn history(
        &self,
        player: &PlayerId,
        mode: &str,
        limit: usize,
    ) -> Result<Vec<HistoryEntry>, RatingError> {
        let rows = sqlx::query(
            "SELECT mode, match_id, player_id, version, old_rating, old_uncertainty, old_version,
                    new_rating, new_uncertainty, rank, abandoned, at_ms
             FROM rating_history WHERE mode = ?1 AND player_id = ?2
             ORDER BY version DESC LIMIT ?3",
        )
        .bind(mode)
        .bind(player.as_str())
        .bind(limit as i64)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.iter().map(history_entry).collect::<Result<_, _>>()?)
    }

    async fn leaderboard(
        &self,
        mode: &str,
        offset: u64,
        limit: usize,
    ) -> Result<Vec<BoardRow>, RatingError> {
        let rows = sqlx::query(
            "SELECT player_id, display, rating, uncertainty, version, games, last_played_ms
             FROM ratings WHERE mode = ?1 AND version > 0
             ORDER BY display DESC, player_id LIMIT ?2 OFFSET ?3",
        )
        .bind(mode)
        .bind(limit as i64)
        .bind(offset as i64)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .iter()
            .enumerate()
            .map(|(i, r)| board_row(r, offset + i as u64 + 1))
            .collect::<Result<_, _>>()?)
    }

    async fn rank(&self, mode: &str, player: &PlayerId) -> Result<Option<u64>, RatingError> {
        let row = sqlx::query(
            "SELECT 1 + (SELECT COUNT(*) FROM ratings o
                         WHERE o.mode = r.mode AND o.version > 0
                           AND (o.display > r.display OR (o.display = r.display AND o.player_id < r.player_id))) AS rank
             FROM ratings r WHERE r.mode = ?1 AND r.player_id = ?2 AND r.version > 0",
        )
        .bind(mode)
        .bind(player.as_str())
        .fetch_optional(&self.pool)
        .await?;
        Ok(row
            .map(|r| r.try_get::<i64, _>("rank"))
            .transpose()?
            .map(|r| r as u64))
    }

    async fn decay(
        &self,
        mode: &str,
        policy: &RatingPolicy,
        now: Millis,
    ) -> Result<u64, RatingError> {
        let Some(d) = policy.decay else { return Ok(0) };
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let rows = sqlx::query(
            "SELECT player_id, rating, uncertainty, version, games, last_played_ms, display
             FROM ratings WHERE mode = ?1 AND version > 0 AND last_played_ms < ?2 AND rating > ?3",
        )
        .bind(mode)
        .bind(now.saturating_sub(d.after_ms) as i64)
        .bind(d.floor)
        .fetch_all(&mut *tx)
        .await?;
        let mut changed = 0;
        for r in &rows {
            let s = stored(r)?;
            let value = policy.matching_value(&policy.decayed(s.skill, s.last_played, now));
            if value != r.try_get::<f64, _>("display")? {
                sqlx::query("UPDATE ratings SET display = ?3 WHERE mode = ?1 AND player_id = ?2")
                    .bind(mode)
                    .bind(r.try_get::<String, _>("player_id")?)
                    .bind(value)
                    .execute(&mut *tx)
                    .await?;
                changed += 1;
            }
        }
        tx.commit().await?;
        Ok(changed)
    }

    async fn versions(&self) -> Result<Vec<(PlayerId, String, u64)>, RatingError> {
        let rows = sqlx::query("SELECT player_id, mode, version FROM ratings WHERE version > 0")
            .fetch_all(&self.pool)
            .await?;
        Ok(crate::rows::versions(&rows)?)
    }

    async fn is_applied(&self, id: &MatchId) -> Result<bool, RatingError> {
        Ok(
            sqlx::query("SELECT 1 AS one FROM rated_matches WHERE match_id = ?1")
                .bind(id.as_str())
                .fetch_optional(&self.pool)
                .await?
                .is_some(),
        )
    }

    async fn audit(&self, mode: &str) -> Result<Vec<(PlayerId, u64, MatchId)>, RatingError> {
        let rows = sqlx::query(
            "SELECT player_id, version, match_id FROM rating_history WHERE mode = ?1
             ORDER BY player_id, version",
        )
        .bind(mode)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                let (player, version, id) = versioned(r, "match_id")?;
                Ok((player, version, MatchId::new(id).map_err(decode)?))
            })
            .collect()
    }
}

/// Writes a batch's rows (upserts: a player's first rating creates the row) and
/// history.
async fn write(
    tx: &mut Transaction<'static, Sqlite>,
    p: &Plan,
    now: Millis,
) -> Result<(), RatingError> {
    for w in &p.rows {
        sqlx::query(
            "INSERT INTO ratings (mode, player_id, rating, uncertainty, display, version, games, last_played_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT (mode, player_id) DO UPDATE SET
               rating = excluded.rating, uncertainty = excluded.uncertainty, display = excluded.display,
               version = excluded.version, games = excluded.games, last_played_ms = excluded.last_played_ms",
        )
        .bind(&w.mode)
        .bind(w.player.as_str())
        .bind(w.stored.skill.rating)
        .bind(w.stored.skill.uncertainty)
        .bind(w.display)
        .bind(w.stored.skill.version as i64)
        .bind(w.stored.games as i64)
        .bind(w.stored.last_played as i64)
        .execute(&mut **tx)
        .await?;
    }
    for (mode, id, c) in &p.history {
        sqlx::query(
            "INSERT INTO rating_history (mode, player_id, version, match_id, old_rating, old_uncertainty,
                                         old_version, new_rating, new_uncertainty, rank, abandoned, at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        )
        .bind(mode)
        .bind(c.player.as_str())
        .bind(c.new.version as i64)
        .bind(id)
        .bind(c.old.rating)
        .bind(c.old.uncertainty)
        .bind(c.old.version as i64)
        .bind(c.new.rating)
        .bind(c.new.uncertainty)
        .bind(c.rank as i32)
        .bind(c.abandoned)
        .bind(now as i64)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}
