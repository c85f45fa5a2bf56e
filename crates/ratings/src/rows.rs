//! What both SQL backends share: the migrator over one embedded file, decoding
//! rating, history and leaderboard rows (the same column names and types in both
//! dialects), and the open transaction a batch waits in until [`Pending::commit`].

use crate::model::Change;
use crate::storage::{Applied, BoardRow, HistoryEntry, Pending, RatingError, Stored};
use async_trait::async_trait;
use mm_domain::{IdError, MatchId, PlayerId, Skill};
use sqlx::{ColumnIndex, Database, Decode, Row, Transaction, Type};
use std::collections::HashMap;

/// The migrations of one dialect: the single schema file, version 1.
pub(crate) fn migrator(sql: &'static str) -> sqlx::migrate::Migrator {
    use sqlx::SqlSafeStr;
    sqlx::migrate::Migrator::with_migrations(vec![sqlx::migrate::Migration::new(
        1,
        "ratings".into(),
        sqlx::migrate::MigrationType::Simple,
        sql.into_sql_str(),
        false,
    )])
}

pub(crate) fn decode(e: IdError) -> sqlx::Error {
    sqlx::Error::Decode(Box::new(e))
}

/// Columns `rating`, `uncertainty`, `version`, `games`, `last_played_ms`.
pub(crate) fn stored<'r, R>(row: &'r R) -> Result<Stored, sqlx::Error>
where
    R: Row,
    &'static str: ColumnIndex<R>,
    f64: Decode<'r, R::Database> + Type<R::Database>,
    Option<f64>: Decode<'r, R::Database> + Type<R::Database>,
    i64: Decode<'r, R::Database> + Type<R::Database>,
{
    Ok(Stored {
        skill: Skill {
            rating: row.try_get("rating")?,
            uncertainty: row.try_get("uncertainty")?,
            version: row.try_get::<i64, _>("version")? as u64,
        },
        games: row.try_get::<i64, _>("games")? as u64,
        last_played: row.try_get::<i64, _>("last_played_ms")? as u64,
    })
}

/// A history row as (mode, match id, change).
pub(crate) fn change<'r, R>(row: &'r R) -> Result<(String, String, Change), sqlx::Error>
where
    R: Row,
    &'static str: ColumnIndex<R>,
    f64: Decode<'r, R::Database> + Type<R::Database>,
    Option<f64>: Decode<'r, R::Database> + Type<R::Database>,
    i64: Decode<'r, R::Database> + Type<R::Database>,
    i32: Decode<'r, R::Database> + Type<R::Database>,
    bool: Decode<'r, R::Database> + Type<R::Database>,
    String: Decode<'r, R::Database> + Type<R::Database>,
{
    Ok((
        row.try_get("mode")?,
        row.try_get("match_id")?,
        Change {
            player: PlayerId::new(row.try_get::<String, _>("player_id")?).map_err(decode)?,
            old: Skill {
                rating: row.try_get("old_rating")?,
                uncertainty: row.try_get("old_uncertainty")?,
                version: row.try_get::<i64, _>("old_version")? as u64,
            },
            new: Skill {
                rating: row.try_get("new_rating")?,
                uncertainty: row.try_get("new_uncertainty")?,
                version: row.try_get::<i64, _>("version")? as u64,
            },
            rank: row.try_get::<i32, _>("rank")? as u32,
            abandoned: row.try_get("abandoned")?,
        },
    ))
}

/// A history row (with `at_ms`) as the API's entry.
pub(crate) fn history_entry<'r, R>(row: &'r R) -> Result<HistoryEntry, sqlx::Error>
where
    R: Row,
    &'static str: ColumnIndex<R>,
    f64: Decode<'r, R::Database> + Type<R::Database>,
    Option<f64>: Decode<'r, R::Database> + Type<R::Database>,
    i64: Decode<'r, R::Database> + Type<R::Database>,
    i32: Decode<'r, R::Database> + Type<R::Database>,
    bool: Decode<'r, R::Database> + Type<R::Database>,
    String: Decode<'r, R::Database> + Type<R::Database>,
{
    let (mode, id, c) = change(row)?;
    Ok(HistoryEntry {
        match_id: MatchId::new(id).map_err(decode)?,
        mode,
        old: c.old,
        new: c.new,
        rank: c.rank,
        abandoned: c.abandoned,
        at: row.try_get::<i64, _>("at_ms")? as u64,
    })
}

/// A rating row (with `player_id` and `display`) as leaderboard row `rank`.
pub(crate) fn board_row<'r, R>(row: &'r R, rank: u64) -> Result<BoardRow, sqlx::Error>
where
    R: Row,
    &'static str: ColumnIndex<R>,
    f64: Decode<'r, R::Database> + Type<R::Database>,
    Option<f64>: Decode<'r, R::Database> + Type<R::Database>,
    i64: Decode<'r, R::Database> + Type<R::Database>,
    String: Decode<'r, R::Database> + Type<R::Database>,
{
    let s = stored(row)?;
    Ok(BoardRow {
        rank,
        player: PlayerId::new(row.try_get::<String, _>("player_id")?).map_err(decode)?,
        value: row.try_get("display")?,
        skill: s.skill,
        games: s.games,
    })
}

/// A row's `player_id` and the `version` beside it, with `other` (a text column).
pub(crate) fn versioned<'r, R>(
    row: &'r R,
    other: &'static str,
) -> Result<(PlayerId, u64, String), sqlx::Error>
where
    R: Row,
    &'static str: ColumnIndex<R>,
    i64: Decode<'r, R::Database> + Type<R::Database>,
    String: Decode<'r, R::Database> + Type<R::Database>,
{
    Ok((
        PlayerId::new(row.try_get::<String, _>("player_id")?).map_err(decode)?,
        row.try_get::<i64, _>("version")? as u64,
        row.try_get(other)?,
    ))
}

/// Every `(player, mode, version)` of rows with `player_id`, `mode`, `version`.
pub(crate) fn versions<'r, R>(rows: &'r [R]) -> Result<Vec<(PlayerId, String, u64)>, sqlx::Error>
where
    R: Row,
    &'static str: ColumnIndex<R>,
    i64: Decode<'r, R::Database> + Type<R::Database>,
    String: Decode<'r, R::Database> + Type<R::Database>,
{
    rows.iter()
        .map(|r| {
            let (player, version, mode) = versioned(r, "mode")?;
            Ok((player, mode, version))
        })
        .collect()
}

/// The rated rows among `rows` (with `player_id`), in the order of `players`.
pub(crate) fn in_order<'r, R>(
    players: &[PlayerId],
    rows: &'r [R],
) -> Result<Vec<Option<Stored>>, RatingError>
where
    R: Row,
    &'static str: ColumnIndex<R>,
    f64: Decode<'r, R::Database> + Type<R::Database>,
    Option<f64>: Decode<'r, R::Database> + Type<R::Database>,
    i64: Decode<'r, R::Database> + Type<R::Database>,
    String: Decode<'r, R::Database> + Type<R::Database>,
{
    let mut found: HashMap<String, Stored> = HashMap::with_capacity(rows.len());
    for r in rows {
        let s = stored(r)?;
        if s.skill.version > 0 {
            found.insert(r.try_get("player_id")?, s);
        }
    }
    Ok(players
        .iter()
        .map(|p| found.get(p.as_str()).copied())
        .collect())
}

/// A batch applied in an open transaction.
pub(crate) struct TxPending<DB: Database> {
    pub tx: Transaction<'static, DB>,
    pub applied: Vec<Applied>,
}

#[async_trait]
impl<DB: Database> Pending for TxPending<DB> {
    fn applied(&self) -> &[Applied] {
        &self.applied
    }

    async fn commit(self: Box<Self>) -> Result<(), RatingError> {
        self.tx.commit().await?;
        Ok(())
    }
}
