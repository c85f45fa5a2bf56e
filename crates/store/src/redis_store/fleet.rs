//! [`Fleet`] on Redis: every game-server key is in the `{fleet}` slot (see
//! [`crate::keys::FleetKeys`]), so registration, heartbeat, allocation, release and
//! removal are each one script. Allocation throughput is therefore bound by one
//! Redis node, which is far above what a fleet needs.

use super::RedisStore;
use crate::keys::FleetKeys;
use crate::{AllocateOutcome, Allocation, Fleet, GameServer, RegionCensus, StoreError};
use async_trait::async_trait;
use mm_domain::{Millis, ServerAssignment};
use std::time::Duration;

/// The fields of an allocation that the request carries (the rest is filled in
/// by the script: server, address, time).
#[derive(serde::Serialize, serde::Deserialize)]
struct Request {
    id: String,
    region: String,
    mode: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pool: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    teams: Vec<Vec<String>>,
    #[serde(default, skip_serializing_if = "mm_domain::Decided::is_empty")]
    decided: mm_domain::Decided,
}

/// Parses a stored allocation, `server|address|ms|request JSON`.
fn parse(value: &str) -> Result<Allocation, StoreError> {
    let bad = || StoreError::Corrupt(format!("allocation {value:?}"));
    let mut parts = value.splitn(4, '|');
    let (Some(server), Some(address), Some(at), Some(json)) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad());
    };
    let req: Request = serde_json::from_str(json)?;
    Ok(Allocation {
        id: req.id,
        server: ServerAssignment {
            server_id: server.to_string(),
            address: address.to_string(),
        },
        region: req.region,
        mode: req.mode,
        pool: req.pool,
        teams: req.teams,
        decided: req.decided,
        allocated_at: at.parse::<Millis>().map_err(|_| bad())?,
    })
}

#[async_trait]
impl Fleet for RedisStore {
    async fn register_server(
        &self,
        server: &GameServer,
        timeout: Duration,
    ) -> Result<(), StoreError> {
        let k = FleetKeys::default();
        let mut inv = self.scripts.fleet_register.prepare_invoke();
        inv.key(&k.servers)
            .key(&k.heartbeats)
            .key(&k.capacity)
            .key(&k.address)
            .key(&k.free_sets)
            .key(k.on(&server.id))
            .key(&k.leaving);
        for mode in &server.modes {
            inv.key(k.free(&server.region, mode));
        }
        inv.arg(&server.id)
            .arg(serde_json::to_string(server)?)
            .arg(timeout.as_millis() as u64)
            .arg(server.capacity)
            .arg(&server.address);
        let _: i64 = inv.invoke_async(&mut self.conn()).await?;
        Ok(())
    }

    async fn server_heartbeat(
        &self,
        id: &str,
        timeout: Duration,
    ) -> Result<Option<Vec<Allocation>>, StoreError> {
        let k = FleetKeys::default();
        let out: Vec<String> = self
            .scripts
            .fleet_heartbeat
            .key(&k.servers)
            .key(&k.heartbeats)
            .key(&k.capacity)
            .key(&k.free_sets)
            .key(k.on(id))
            .key(&k.allocations)
            .key(&k.leaving)
            .arg(id)
            .arg(timeout.as_millis() as u64)
            .invoke_async(&mut self.conn())
            .await?;
        if out.is_empty() {
            return Ok(None);
        }
        out[1..]
            .iter()
            .map(|v| parse(v))
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    async fn allocate(&self, request: &Allocation) -> Result<AllocateOutcome, StoreError> {
        let k = FleetKeys::default();
        let req = Request {
            id: request.id.clone(),
            region: request.region.clone(),
            mode: request.mode.clone(),
            pool: request.pool.clone(),
            teams: request.teams.clone(),
            decided: request.decided.clone(),
        };
        let out: Vec<String> = self
            .scripts
            .fleet_allocate
            .key(k.free(&request.region, &request.mode))
            .key(&k.heartbeats)
            .key(&k.allocations)
            .key(&k.address)
            .key(&k.free_sets)
            .key(&k.capacity)
            .arg(&request.id)
            .arg(serde_json::to_string(&req)?)
            .arg(&k.on_prefix)
            .invoke_async(&mut self.conn())
            .await?;
        match (out.first().map(String::as_str), out.get(1)) {
            (Some("new" | "dup"), Some(v)) => Ok(AllocateOutcome::Allocated(parse(v)?)),
            _ => Ok(AllocateOutcome::NoCapacity),
        }
    }

    async fn allocation(&self, id: &str) -> Result<Option<Allocation>, StoreError> {
        let k = FleetKeys::default();
        let v: Option<String> = redis::cmd("HGET")
            .arg(&k.allocations)
            .arg(id)
            .query_async(&mut self.conn())
            .await?;
        v.map(|v| parse(&v)).transpose()
    }

    async fn release_slot(&self, server: &str, id: &str) -> Result<bool, StoreError> {
        let k = FleetKeys::default();
        let n: i64 = self
            .scripts
            .fleet_release
            .key(k.on(server))
            .key(&k.allocations)
            .key(&k.capacity)
            .key(&k.free_sets)
            .key(&k.leaving)
            .key(&k.heartbeats)
            .arg(server)
            .arg(id)
            .invoke_async(&mut self.conn())
            .await?;
        Ok(n == 1)
    }

    async fn leave(&self, server: &str) -> Result<bool, StoreError> {
        let k = FleetKeys::default();
        let n: i64 = self
            .scripts
            .fleet_leave
            .key(&k.servers)
            .key(&k.free_sets)
            .key(&k.leaving)
            .arg(server)
            .invoke_async(&mut self.conn())
            .await?;
        Ok(n == 1)
    }

    async fn lapsed_servers(&self) -> Result<Vec<String>, StoreError> {
        let k = FleetKeys::default();
        let now = self.server_now().await?;
        Ok(redis::cmd("ZRANGEBYSCORE")
            .arg(&k.heartbeats)
            .arg("-inf")
            .arg(now)
            .query_async(&mut self.conn())
            .await?)
    }

    async fn remove_lapsed(&self, server: &str) -> Result<Option<Vec<Allocation>>, StoreError> {
        let k = FleetKeys::default();
        let out: Vec<String> = self
            .scripts
            .fleet_remove
            .key(&k.servers)
            .key(&k.heartbeats)
            .key(&k.capacity)
            .key(&k.address)
            .key(&k.free_sets)
            .key(k.on(server))
            .key(&k.allocations)
            .key(&k.leaving)
            .arg(server)
            .invoke_async(&mut self.conn())
            .await?;
        if out.is_empty() {
            return Ok(None);
        }
        out[1..]
            .iter()
            .map(|v| parse(v))
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    async fn census(&self) -> Result<Vec<RegionCensus>, StoreError> {
        let k = FleetKeys::default();
        let flat: Vec<redis::Value> = self
            .scripts
            .fleet_census
            .key(&k.servers)
            .key(&k.heartbeats)
            .key(&k.capacity)
            .key(&k.leaving)
            .arg(&k.on_prefix)
            .invoke_async(&mut self.conn())
            .await?;
        let bad = || StoreError::Corrupt("fleet census reply".into());
        let mut out = Vec::with_capacity(flat.len() / 4);
        for row in flat.chunks(4) {
            let [region, servers, free, used] = row else {
                return Err(bad());
            };
            let num = |v: &redis::Value| redis::from_redis_value_ref::<u64>(v).map_err(|_| bad());
            out.push(RegionCensus {
                region: redis::from_redis_value_ref::<String>(region).map_err(|_| bad())?,
                servers: num(servers)?,
                free_slots: num(free)?,
                used_slots: num(used)?,
            });
        }
        out.sort_by(|a, b| a.region.cmp(&b.region));
        Ok(out)
    }
}
