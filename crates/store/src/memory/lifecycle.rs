//! [`Lifecycle`] in process memory: the same steps as the Redis scripts
//! (`answer.lua`, `presence.lua`, `transition.lua`, `unwind_*.lua`), each under
//! the store's one lock.

use super::{MemoryStore, Score};
use crate::api::State;
use crate::{AnswerOutcome, Lifecycle, StoreError, Transition};
use async_trait::async_trait;
use mm_domain::{
    Answer, MatchId, MatchRecord, MatchStatus, Millis, PlayerId, Pool, TicketFate, TicketStatus,
    now_ms,
};

#[async_trait]
impl Lifecycle for MemoryStore {
    async fn current_match(
        &self,
        player: &PlayerId,
    ) -> Result<Option<(Pool, MatchId)>, StoreError> {
        let inner = self.lock();
        let Some((pool, mid)) = inner.players.get(player).and_then(|p| p.in_match.clone()) else {
            return Ok(None);
        };
        let ongoing = inner
            .pools
            .get(&pool)
            .and_then(|ps| ps.lives.get(&mid))
            .is_some_and(|r| !r.status.is_terminal());
        Ok(ongoing.then_some((pool, mid)))
    }

    async fn match_record(
        &self,
        pool: &Pool,
        id: &MatchId,
    ) -> Result<Option<(MatchRecord, bool)>, StoreError> {
        let inner = self.lock();
        let Some(ps) = inner.pools.get(pool) else {
            return Ok(None);
        };
        Ok(ps
            .lives
            .get(id)
            .map(|r| (r.clone(), ps.outbox.contains_key(id))))
    }

    async fn answer(
        &self,
        pool: &Pool,
        id: &MatchId,
        player: &PlayerId,
        answer: Answer,
    ) -> Result<AnswerOutcome, StoreError> {
        let now = now_ms();
        let mut inner = self.lock();
        let ps = inner.pool(pool);
        let Some(r) = ps.lives.get_mut(id) else {
            return Ok(AnswerOutcome::NotFound);
        };
        if r.status != MatchStatus::RequiresAcceptance {
            return Ok(AnswerOutcome::Closed(r.status));
        }
        if r.deadline.is_some_and(|d| now > d) {
            return Ok(AnswerOutcome::Closed(r.status));
        }
        let total = r.matched.player_count();
        if answer == Answer::Declined {
            r.answers.insert(player.clone(), Answer::Declined);
            r.status = MatchStatus::Cancelled;
            r.reason = Some(mm_domain::reasons::DECLINED.to_string());
            ps.due.insert(id.clone(), now);
            return Ok(AnswerOutcome::Declined);
        }
        r.answers.insert(player.clone(), Answer::Accepted);
        r.disconnected.remove(player);
        let accepted = r
            .answers
            .values()
            .filter(|a| **a == Answer::Accepted)
            .count();
        if accepted < total {
            return Ok(AnswerOutcome::Accepted { accepted, total });
        }
        let next = r.matched.lifecycle.after_acceptance();
        r.status = next;
        if next == MatchStatus::Placing {
            r.placing_since = Some(now);
        }
        ps.due.insert(
            id.clone(),
            match next {
                MatchStatus::Placing => now + mm_domain::STEP_GRACE_MS,
                _ => now,
            },
        );
        Ok(AnswerOutcome::AllAccepted { next, total })
    }

    async fn presence(
        &self,
        pool: &Pool,
        id: &MatchId,
        player: &PlayerId,
        connected: bool,
    ) -> Result<(), StoreError> {
        let now = now_ms();
        let mut inner = self.lock();
        let ps = inner.pool(pool);
        let Some(r) = ps.lives.get_mut(id) else {
            return Ok(());
        };
        if r.status != MatchStatus::RequiresAcceptance {
            return Ok(());
        }
        if connected {
            r.disconnected.remove(player);
            return Ok(());
        }
        let at = *r.disconnected.entry(player.clone()).or_insert(now);
        let check = at + r.matched.lifecycle.disconnect_grace_ms;
        let due = ps.due.entry(id.clone()).or_insert(check);
        *due = (*due).min(check);
        Ok(())
    }

    async fn transition(
        &self,
        pool: &Pool,
        id: &MatchId,
        t: Transition,
    ) -> Result<bool, StoreError> {
        let mut inner = self.lock();
        let ps = inner.pool(pool);
        let Some(r) = ps.lives.get_mut(id) else {
            return Ok(false);
        };
        if !t.from.contains(&r.status) {
            return Ok(false);
        }
        r.status = t.to;
        if t.reason.is_some() {
            r.reason = t.reason;
        }
        if t.server.is_some() {
            r.server = t.server;
        }
        if t.result.is_some() {
            r.result = t.result;
        }
        if let Some(job) = t.rating {
            ps.results.insert(id.clone(), (job, now_ms()));
        }
        for (p, a) in t.answers {
            r.answers.insert(p, a);
        }
        match t.due {
            Some(at) => ps.due.insert(id.clone(), at),
            None => ps.due.remove(id),
        };
        Ok(true)
    }

    async fn due(&self, pool: &Pool, limit: usize) -> Result<Vec<MatchId>, StoreError> {
        let now = now_ms();
        let inner = self.lock();
        let Some(ps) = inner.pools.get(pool) else {
            return Ok(Vec::new());
        };
        let mut due: Vec<(Millis, MatchId)> = ps
            .due
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(id, at)| (*at, id.clone()))
            .collect();
        due.sort();
        Ok(due.into_iter().take(limit).map(|(_, id)| id).collect())
    }

    async fn reschedule(&self, pool: &Pool, id: &MatchId, at: Millis) -> Result<(), StoreError> {
        let mut inner = self.lock();
        if let Some(due) = inner.pool(pool).due.get_mut(id) {
            *due = at;
        }
        Ok(())
    }

    async fn unwind(
        &self,
        pool: &Pool,
        record: &MatchRecord,
        ban_until: Millis,
    ) -> Result<(), StoreError> {
        let now = now_ms();
        let mid = &record.matched.id;
        let at_fault = record.at_fault();
        let mut requeued_in = Vec::new();
        let mut inner = self.lock();
        for t in &record.matched.tickets {
            let fate = record.fate(&t.players);
            let pools = t
                .players
                .first()
                .and_then(|p| inner.players.get(p))
                .and_then(|p| p.tickets.get(&t.ticket_id).cloned())
                .unwrap_or_else(|| vec![pool.clone()]);
            let mode = record.matched.mode.clone();
            for p in &t.players {
                let ps = inner.player_mut(p, now);
                if ps.in_match.as_ref().is_some_and(|(_, m)| m == mid) {
                    ps.in_match = None;
                }
                if at_fault.contains(p) {
                    ps.banned_until = Some(ban_until);
                }
                if fate == TicketFate::Requeue {
                    ps.active
                        .entry(mode.clone())
                        .or_insert_with(|| t.ticket_id.clone());
                }
            }
            for other in &pools {
                let Some(ps) = inner.pools.get_mut(other) else {
                    continue;
                };
                let here = ps.state.get(&t.ticket_id).cloned();
                let ours = match &here {
                    Some(State::Matched(m)) => m == mid,
                    Some(State::Withdrawn(r)) => r == crate::api::MATCHED_IN_OTHER_POOL,
                    _ => false,
                };
                if !ours {
                    continue;
                }
                match &fate {
                    TicketFate::Requeue => {
                        ps.state.insert(t.ticket_id.clone(), State::Requeued);
                        // Back in its lane (the ticket's own data has it).
                        let score = ps
                            .tickets
                            .get(&t.ticket_id)
                            .map_or(t.rating, mm_domain::Ticket::queue_score);
                        ps.queue.insert((Score(score), t.ticket_id.clone()));
                        ps.done.remove(t.ticket_id.as_str());
                        requeued_in.push(other.name());
                    }
                    TicketFate::End { status, reason } => {
                        if matches!(here, Some(State::Matched(_))) {
                            let state = if *status == TicketStatus::TimedOut {
                                State::TimedOut(reason.clone())
                            } else {
                                State::Withdrawn(reason.clone())
                            };
                            ps.state.insert(t.ticket_id.clone(), state);
                            ps.done.insert(t.ticket_id.to_string(), now);
                        }
                    }
                    TicketFate::Stay => {}
                }
            }
        }
        drop(inner);
        requeued_in.dedup();
        for pool in requeued_in {
            self.wakes.wake(&pool);
        }
        Ok(())
    }

    async fn step_done(
        &self,
        pool: &Pool,
        id: &MatchId,
        status: MatchStatus,
    ) -> Result<bool, StoreError> {
        let now = now_ms();
        let mut inner = self.lock();
        let ps = inner.pool(pool);
        let Some(r) = ps.lives.get_mut(id) else {
            return Ok(false);
        };
        if r.status != status {
            return Ok(false);
        }
        ps.due.remove(id);
        if status.is_terminal() {
            if r.settled {
                return Ok(false);
            }
            r.settled = true;
            ps.done.insert(id.to_string(), now);
        }
        Ok(true)
    }
}
