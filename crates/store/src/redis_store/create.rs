//! A new solo ticket in one script call on a single node (`create.lua`): the
//! player's block list read, the rate charged, the player activated and the
//! ticket queued in every pool. What is out of that common case is answered for
//! [`super::RedisStore`]'s `enqueue_new` to take the long way.

use super::{Conn, PLAYER_TTL_SECS, RedisStore, checked_version};
use crate::keys::{PlayerKeys, PoolKeys, WAKE_CHANNEL};
use crate::{EnqueueOutcome, StoreError};
use mm_domain::{PlayerId, Pool, Ticket};

/// What [`RedisStore::create_solo`] did.
pub(super) enum Created {
    /// Queued, or refused by the rate limit.
    Done(EnqueueOutcome),
    /// Nothing: the player's block list, for the ticket to carry.
    Blocks(Vec<PlayerId>),
    /// Charged (if asked) but not queued: the long way finds out why.
    Refused,
    /// Nothing: not a solo ticket on one node, or charged to someone else.
    NotSolo,
}

impl RedisStore {
    /// A solo player's new ticket in one script call (`create.lua`): the block
    /// list read, the rate charged, the player activated and the ticket queued
    /// in every pool. One node only: the player's and the pools' keys are in
    /// different slots.
    pub(super) async fn create_solo(
        &self,
        ticket: &Ticket,
        charge: Option<&crate::RateCheck>,
    ) -> Result<Created, StoreError> {
        let [player] = ticket.players.as_slice() else {
            return Ok(Created::NotSolo);
        };
        let limiter = match charge {
            None => None,
            Some((
                key @ crate::RateKey {
                    who: crate::Who::Player(p),
                    ..
                },
                rate,
            )) if p == player => Some((crate::keys::limiter(key).0, rate)),
            Some(_) => return Ok(Created::NotSolo),
        };
        if matches!(self.conn, Conn::Cluster(_)) {
            return Ok(Created::NotSolo);
        }
        let pools = ticket.pools();
        let names: Vec<String> = pools.iter().map(Pool::name).collect();
        let pk = PlayerKeys::new(player);
        let mut call = self.scripts.create.key(&pk.active);
        call.key(&pk.tickets)
            .key(&pk.ban)
            .key(&pk.in_match)
            .key(&pk.marks)
            .key(&pk.blocks);
        match &limiter {
            Some((key, _)) => call.key(key),
            None => call.key(&pk.active),
        };
        for pool in &pools {
            let keys = PoolKeys::new(pool);
            call.key(&keys.queue)
                .key(&keys.tickets)
                .key(&keys.state)
                .key(&keys.since)
                .key(&keys.armed)
                .key(&keys.leader)
                .key(&keys.arrivals);
        }
        call.arg(ticket.id.as_str())
            .arg(&ticket.mode)
            .arg(names.join(","))
            .arg(PLAYER_TTL_SECS)
            .arg(checked_version(ticket, player))
            .arg(serde_json::to_string(ticket)?);
        match limiter {
            Some((_, rate)) => call
                .arg(rate.interval().as_micros() as u64)
                .arg(rate.count.max(1)),
            None => call.arg("").arg(""),
        };
        call.arg(ticket.queue_score())
            .arg(ticket.enqueued_at)
            .arg(WAKE_CHANNEL)
            .arg(crate::HISTORY_LEN);
        for name in &names {
            call.arg(name);
        }
        // Acknowledged only once replicated, when replicas are waited for.
        let answer: String = self.invoke_durable(&call).await?;
        if answer == "=" {
            return Ok(Created::Done(EnqueueOutcome::Queued));
        }
        if let Some(wait) = answer.strip_prefix("!rate|") {
            let us = wait.parse().unwrap_or(1);
            return Ok(Created::Done(EnqueueOutcome::Limited(
                std::time::Duration::from_micros(us),
            )));
        }
        if let Some(list) = answer.strip_prefix("!blocks|") {
            let all: std::collections::BTreeSet<&str> = list.split(',').collect();
            return Ok(Created::Blocks(
                all.into_iter()
                    .map(|p| PlayerId::new(p).map_err(|e| StoreError::Corrupt(e.to_string())))
                    .collect::<Result<_, _>>()?,
            ));
        }
        Ok(Created::Refused)
    }
}
