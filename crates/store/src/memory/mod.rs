//! [`Store`] in process memory: the embedded default of `matchmaker serve`. Same
//! semantics as the Redis store (one conformance suite runs against both); every
//! operation holds one lock, which plays the part of a Lua script's atomicity.
//! The state under the lock and the steps on it are in [`inner`]; the match
//! lifecycle and the game servers in [`lifecycle`] and [`fleet`].
//!
//! Players' histories hold one shared copy of each match, and an entry lasts
//! [`HISTORY_TTL`] from its match, as on Redis: older entries are dropped when the
//! player's history is written or read, and a player whose newest entry is that
//! old loses the whole history at the next purge. A player idle that long (no
//! ticket, match, result or rating mark) is forgotten whole at a purge, as
//! their keys expire on Redis, unless they still wait, play or are banned; a
//! purged ticket leaves its players' index of tickets.

mod backfill;
mod fleet;
mod inner;
use inner::history_cutoff;
mod leading;
mod lifecycle;
mod maps;
mod online;
mod overdue;
mod registry;
mod results;
mod side;

use crate::api::{
    Entry, MATCHED_ELSEWHERE, MATCHED_IN_OTHER_POOL, State, combine, formed_events, moved_region,
    view, withdrawn_events,
};
use crate::{
    CancelOutcome, Claimed, Depths, EnqueueOutcome, HISTORY_LEN, HISTORY_TTL, Hub, LockName, Store,
    StoreError,
};
use async_trait::async_trait;
use maps::{Finished, Sharded};
use mm_domain::{
    EventEnvelope, Match, MatchId, MatchRecord, Millis, PlayerId, Pool, Ticket, TicketId,
    TicketView, now_ms,
};
use std::cmp::Ordering;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// A rating with a total order, so it can key the queue.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Score(f64);
impl Eq for Score {}
impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Score {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

#[derive(Default)]
struct PoolState {
    queue: BTreeSet<(Score, TicketId)>,
    tickets: Sharded<TicketId, Ticket>,
    state: Sharded<TicketId, State>,
    held: HashMap<String, HashMap<TicketId, f64>>,
    leases: HashMap<String, Millis>,
    /// Workers running `COORDINATION=leader` on the pool -> lease expiry.
    candidates: HashMap<String, Millis>,
    matches: Sharded<MatchId, Match>,
    /// Finished ticket and match ids -> finish time.
    done: Finished,
    outbox: HashMap<MatchId, Millis>,
    /// Committed matches' lifecycles.
    lives: Sharded<MatchId, MatchRecord>,
    /// Matches whose saga has a step due -> when.
    due: HashMap<MatchId, Millis>,
    /// Running matches' open seats (see [`crate::Backfills`]).
    /// (a closed one is kept, with its generation, until its match goes).
    backfills: HashMap<MatchId, (crate::Backfill, bool)>,
    /// Fills that gave their seats back (see [`crate::Backfills::return_seats`]).
    seats_back: HashSet<MatchId>,
    /// Results waiting for the rating service -> (job, when it may be claimed).
    results: HashMap<MatchId, (mm_domain::RatingJob, Millis)>,
    /// The latest committed matches, newest first.
    recent: std::collections::VecDeque<MatchId>,
}

impl PoolState {
    /// Same as `requeue` in `common.lua`.
    fn requeue(&mut self, worker: &str, ids: &[TicketId]) -> usize {
        let Some(held) = self.held.get_mut(worker) else {
            return 0;
        };
        let mut back = 0;
        for id in ids {
            let Some(score) = held.remove(id) else {
                continue;
            };
            if self.state.get(id) == Some(&State::Held) {
                self.state.insert(id.clone(), State::Requeued);
                self.queue.insert((Score(score), id.clone()));
                back += 1;
            }
        }
        if held.is_empty() {
            self.held.remove(worker);
        }
        back
    }

    /// A held ticket taken from the worker or leader holding it and
    /// requeued with its score, to be read again (same as `late_block.lua`);
    /// false if it was not held.
    fn take_from_holder(&mut self, id: &TicketId) -> bool {
        if self.state.get(id) != Some(&State::Held) {
            return false;
        }
        let holder = self.held.iter_mut().find_map(|(_, held)| held.remove(id));
        let Some(score) = holder else {
            return false;
        };
        self.state.insert(id.clone(), State::Requeued);
        self.queue.insert((Score(score), id.clone()));
        true
    }

    fn held_ids(&self, worker: &str) -> Vec<TicketId> {
        self.held
            .get(worker)
            .map(|h| h.keys().cloned().collect())
            .unwrap_or_default()
    }
}

#[derive(Default)]
struct PlayerState {
    /// The player's latest ticket per mode.
    active: HashMap<String, TicketId>,
    /// Every ticket of the player's -> the pools it waits in.
    tickets: HashMap<TicketId, Vec<Pool>>,
    /// Tickets activated and not queued yet (their creation is between the
    /// two) -> when they were activated.
    queuing: HashMap<TicketId, Millis>,
    /// Newest first; each match shared with its other players.
    history: Vec<Arc<Match>>,
    /// The match the player is in while it is not over.
    in_match: Option<(Pool, MatchId)>,
    /// The player may not queue before this time.
    banned_until: Option<Millis>,
    /// Mode -> freshness mark (see [`crate::Results`]).
    marks: HashMap<String, u64>,
}

#[derive(Default)]
struct Inner {
    pools: HashMap<Pool, PoolState>,
    players: Sharded<PlayerId, PlayerState>,
    /// Player -> when their newest history entry's match was created.
    newest_history: Finished,
    /// Player -> their latest activity (see `Inner::forget_idle_players`).
    touched: Finished,
    fleet: fleet::FleetState,
}

/// The in-process store.
#[derive(Default)]
pub struct MemoryStore {
    inner: Mutex<Inner>,
    hub: Hub,
    wakes: crate::Wakes,
    /// Rate limits, apart from `inner` so checks never wait for the store's lock.
    limits: crate::MemoryLimits,
    parties: crate::MemoryParties,
    locks: crate::MemoryLocks,
    blocks: crate::MemoryBlocks,
    /// Taken by lock takers and by leaders' fenced writes, so that a fencing token
    /// cannot go stale between a write's check and the write.
    leading: tokio::sync::Mutex<()>,
    /// Pools by when the supervisor last served them (see [`crate::Registry`]).
    supervised: Mutex<HashMap<Pool, Millis>>,
    /// Players' socket notes (see [`crate::Online`]).
    online: Mutex<online::Notes>,
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// What `claim` does once the pool is known to be the caller's: a plain
    /// worker's with no leader, or the leader's own (fenced) claim.
    pub(super) fn claim_batch(
        &self,
        worker: &str,
        pool: &Pool,
        max: usize,
        floor: Option<usize>,
        start: f64,
        lease: Duration,
    ) -> Vec<Claimed> {
        let now = now_ms();
        let mut inner = self.lock();
        let ps = inner.pool(pool);
        ps.leases
            .insert(worker.to_string(), now + lease.as_millis() as Millis);
        let n = ps.queue.len();
        // With a floor, at most half the queue unless that is fewer (see
        // `Store::claim_part`).
        let max = floor.map_or(max, |f| max.min(f.max(n.div_ceil(2))));
        if n == 0 || max == 0 {
            return Vec::new();
        }
        // A run within the start ticket's lane, as `claim.lua` takes it.
        let at = ((start.clamp(0.0, 1.0) * n as f64) as usize).min(n - 1);
        let (lo, hi) = mm_domain::lane_ranks(ps.queue.iter().map(|(Score(s), _)| *s), n, at);
        let first = at.min(hi.saturating_sub(max)).max(lo);
        let batch: Vec<(Score, TicketId)> = ps
            .queue
            .iter()
            .skip(first)
            .take(max.min(hi - first))
            .cloned()
            .collect();
        let mut out = Vec::with_capacity(batch.len());
        for entry in batch {
            ps.queue.remove(&entry);
            let (Score(rating), id) = entry;
            let Some(ticket) = ps.tickets.get(&id).cloned() else {
                ps.state.remove(&id);
                continue;
            };
            let first_claim = ps.state.insert(id.clone(), State::Held) == Some(State::New);
            ps.held
                .entry(worker.to_string())
                .or_default()
                .insert(id, rating);
            out.push(Claimed {
                ticket,
                first_claim,
            });
        }
        out
    }

    /// Wakes the workers of the ticket's pools.
    fn wake(&self, ticket: &Ticket) {
        for pool in ticket.pools() {
            self.wakes.wake(&pool.name());
        }
    }

    /// Refuses a claim worker's claim while a pool leader holds the pool.
    fn led(&self, pool: &Pool) -> Result<(), StoreError> {
        if self.locks.is_held(&LockName::pool_leader(pool)) {
            return Err(StoreError::Led(
                "the pool has a leader (COORDINATION=leader); a claim worker leaves it alone"
                    .into(),
            ));
        }
        Ok(())
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[async_trait]
impl Store for MemoryStore {
    async fn ping(&self) -> Result<(), StoreError> {
        Ok(())
    }

    async fn enqueue(&self, ticket: &Ticket) -> Result<EnqueueOutcome, StoreError> {
        {
            let mut inner = self.lock();
            if let Err(refused) = inner.activate(ticket, now_ms()) {
                return Ok(refused);
            }
            inner.enqueue_entries(ticket);
        }
        self.wake(ticket);
        Ok(EnqueueOutcome::Queued)
    }

    async fn activate(
        &self,
        ticket: &Ticket,
    ) -> Result<Result<Vec<u64>, EnqueueOutcome>, StoreError> {
        Ok(self.lock().activate(ticket, now_ms()))
    }

    async fn enqueue_entries(&self, ticket: &Ticket) -> Result<(), StoreError> {
        self.lock().enqueue_entries(ticket);
        self.wake(ticket);
        Ok(())
    }

    async fn deactivate(&self, ticket: &Ticket) -> Result<(), StoreError> {
        let mut inner = self.lock();
        for p in &ticket.players {
            if let Some(state) = inner.players.get_mut(p) {
                state.tickets.remove(&ticket.id);
                state.queuing.remove(&ticket.id);
                if state.active.get(&ticket.mode) == Some(&ticket.id) {
                    state.active.remove(&ticket.mode);
                }
            }
        }
        Ok(())
    }

    async fn ticket(
        &self,
        player: &PlayerId,
        id: &TicketId,
    ) -> Result<Option<TicketView>, StoreError> {
        Ok(self.lock().view(player, id, now_ms()))
    }

    async fn live_tickets(&self, player: &PlayerId) -> Result<Vec<TicketId>, StoreError> {
        Ok(self
            .lock()
            .players
            .get(player)
            .map(|p| p.active.values().cloned().collect())
            .unwrap_or_default())
    }

    async fn withdraw(
        &self,
        player: &PlayerId,
        id: &TicketId,
        reason: Option<&str>,
    ) -> Result<CancelOutcome, StoreError> {
        let ended = match reason {
            Some(r) => State::Withdrawn(r.to_string()),
            None => State::Cancelled,
        };
        Ok(self.lock().end(player, id, ended, now_ms()))
    }

    async fn player_matches(
        &self,
        player: &PlayerId,
        limit: usize,
    ) -> Result<Vec<Match>, StoreError> {
        let cutoff = history_cutoff(now_ms());
        let inner = self.lock();
        Ok(inner
            .players
            .get(player)
            .map(|p| {
                p.history
                    .iter()
                    .take_while(|m| m.created_at >= cutoff)
                    .take(limit)
                    .map(|m| Match::clone(m))
                    .collect()
            })
            .unwrap_or_default())
    }

    async fn history_pool(
        &self,
        player: &PlayerId,
        id: &MatchId,
    ) -> Result<Option<Pool>, StoreError> {
        let cutoff = history_cutoff(now_ms());
        let inner = self.lock();
        Ok(inner.players.get(player).and_then(|p| {
            p.history
                .iter()
                .take_while(|m| m.created_at >= cutoff)
                .take(HISTORY_LEN)
                .find(|m| m.id == *id)
                .map(|m| Pool::new(m.mode.clone(), m.region.clone()))
        }))
    }

    async fn claim(
        &self,
        worker: &str,
        pool: &Pool,
        max: usize,
        start: f64,
        lease: Duration,
    ) -> Result<Vec<Claimed>, StoreError> {
        self.led(pool)?;
        Ok(self.claim_batch(worker, pool, max, None, start, lease))
    }

    async fn claim_part(
        &self,
        worker: &str,
        pool: &Pool,
        max: usize,
        floor: usize,
        start: f64,
        lease: Duration,
    ) -> Result<Vec<Claimed>, StoreError> {
        self.led(pool)?;
        Ok(self.claim_batch(worker, pool, max, Some(floor), start, lease))
    }

    async fn complete(
        &self,
        worker: &str,
        pool: &Pool,
        matches: &[Match],
        _lease: Duration,
    ) -> Result<Vec<MatchId>, StoreError> {
        let now = now_ms();
        let mut inner = self.lock();
        let mut committed = Vec::new();
        let mut events = Vec::new();
        for m in matches {
            // A player's other tickets and other entries are withdrawn in the same
            // step as a commit, so a player already matched elsewhere shows up here as
            // a ticket that is no longer held.
            if !inner.commit(worker, pool, m, now) {
                continue;
            }
            events.extend(inner.settle(pool, m, now));
            committed.push(m.id.clone());
        }
        let ps = inner.pool(pool);
        if ps.held.get(worker).is_some_and(|h| h.is_empty()) {
            ps.held.remove(worker);
        }
        drop(inner);
        for e in events {
            self.hub.dispatch(e);
        }
        Ok(committed)
    }

    async fn release(
        &self,
        worker: &str,
        pool: &Pool,
        ids: Option<&[TicketId]>,
    ) -> Result<usize, StoreError> {
        let mut inner = self.lock();
        let ps = inner.pool(pool);
        let ids = match ids {
            Some(ids) => ids.to_vec(),
            None => ps.held_ids(worker),
        };
        Ok(ps.requeue(worker, &ids))
    }

    async fn heartbeat(
        &self,
        worker: &str,
        pool: &Pool,
        lease: Duration,
    ) -> Result<usize, StoreError> {
        let now = now_ms();
        let mut inner = self.lock();
        let ps = inner.pool(pool);
        ps.leases
            .insert(worker.to_string(), now + lease.as_millis() as Millis);
        Ok(ps.held.get(worker).map_or(0, HashMap::len))
    }

    async fn expired_workers(&self, pool: &Pool) -> Result<Vec<String>, StoreError> {
        let now = now_ms();
        let mut inner = self.lock();
        let ps = inner.pool(pool);
        Ok(ps
            .leases
            .iter()
            .filter(|(_, exp)| **exp < now)
            .map(|(w, _)| w.clone())
            .collect())
    }

    async fn reclaim(&self, worker: &str, pool: &Pool) -> Result<Option<usize>, StoreError> {
        let now = now_ms();
        let mut inner = self.lock();
        let ps = inner.pool(pool);
        if ps.leases.get(worker).is_some_and(|exp| *exp > now) {
            return Ok(None);
        }
        ps.leases.remove(worker);
        let ids = ps.held_ids(worker);
        let n = ps.requeue(worker, &ids);
        drop(inner);
        if n > 0 {
            self.wakes.wake(&pool.name());
        }
        Ok(Some(n))
    }

    async fn fan_out(&self, pool: &Pool, matches: &[Match]) -> Result<(), StoreError> {
        {
            let now = now_ms();
            let cutoff = history_cutoff(now);
            let mut inner = self.lock();
            for m in matches {
                let shared = Arc::new(m.clone());
                for player in m.players() {
                    let p = inner.player_mut(player, now);
                    if !p.history.iter().any(|h| h.id == m.id) {
                        let at = p.history.partition_point(|h| h.created_at > m.created_at);
                        p.history.insert(at, shared.clone());
                        p.history.truncate(HISTORY_LEN);
                    }
                    let keep = p.history.partition_point(|h| h.created_at >= cutoff);
                    p.history.truncate(keep);
                    if let Some(newest) = p.history.first().map(|h| h.created_at) {
                        inner.newest_history.insert(player.to_string(), newest);
                    }
                }
                inner.pool(pool).outbox.remove(&m.id);
            }
        }
        for envelope in matches.iter().flat_map(formed_events) {
            self.hub.dispatch(envelope);
        }
        Ok(())
    }

    async fn stale_outbox(
        &self,
        pool: &Pool,
        older_than: Duration,
    ) -> Result<Vec<Match>, StoreError> {
        let cutoff = now_ms().saturating_sub(older_than.as_millis() as Millis);
        let mut inner = self.lock();
        let ps = inner.pool(pool);
        let stale: Vec<MatchId> = ps
            .outbox
            .iter()
            .filter(|(_, at)| **at <= cutoff)
            .map(|(id, _)| id.clone())
            .collect();
        let mut out = Vec::new();
        for id in stale {
            match ps.matches.get(&id) {
                Some(m) => out.push(m.clone()),
                None => {
                    ps.outbox.remove(&id);
                }
            }
        }
        Ok(out)
    }

    async fn purge(&self, pool: &Pool, older_than: Duration) -> Result<usize, StoreError> {
        let now = now_ms();
        let cutoff = now.saturating_sub(older_than.as_millis() as Millis);
        let mut inner = self.lock();
        inner.forget_old_histories(now);
        inner.forget_idle_players(now);
        let ps = inner.pool(pool);
        let old = ps.done.take_until(cutoff);
        let mut forgotten = Vec::new();
        for id in &old {
            if let Ok(mid) = MatchId::new(id.clone())
                && id.starts_with("m-")
            {
                ps.matches.remove(&mid);
                ps.lives.remove(&mid);
                ps.backfills.remove(&mid);
                ps.seats_back.remove(&mid);
                ps.due.remove(&mid);
            } else if let Ok(tid) = TicketId::new(id.clone()) {
                forgotten.extend(ps.tickets.remove(&tid));
                ps.state.remove(&tid);
            }
        }
        // The players' indexes forget the pool's entry with it (a ticket still
        // in another pool stays found there): else every ticket a player ever
        // queued would stay with them.
        for ticket in &forgotten {
            for p in &ticket.players {
                let Some(state) = inner.players.get_mut(p) else {
                    continue;
                };
                if let Some(pools) = state.tickets.get_mut(&ticket.id) {
                    pools.retain(|q| q != pool);
                    if pools.is_empty() {
                        state.tickets.remove(&ticket.id);
                    }
                }
            }
        }
        Ok(old.len())
    }

    async fn publish(&self, events: &[EventEnvelope]) -> Result<(), StoreError> {
        for e in events {
            self.hub.dispatch(e.clone());
        }
        Ok(())
    }

    async fn wake_ups(&self) -> Result<crate::WakeUps, StoreError> {
        Ok(self.wakes.subscribe())
    }

    async fn subscribe(&self, player: &PlayerId) -> Result<crate::Events, StoreError> {
        Ok(self.hub.subscribe(player))
    }

    async fn depths(&self, pool: &Pool) -> Result<Depths, StoreError> {
        let inner = self.lock();
        Ok(inner
            .pools
            .get(pool)
            .map(|ps| {
                let waiting = ps
                    .queue
                    .iter()
                    .map(|(_, id)| id)
                    .chain(ps.held.values().flat_map(HashMap::keys));
                Depths {
                    queued: ps.queue.len() as u64,
                    processing: ps.held.values().map(|h| h.len() as u64).sum(),
                    oldest_enqueued_at: waiting
                        .filter_map(|id| ps.tickets.get(id).map(|t| t.enqueued_at))
                        .min(),
                }
            })
            .unwrap_or_default())
    }
    async fn recent_matches(&self, pool: &Pool, n: usize) -> Result<Vec<Match>, StoreError> {
        let inner = self.lock();
        Ok(inner
            .pools
            .get(pool)
            .map(|ps| {
                ps.recent
                    .iter()
                    .take(n)
                    .filter_map(|id| ps.matches.get(id).cloned())
                    .collect()
            })
            .unwrap_or_default())
    }
}

#[cfg(test)]
mod tests;
