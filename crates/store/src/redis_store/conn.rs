//! The connection to Redis: one node (through a reconnecting `ConnectionManager`)
//! or a Redis Cluster (through the cluster client, which routes each command and
//! script to the node owning its keys' slot and follows resharding).
//!
//! Every call is timed and its failures counted, by command (metrics), and reports
//! whether the store answered to [`crate::outage`].
//!
//! A pipeline must stay within one slot on a cluster, so cross-slot work is grouped
//! with [`Batches`]: one pipeline per slot tag, all sent concurrently.

use crate::keys::tag;
use mm_telemetry::names;
use redis::aio::{ConnectionLike, ConnectionManager};
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisFuture, Value};
use std::collections::BTreeMap;
use std::time::Instant;

/// A cheap-to-clone handle on the Redis deployment.
#[derive(Clone)]
pub(crate) enum Conn {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
}

/// Command labels: commands by name (`EVALSHA` for scripts), then `pipeline` and
/// `other` for the rest: a short, fixed set.
const LABELS: &[&str] = &[
    "EVALSHA",
    "EVAL",
    "SCRIPT",
    "GET",
    "SET",
    "HGET",
    "HGETALL",
    "HMGET",
    "HSET",
    "ZADD",
    "ZRANGE",
    "ZRANGEBYSCORE",
    "ZSCORE",
    "ZCARD",
    "PUBLISH",
    "TIME",
    "PING",
    "EXPIRE",
    "DEL",
    "pipeline",
    "other",
];
const PIPELINE: usize = LABELS.len() - 2;
const OTHER: usize = LABELS.len() - 1;

/// The command's label, as an index into [`LABELS`].
fn command_label(cmd: &Cmd) -> usize {
    let Some(redis::Arg::Simple(name)) = cmd.args_iter().next() else {
        return OTHER;
    };
    LABELS[..PIPELINE]
        .iter()
        .position(|k| k.as_bytes().eq_ignore_ascii_case(name))
        .unwrap_or(OTHER)
}

/// The call-duration histogram of each label, registered once: every Redis call
/// records one, and looking a labelled metric up costs more than recording it.
/// (Taken at the first call, after `main` installed the recorder.)
fn duration_of(label: usize) -> &'static metrics::Histogram {
    static HANDLES: std::sync::OnceLock<Vec<metrics::Histogram>> = std::sync::OnceLock::new();
    &HANDLES.get_or_init(|| {
        LABELS
            .iter()
            .map(|&c| metrics::histogram!(names::STORE_CALL_DURATION, "command" => c))
            .collect()
    })[label]
}

/// Times one call and counts its failure. A reply may carry a server's error
/// (`OOM`, `LOADING`, `CLUSTERDOWN`, ...) that the caller only turns into an
/// error later: `outage_in` finds one that says the store cannot serve now, so
/// that it counts as a failure of the outage, not as an answer that ends it.
async fn observed<T>(
    label: usize,
    call: RedisFuture<'_, T>,
    outage_in: impl Fn(&T) -> Option<redis::RedisError>,
) -> redis::RedisResult<T> {
    let started = Instant::now();
    let sent = crate::outage::sent();
    let result = call.await;
    duration_of(label).record(started.elapsed().as_secs_f64());
    let failed = |e: &redis::RedisError| {
        metrics::counter!(names::STORE_ERRORS, "command" => LABELS[label]).increment(1);
        if crate::outage::full(e) {
            crate::outage::refused(e);
        } else if crate::outage::unreachable(e) {
            crate::outage::failed(e);
        }
    };
    match &result {
        Ok(reply) => match outage_in(reply) {
            Some(e) if crate::outage::full(&e) => {
                // Redis answered: the reply ends an outage as any answer does.
                failed(&e);
                crate::outage::answered(sent);
            }
            Some(e) => failed(&e),
            None => crate::outage::answered(sent),
        },
        Err(e) => failed(e),
    }
    result
}

/// The error in `reply`, if it is a server's error that says the store cannot
/// serve now (see `outage::unreachable`).
fn outage_in(reply: &Value) -> Option<redis::RedisError> {
    let Value::ServerError(e) = reply else {
        return None;
    };
    let e = redis::RedisError::from(e.clone());
    crate::outage::unreachable(&e).then_some(e)
}

/// The same for a pipeline's replies: the first such.
fn outage_in_any(replies: &[Value]) -> Option<redis::RedisError> {
    replies.iter().find_map(outage_in)
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        let call = match self {
            Conn::Single(c) => c.req_packed_command(cmd),
            Conn::Cluster(c) => c.req_packed_command(cmd),
        };
        Box::pin(observed(command_label(cmd), call, outage_in))
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        let call = match self {
            Conn::Single(c) => c.req_packed_commands(pipeline, offset, count),
            Conn::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        };
        Box::pin(observed(PIPELINE, call, |r: &Vec<Value>| outage_in_any(r)))
    }

    fn get_db(&self) -> i64 {
        match self {
            Conn::Single(c) => c.get_db(),
            Conn::Cluster(c) => c.get_db(),
        }
    }
}

/// Fire-and-forget commands for many slots: one pipeline per hash tag.
#[derive(Default)]
pub(crate) struct Batches {
    by_tag: BTreeMap<String, Pipeline>,
}

impl Batches {
    /// The pipeline for the slot of `key` (keys are tagged, see `keys.rs`).
    pub fn at(&mut self, key: &str) -> &mut Pipeline {
        self.by_tag.entry(tag(key).to_string()).or_default()
    }

    /// Sends every pipeline concurrently. Callers mark every command `ignore()`: only
    /// failures come back.
    pub async fn run(self, conn: &Conn) -> redis::RedisResult<()> {
        let runs = self.by_tag.into_values().map(|pipe| {
            let mut c = conn.clone();
            async move {
                let () = pipe.query_async(&mut c).await?;
                Ok::<_, redis::RedisError>(())
            }
        });
        futures_util::future::try_join_all(runs).await?;
        Ok(())
    }
}

/// Most script calls one step keeps in flight at once. A pool leader commits a
/// whole pool's matches in one cycle, thousands of players: all their calls at
/// once would hold every request (and its match JSON) in memory together.
pub(crate) const CALLS_IN_FLIGHT: usize = 256;

/// Runs `calls` with at most [`CALLS_IN_FLIGHT`] in flight, and returns their
/// results in order; the first error ends it.
pub(crate) async fn bounded<T, E, F>(calls: impl IntoIterator<Item = F>) -> Result<Vec<T>, E>
where
    F: std::future::Future<Output = Result<T, E>>,
{
    use futures_util::{StreamExt, TryStreamExt};
    futures_util::stream::iter(calls)
        .buffered(CALLS_IN_FLIGHT)
        .try_collect()
        .await
}
