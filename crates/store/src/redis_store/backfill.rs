//! [`Backfills`] on Redis: one hash of backfills per pool, beside the matches'
//! lifecycle hashes in the pool's slot (`backfill_open.lua`,
//! `backfill_close.lua`, `backfill_list.lua`, `backfill_refresh.lua`, `backfill_left.lua`, `backfill_join.lua`,
//! `backfill_return.lua`; a fill's commit is checked in `complete.lua`).

use super::RedisStore;
use crate::keys::PoolKeys;
use crate::{
    Backfill, BackfillOutcome, Backfills, FillMark, JoinOutcome, Lifecycle, StoreError,
    UnjoinOutcome,
};
use async_trait::async_trait;
use mm_domain::{Match, MatchId, MatchStatus, Pool};
use std::time::Duration;

/// A script's answer (`{'open', json}`, `{'not_running', status}`, ...) as an
/// outcome.
fn outcome(reply: Vec<String>) -> Result<BackfillOutcome, StoreError> {
    let corrupt = || StoreError::Corrupt(format!("backfill script answered {reply:?}"));
    match reply.first().map(String::as_str) {
        Some("open") => Ok(BackfillOutcome::Open(serde_json::from_str(
            reply.get(1).ok_or_else(corrupt)?,
        )?)),
        Some("closed") => Ok(BackfillOutcome::Closed),
        Some("no_match") => Ok(BackfillOutcome::NoMatch),
        Some("not_yours") => Ok(BackfillOutcome::NotYours),
        Some("not_running") => reply
            .get(1)
            .and_then(|s| MatchStatus::parse(s))
            .map(BackfillOutcome::NotRunning)
            .ok_or_else(corrupt),
        _ => Err(corrupt()),
    }
}

/// A match's joined fills as its lifecycle hash keeps them ('fl').
fn fills_field(fills: &[MatchId]) -> String {
    fills
        .iter()
        .map(MatchId::as_str)
        .collect::<Vec<_>>()
        .join(",")
}

impl RedisStore {
    /// Runs `script` (`backfill_join.lua` or `backfill_unjoin.lua`) on fill
    /// `fill` and its running match, with the match's new JSON built by
    /// `rewrite(running match, fill)` and `extra` as its last argument. The
    /// script is fenced by the match's list of joined fills: a race with
    /// another fill of the same match reads again. Answers the script's reply,
    /// or `["moved"]` (no such fill) or `["closed"]` (no running match).
    async fn rewrite_running(
        &self,
        pool: &Pool,
        fill: &MatchId,
        script: &redis::Script,
        extra: Option<&str>,
        rewrite: impl Fn(&Match, &Match) -> Match,
    ) -> Result<Vec<String>, StoreError> {
        let keys = PoolKeys::new(pool);
        let answer = |a: &str| Ok(vec![a.to_string()]);
        for _ in 0..16 {
            let Some((record, _)) = self.read_record(pool, fill).await? else {
                return answer("moved");
            };
            let Some(of) = record.matched.fills().cloned() else {
                return answer("moved");
            };
            let Some((running, _)) = self.match_record(pool, &of.match_id).await? else {
                return answer("closed");
            };
            let json = serde_json::to_string(&rewrite(&running.matched, &record.matched))?;
            let mut inv = script.prepare_invoke();
            inv.key(keys.life(fill.as_str()))
                .key(keys.life(of.match_id.as_str()))
                .key(&keys.matches)
                .key(&keys.due)
                .key(keys.archived(of.match_id.as_str()))
                .arg(fill.as_str())
                .arg(of.match_id.as_str())
                .arg(fills_field(&running.fills))
                .arg(json);
            if let Some(extra) = extra {
                inv.arg(extra);
            }
            let reply: Vec<String> = inv.invoke_async(&mut self.conn()).await?;
            if reply.first().map(String::as_str) != Some("stale") {
                return Ok(reply);
            }
        }
        Err(StoreError::Corrupt(format!(
            "fill {fill} lost the race for its match's list of fills 16 times"
        )))
    }

    async fn list_backfills(
        &self,
        pool: &Pool,
        id: Option<&MatchId>,
    ) -> Result<Vec<Backfill>, StoreError> {
        let keys = PoolKeys::new(pool);
        let raw: Vec<String> = self
            .scripts
            .backfill_list
            .key(&keys.backfills)
            .arg(&keys.life_prefix)
            .arg(id.map_or("", MatchId::as_str))
            .invoke_async(&mut self.conn())
            .await?;
        raw.iter()
            .map(|json| serde_json::from_str(json).map_err(StoreError::from))
            .collect()
    }
}

#[async_trait]
impl Backfills for RedisStore {
    async fn open_backfill(
        &self,
        pool: &Pool,
        id: &MatchId,
        server: Option<&str>,
        open: &[u32],
        ttl: Duration,
    ) -> Result<BackfillOutcome, StoreError> {
        if open.is_empty() {
            return self.close_backfill(pool, id, server).await;
        }
        let keys = PoolKeys::new(pool);
        let reply: Vec<String> = self
            .scripts
            .backfill_open
            .key(keys.life(id.as_str()))
            .key(&keys.backfills)
            .arg(id.as_str())
            .arg(server.unwrap_or(""))
            .arg(serde_json::to_string(open)?)
            .arg(ttl.as_millis() as u64)
            .arg(crate::keys::WAKE_CHANNEL)
            .arg(pool.name())
            .invoke_async(&mut self.conn())
            .await?;
        outcome(reply)
    }

    async fn close_backfill(
        &self,
        pool: &Pool,
        id: &MatchId,
        server: Option<&str>,
    ) -> Result<BackfillOutcome, StoreError> {
        let keys = PoolKeys::new(pool);
        let reply: Vec<String> = self
            .scripts
            .backfill_close
            .key(keys.life(id.as_str()))
            .key(&keys.backfills)
            .arg(id.as_str())
            .arg(server.unwrap_or(""))
            .invoke_async(&mut self.conn())
            .await?;
        outcome(reply)
    }

    async fn player_left(
        &self,
        pool: &Pool,
        id: &MatchId,
        server: Option<&str>,
        player: &mm_domain::PlayerId,
    ) -> Result<bool, StoreError> {
        let keys = PoolKeys::new(pool);
        let done: i64 = self
            .scripts
            .backfill_left
            .key(keys.life(id.as_str()))
            .arg(server.unwrap_or(""))
            .arg(player.as_str())
            .invoke_async(&mut self.conn())
            .await?;
        Ok(done == 1)
    }

    async fn refresh_backfill(
        &self,
        pool: &Pool,
        id: &MatchId,
        server: Option<&str>,
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        let keys = PoolKeys::new(pool);
        let done: i64 = self
            .scripts
            .backfill_refresh
            .key(keys.life(id.as_str()))
            .key(&keys.backfills)
            .arg(id.as_str())
            .arg(server.unwrap_or(""))
            .arg(ttl.as_millis() as u64)
            .invoke_async(&mut self.conn())
            .await?;
        Ok(done == 1)
    }

    async fn backfill(&self, pool: &Pool, id: &MatchId) -> Result<Option<Backfill>, StoreError> {
        Ok(self.list_backfills(pool, Some(id)).await?.pop())
    }

    async fn open_backfills(&self, pool: &Pool) -> Result<Vec<Backfill>, StoreError> {
        Ok(crate::backfill::with_seats(
            self.list_backfills(pool, None).await?,
        ))
    }

    async fn join_fill(&self, pool: &Pool, fill: &MatchId) -> Result<JoinOutcome, StoreError> {
        let reply = self
            .rewrite_running(
                pool,
                fill,
                &self.scripts.backfill_join,
                None,
                |running, f| {
                    let mut joined = running.clone();
                    joined.tickets.extend(f.tickets.iter().cloned());
                    joined
                },
            )
            .await?;
        match reply.first().map(String::as_str) {
            Some("joined") => {
                let server = reply.get(1).map_or("{}", String::as_str);
                Ok(JoinOutcome::Joined(serde_json::from_str(server)?))
            }
            Some("closed") => Ok(JoinOutcome::Closed),
            Some("moved") => Ok(JoinOutcome::Moved),
            _ => Err(StoreError::Corrupt(format!(
                "backfill_join answered {reply:?}"
            ))),
        }
    }

    async fn mark_fill(
        &self,
        pool: &Pool,
        fill: &MatchId,
        mark: FillMark,
    ) -> Result<bool, StoreError> {
        let keys = PoolKeys::new(pool);
        let done: i64 = self
            .scripts
            .backfill_mark
            .key(keys.life(fill.as_str()))
            .key(&keys.due)
            .arg(fill.as_str())
            .arg(match mark {
                FillMark::Notified => "nt",
                FillMark::Acknowledged => "ak",
            })
            .invoke_async(&mut self.conn())
            .await?;
        Ok(done == 1)
    }

    async fn unjoin_fill(
        &self,
        pool: &Pool,
        fill: &MatchId,
        reason: &str,
    ) -> Result<UnjoinOutcome, StoreError> {
        let reply = self
            .rewrite_running(
                pool,
                fill,
                &self.scripts.backfill_unjoin,
                Some(reason),
                |running, f| {
                    let ours: Vec<&mm_domain::TicketId> =
                        f.tickets.iter().map(|t| &t.ticket_id).collect();
                    let mut kept = running.clone();
                    kept.tickets.retain(|t| !ours.contains(&&t.ticket_id));
                    kept.decided
                        .roles
                        .retain(|p, _| !f.decided.roles.contains_key(p));
                    kept
                },
            )
            .await?;
        match reply.first().map(String::as_str) {
            Some("done") => Ok(UnjoinOutcome::Done),
            Some("closed") => Ok(UnjoinOutcome::Closed),
            Some("moved") => Ok(UnjoinOutcome::Moved),
            _ => Err(StoreError::Corrupt(format!(
                "backfill_unjoin answered {reply:?}"
            ))),
        }
    }

    async fn return_seats(&self, pool: &Pool, fill: &Match) -> Result<bool, StoreError> {
        let Some(of) = fill.fills() else {
            return Ok(false);
        };
        let keys = PoolKeys::new(pool);
        let sizes: Vec<String> = fill.team_sizes().iter().map(u32::to_string).collect();
        let back: i64 = self
            .scripts
            .backfill_return
            .key(keys.life(fill.id.as_str()))
            .key(&keys.backfills)
            .key(keys.life(of.match_id.as_str()))
            .arg(of.match_id.as_str())
            .arg(sizes.join(","))
            .invoke_async(&mut self.conn())
            .await?;
        Ok(back == 1)
    }
}
