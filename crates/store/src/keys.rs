//! The Redis key schema. Every key carries a hash tag so each script touches one
//! slot (Redis Cluster rule):
//!
//! | key | type | holds |
//! |---|---|---|
//! | `mm:{p:MODE:REGION}:q` | zset | queued ticket ids, scored by rating |
//! | `mm:{p:..}:t` | hash | ticket id -> ticket JSON (immutable) |
//! | `mm:{p:..}:st` | hash | ticket id -> state: `q` new, `r` requeued, `s` held, `c` cancelled, `m:MATCH` matched, `w:REASON` withdrawn |
//! | `mm:{p:..}:w:WORKER` | zset | tickets the worker holds, scored by rating |
//! | `mm:{p:..}:leases` | zset | worker id -> lease expiry (ms, Redis clock) |
//! | `mm:{p:..}:m` | hash | match id -> match JSON |
//! | `mm:{p:..}:done` | zset | finished ticket and match ids -> finish time (for purging) |
//! | `mm:{p:..}:outbox` | zset | committed match ids not yet fanned out -> commit time |
//! | `mm:{p:..}:dec` | hash | match id -> one-time decision: `c` committed, `a` aborted |
//! | `mm:{u:PLAYER}:active` | hash | mode -> `TICKET\|pool,pool`: the player's live ticket per mode |
//! | `mm:{u:PLAYER}:tix` | hash | the player's ticket ids -> its pools, comma-separated, home pool first |
//! | `mm:{u:PLAYER}:hist` | zset | the player's match JSON -> creation time |
//! | `mm:{u:PLAYER}:resv` | string | `MATCH\|pool\|ms`: the match the player is reserved for |
//! | `mm:events` | channel | event envelopes for every ingress |

use mm_domain::{PlayerId, Pool};

/// The Pub/Sub channel that carries player events between processes.
pub const EVENTS_CHANNEL: &str = "mm:events";

/// Keys of one pool.
#[derive(Debug, Clone)]
pub struct PoolKeys {
    prefix: String,
    pub queue: String,
    pub tickets: String,
    pub state: String,
    pub leases: String,
    pub matches: String,
    pub done: String,
    pub outbox: String,
    pub decisions: String,
}

impl PoolKeys {
    pub fn new(pool: &Pool) -> Self {
        let prefix = format!("mm:{{p:{}}}", pool.name());
        Self {
            queue: format!("{prefix}:q"),
            tickets: format!("{prefix}:t"),
            state: format!("{prefix}:st"),
            leases: format!("{prefix}:leases"),
            matches: format!("{prefix}:m"),
            done: format!("{prefix}:done"),
            outbox: format!("{prefix}:outbox"),
            decisions: format!("{prefix}:dec"),
            prefix,
        }
    }

    /// The set of tickets `worker` holds in this pool.
    pub fn held(&self, worker: &str) -> String {
        format!("{}:w:{worker}", self.prefix)
    }
}

/// Keys of one player.
#[derive(Debug, Clone)]
pub struct PlayerKeys {
    pub active: String,
    pub tickets: String,
    pub history: String,
    pub reservation: String,
}

impl PlayerKeys {
    pub fn new(player: &PlayerId) -> Self {
        let prefix = format!("mm:{{u:{player}}}");
        Self {
            active: format!("{prefix}:active"),
            tickets: format!("{prefix}:tix"),
            history: format!("{prefix}:hist"),
            reservation: format!("{prefix}:resv"),
        }
    }
}

/// The hash tag Redis Cluster hashes for a key: the text between the first `{` and
/// the next `}`, or the whole key if it has none.
pub(crate) fn tag(key: &str) -> &str {
    key.find('{')
        .and_then(|open| {
            let close = key[open + 1..].find('}')?;
            Some(&key[open + 1..open + 1 + close])
        })
        .unwrap_or(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pool_key_shares_the_pool_tag() {
        let k = PoolKeys::new(&Pool::new("ranked", "eu"));
        for key in [
            &k.queue,
            &k.tickets,
            &k.state,
            &k.leases,
            &k.matches,
            &k.done,
            &k.outbox,
            &k.decisions,
            &k.held("w-1"),
        ] {
            assert_eq!(tag(key), "p:ranked:eu", "{key}");
        }
        let p = PlayerKeys::new(&PlayerId::new("alice").unwrap());
        for key in [&p.active, &p.tickets, &p.history, &p.reservation] {
            assert_eq!(tag(key), "u:alice", "{key}");
        }
        assert_eq!(tag(EVENTS_CHANNEL), EVENTS_CHANNEL);
    }
}
