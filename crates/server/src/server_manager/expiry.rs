//! Matches that outlived their mode's `max_match_duration`. A game server
//! that hangs, or forgets a match without reporting a result or releasing it,
//! while its heartbeat thread goes on, would keep the match's players "in a
//! match" (no new ticket) for as long as it heartbeats. Each heartbeat looks
//! at the server's matches: one placed longer ago than its mode allows ends
//! `failed` with reason `match_expired` (players told and free to queue, no
//! rating), its slot is given back, and the heartbeat's answer no longer
//! lists it, which tells the server. Each listed match carries when that will
//! be (`expires_at_ms`), so a server can end it first.

use super::Service;
use mm_domain::{MatchId, MatchStatus, Millis, Pool, reasons};
use mm_store::{Allocation, Transition};

impl Service {
    /// Allocation `a`'s pool and when its match expires (ms), if `a` is a
    /// match (not a slot allocated to a caller outside the matchmaker) and its
    /// mode sets a limit.
    fn expiry(&self, a: &Allocation) -> Option<(Pool, Millis)> {
        let pool = a.pool.as_deref().and_then(Pool::parse)?;
        let max = self.catalog.mode(&pool.mode)?.max_match_duration?;
        Some((pool, a.allocated_at.saturating_add(max)))
    }

    /// Ends the matches of `allocations` (server `server`'s) placed more than
    /// their mode's `max_match_duration` before `now`; returns the others,
    /// each with when it expires (0: no limit).
    pub(super) async fn expire(
        &self,
        server: &str,
        allocations: Vec<Allocation>,
        now: Millis,
    ) -> Vec<(Allocation, Millis)> {
        let mut kept = Vec::with_capacity(allocations.len());
        for a in allocations {
            let (pool, at) = match self.expiry(&a) {
                Some((pool, at)) if now >= at => (pool, at),
                other => {
                    kept.push((a, other.map_or(0, |(_, at)| at)));
                    continue;
                }
            };
            let Ok(id) = MatchId::new(a.id.clone()) else {
                kept.push((a, at));
                continue;
            };
            let t = Transition::new(&[MatchStatus::Assigned], MatchStatus::Failed)
                .reason(reasons::MATCH_EXPIRED)
                .due(now);
            match self.store.transition(&pool, &id, t).await {
                Ok(true) => {
                    tracing::warn!(
                        match_id = %id,
                        server = %server,
                        placed_s_ago = now.saturating_sub(a.allocated_at) / 1000,
                        "a match outlived its mode's max_match_duration on its game server: ended (match_expired), its players freed"
                    );
                    self.step(&pool, &id).await;
                    if let Err(e) = self.store.release_slot(server, id.as_str()).await {
                        warn_store!(e, match_id = %id, "could not give back an expired match's slot");
                    }
                }
                // Not assigned (still being placed, or over: the server holds
                // its slot until it releases it).
                Ok(false) => kept.push((a, at)),
                Err(e) => {
                    warn_store!(e, match_id = %id, "could not end an expired match");
                    kept.push((a, at));
                }
            }
        }
        kept
    }
}
