//! [`Fleet`] in process memory: the same rules as the Redis scripts in
//! `lua/fleet_*.lua`, each under the store's one lock.

use super::MemoryStore;
use crate::{AllocateOutcome, Allocation, Fleet, GameServer, RegionCensus, StoreError};
use async_trait::async_trait;
use mm_domain::{Millis, ServerAssignment, now_ms};
use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

struct Server {
    info: GameServer,
    /// Live until then.
    expires: Millis,
    /// Left the pool: no new allocations.
    leaving: bool,
    /// Allocation ids it holds.
    slots: BTreeSet<String>,
}

#[derive(Default)]
pub(super) struct FleetState {
    servers: HashMap<String, Server>,
    allocations: HashMap<String, Allocation>,
}

fn ms(d: Duration) -> Millis {
    d.as_millis() as Millis
}

#[async_trait]
impl Fleet for MemoryStore {
    async fn register_server(
        &self,
        server: &GameServer,
        timeout: Duration,
    ) -> Result<(), StoreError> {
        let now = now_ms();
        let mut inner = self.lock();
        let f = &mut inner.fleet;
        let slots = f
            .servers
            .remove(&server.id)
            .map(|s| s.slots)
            .unwrap_or_default();
        f.servers.insert(
            server.id.clone(),
            Server {
                info: server.clone(),
                expires: now + ms(timeout),
                leaving: false,
                slots,
            },
        );
        Ok(())
    }

    async fn server_heartbeat(
        &self,
        id: &str,
        timeout: Duration,
    ) -> Result<Option<Vec<Allocation>>, StoreError> {
        let now = now_ms();
        let mut inner = self.lock();
        let f = &mut inner.fleet;
        let Some(s) = f.servers.get_mut(id) else {
            return Ok(None);
        };
        s.expires = now + ms(timeout);
        Ok(Some(
            s.slots
                .iter()
                .filter_map(|a| f.allocations.get(a).cloned())
                .collect(),
        ))
    }

    async fn allocate(&self, request: &Allocation) -> Result<AllocateOutcome, StoreError> {
        let now = now_ms();
        let mut inner = self.lock();
        let f = &mut inner.fleet;
        if let Some(a) = f.allocations.get(&request.id) {
            return Ok(AllocateOutcome::Allocated(a.clone()));
        }
        // The live server of the region and mode with the fewest free slots, then
        // the smallest id (same order as the Redis sorted set).
        let best = f
            .servers
            .values()
            .filter(|s| {
                s.expires > now
                    && !s.leaving
                    && s.info.region == request.region
                    && s.info.modes.contains(&request.mode)
                    && (s.slots.len() as u32) < s.info.capacity
            })
            .min_by_key(|s| (s.info.capacity - s.slots.len() as u32, s.info.id.clone()))
            .map(|s| s.info.id.clone());
        let Some(best) = best else {
            return Ok(AllocateOutcome::NoCapacity);
        };
        let s = f.servers.get_mut(&best).expect("just found");
        let mut a = request.clone();
        a.server = ServerAssignment {
            server_id: s.info.id.clone(),
            address: s.info.address.clone(),
        };
        a.allocated_at = now;
        s.slots.insert(a.id.clone());
        f.allocations.insert(a.id.clone(), a.clone());
        Ok(AllocateOutcome::Allocated(a))
    }

    async fn allocation(&self, id: &str) -> Result<Option<Allocation>, StoreError> {
        Ok(self.lock().fleet.allocations.get(id).cloned())
    }

    async fn release_slot(&self, server: &str, id: &str) -> Result<bool, StoreError> {
        let mut inner = self.lock();
        let f = &mut inner.fleet;
        let held = f
            .servers
            .get_mut(server)
            .is_some_and(|s| s.slots.remove(id));
        if held {
            f.allocations.remove(id);
        }
        Ok(held)
    }

    async fn leave(&self, server: &str) -> Result<bool, StoreError> {
        let mut inner = self.lock();
        Ok(match inner.fleet.servers.get_mut(server) {
            Some(s) => {
                s.leaving = true;
                true
            }
            None => false,
        })
    }

    async fn lapsed_servers(&self) -> Result<Vec<String>, StoreError> {
        let now = now_ms();
        let inner = self.lock();
        Ok(inner
            .fleet
            .servers
            .values()
            .filter(|s| s.expires <= now)
            .map(|s| s.info.id.clone())
            .collect())
    }

    async fn remove_lapsed(&self, server: &str) -> Result<Option<Vec<Allocation>>, StoreError> {
        let now = now_ms();
        let mut inner = self.lock();
        let f = &mut inner.fleet;
        if f.servers.get(server).is_none_or(|s| s.expires > now) {
            return Ok(None);
        }
        let s = f.servers.remove(server).expect("checked");
        Ok(Some(
            s.slots
                .iter()
                .filter_map(|a| f.allocations.remove(a))
                .collect(),
        ))
    }

    async fn census(&self) -> Result<Vec<RegionCensus>, StoreError> {
        let now = now_ms();
        let inner = self.lock();
        let mut by_region: std::collections::BTreeMap<&str, RegionCensus> = Default::default();
        for s in inner.fleet.servers.values().filter(|s| s.expires > now) {
            let r = by_region.entry(&s.info.region).or_default();
            let used = s.slots.len() as u64;
            r.servers += 1;
            r.used_slots += used;
            if !s.leaving {
                r.free_slots += u64::from(s.info.capacity).saturating_sub(used);
            }
        }
        Ok(by_region
            .into_iter()
            .map(|(region, c)| RegionCensus {
                region: region.to_string(),
                ..c
            })
            .collect())
    }
}
