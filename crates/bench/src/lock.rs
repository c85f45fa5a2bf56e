//! The baseline the allocation benches run beside ours: slots guarded the way seed
//! 001 guards seats. Each server has a token lock (`SET key token NX PX`, released
//! by the token-checked `lua/unlock.lua`); the client reads the free count and
//! writes it back while it holds the lock. Simpler than ours (no packing, no
//! liveness), which only flatters the baseline.
//!
//! [`Guard::None`] drops the lock: read, then write. It oversells under contention,
//! which shows the contention bench can tell a broken allocator from a sound one.

use anyhow::Result;
use rand::Rng;
use redis::AsyncCommands;
use redis::aio::MultiplexedConnection;
use std::time::Duration;

const FREE: &str = "lockbench:free";
const ALLOCATIONS: &str = "lockbench:alloc";
const LOCK_TTL_MS: u64 = 5_000;

/// What a request does about a server whose lock another request holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    /// Wait and try again: capacity may be there (an allocator must not give up).
    LockRetry,
    /// Answer "no capacity" at once, as seed 001's endpoint answers 409.
    LockRefuse,
    /// No lock at all.
    None,
}

/// Servers with free counts in one Redis, allocated by a client-side protocol.
pub struct LockFleet {
    conn: MultiplexedConnection,
    unlock: redis::Script,
    servers: Vec<String>,
    guard: Guard,
}

impl LockFleet {
    /// `servers` servers of `capacity` slots each, written into the Redis at `url`.
    pub async fn setup(url: &str, servers: usize, capacity: u32, guard: Guard) -> Result<Self> {
        let mut conn = redis::Client::open(url)?
            .get_multiplexed_async_connection()
            .await?;
        let servers: Vec<String> = (0..servers).map(super::fleet::server_id).collect();
        let pairs: Vec<(&str, u32)> = servers.iter().map(|s| (s.as_str(), capacity)).collect();
        let () = conn.hset_multiple(FREE, &pairs).await?;
        Ok(Self {
            conn,
            unlock: redis::Script::new(include_str!("lua/unlock.lua")),
            servers,
            guard,
        })
    }

    /// A slot for allocation `id`: the server's id, or `None` for no capacity.
    pub async fn allocate(&self, id: &str) -> Result<Option<String>> {
        let start = rand::rng().random_range(0..self.servers.len());
        loop {
            let mut busy = false;
            for k in 0..self.servers.len() {
                let server = &self.servers[(start + k) % self.servers.len()];
                let token = match self.guard {
                    Guard::None => None,
                    _ => match self.lock(server).await? {
                        Some(token) => Some(token),
                        None => {
                            busy = true;
                            continue;
                        }
                    },
                };
                let free: i64 = self.conn().hget(FREE, server).await?;
                let got = free > 0;
                if got {
                    let () = redis::pipe()
                        .hincr(FREE, server, -1)
                        .ignore()
                        .hset(ALLOCATIONS, id, server)
                        .ignore()
                        .query_async(&mut self.conn())
                        .await?;
                }
                if let Some(token) = token {
                    self.unlock(server, &token).await?;
                }
                if got {
                    return Ok(Some(server.clone()));
                }
            }
            if !busy || self.guard != Guard::LockRetry {
                return Ok(None);
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    /// Frees allocation `id`'s slot on `server`; false if it held none.
    pub async fn release(&self, server: &str, id: &str) -> Result<bool> {
        let token = loop {
            if self.guard == Guard::None {
                break None;
            }
            match self.lock(server).await? {
                Some(token) => break Some(token),
                None => tokio::time::sleep(Duration::from_millis(1)).await,
            }
        };
        let removed: u32 = self.conn().hdel(ALLOCATIONS, id).await?;
        if removed == 1 {
            let () = self.conn().hincr(FREE, server, 1).await?;
        }
        if let Some(token) = token {
            self.unlock(server, &token).await?;
        }
        Ok(removed == 1)
    }

    /// Ids holding a slot.
    pub async fn held(&self) -> Result<Vec<String>> {
        Ok(self.conn().hkeys(ALLOCATIONS).await?)
    }

    fn conn(&self) -> MultiplexedConnection {
        self.conn.clone()
    }

    /// Seed 001's acquire: `SET lock token NX PX ttl`; the token if it was free.
    async fn lock(&self, server: &str) -> Result<Option<String>> {
        let token = uuid::Uuid::new_v4().simple().to_string();
        let set: Option<String> = redis::cmd("SET")
            .arg(lock_key(server))
            .arg(&token)
            .arg("NX")
            .arg("PX")
            .arg(LOCK_TTL_MS)
            .query_async(&mut self.conn())
            .await?;
        Ok(set.map(|_| token))
    }

    async fn unlock(&self, server: &str, token: &str) -> Result<()> {
        let _: i64 = self
            .unlock
            .key(lock_key(server))
            .arg(token)
            .invoke_async(&mut self.conn())
            .await?;
        Ok(())
    }
}

fn lock_key(server: &str) -> String {
    format!("lockbench:lock:{server}")
}
