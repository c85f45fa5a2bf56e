//! The ingress's view of players' ratings, fast enough to sit on the ticket path.
//!
//! Reads are cached per (mode, player) for a short while, and cache misses from
//! concurrent requests are gathered into one query per mode (up to four queries in
//! flight), so a busy ingress asks the database once for many tickets.
//!
//! A cached rating may be older than the player's last applied result; the store
//! catches that: every ticket carries the rating version it was built from, and
//! enqueueing refuses one older than the player's freshness mark
//! (`EnqueueOutcome::StaleRating`). The ingress then reads [`Lookup::fresh`]
//! (which waits for a rating batch in flight) and queues again, so a player never
//! matches on a rating older than their last applied result. The cache's time to
//! live bounds how long a lost mark could go unnoticed.

use mm_domain::PlayerId;
use mm_ratings::{RatingStore, Stored};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{Semaphore, mpsc, oneshot};

const SHARDS: usize = 16;
/// Entries a shard holds before it is emptied (a crude but cheap bound).
const SHARD_CAPACITY: usize = 65_536;
/// Most lookups gathered into one round of queries.
const MAX_GATHER: usize = 512;
/// Queries in flight at once.
const IN_FLIGHT: usize = 2;

#[derive(Debug, Clone, thiserror::Error)]
#[error("rating lookup failed: {0}")]
pub struct LookupError(String);

type Key = (String, PlayerId);
/// One cache shard: (mode, player) -> (stored rating, when read).
type Shard = Mutex<HashMap<Key, (Option<Stored>, Instant)>>;
type Answer = Result<Vec<Option<Stored>>, LookupError>;

struct Request {
    mode: String,
    players: Vec<PlayerId>,
    reply: oneshot::Sender<Answer>,
}

/// Cached, batched rating reads.
pub struct Lookup {
    ratings: Arc<dyn RatingStore>,
    shards: Vec<Shard>,
    ttl: Duration,
    queries: mpsc::Sender<Request>,
}

impl Lookup {
    /// A lookup over `ratings` whose cache entries live `ttl` (zero: no cache).
    /// Spawns the task that batches queries; call inside a Tokio runtime.
    pub fn new(ratings: Arc<dyn RatingStore>, ttl: Duration) -> Arc<Self> {
        let (tx, rx) = mpsc::channel(4096);
        tokio::spawn(gather(ratings.clone(), rx));
        Arc::new(Self {
            ratings,
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            ttl,
            queries: tx,
        })
    }

    /// The rating store behind the lookup.
    pub fn store(&self) -> &Arc<dyn RatingStore> {
        &self.ratings
    }

    fn shard(&self, key: &Key) -> &Shard {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        key.hash(&mut h);
        &self.shards[h.finish() as usize % SHARDS]
    }

    fn remember(&self, mode: &str, players: &[PlayerId], values: &[Option<Stored>]) {
        if self.ttl.is_zero() {
            return;
        }
        let now = Instant::now();
        for (p, v) in players.iter().zip(values) {
            let key = (mode.to_string(), p.clone());
            let mut shard = self.shard(&key).lock().unwrap_or_else(|e| e.into_inner());
            if shard.len() >= SHARD_CAPACITY {
                shard.clear();
            }
            shard.insert(key, (*v, now));
        }
    }

    /// The players' ratings in `mode` if the cache holds every one of them.
    pub fn cached(&self, mode: &str, players: &[PlayerId]) -> Option<Vec<Option<Stored>>> {
        players
            .iter()
            .map(|p| {
                let key = (mode.to_string(), p.clone());
                self.shard(&key)
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get(&key)
                    .filter(|(_, at)| at.elapsed() < self.ttl)
                    .map(|(v, _)| *v)
            })
            .collect()
    }

    /// The players' stored ratings in `mode` (`None`: never rated), in order.
    pub async fn skills(&self, mode: &str, players: &[PlayerId]) -> Answer {
        let mut out: Vec<Option<Option<Stored>>> = Vec::with_capacity(players.len());
        let mut missing = Vec::new();
        for p in players {
            let key = (mode.to_string(), p.clone());
            let hit = self
                .shard(&key)
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(&key)
                .filter(|(_, at)| at.elapsed() < self.ttl)
                .map(|(v, _)| *v);
            if hit.is_none() {
                missing.push(p.clone());
            }
            out.push(hit);
        }
        if !missing.is_empty() {
            let (reply, answer) = oneshot::channel();
            self.queries
                .send(Request {
                    mode: mode.to_string(),
                    players: missing.clone(),
                    reply,
                })
                .await
                .map_err(|_| LookupError("the lookup task stopped".into()))?;
            let got = answer
                .await
                .map_err(|_| LookupError("the lookup task dropped the query".into()))??;
            self.remember(mode, &missing, &got);
            let mut got = got.into_iter();
            for slot in out.iter_mut().filter(|s| s.is_none()) {
                *slot = Some(got.next().flatten());
            }
        }
        Ok(out.into_iter().map(Option::flatten).collect())
    }

    /// The same, read past any rating batch in flight, and remembered.
    pub async fn fresh(&self, mode: &str, players: &[PlayerId]) -> Answer {
        let got = self
            .ratings
            .skills_fresh(mode, players)
            .await
            .map_err(|e| LookupError(e.to_string()))?;
        self.remember(mode, players, &got);
        Ok(got)
    }
}

/// Gathers waiting lookups into one query per mode.
async fn gather(ratings: Arc<dyn RatingStore>, mut rx: mpsc::Receiver<Request>) {
    let slots = Arc::new(Semaphore::new(IN_FLIGHT));
    while let Some(first) = rx.recv().await {
        // While every slot is busy, more lookups queue up and join this round.
        let Ok(permit) = slots.clone().acquire_owned().await else {
            return;
        };
        let mut round = vec![first];
        while round.len() < MAX_GATHER {
            match rx.try_recv() {
                Ok(r) => round.push(r),
                Err(_) => break,
            }
        }
        let ratings = ratings.clone();
        tokio::spawn(async move {
            let mut by_mode: HashMap<String, Vec<Request>> = HashMap::new();
            for r in round {
                by_mode.entry(r.mode.clone()).or_default().push(r);
            }
            for (mode, requests) in by_mode {
                let mut players: Vec<PlayerId> = requests
                    .iter()
                    .flat_map(|r| r.players.iter().cloned())
                    .collect();
                players.sort();
                players.dedup();
                match ratings.skills(&mode, &players).await {
                    Ok(values) => {
                        let found: HashMap<&PlayerId, Option<Stored>> =
                            players.iter().zip(values).collect();
                        for r in requests {
                            let answer = r.players.iter().map(|p| found[p]).collect();
                            let _ = r.reply.send(Ok(answer));
                        }
                    }
                    Err(e) => {
                        let e = LookupError(e.to_string());
                        for r in requests {
                            let _ = r.reply.send(Err(e.clone()));
                        }
                    }
                }
            }
            drop(permit);
        });
    }
}
