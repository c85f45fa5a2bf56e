//! [`Lifecycle`] on Redis. A match's lifecycle hash and the due set live in its
//! pool's slot, so every status change is one script there (`answer.lua`,
//! `presence.lua`, `transition.lua`, `step_done.lua`). Unwinding a match that ended
//! crosses slots (players, their tickets' other pools) and is made of idempotent
//! single-slot scripts (`unwind_player.lua`, `unwind_entry.lua`), repeated by the
//! saga until it is marked done.

use super::{PLAYER_TTL_SECS, RedisStore};
use crate::keys::{PlayerKeys, PoolKeys};
use crate::{AnswerOutcome, Lifecycle, StoreError, Transition};
use async_trait::async_trait;
use futures_util::future::try_join_all;
use mm_domain::{
    Answer, Match, MatchId, MatchRecord, MatchStatus, Millis, PlayerId, Pool, STEP_GRACE_MS,
    TicketFate, TicketStatus, now_ms,
};
use redis::AsyncCommands;
use std::collections::{BTreeMap, HashMap};

fn corrupt(what: &str, v: &str) -> StoreError {
    StoreError::Corrupt(format!("{what}: {v:?}"))
}

impl RedisStore {
    /// A match with its lifecycle, and whether it is still in the outbox.
    pub(super) async fn read_record(
        &self,
        pool: &Pool,
        id: &MatchId,
    ) -> Result<Option<(MatchRecord, bool)>, StoreError> {
        let keys = PoolKeys::new(pool);
        let (json, life, outbox): (Option<String>, HashMap<String, String>, Option<f64>) =
            redis::pipe()
                .hget(&keys.matches, id.as_str())
                .hgetall(keys.life(id.as_str()))
                .zscore(&keys.outbox, id.as_str())
                .query_async(&mut self.conn())
                .await?;
        let Some(json) = json else {
            return Ok(None);
        };
        let matched: Match = serde_json::from_str(&json)?;
        let formed_placing = matched.lifecycle.initial_status() == MatchStatus::Placing;
        let created_at = matched.created_at;
        let mut record = MatchRecord {
            matched,
            status: MatchStatus::Completed,
            reason: None,
            deadline: None,
            answers: BTreeMap::new(),
            disconnected: BTreeMap::new(),
            placing_since: None,
            server: None,
            result: None,
            // A match from before lifecycles were stored is simply over.
            settled: life.is_empty(),
            fills: Vec::new(),
            joined: None,
            left: BTreeMap::new(),
        };
        for (field, value) in life {
            match field.as_str() {
                "st" => {
                    record.status =
                        MatchStatus::parse(&value).ok_or_else(|| corrupt("status", &value))?
                }
                "why" => record.reason = Some(value),
                "dl" => record.deadline = value.parse().ok(),
                "ps" => record.placing_since = value.parse().ok(),
                "srv" => record.server = Some(serde_json::from_str(&value)?),
                "res" => record.result = Some(serde_json::from_str(&value)?),
                "set" => record.settled = true,
                "jat" => {
                    record.joined.get_or_insert_with(Default::default).at =
                        value.parse().unwrap_or(0)
                }
                "nt" => record.joined.get_or_insert_with(Default::default).notified = true,
                "ak" => {
                    record
                        .joined
                        .get_or_insert_with(Default::default)
                        .acknowledged = true
                }
                "fl" => {
                    record.fills = value
                        .split(',')
                        .filter_map(|f| MatchId::new(f).ok())
                        .collect()
                }
                _ => {
                    if let Some(p) = field.strip_prefix("a:") {
                        let answer = match value.as_str() {
                            "a" => Answer::Accepted,
                            "d" => Answer::Declined,
                            _ => return Err(corrupt("answer", &value)),
                        };
                        if let Ok(p) = PlayerId::new(p) {
                            record.answers.insert(p, answer);
                        }
                    } else if let Some(p) = field.strip_prefix("l:")
                        && let (Ok(p), Ok(at)) = (PlayerId::new(p), value.parse())
                    {
                        record.left.insert(p, at);
                    } else if let Some(p) = field.strip_prefix("g:")
                        && let (Ok(p), Ok(at)) = (PlayerId::new(p), value.parse())
                    {
                        record.disconnected.insert(p, at);
                    }
                }
            }
        }
        if formed_placing && record.placing_since.is_none() {
            record.placing_since = Some(created_at);
        }
        Ok(Some((record, outbox.is_some())))
    }

    /// Hands one ticket of an ended match back (see [`Lifecycle::unwind`]).
    async fn unwind_ticket(
        &self,
        pool: &Pool,
        record: &MatchRecord,
        ticket: &mm_domain::MatchTicket,
        ban_until: Millis,
        now: Millis,
    ) -> Result<(), StoreError> {
        let mid = record.matched.id.as_str();
        let fate = record.fate(&ticket.players);
        let at_fault = record.at_fault();
        let mark = format!("{mid}|{}", pool.name());
        // The ticket's pools, from its first player's index (the home pool first).
        let pools: Vec<Pool> = match ticket.players.first() {
            Some(p) => {
                let raw: Option<String> = self
                    .conn()
                    .hget(PlayerKeys::new(p).tickets, ticket.ticket_id.as_str())
                    .await?;
                raw.iter()
                    .flat_map(|r| crate::keys::indexed_pools(r))
                    .filter_map(Pool::parse)
                    .collect()
            }
            None => Vec::new(),
        };
        let pools = if pools.is_empty() {
            vec![pool.clone()]
        } else {
            pools
        };
        let restore = match fate {
            TicketFate::Requeue => format!(
                "{}|{}",
                ticket.ticket_id,
                pools.iter().map(Pool::name).collect::<Vec<_>>().join(",")
            ),
            _ => String::new(),
        };
        // Players first: a requeued ticket is live again in their index before it
        // is back in any queue.
        let players = ticket.players.iter().map(|p| {
            let pk = PlayerKeys::new(p);
            let banned = at_fault.contains(p) && ban_until > now;
            let (mark, restore) = (&mark, &restore);
            async move {
                let _: i64 = self
                    .scripts
                    .unwind_player
                    .key(&pk.in_match)
                    .key(&pk.ban)
                    .key(&pk.active)
                    .arg(mark)
                    .arg(if banned {
                        ban_until.to_string()
                    } else {
                        String::new()
                    })
                    .arg(if banned { ban_until - now } else { 0 })
                    .arg(&record.matched.mode)
                    .arg(restore)
                    .arg(PLAYER_TTL_SECS)
                    .invoke_async(&mut self.conn())
                    .await?;
                Ok::<_, StoreError>(())
            }
        });
        try_join_all(players).await?;
        let (action, end_state) = match &fate {
            TicketFate::Requeue => ("requeue", String::new()),
            TicketFate::End { status, reason } => (
                "end",
                if *status == TicketStatus::TimedOut {
                    format!("t:{reason}")
                } else {
                    format!("w:{reason}")
                },
            ),
            TicketFate::Stay => return Ok(()),
        };
        let entries = pools.iter().map(|p| {
            let keys = PoolKeys::new(p);
            let end_state = &end_state;
            async move {
                let _: i64 = self
                    .scripts
                    .unwind_entry
                    .key(&keys.queue)
                    .key(&keys.state)
                    .key(&keys.done)
                    .key(&keys.since)
                    .key(&keys.armed)
                    .key(&keys.leader)
                    .key(&keys.arrivals)
                    .key(&keys.tickets)
                    .arg(ticket.ticket_id.as_str())
                    .arg(mid)
                    .arg(action)
                    .arg(ticket.rating)
                    .arg(end_state)
                    .arg(ticket.enqueued_at)
                    .arg(crate::keys::WAKE_CHANNEL)
                    .arg(p.name())
                    .arg(mm_domain::LANE_SPAN)
                    .arg(mm_domain::LANES)
                    .arg(mm_domain::MIN_RATING)
                    .arg(mm_domain::MAX_RATING)
                    .invoke_async(&mut self.conn())
                    .await?;
                Ok::<_, StoreError>(())
            }
        });
        try_join_all(entries).await?;
        Ok(())
    }
}

#[async_trait]
impl Lifecycle for RedisStore {
    async fn current_match(
        &self,
        player: &PlayerId,
    ) -> Result<Option<(Pool, MatchId)>, StoreError> {
        let mark: Option<String> = self.conn().get(PlayerKeys::new(player).in_match).await?;
        let Some(mark) = mark else {
            return Ok(None);
        };
        let Some(mid) = self.ongoing(&mark).await? else {
            return Ok(None);
        };
        let pool = mark
            .split_once('|')
            .and_then(|(_, p)| Pool::parse(p))
            .ok_or_else(|| corrupt("in-match mark", &mark))?;
        Ok(Some((pool, mid)))
    }

    async fn match_record(
        &self,
        pool: &Pool,
        id: &MatchId,
    ) -> Result<Option<(MatchRecord, bool)>, StoreError> {
        self.read_record(pool, id).await
    }

    async fn answer(
        &self,
        pool: &Pool,
        id: &MatchId,
        player: &PlayerId,
        answer: Answer,
    ) -> Result<AnswerOutcome, StoreError> {
        let keys = PoolKeys::new(pool);
        let out: Vec<String> = self
            .scripts
            .answer
            .key(keys.life(id.as_str()))
            .key(&keys.due)
            .arg(id.as_str())
            .arg(player.as_str())
            .arg(match answer {
                Answer::Accepted => "a",
                Answer::Declined => "d",
            })
            .arg(STEP_GRACE_MS)
            .invoke_async(&mut self.conn())
            .await?;
        let num =
            |i: usize| -> usize { out.get(i).and_then(|v| v.parse().ok()).unwrap_or_default() };
        Ok(match out.first().map(String::as_str) {
            Some("declined") => AnswerOutcome::Declined,
            Some("accepted") => AnswerOutcome::Accepted {
                accepted: num(1),
                total: num(2),
            },
            Some("all") => AnswerOutcome::AllAccepted {
                next: out
                    .get(1)
                    .and_then(|s| MatchStatus::parse(s))
                    .ok_or_else(|| corrupt("answer", &out.join(",")))?,
                total: num(2),
            },
            Some("closed") => AnswerOutcome::Closed(
                out.get(1)
                    .and_then(|s| MatchStatus::parse(s))
                    .ok_or_else(|| corrupt("answer", &out.join(",")))?,
            ),
            _ => AnswerOutcome::NotFound,
        })
    }

    async fn presence(
        &self,
        pool: &Pool,
        id: &MatchId,
        player: &PlayerId,
        connected: bool,
    ) -> Result<(), StoreError> {
        let keys = PoolKeys::new(pool);
        let _: i64 = self
            .scripts
            .presence
            .key(keys.life(id.as_str()))
            .key(&keys.due)
            .arg(id.as_str())
            .arg(player.as_str())
            .arg(if connected { "back" } else { "gone" })
            .invoke_async(&mut self.conn())
            .await?;
        Ok(())
    }

    async fn transition(
        &self,
        pool: &Pool,
        id: &MatchId,
        t: Transition,
    ) -> Result<bool, StoreError> {
        let keys = PoolKeys::new(pool);
        let from: Vec<&str> = t.from.iter().map(|s| s.as_str()).collect();
        let mut inv = self.scripts.transition.prepare_invoke();
        inv.key(keys.life(id.as_str()))
            .key(&keys.due)
            .key(&keys.results)
            .key(&keys.results_queue)
            .arg(id.as_str())
            .arg(from.join(","))
            .arg(t.to.as_str())
            .arg(t.reason.unwrap_or_default())
            .arg(match &t.server {
                Some(s) => serde_json::to_string(s)?,
                None => String::new(),
            })
            .arg(match &t.result {
                Some(r) => serde_json::to_string(r)?,
                None => String::new(),
            })
            .arg(t.due.map(|d| d.to_string()).unwrap_or_default())
            .arg(match &t.rating {
                Some(job) => serde_json::to_string(job)?,
                None => String::new(),
            });
        for (p, a) in &t.answers {
            inv.arg(p.as_str()).arg(match a {
                Answer::Accepted => "a",
                Answer::Declined => "d",
            });
        }
        let applied: i64 = inv.invoke_async(&mut self.conn()).await?;
        Ok(applied == 1)
    }

    async fn due(&self, pool: &Pool, limit: usize) -> Result<Vec<MatchId>, StoreError> {
        let keys = PoolKeys::new(pool);
        let now = self.server_now().await?;
        let ids: Vec<String> = self
            .conn()
            .zrangebyscore_limit(&keys.due, "-inf", now, 0, limit as isize)
            .await?;
        Ok(ids
            .into_iter()
            .filter_map(|i| MatchId::new(i).ok())
            .collect())
    }

    async fn reschedule(&self, pool: &Pool, id: &MatchId, at: Millis) -> Result<(), StoreError> {
        let keys = PoolKeys::new(pool);
        let _: i64 = redis::cmd("ZADD")
            .arg(&keys.due)
            .arg("XX")
            .arg(at)
            .arg(id.as_str())
            .query_async(&mut self.conn())
            .await?;
        Ok(())
    }

    async fn unwind(
        &self,
        pool: &Pool,
        record: &MatchRecord,
        ban_until: Millis,
    ) -> Result<(), StoreError> {
        let now = now_ms();
        let tickets = record
            .matched
            .tickets
            .iter()
            .map(|t| self.unwind_ticket(pool, record, t, ban_until, now));
        try_join_all(tickets).await?;
        Ok(())
    }

    async fn step_done(
        &self,
        pool: &Pool,
        id: &MatchId,
        status: MatchStatus,
    ) -> Result<bool, StoreError> {
        let keys = PoolKeys::new(pool);
        let marked: i64 = self
            .scripts
            .step_done
            .key(keys.life(id.as_str()))
            .key(&keys.due)
            .key(&keys.done)
            .arg(id.as_str())
            .arg(status.as_str())
            .arg(if status.is_terminal() { "1" } else { "0" })
            .invoke_async(&mut self.conn())
            .await?;
        Ok(marked == 1)
    }
}
