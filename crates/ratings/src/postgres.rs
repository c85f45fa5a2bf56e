//! Rating storage in PostgreSQL, for deployments of many processes. Batches are
//! written with one statement per table (`UNNEST` of arrays), rows are locked in
//! (mode, player) order so concurrent consumers cannot deadlock, and the match ids
//! are claimed first, so a match is applied once however often it is delivered.

use crate::model::{Change, scorable};
use crate::plan::{self, Plan};
use crate::rows::{
    TxPending, board_row, change, decode, history_entry, in_order, migrator, stored, versioned,
};
use crate::storage::{
    BoardRow, HistoryEntry, ModeRating, Pending, Policies, RatingError, RatingStore, Stored,
};
use async_trait::async_trait;
use mm_domain::{MatchId, Millis, PlayerId, RatingJob, RatingPolicy};
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::{Postgres, Row, Transaction};
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// PostgreSQL rating storage.
#[derive(Clone)]
pub struct PgRatings {
    pool: PgPool,
}

impl PgRatings {
    /// Connects (up to `connections` at once) and runs the migrations.
    pub async fn connect(url: &str, connections: u32) -> Result<Self, RatingError> {
        let pool = PgPoolOptions::new()
            .max_connections(connections)
            .acquire_timeout(Duration::from_secs(5))
            .connect(url)
            .await?;
        migrator(include_str!("../migrations/postgres/0001_ratings.sql"))
            .run(&pool)
            .await?;
        Ok(Self { pool })
    }
}

/// Rows for players never rated, so that every row a batch touches exists before
/// its transaction locks them (a reader waiting on a batch then sees its result).
async fn ensure_rows(
    pool: &PgPool,
    keys: &[(String, PlayerId)],
    policies: &Policies,
) -> Result<(), RatingError> {
    let (mut modes, mut players, mut ratings, mut uncs, mut displays) =
        (vec![], vec![], vec![], vec![], vec![]);
    for (mode, p) in keys {
        let policy = policies.get(mode);
        let s = policy.initial();
        modes.push(mode.clone());
        players.push(p.to_string());
        ratings.push(s.rating);
        uncs.push(s.uncertainty);
        displays.push(policy.matching_value(&s));
    }
    sqlx::query(
        "INSERT INTO ratings (mode, player_id, rating, uncertainty, display, version, games, last_played_ms)
         SELECT m, p, r, u, d, 0, 0, 0
         FROM UNNEST($1::text[], $2::text[], $3::float8[], $4::float8[], $5::float8[]) AS t(m, p, r, u, d)
         ORDER BY m, p
         ON CONFLICT DO NOTHING",
    )
    .bind(modes)
    .bind(players)
    .bind(ratings)
    .bind(uncs)
    .bind(displays)
    .execute(pool)
    .await?;
    Ok(())
}

#[async_trait]
impl RatingStore for PgRatings {
    async fn skills(
        &self,
        mode: &str,
        players: &[PlayerId],
    ) -> Result<Vec<Option<Stored>>, RatingError> {
        let ids: Vec<&str> = players.iter().map(PlayerId::as_str).collect();
        let rows = sqlx::query(
            "SELECT player_id, rating, uncertainty, version, games, last_played_ms
             FROM ratings WHERE mode = $1 AND player_id = ANY($2)",
        )
        .bind(mode)
        .bind(ids)
        .fetch_all(&self.pool)
        .await?;
        in_order(players, &rows)
    }

    async fn skills_fresh(
        &self,
        mode: &str,
        players: &[PlayerId],
    ) -> Result<Vec<Option<Stored>>, RatingError> {
        let ids: Vec<&str> = players.iter().map(PlayerId::as_str).collect();
        let mut tx = self.pool.begin().await?;
        // FOR SHARE waits for a batch holding the rows and then reads its result.
        let rows = sqlx::query(
            "SELECT player_id, rating, uncertainty, version, games, last_played_ms
             FROM ratings WHERE mode = $1 AND player_id = ANY($2)
             ORDER BY player_id FOR SHARE",
        )
        .bind(mode)
        .bind(ids)
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
        let mut seen = HashSet::new();
        let jobs: Vec<RatingJob> = jobs
            .iter()
            .filter(|j| seen.insert(j.matched.id.clone()))
            .cloned()
            .collect();
        ensure_rows(&self.pool, &plan::keys(&jobs), policies).await?;
        let mut tx = self.pool.begin().await?;
        // Claim the match ids: only the ones no batch recorded before are applied.
        let (ids, modes, outcomes): (Vec<String>, Vec<String>, Vec<String>) = jobs
            .iter()
            .map(|j| {
                let outcome = scorable(j).map_or_else(|e| e.to_string(), |()| "scored".into());
                (j.matched.id.to_string(), j.matched.mode.clone(), outcome)
            })
            .collect();
        let claimed: HashSet<String> = sqlx::query(
            "INSERT INTO rated_matches (match_id, mode, outcome, applied_ms)
             SELECT i, m, o, $4 FROM UNNEST($1::text[], $2::text[], $3::text[]) AS t(i, m, o)
             ON CONFLICT DO NOTHING RETURNING match_id",
        )
        .bind(&ids)
        .bind(&modes)
        .bind(&outcomes)
        .bind(now as i64)
        .fetch_all(&mut *tx)
        .await?
        .iter()
        .map(|r| r.try_get("match_id"))
        .collect::<Result<_, _>>()?;
        let (fresh, old): (Vec<RatingJob>, Vec<RatingJob>) = jobs
            .into_iter()
            .partition(|j| claimed.contains(j.matched.id.as_str()));
        let mut applied = Vec::new();
        if !old.is_empty() {
            let old_ids: Vec<String> = old.iter().map(|j| j.matched.id.to_string()).collect();
            let earlier = sqlx::query(
                "SELECT mode, match_id, player_id, version, old_rating, old_uncertainty, old_version,
                        new_rating, new_uncertainty, rank, abandoned
                 FROM rating_history WHERE match_id = ANY($1) ORDER BY player_id",
            )
            .bind(&old_ids)
            .fetch_all(&mut *tx)
            .await?
            .iter()
            .map(change)
            .collect::<Result<Vec<_>, _>>()?;
            let outcomes: HashMap<String, String> =
                sqlx::query("SELECT match_id, outcome FROM rated_matches WHERE match_id = ANY($1)")
                    .bind(&old_ids)
                    .fetch_all(&mut *tx)
                    .await?
                    .iter()
                    .map(|r| Ok((r.try_get("match_id")?, r.try_get("outcome")?)))
                    .collect::<Result<_, sqlx::Error>>()?;
            applied.extend(plan::replay(&old, earlier, &outcomes));
        }
        if !fresh.is_empty() {
            let keys = plan::keys(&fresh);
            let (km, kp): (Vec<String>, Vec<String>) =
                keys.iter().map(|(m, p)| (m.clone(), p.to_string())).unzip();
            let locked = sqlx::query(
                "SELECT mode, player_id, rating, uncertainty, version, games, last_played_ms
                 FROM ratings
                 WHERE (mode, player_id) IN (SELECT * FROM UNNEST($1::text[], $2::text[]))
                 ORDER BY mode, player_id FOR UPDATE",
            )
            .bind(&km)
            .bind(&kp)
            .fetch_all(&mut *tx)
            .await?;
            let mut rows = HashMap::with_capacity(locked.len());
            for r in &locked {
                let player = PlayerId::new(r.try_get::<String, _>("player_id")?).map_err(decode)?;
                rows.insert((r.try_get("mode")?, player), stored(r)?);
            }
            let p = plan::plan(&fresh, &rows, policies, now);
            write(&mut tx, &p, now).await?;
            applied.extend(p.applied);
        }
        Ok(Box::new(TxPending { tx, applied }))
    }

    async fn player(&self, player: &PlayerId) -> Result<Vec<ModeRating>, RatingError> {
        let rows = sqlx::query(
            "SELECT mode, player_id, rating, uncertainty, version, games, last_played_ms
             FROM ratings WHERE player_id = $1 AND version > 0 ORDER BY mode",
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
             FROM rating_history WHERE mode = $1 AND player_id = $2
             ORDER BY version DESC LIMIT $3",
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
             FROM ratings WHERE mode = $1 AND version > 0
             ORDER BY display DESC, player_id LIMIT $2 OFFSET $3",
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
             FROM ratings r WHERE r.mode = $1 AND r.player_id = $2 AND r.version > 0",
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
        let idle_before = now.saturating_sub(d.after_ms) as i64;
        let rows = sqlx::query(
            "SELECT player_id, rating, uncertainty, version, games, last_played_ms, display
             FROM ratings WHERE mode = $1 AND version > 0 AND last_played_ms < $2 AND rating > $3",
        )
        .bind(mode)
        .bind(idle_before)
        .bind(d.floor)
        .fetch_all(&self.pool)
        .await?;
        let (mut players, mut displays) = (vec![], vec![]);
        for r in &rows {
            let s = stored(r)?;
            let value = policy.matching_value(&policy.decayed(s.skill, s.last_played, now));
            if value != r.try_get::<f64, _>("display")? {
                players.push(r.try_get::<String, _>("player_id")?);
                displays.push(value);
            }
        }
        let done = sqlx::query(
            "UPDATE ratings AS r SET display = u.d
             FROM UNNEST($2::text[], $3::float8[]) AS u(p, d)
             WHERE r.mode = $1 AND r.player_id = u.p",
        )
        .bind(mode)
        .bind(players)
        .bind(displays)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected())
    }

    async fn versions(&self) -> Result<Vec<(PlayerId, String, u64)>, RatingError> {
        let rows = sqlx::query("SELECT player_id, mode, version FROM ratings WHERE version > 0")
            .fetch_all(&self.pool)
            .await?;
        Ok(crate::rows::versions(&rows)?)
    }

    async fn is_applied(&self, id: &MatchId) -> Result<bool, RatingError> {
        Ok(
            sqlx::query("SELECT 1 AS one FROM rated_matches WHERE match_id = $1")
                .bind(id.as_str())
                .fetch_optional(&self.pool)
                .await?
                .is_some(),
        )
    }

    async fn audit(&self, mode: &str) -> Result<Vec<(PlayerId, u64, MatchId)>, RatingError> {
        let rows = sqlx::query(
            "SELECT player_id, version, match_id FROM rating_history WHERE mode = $1
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

/// Writes a batch's rows and history in two statements.
async fn write(
    tx: &mut Transaction<'static, Postgres>,
    p: &Plan,
    now: Millis,
) -> Result<(), RatingError> {
    let n = p.rows.len();
    let (mut modes, mut players, mut ratings, mut uncs, mut displays) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    let (mut versions, mut games, mut played) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for w in &p.rows {
        modes.push(w.mode.as_str());
        players.push(w.player.as_str());
        ratings.push(w.stored.skill.rating);
        uncs.push(w.stored.skill.uncertainty);
        displays.push(w.display);
        versions.push(w.stored.skill.version as i64);
        games.push(w.stored.games as i64);
        played.push(w.stored.last_played as i64);
    }
    sqlx::query(
        "UPDATE ratings AS r
         SET rating = u.r, uncertainty = u.u, display = u.d, version = u.v, games = u.g, last_played_ms = u.l
         FROM UNNEST($1::text[], $2::text[], $3::float8[], $4::float8[], $5::float8[], $6::int8[], $7::int8[], $8::int8[])
              AS u(m, p, r, u, d, v, g, l)
         WHERE r.mode = u.m AND r.player_id = u.p",
    )
    .bind(modes)
    .bind(players)
    .bind(ratings)
    .bind(uncs)
    .bind(displays)
    .bind(versions)
    .bind(games)
    .bind(played)
    .execute(&mut **tx)
    .await?;
    let h = &p.history;
    let col = |f: &dyn Fn(&(String, String, Change)) -> f64| h.iter().map(f).collect::<Vec<f64>>();
    let opt = |f: &dyn Fn(&Change) -> Option<f64>| h.iter().map(|x| f(&x.2)).collect::<Vec<_>>();
    sqlx::query(
        "INSERT INTO rating_history (mode, player_id, version, match_id, old_rating, old_uncertainty,
                                     old_version, new_rating, new_uncertainty, rank, abandoned, at_ms)
         SELECT m, p, v, i, orat, ounc, over, nrat, nunc, rk, ab, $12
         FROM UNNEST($1::text[], $2::text[], $3::int8[], $4::text[], $5::float8[], $6::float8[],
                     $7::int8[], $8::float8[], $9::float8[], $10::int4[], $11::bool[])
              AS t(m, p, v, i, orat, ounc, over, nrat, nunc, rk, ab)",
    )
    .bind(h.iter().map(|x| x.0.as_str()).collect::<Vec<_>>())
    .bind(h.iter().map(|x| x.2.player.as_str()).collect::<Vec<_>>())
    .bind(h.iter().map(|x| x.2.new.version as i64).collect::<Vec<_>>())
    .bind(h.iter().map(|x| x.1.as_str()).collect::<Vec<_>>())
    .bind(col(&|x| x.2.old.rating))
    .bind(opt(&|c| c.old.uncertainty))
    .bind(h.iter().map(|x| x.2.old.version as i64).collect::<Vec<_>>())
    .bind(col(&|x| x.2.new.rating))
    .bind(opt(&|c| c.new.uncertainty))
    .bind(h.iter().map(|x| x.2.rank as i32).collect::<Vec<_>>())
    .bind(h.iter().map(|x| x.2.abandoned).collect::<Vec<_>>())
    .bind(now as i64)
    .execute(&mut **tx)
    .await?;
    Ok(())
}
