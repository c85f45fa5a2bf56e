//! Seed 000's pipeline, ported as the benchmarks' baseline (bench-only; the service
//! never runs it). What the seed describes, step for step:
//! - its key schema: `mm:queue:REGION` (ZSET scored by rating), `mm:tkt:ID` (the
//!   ticket's hash), `mm:proc:WORKER` (the processing hash), `mm:lock:ID` (a lock per
//!   ticket with a TTL), `mm:hb:WORKER` (the heartbeat), `mm:mch:ID` (the match);
//! - its five scripts (`lua/`): claim (lowest-first `ZRANGEBYSCORE` over the whole
//!   rating range, `SET lock NX EX` per ticket), release, complete, heartbeat
//!   (refreshes every lock of the worker) and reclaim (a full `SCAN` of the
//!   heartbeats);
//! - its worker ([`worker`]): `WORKER_POOL_SIZE` consumers, each claiming a batch of
//!   `CLAIM_BATCH_SIZE` (10), forming matches with its tightest-spread
//!   `FormMatches` ([`mm_engine::form_matches`]), then one round trip per step as
//!   its Go code makes them: each match saved, each match published, the matched
//!   tickets completed, the rest released; a heartbeater every 2 s with a 30 s
//!   lease; a supervisor reclaiming every 5 s.
//!
//! Where the seed is silent, the port chooses and says so:
//! - a consumer runs one cycle per tick of a 100 ms ticker (`POLL_INTERVAL`), the
//!   reading its published drain fits ([`worker::Poll`]); `--poll eager` (the
//!   benches' `port-eager` baseline) instead claims again at once after a cycle
//!   that formed a match;
//! - a worker beats once when it starts;
//! - a ticket's hash holds its JSON in one field.

pub mod worker;

use anyhow::{Context, Result};
use redis::AsyncCommands;
use redis::aio::MultiplexedConnection;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::time::Duration;

/// Seed 000's defaults.
pub const BATCH: usize = 10;
pub const LOCK_TTL: Duration = Duration::from_secs(30);
pub const HEARTBEAT_INTERVAL: Duration = Duration::from_secs(2);
pub const SUPERVISE_INTERVAL: Duration = Duration::from_secs(5);
/// A consumer's poll interval (the seed does not say).
pub const POLL_INTERVAL: Duration = Duration::from_millis(100);
/// `MIN_PLAYERS_PER_MATCH`, `MAX_PLAYERS_PER_MATCH`.
pub const MIN_PLAYERS: usize = 2;
pub const MAX_PLAYERS: usize = 8;
/// The full rating range its consumers claim over.
const RATING_RANGE: (f64, f64) = (0.0, 9999.0);
/// Where matches are published for the ingress to push to players.
pub const MATCH_CHANNEL: &str = "mm:matches";

/// A ticket as the port keeps it (`mm:tkt:ID` field `data`, and in the processing
/// hash).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PortTicket {
    pub id: String,
    pub player_id: String,
    pub mmr: f64,
    pub region: String,
    /// Unix ms.
    pub created_at: u64,
}

/// A match as the port saves and publishes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PortMatch {
    pub id: String,
    pub region: String,
    pub tickets: Vec<String>,
    pub players: Vec<String>,
    pub created_at: u64,
}

/// The port's scripts and one connection to its Redis, for one region.
#[derive(Clone)]
pub struct Port {
    conn: MultiplexedConnection,
    region: String,
    scripts: std::sync::Arc<Scripts>,
}

struct Scripts {
    claim: redis::Script,
    release: redis::Script,
    complete: redis::Script,
    heartbeat: redis::Script,
    reclaim: redis::Script,
}

fn queue_key(region: &str) -> String {
    format!("mm:queue:{region}")
}

fn proc_key(worker: &str) -> String {
    format!("mm:proc:{worker}")
}

fn hb_key(worker: &str) -> String {
    format!("mm:hb:{worker}")
}

impl Port {
    /// A connection of its own to `url`, serving `region`.
    pub async fn connect(url: &str, region: &str) -> Result<Self> {
        let conn = redis::Client::open(url)?
            .get_multiplexed_async_connection()
            .await
            .with_context(|| format!("cannot reach Redis at {url}"))?;
        Ok(Self {
            conn,
            region: region.to_string(),
            scripts: std::sync::Arc::new(Scripts {
                claim: redis::Script::new(include_str!("lua/claim.lua")),
                release: redis::Script::new(include_str!("lua/release.lua")),
                complete: redis::Script::new(include_str!("lua/complete.lua")),
                heartbeat: redis::Script::new(include_str!("lua/heartbeat.lua")),
                reclaim: redis::Script::new(include_str!("lua/reclaim.lua")),
            }),
        })
    }

    /// Seed 000's EnqueueTicket: the ticket's hash and its queue entry, in one
    /// transaction.
    pub async fn enqueue(&mut self, t: &PortTicket) -> Result<()> {
        let () = redis::pipe()
            .atomic()
            .hset(
                format!("mm:tkt:{}", t.id),
                "data",
                serde_json::to_string(t)?,
            )
            .ignore()
            .zadd(queue_key(&t.region), &t.id, t.mmr)
            .ignore()
            .query_async(&mut self.conn)
            .await?;
        Ok(())
    }

    /// Up to `count` tickets of the whole rating range, lowest first, locked for
    /// `worker` for `lock_ttl`.
    pub async fn claim(
        &mut self,
        worker: &str,
        count: usize,
        lock_ttl: Duration,
    ) -> Result<Vec<PortTicket>> {
        let raw: Vec<String> = self
            .scripts
            .claim
            .key(queue_key(&self.region))
            .key(proc_key(worker))
            .arg(worker)
            .arg(RATING_RANGE.0)
            .arg(RATING_RANGE.1)
            .arg(count)
            .arg(lock_ttl.as_secs().max(1))
            .invoke_async(&mut self.conn)
            .await?;
        raw.iter()
            .map(|j| serde_json::from_str(j).context("a claimed ticket's JSON"))
            .collect()
    }

    /// Tickets of `worker` back to the queue.
    pub async fn release(&mut self, worker: &str, ids: &[&str]) -> Result<u64> {
        if ids.is_empty() {
            return Ok(0);
        }
        Ok(self
            .scripts
            .release
            .key(queue_key(&self.region))
            .key(proc_key(worker))
            .arg(ids)
            .invoke_async(&mut self.conn)
            .await?)
    }

    /// Matched tickets of `worker` out of its processing hash, locks deleted.
    pub async fn complete(&mut self, worker: &str, ids: &[&str]) -> Result<u64> {
        if ids.is_empty() {
            return Ok(0);
        }
        Ok(self
            .scripts
            .complete
            .key(proc_key(worker))
            .arg(ids)
            .invoke_async(&mut self.conn)
            .await?)
    }

    /// Stamps `worker`'s heartbeat and refreshes its locks; returns how many.
    pub async fn heartbeat(&mut self, worker: &str, lock_ttl: Duration) -> Result<u64> {
        Ok(self
            .scripts
            .heartbeat
            .key(hb_key(worker))
            .key(proc_key(worker))
            .arg(lock_ttl.as_secs().max(1))
            .invoke_async(&mut self.conn)
            .await?)
    }

    /// Every stale worker's tickets back to their queues; returns how many.
    pub async fn reclaim(&mut self, lock_ttl: Duration) -> Result<u64> {
        Ok(self
            .scripts
            .reclaim
            .arg(lock_ttl.as_millis() as u64)
            .invoke_async(&mut self.conn)
            .await?)
    }

    /// The match's hash (`mm:mch:ID`).
    pub async fn save_match(&mut self, m: &PortMatch) -> Result<()> {
        let () = self
            .conn
            .hset_multiple(
                format!("mm:mch:{}", m.id),
                &[
                    ("region", m.region.clone()),
                    ("tickets", m.tickets.join(",")),
                    ("players", m.players.join(",")),
                    ("created_at", m.created_at.to_string()),
                ],
            )
            .await?;
        Ok(())
    }

    /// The match on [`MATCH_CHANNEL`], for the ingress to push.
    pub async fn publish(&mut self, m: &PortMatch) -> Result<()> {
        let () = self
            .conn
            .publish(MATCH_CHANNEL, serde_json::to_string(m)?)
            .await?;
        Ok(())
    }

    /// Seed 000's ReleaseAllTickets at a graceful stop: everything `worker` holds
    /// goes back, and its heartbeat is removed.
    pub async fn release_all(&mut self, worker: &str) -> Result<u64> {
        let held: Vec<String> = self.conn.hkeys(proc_key(worker)).await?;
        let ids: Vec<&str> = held.iter().map(String::as_str).collect();
        let n = self.release(worker, &ids).await?;
        let () = self.conn.del(hb_key(worker)).await?;
        Ok(n)
    }

    // What the benches observe (not part of the pipeline's own round trips).

    /// (queued, processing): the queue's size and the processing hashes' of
    /// `workers`, in one round trip.
    pub async fn depths(&mut self, workers: &[String]) -> Result<(u64, u64)> {
        let mut pipe = redis::pipe();
        pipe.zcard(queue_key(&self.region));
        for w in workers {
            pipe.hlen(proc_key(w));
        }
        let sizes: Vec<u64> = pipe.query_async(&mut self.conn).await?;
        Ok((sizes[0], sizes[1..].iter().sum()))
    }

    /// The ids in `worker`'s processing hash.
    pub async fn held(&mut self, worker: &str) -> Result<Vec<String>> {
        Ok(self.conn.hkeys(proc_key(worker)).await?)
    }

    /// The ids waiting in the queue.
    pub async fn queued(&mut self) -> Result<HashSet<String>> {
        let ids: Vec<String> = self.conn.zrange(queue_key(&self.region), 0, -1).await?;
        Ok(ids.into_iter().collect())
    }

    /// Every saved match's ticket ids.
    pub async fn matches(&mut self) -> Result<Vec<Vec<String>>> {
        let mut out = Vec::new();
        for key in self.scan("mm:mch:*").await? {
            let tickets: Option<String> = self.conn.hget(&key, "tickets").await?;
            out.push(
                tickets
                    .unwrap_or_default()
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect(),
            );
        }
        Ok(out)
    }

    async fn scan(&mut self, pattern: &str) -> Result<Vec<String>> {
        let mut keys = Vec::new();
        let mut cursor = 0u64;
        loop {
            let (next, page): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(pattern)
                .arg("COUNT")
                .arg(1000)
                .query_async(&mut self.conn)
                .await?;
            keys.extend(page);
            if next == 0 {
                return Ok(keys);
            }
            cursor = next;
        }
    }
}

#[cfg(test)]
mod tests;
