//! Rate-limit checks on Redis, batched: the checks of concurrent requests share
//! script calls (`rate.lua`, one call per slot on a cluster), the way a proxy
//! pipelines its rate-limit lookups. A check queues its keys for one driver task;
//! while [`IN_FLIGHT`] calls are out, new checks gather, and the next call carries
//! all of them. An idle ingress sends each check at once, a saturated one sends
//! one call for many requests instead of a round trip each, which is what a round
//! trip costs on a busy machine (system calls and wake-ups on both sides).
//!
//! Within a call, a key's checks run in arrival order; two calls in flight may
//! run in either order, as two requests' own calls would.

use super::conn::Conn;
use crate::keys;
use crate::{Rate, RateCheck, StoreError, Verdict};
use redis::Script;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Semaphore, mpsc, oneshot};

/// Calls out at once; checks arriving meanwhile wait for the next call.
const IN_FLIGHT: usize = 2;
/// Most keys one call carries.
const MAX_KEYS: usize = 256;

/// One request's checks and where its verdicts go.
struct Pending {
    checks: Vec<RateCheck>,
    reply: oneshot::Sender<Result<Vec<Verdict>, String>>,
}

/// The queue of checks waiting for a script call.
pub(crate) struct RateChecks {
    queue: mpsc::UnboundedSender<Pending>,
}

impl RateChecks {
    /// Starts the driver (on the current Tokio runtime); it ends with the handle.
    pub fn start(conn: Conn, script: Script) -> Self {
        let (queue, rx) = mpsc::unbounded_channel();
        tokio::spawn(drive(conn, Arc::new(script), rx));
        Self { queue }
    }

    /// Counts one call against each `(key, rate)`: one verdict per check, in order.
    pub async fn check(&self, checks: &[RateCheck]) -> Result<Vec<Verdict>, StoreError> {
        let (reply, answer) = oneshot::channel();
        let pending = Pending {
            checks: checks.to_vec(),
            reply,
        };
        let gone = || StoreError::Corrupt("the rate-limit driver stopped".into());
        self.queue.send(pending).map_err(|_| gone())?;
        answer
            .await
            .map_err(|_| gone())?
            .map_err(|e| StoreError::Redis(redis_error(e)))
    }
}

fn redis_error(message: String) -> redis::RedisError {
    redis::RedisError::from((redis::ErrorKind::Io, "rate limits", message))
}

async fn drive(conn: Conn, script: Arc<Script>, mut rx: mpsc::UnboundedReceiver<Pending>) {
    let slots = Arc::new(Semaphore::new(IN_FLIGHT));
    loop {
        // Wait for a free call first: checks gather in the queue meanwhile.
        let Ok(slot) = slots.clone().acquire_owned().await else {
            return;
        };
        let Some(first) = rx.recv().await else {
            return;
        };
        let mut keys = first.checks.len();
        let mut batch = vec![first];
        while keys < MAX_KEYS {
            let Ok(next) = rx.try_recv() else { break };
            keys += next.checks.len();
            batch.push(next);
        }
        let (conn, script) = (conn.clone(), script.clone());
        tokio::spawn(async move {
            let answers = call(&conn, &script, &batch).await;
            drop(slot);
            reply(batch, answers);
        });
    }
}

/// One call per slot on a cluster, one in all on a single node; the waits of
/// every check of `batch`, in order.
async fn call(conn: &Conn, script: &Script, batch: &[Pending]) -> Result<Vec<u64>, String> {
    // (Redis key, its slot's hash tag, rate), in arrival order.
    let all: Vec<(String, String, Rate)> = batch
        .iter()
        .flat_map(|p| &p.checks)
        .map(|(key, rate)| {
            let (key, tag) = keys::limiter(key);
            (key, tag, *rate)
        })
        .collect();
    // (slot's hash tag, positions in `all`), keys of one slot in arrival order.
    let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, (_, tag, _)) in all.iter().enumerate() {
        let group = match conn {
            Conn::Cluster(_) => tag.as_str(),
            Conn::Single(_) => "",
        };
        groups.entry(group).or_default().push(i);
    }
    let calls = groups.into_values().map(|positions| {
        let mut inv = script.prepare_invoke();
        for &i in &positions {
            let (key, _, rate) = &all[i];
            inv.key(key)
                .arg(rate.interval().as_micros() as u64)
                .arg(rate.count.max(1));
        }
        let mut conn = conn.clone();
        async move {
            let waits: Vec<u64> = inv.invoke_async(&mut conn).await?;
            Ok::<_, redis::RedisError>((positions, waits))
        }
    });
    let mut waits = vec![0; all.len()];
    for (positions, got) in futures_util::future::try_join_all(calls)
        .await
        .map_err(|e| e.to_string())?
    {
        if got.len() != positions.len() {
            return Err(format!(
                "{} verdicts for {} keys",
                got.len(),
                positions.len()
            ));
        }
        for (i, wait) in positions.into_iter().zip(got) {
            waits[i] = wait;
        }
    }
    Ok(waits)
}

/// Hands each request its verdicts.
fn reply(batch: Vec<Pending>, answers: Result<Vec<u64>, String>) {
    let mut waits = answers.as_ref().map(|w| w.iter());
    for pending in batch {
        let mine = match &mut waits {
            Ok(w) => Ok(w.by_ref().take(pending.checks.len()).map(verdict).collect()),
            Err(e) => Err(e.clone()),
        };
        // A request that gave up waiting has nobody to tell.
        let _ = pending.reply.send(mine);
    }
}

fn verdict(wait: &u64) -> Verdict {
    if *wait == 0 {
        Verdict::Allowed
    } else {
        Verdict::Limited(Duration::from_micros(*wait))
    }
}
