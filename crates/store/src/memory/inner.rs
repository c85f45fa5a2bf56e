//! The memory store's state under its lock: a pool's queue, what workers hold,
//! players' live tickets and histories, and the steps of a ticket's life on
//! them (activation, commit, settling, ending, withdrawal), each run whole
//! under the one lock.

use super::*;

/// Matches created before this are out of every history.
pub(super) fn history_cutoff(now: Millis) -> Millis {
    now.saturating_sub(HISTORY_TTL.as_millis() as Millis)
}

impl Inner {
    pub(super) fn pool(&mut self, pool: &Pool) -> &mut PoolState {
        self.pools.entry(pool.clone()).or_default()
    }

    /// `player`'s state, made if missing; `now` counts as their latest activity
    /// (what refreshes their keys' expiry on Redis).
    pub(super) fn player_mut(&mut self, player: &PlayerId, now: Millis) -> &mut PlayerState {
        self.touched.insert(player.to_string(), now);
        self.players.entry(player.clone()).or_default()
    }

    /// Forgets the players idle for the players' lifetime at `now` (30 days, as
    /// their keys expire on Redis: live tickets, ticket index, history, rating
    /// marks), unless they still wait, play or are banned (looked at again a
    /// lifetime on). Without it the embedded store kept every player it ever saw.
    pub(super) fn forget_idle_players(&mut self, now: Millis) {
        for id in self.touched.take_until(history_cutoff(now)) {
            let Ok(player) = PlayerId::new(id) else {
                continue;
            };
            let Some(state) = self.players.get(&player) else {
                continue;
            };
            let busy = state.in_match.is_some()
                || state.banned_until.is_some_and(|until| until > now)
                || state.active.values().any(|t| {
                    self.view(&player, t, now)
                        .is_some_and(|v| !v.status.is_terminal())
                });
            if busy {
                self.touched.insert(player.to_string(), now);
            } else {
                self.players.remove(&player);
                self.newest_history.remove(player.as_str());
            }
        }
    }

    /// Empties the histories whose newest match is out of date at `now`, as a Redis
    /// history key expires.
    pub(super) fn forget_old_histories(&mut self, now: Millis) {
        for player in self.newest_history.take_until(history_cutoff(now)) {
            if let Some(p) = PlayerId::new(player)
                .ok()
                .and_then(|id| self.players.get_mut(&id))
            {
                p.history.clear();
            }
        }
    }

    /// Commits `m` in `pool` if `worker` still holds every ticket of it (same checks
    /// as `complete.lua`). Returns whether it committed.
    pub(super) fn commit(&mut self, worker: &str, pool: &Pool, m: &Match, now: Millis) -> bool {
        let ps = self.pool(pool);
        let ok = m.tickets.iter().all(|t| {
            ps.held
                .get(worker)
                .is_some_and(|h| h.contains_key(&t.ticket_id))
                && ps.state.get(&t.ticket_id) == Some(&State::Held)
        });
        if !ok || !backfill::fill_fits(ps, m, now) {
            return false;
        }
        backfill::take_seats(ps, m);
        for t in &m.tickets {
            if let Some(h) = ps.held.get_mut(worker) {
                h.remove(&t.ticket_id);
            }
            ps.state
                .insert(t.ticket_id.clone(), State::Matched(m.id.clone()));
            ps.done.insert(t.ticket_id.to_string(), now);
        }
        let (record, due) = MatchRecord::committed(m.clone());
        if record.status.is_terminal() {
            ps.done.insert(m.id.to_string(), now);
        }
        if let Some(at) = due {
            ps.due.insert(m.id.clone(), at);
        }
        ps.lives.insert(m.id.clone(), record);
        ps.matches.insert(m.id.clone(), m.clone());
        ps.outbox.insert(m.id.clone(), now);
        ps.recent.push_front(m.id.clone());
        ps.recent.truncate(crate::RECENT_MATCHES);
        true
    }

    /// Makes `ticket` its players' live ticket for the mode unless one is banned,
    /// in a match, busy with another live ticket for the mode, or carries a rating
    /// older than their freshness mark (same as `activate.lua`, all players at
    /// once). Returns each player's mark.
    pub(super) fn activate(
        &mut self,
        ticket: &Ticket,
        now: Millis,
    ) -> Result<Vec<u64>, EnqueueOutcome> {
        let mut marks = Vec::with_capacity(ticket.players.len());
        for (i, p) in ticket.players.iter().enumerate() {
            if let Some(busy) = self.blocked(p, now) {
                return Err(busy);
            }
            let carried = ticket.skills.get(i).filter(|_| !ticket.skills_fresh);
            let mark = self
                .players
                .get(p)
                .and_then(|s| s.marks.get(&ticket.mode).copied())
                .unwrap_or(0);
            if carried.is_some_and(|skill| mark > skill.version) {
                return Err(EnqueueOutcome::StaleRating(p.clone()));
            }
            marks.push(mark);
            let active = self
                .players
                .get(p)
                .and_then(|s| s.active.get(&ticket.mode).cloned());
            if let Some(current) = active {
                let live = self
                    .view(p, &current, now)
                    .is_some_and(|v| !v.status.is_terminal());
                if live && current != ticket.id {
                    return Err(EnqueueOutcome::PlayerBusy(p.clone(), current));
                }
            }
        }
        let pools = ticket.pools();
        for p in &ticket.players {
            let player = self.player_mut(p, now);
            player.active.insert(ticket.mode.clone(), ticket.id.clone());
            player.tickets.insert(ticket.id.clone(), pools.clone());
            player.queuing.insert(ticket.id.clone(), now);
        }
        Ok(marks)
    }

    /// `player`'s live tickets: each id, the pools it waits in, and when it
    /// was activated if it is not queued yet.
    fn live_tickets(&self, player: &PlayerId) -> Vec<(TicketId, Vec<Pool>, Option<Millis>)> {
        let Some(state) = self.players.get(player) else {
            return Vec::new();
        };
        state
            .active
            .values()
            .map(|id| {
                let pools = state.tickets.get(id).cloned().unwrap_or_default();
                (id.clone(), pools, state.queuing.get(id).copied())
            })
            .collect()
    }

    /// Adds `others` to the blocks of `player`'s live tickets in every pool
    /// (same as `late_block.lua`): a held one is taken from its holder and
    /// requeued. Returns the pools a ticket was taken in, and false if a live
    /// ticket is in none of its pools yet, activated within
    /// [`crate::blocks::ON_ITS_WAY_MS`].
    pub(super) fn add_blocks(
        &mut self,
        player: &PlayerId,
        others: &[PlayerId],
        now: Millis,
    ) -> (Vec<Pool>, bool) {
        let (mut taken, mut all_queued) = (Vec::new(), true);
        for (id, pools, activated) in self.live_tickets(player) {
            let on_its_way =
                activated.is_some_and(|at| now.saturating_sub(at) < crate::blocks::ON_ITS_WAY_MS);
            let mut found = false;
            for pool in pools {
                let ps = self.pool(&pool);
                let Some(ticket) = ps.tickets.get_mut(&id) else {
                    continue;
                };
                found = true;
                let Some(new) = crate::blocks::with_blocks(ticket, others) else {
                    // Counted all the same (as on Redis: see blocks.rs).
                    *ticket = crate::blocks::recounted(ticket);
                    continue;
                };
                *ticket = new;
                if ps.take_from_holder(&id) {
                    taken.push(pool);
                }
            }
            all_queued &= found || !on_its_way;
        }
        (taken, all_queued)
    }

    /// Takes `other` out of the blocks of `player`'s live tickets in every
    /// pool, unless `still` (whom the given players block now) names them
    /// (same as `late_block.lua` for an unblock): a held one is taken from its
    /// holder and requeued. Returns the pools a ticket was taken in.
    pub(super) fn drop_block(
        &mut self,
        player: &PlayerId,
        other: &PlayerId,
        still: impl Fn(&[PlayerId]) -> Vec<PlayerId>,
    ) -> Vec<Pool> {
        let mut taken = Vec::new();
        for (id, pools, _) in self.live_tickets(player) {
            for pool in pools {
                let ps = self.pool(&pool);
                let Some(ticket) = ps.tickets.get_mut(&id) else {
                    continue;
                };
                if !ticket.blocks.contains(other) {
                    continue;
                }
                let Some(new) =
                    crate::blocks::without_block(ticket, other, &still(&ticket.players))
                else {
                    continue;
                };
                *ticket = new;
                if ps.take_from_holder(&id) {
                    taken.push(pool);
                }
            }
        }
        taken
    }

    /// Queues an activated ticket in each of its pools (same as `enqueue.lua`).
    pub(super) fn enqueue_entries(&mut self, ticket: &Ticket) {
        for p in &ticket.players {
            if let Some(player) = self.players.get_mut(p) {
                player.queuing.remove(&ticket.id);
            }
        }
        for pool in &ticket.pools() {
            let ps = self.pool(pool);
            if !ps.tickets.contains_key(&ticket.id) {
                ps.tickets.insert(ticket.id.clone(), ticket.clone());
                ps.state.insert(ticket.id.clone(), State::New);
                ps.queue
                    .insert((Score(ticket.queue_score()), ticket.id.clone()));
            }
        }
    }

    /// Why `player` may not queue now: banned, or in a match that is not over.
    pub(super) fn blocked(&mut self, player: &PlayerId, now: Millis) -> Option<EnqueueOutcome> {
        let state = self.players.get(player)?;
        if let Some(until) = state.banned_until.filter(|u| *u > now) {
            return Some(EnqueueOutcome::Banned(player.clone(), until));
        }
        let (pool, mid) = state.in_match.clone()?;
        let ongoing = self
            .pools
            .get(&pool)
            .and_then(|ps| ps.lives.get(&mid))
            .is_some_and(|r| !r.status.is_terminal());
        if ongoing {
            return Some(EnqueueOutcome::InMatch(player.clone(), mid));
        }
        None
    }

    /// The ticket's entries in the pools it waits in.
    pub(super) fn entries(&self, pools: &[Pool], id: &TicketId) -> Vec<Entry> {
        pools
            .iter()
            .filter_map(|pool| {
                let ps = self.pools.get(pool)?;
                Some(Entry {
                    pool: pool.clone(),
                    state: ps.state.get(id)?.clone(),
                    finished_at: ps.done.get(id.as_str()),
                })
            })
            .collect()
    }

    pub(super) fn view(&self, player: &PlayerId, id: &TicketId, now: Millis) -> Option<TicketView> {
        let pools = self.players.get(player)?.tickets.get(id)?;
        let entries = self.entries(pools, id);
        let e = combine(entries.clone())?;
        let ps = self.pools.get(&e.pool)?;
        let ticket = ps.tickets.get(id)?;
        let found = match &e.state {
            State::Matched(mid) => ps.lives.get(mid),
            _ => None,
        };
        let mut v = view(ticket, &e.state, e.finished_at, found, now);
        if let Some(region) = moved_region(&entries, ticket.best_region()) {
            v.region = region.to_string();
        }
        Some(v)
    }

    /// Ends `player`'s ticket `id` in every pool it waits in with state `ended`
    /// (same as `cancel.lua` on each), unless it is in a match.
    pub(super) fn end(
        &mut self,
        player: &PlayerId,
        id: &TicketId,
        ended: State,
        now: Millis,
    ) -> CancelOutcome {
        let Some(pools) = self
            .players
            .get(player)
            .and_then(|p| p.tickets.get(id))
            .cloned()
        else {
            return CancelOutcome::NotFound;
        };
        let entries = self.entries(&pools, id);
        if entries.is_empty() {
            return CancelOutcome::NotFound;
        }
        if let Some(State::Matched(mid)) = combine(entries.clone()).map(|e| e.state) {
            return CancelOutcome::Matched(mid);
        }
        let mut cancelled = false;
        for e in entries.iter().filter(|e| e.state.is_live()) {
            let ps = self.pool(&e.pool);
            let score = ps
                .tickets
                .get(id)
                .map(Ticket::queue_score)
                .unwrap_or_default();
            ps.queue.remove(&(Score(score), id.clone()));
            ps.state.insert(id.clone(), ended.clone());
            ps.done.insert(id.to_string(), now);
            cancelled = true;
        }
        if cancelled {
            CancelOutcome::Cancelled
        } else {
            CancelOutcome::AlreadyCancelled
        }
    }

    /// Takes a ticket's entry in `pool` out of play (same as `withdraw.lua`). Returns
    /// the ticket if the entry was live.
    pub(super) fn withdraw(
        &mut self,
        pool: &Pool,
        id: &TicketId,
        reason: &str,
        now: Millis,
    ) -> Option<Ticket> {
        let ps = self.pools.get_mut(pool)?;
        let state = ps.state.get(id)?;
        if !state.is_live() {
            return None;
        }
        let ticket = ps.tickets.get(id)?.clone();
        ps.queue.remove(&(Score(ticket.queue_score()), id.clone()));
        ps.state
            .insert(id.clone(), State::Withdrawn(reason.to_string()));
        ps.done.insert(id.to_string(), now);
        Some(ticket)
    }

    /// After `m` committed in `pool`: withdraws its tickets' entries in other pools and
    /// its players' other tickets, and frees the players. Returns the events of the
    /// withdrawn tickets.
    pub(super) fn settle(&mut self, pool: &Pool, m: &Match, now: Millis) -> Vec<EventEnvelope> {
        let mut events = Vec::new();
        let ongoing = self
            .pools
            .get(pool)
            .and_then(|ps| ps.lives.get(&m.id))
            .is_some_and(|r| !r.status.is_terminal());
        if ongoing {
            for player in m.players() {
                self.player_mut(player, now).in_match = Some((pool.clone(), m.id.clone()));
            }
        }
        for t in &m.tickets {
            let own: Vec<Pool> = self
                .pools
                .get(pool)
                .and_then(|ps| ps.tickets.get(&t.ticket_id))
                .map(Ticket::pools)
                .unwrap_or_default();
            for other in own.iter().filter(|p| *p != pool) {
                self.withdraw(other, &t.ticket_id, MATCHED_IN_OTHER_POOL, now);
            }
            for player in &t.players {
                let Some(ps) = self.players.get_mut(player) else {
                    continue;
                };
                let others: Vec<(TicketId, Vec<Pool>)> = ps
                    .active
                    .drain()
                    .map(|(_, id)| id)
                    .filter(|id| *id != t.ticket_id)
                    .filter_map(|id| ps.tickets.get(&id).cloned().map(|pools| (id, pools)))
                    .collect();
                for (id, pools) in others {
                    let mut withdrawn = None;
                    for p in &pools {
                        withdrawn = withdrawn.or(self.withdraw(p, &id, MATCHED_ELSEWHERE, now));
                    }
                    if let Some(ticket) = withdrawn {
                        events.extend(withdrawn_events(&ticket, MATCHED_ELSEWHERE));
                    }
                }
            }
        }
        events
    }
}
