//! Writes acknowledged only once replicated (`REDIS_WAIT_REPLICAS`), and what a
//! Redis primary says of its replicas (`INFO replication`, read at start-up by a
//! process that waits for them).
//!
//! `WAIT` counts the replicas that hold every write sent *on this connection to
//! this node*. Sent as a command of its own after the write, it is routed anew:
//! if the node that took the write died meanwhile, the client retries the
//! `WAIT` on the replica that took over, which answers for its own writes, not
//! for the lost one, and the ticket is acknowledged and lost (a Cluster
//! failover test saw one such loss in a CI run). Likewise a restarted old
//! primary that has not yet learnt it was demoted takes a write from a client
//! with a stale slot map. So the write and its `WAIT` travel together, in one
//! pipeline to one node: whichever node runs the write answers the `WAIT` for
//! it, and a pipeline retried elsewhere runs the (idempotent) write again there.

use super::RedisStore;
use crate::StoreError;
use redis::{FromRedisValue, ScriptInvocation};

impl RedisStore {
    /// Runs `call` (its keys in one slot) and, when replicas are waited for,
    /// `WAIT` behind it in the same pipeline: [`StoreError::NotReplicated`] when
    /// fewer replicas than asked confirmed it in time.
    pub(super) async fn invoke_durable<T: FromRedisValue>(
        &self,
        call: &ScriptInvocation<'_>,
    ) -> Result<T, StoreError> {
        let Some((wanted, timeout)) = self.replication else {
            return Ok(call.invoke_async(&mut self.conn()).await?);
        };
        let mut pipe = redis::pipe();
        pipe.invoke_script(call)
            .cmd("WAIT")
            .arg(wanted)
            .arg(timeout.as_millis() as u64);
        let mut loaded = false;
        let (value, acked): (T, i64) = loop {
            match pipe.query_async(&mut self.conn()).await {
                Ok(answer) => break answer,
                // A node that never ran the script (a replica promoted, a node
                // restarted): load it everywhere once, then send it all again.
                Err(e)
                    if !loaded
                        && e.kind()
                            == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) =>
                {
                    call.load_async(&mut self.conn()).await?;
                    loaded = true;
                }
                Err(e) => return Err(e.into()),
            }
        };
        if acked < i64::from(wanted) {
            return Err(StoreError::NotReplicated {
                acked: acked.max(0) as u32,
                wanted,
            });
        }
        Ok(value)
    }
}

/// One primary and the replicas connected to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisPrimary {
    /// host:port, as the client reaches it.
    pub address: String,
    /// `connected_slaves`: replicas attached now (a replica still syncing counts).
    pub replicas: u32,
}

impl RedisPrimary {
    /// Reads `INFO replication` text. A node that is itself a replica is refused:
    /// a write there fails anyway, and `WAIT` means nothing.
    pub(super) fn parse(address: String, info: &str) -> Result<Self, StoreError> {
        let field = |name: &str| super::info_field(info, name);
        match field("role") {
            Some("master") => {}
            other => {
                return Err(StoreError::Corrupt(format!(
                    "{address} is not a primary (role {})",
                    other.unwrap_or("unknown")
                )));
            }
        }
        let replicas = field("connected_slaves")
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| {
                StoreError::Corrupt(format!(
                    "{address}: no connected_slaves in INFO replication"
                ))
            })?;
        Ok(Self { address, replicas })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_primary_with_one_replica() {
        let text = "# Replication\r\nrole:master\r\nconnected_slaves:1\r\n\
                    slave0:ip=127.0.0.1,port=7001,state=online,offset=42,lag=0\r\n";
        let p = RedisPrimary::parse("127.0.0.1:7000".into(), text).unwrap();
        assert_eq!(p.replicas, 1);
        assert_eq!(p.address, "127.0.0.1:7000");
    }

    #[test]
    fn refuses_a_replica_and_text_without_the_count() {
        let replica = "# Replication\r\nrole:slave\r\nmaster_host:127.0.0.1\r\n";
        assert!(RedisPrimary::parse("a:1".into(), replica).is_err());
        assert!(RedisPrimary::parse("a:1".into(), "role:master\r\n").is_err());
    }
}
