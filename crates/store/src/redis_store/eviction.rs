//! What a Redis primary does when it reaches its memory limit (`INFO memory`:
//! `maxmemory` and `maxmemory_policy`), read at start-up.
//!
//! The store's guarantees rest on every key it writes staying until it deletes
//! it or its own expiry passes: a player's in-match mark or reservation is what
//! keeps them out of a second match, a ticket's state is what keeps it from
//! being lost. A Redis that evicts keys to make room (any policy but
//! `noeviction`, with a limit set) may drop any of them under memory pressure,
//! silently; with `noeviction` a full Redis refuses writes instead, which every
//! caller already handles as an outage. Managed Redis services often default to
//! an evicting policy (`volatile-lru`), which takes exactly the keys with an
//! expiry: players' marks, reservations, leader locks.

use crate::StoreError;

/// One primary's memory limit and eviction policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisEviction {
    /// host:port, as the client reaches it.
    pub address: String,
    /// `maxmemory` in bytes; 0: no limit (nothing is ever evicted).
    pub maxmemory: u64,
    /// `maxmemory_policy`, e.g. `noeviction`, `volatile-lru`.
    pub policy: String,
}

impl RedisEviction {
    /// Whether this primary may drop keys of the store's when it is full.
    pub fn evicts(&self) -> bool {
        self.maxmemory > 0 && self.policy != "noeviction"
    }

    /// Reads `INFO memory` text.
    pub(super) fn parse(address: String, info: &str) -> Result<Self, StoreError> {
        let field = |name: &str| super::info_field(info, name);
        let missing =
            |name: &str| StoreError::Corrupt(format!("{address}: no {name} in INFO memory"));
        let maxmemory = field("maxmemory")
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| missing("maxmemory"))?;
        let policy = field("maxmemory_policy")
            .ok_or_else(|| missing("maxmemory_policy"))?
            .to_string();
        Ok(Self {
            address,
            maxmemory,
            policy,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_limit_and_the_policy() {
        let text = "# Memory\r\nused_memory:1024\r\nmaxmemory:104857600\r\n\
                    maxmemory_human:100.00M\r\nmaxmemory_policy:volatile-lru\r\n";
        let e = RedisEviction::parse("127.0.0.1:6379".into(), text).unwrap();
        assert_eq!(e.maxmemory, 104_857_600);
        assert_eq!(e.policy, "volatile-lru");
        assert!(e.evicts());
    }

    #[test]
    fn no_limit_or_noeviction_evicts_nothing() {
        let unlimited = "maxmemory:0\r\nmaxmemory_policy:allkeys-lru\r\n";
        assert!(
            !RedisEviction::parse("a:1".into(), unlimited)
                .unwrap()
                .evicts()
        );
        let refusing = "maxmemory:1000\r\nmaxmemory_policy:noeviction\r\n";
        assert!(
            !RedisEviction::parse("a:1".into(), refusing)
                .unwrap()
                .evicts()
        );
        assert!(RedisEviction::parse("a:1".into(), "used_memory:1\r\n").is_err());
    }
}
