//! The connection to Redis: one node (through a reconnecting `ConnectionManager`)
//! or a Redis Cluster (through the cluster client, which routes each command and
//! script to the node owning its keys' slot and follows resharding).
//!
//! A pipeline must stay within one slot on a cluster, so cross-slot work is grouped
//! with [`Batches`]: one pipeline per slot tag, all sent concurrently.

use crate::keys::tag;
use redis::aio::{ConnectionLike, ConnectionManager};
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisFuture, Value};
use std::collections::BTreeMap;

/// A cheap-to-clone handle on the Redis deployment.
#[derive(Clone)]
pub(crate) enum Conn {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Conn::Single(c) => c.req_packed_command(cmd),
            Conn::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Conn::Single(c) => c.req_packed_commands(pipeline, offset, count),
            Conn::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
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
