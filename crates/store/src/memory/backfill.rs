//! [`Backfills`] in process memory: the same checks as the Redis scripts
//! (`backfill_open.lua`, `backfill_close.lua`, `backfill_list.lua`,
//! `backfill_join.lua`, `backfill_return.lua`, and the fill check in
//! `complete.lua`), each under the store's one lock.

use super::{MemoryStore, PoolState};
use crate::{
    Backfill, BackfillOutcome, Backfills, FillMark, JoinOutcome, StoreError, UnjoinOutcome,
};
use async_trait::async_trait;
use mm_domain::{Match, MatchId, MatchStatus, Millis, Pool, now_ms};
use std::time::Duration;

/// Whether fill `m` may commit in `ps` at `now`: its backfill is open, live,
/// at the generation the fill read and has its seats (`complete.lua`'s check).
/// Not a fill: true.
pub(super) fn fill_fits(ps: &PoolState, m: &Match, now: Millis) -> bool {
    let Some(of) = m.fills() else {
        return true;
    };
    live(ps, &of.match_id, now)
        .is_some_and(|b| crate::backfill::has_room(&b, of.generation, &m.team_sizes(), now))
}

/// Takes fill `m`'s seats from its backfill (checked by [`fill_fits`]) and
/// raises the generation.
pub(super) fn take_seats(ps: &mut PoolState, m: &Match) {
    let Some(of) = m.fills() else {
        return;
    };
    if let Some((b, _)) = ps.backfills.get_mut(&of.match_id) {
        for (team, n) in m.team_sizes().into_iter().enumerate() {
            if let Some(o) = b.open.get_mut(team) {
                *o = o.saturating_sub(n);
            }
        }
        b.generation += 1;
    }
}

/// Whether `server` may act on match `id` of `ps`: the outcome that refuses
/// it, if any.
fn refusal(ps: &PoolState, id: &MatchId, server: Option<&str>) -> Option<BackfillOutcome> {
    let Some(record) = ps.lives.get(id) else {
        return Some(BackfillOutcome::NoMatch);
    };
    if record.status != MatchStatus::Assigned {
        return Some(BackfillOutcome::NotRunning(record.status));
    }
    let host = record.server.as_ref().map(|s| s.server_id.as_str());
    match server {
        Some(caller) if host != Some(caller) => Some(BackfillOutcome::NotYours),
        _ => None,
    }
}

/// The backfill of `id` if it is live at `now`.
fn live(ps: &PoolState, id: &MatchId, now: Millis) -> Option<Backfill> {
    let (b, closed) = ps.backfills.get(id)?;
    if *closed {
        return None;
    }
    let running = ps
        .lives
        .get(id)
        .is_some_and(|r| r.status == MatchStatus::Assigned);
    (running && b.expires_at > now).then(|| b.clone())
}

#[async_trait]
impl Backfills for MemoryStore {
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
        let now = now_ms();
        let mut inner = self.lock();
        let ps = inner.pool(pool);
        if let Some(refused) = refusal(ps, id, server) {
            return Ok(refused);
        }
        let host = ps
            .lives
            .get(id)
            .and_then(|r| r.server.as_ref())
            .map(|s| s.server_id.clone())
            .unwrap_or_default();
        let previous = live(ps, id, now);
        // Across closes too: a fill that read a closed one never lands.
        let generation = ps.backfills.get(id).map_or(0, |(b, _)| b.generation) + 1;
        let b = Backfill {
            match_id: id.clone(),
            server_id: host,
            open: open.to_vec(),
            generation,
            opened_at: previous.map_or(now, |p| p.opened_at),
            expires_at: now + ttl.as_millis() as Millis,
        };
        ps.backfills.insert(id.clone(), (b.clone(), false));
        drop(inner);
        if open.iter().any(|&o| o > 0) {
            // Filled at once, not at the workers' next poll.
            self.wakes.wake(&pool.name());
        }
        Ok(BackfillOutcome::Open(b))
    }

    async fn close_backfill(
        &self,
        pool: &Pool,
        id: &MatchId,
        server: Option<&str>,
    ) -> Result<BackfillOutcome, StoreError> {
        let mut inner = self.lock();
        let ps = inner.pool(pool);
        match refusal(ps, id, server) {
            // A match that is over has no backfill to close: closed.
            Some(BackfillOutcome::NotRunning(_)) | None => {
                if let Some((b, closed)) = ps.backfills.get_mut(id)
                    && !*closed
                {
                    *closed = true;
                    b.generation += 1;
                }
                Ok(BackfillOutcome::Closed)
            }
            Some(refused) => Ok(refused),
        }
    }

    async fn player_left(
        &self,
        pool: &Pool,
        id: &MatchId,
        server: Option<&str>,
        player: &mm_domain::PlayerId,
    ) -> Result<bool, StoreError> {
        let now = now_ms();
        let mut inner = self.lock();
        let ps = inner.pool(pool);
        if refusal(ps, id, server).is_some() {
            return Ok(false);
        }
        if let Some(r) = ps.lives.get_mut(id) {
            r.left.entry(player.clone()).or_insert(now);
        }
        Ok(true)
    }

    async fn refresh_backfill(
        &self,
        pool: &Pool,
        id: &MatchId,
        server: Option<&str>,
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        let now = now_ms();
        let mut inner = self.lock();
        let ps = inner.pool(pool);
        if refusal(ps, id, server).is_some() || live(ps, id, now).is_none() {
            return Ok(false);
        }
        if let Some((b, _)) = ps.backfills.get_mut(id) {
            b.expires_at = now + ttl.as_millis() as Millis;
        }
        Ok(true)
    }

    async fn backfill(&self, pool: &Pool, id: &MatchId) -> Result<Option<Backfill>, StoreError> {
        let now = now_ms();
        let inner = self.lock();
        Ok(inner.pools.get(pool).and_then(|ps| live(ps, id, now)))
    }

    async fn open_backfills(&self, pool: &Pool) -> Result<Vec<Backfill>, StoreError> {
        let now = now_ms();
        let inner = self.lock();
        let Some(ps) = inner.pools.get(pool) else {
            return Ok(Vec::new());
        };
        Ok(crate::backfill::with_seats(
            ps.backfills.keys().filter_map(|id| live(ps, id, now)),
        ))
    }

    async fn join_fill(&self, pool: &Pool, fill: &MatchId) -> Result<JoinOutcome, StoreError> {
        let now = now_ms();
        let mut inner = self.lock();
        let ps = inner.pool(pool);
        let Some(record) = ps.lives.get(fill) else {
            return Ok(JoinOutcome::Moved);
        };
        let Some(of) = record.matched.fills().cloned() else {
            return Ok(JoinOutcome::Moved);
        };
        if record.status != MatchStatus::Placing {
            return Ok(JoinOutcome::Moved);
        }
        let tickets = record.matched.tickets.clone();
        let roles = record.matched.decided.roles.clone();
        let server = match ps.lives.get_mut(&of.match_id) {
            Some(running) if running.status == MatchStatus::Assigned => {
                running.matched.tickets.extend(tickets);
                running.matched.decided.roles.extend(roles);
                running.fills.push(fill.clone());
                if let Some(m) = ps.matches.get_mut(&of.match_id) {
                    *m = running.matched.clone();
                }
                running.server.clone().unwrap_or_default()
            }
            _ => return Ok(JoinOutcome::Closed),
        };
        if let Some(r) = ps.lives.get_mut(fill) {
            r.status = MatchStatus::Assigned;
            r.server = Some(server.clone());
            r.joined = Some(mm_domain::Joined {
                at: now,
                ..Default::default()
            });
        }
        ps.due.insert(fill.clone(), now);
        Ok(JoinOutcome::Joined(server))
    }

    async fn mark_fill(
        &self,
        pool: &Pool,
        fill: &MatchId,
        mark: FillMark,
    ) -> Result<bool, StoreError> {
        let now = now_ms();
        let mut inner = self.lock();
        let ps = inner.pool(pool);
        let Some(r) = ps.lives.get_mut(fill) else {
            return Ok(false);
        };
        let Some(joined) = r
            .joined
            .as_mut()
            .filter(|_| r.status == MatchStatus::Assigned)
        else {
            return Ok(false);
        };
        match mark {
            FillMark::Notified => joined.notified = true,
            FillMark::Acknowledged => {
                joined.acknowledged = true;
                ps.due.insert(fill.clone(), now);
            }
        }
        Ok(true)
    }

    async fn unjoin_fill(
        &self,
        pool: &Pool,
        fill: &MatchId,
        reason: &str,
    ) -> Result<UnjoinOutcome, StoreError> {
        let now = now_ms();
        let mut inner = self.lock();
        let ps = inner.pool(pool);
        let Some(r) = ps.lives.get(fill) else {
            return Ok(UnjoinOutcome::Moved);
        };
        let (Some(of), Some(joined)) = (r.matched.fills().cloned(), r.joined) else {
            return Ok(UnjoinOutcome::Moved);
        };
        if r.status != MatchStatus::Assigned || joined.acknowledged {
            return Ok(UnjoinOutcome::Moved);
        }
        let tickets: Vec<mm_domain::TicketId> = r
            .matched
            .tickets
            .iter()
            .map(|t| t.ticket_id.clone())
            .collect();
        let roles = r.matched.decided.roles.clone();
        match ps.lives.get_mut(&of.match_id) {
            Some(running) if running.status == MatchStatus::Assigned => {
                running
                    .matched
                    .tickets
                    .retain(|t| !tickets.contains(&t.ticket_id));
                running
                    .matched
                    .decided
                    .roles
                    .retain(|p, _| !roles.contains_key(p));
                running.fills.retain(|f| f != fill);
                if let Some(m) = ps.matches.get_mut(&of.match_id) {
                    *m = running.matched.clone();
                }
            }
            _ => return Ok(UnjoinOutcome::Closed),
        }
        if let Some(r) = ps.lives.get_mut(fill) {
            r.status = MatchStatus::Failed;
            r.reason = Some(reason.to_string());
            r.server = None;
        }
        ps.due.insert(fill.clone(), now);
        Ok(UnjoinOutcome::Done)
    }

    async fn return_seats(&self, pool: &Pool, fill: &Match) -> Result<bool, StoreError> {
        let Some(of) = fill.fills() else {
            return Ok(false);
        };
        let now = now_ms();
        let mut inner = self.lock();
        let ps = inner.pool(pool);
        if !ps.seats_back.insert(fill.id.clone()) || live(ps, &of.match_id, now).is_none() {
            return Ok(false);
        }
        let Some((b, _)) = ps.backfills.get_mut(&of.match_id) else {
            return Ok(false);
        };
        for (team, n) in fill.team_sizes().into_iter().enumerate() {
            if let Some(o) = b.open.get_mut(team) {
                *o += n;
            }
        }
        b.generation += 1;
        Ok(true)
    }
}
