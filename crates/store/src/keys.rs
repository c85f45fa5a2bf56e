//! The Redis key schema. Every key carries a hash tag so each script touches one
//! slot (Redis Cluster rule):
//!
//! | key | type | holds |
//! |---|---|---|
//! | `mm:{p:MODE:REGION}:q` | zset | queued ticket ids, scored by rating (a pool leader's stay until their match commits) |
//! | `mm:{p:..}:t` | hash | ticket id -> ticket JSON (rewritten only to add a block made while it waits: `late_block.lua`) |
//! | `mm:{p:..}:st` | hash | ticket id -> state: `q` new, `r` requeued, `s` held (by a claim worker, or read by the pool's leader and still in the queue), `c` cancelled, `m:MATCH` matched, `w:REASON` withdrawn |
//! | `mm:{p:..}:w:WORKER` | zset | tickets the worker holds, scored by rating |
//! | `mm:{p:..}:leases` | zset | worker id -> lease expiry (ms, Redis clock) |
//! | `mm:{p:..}:m` | hash | match id -> match JSON |
//! | `mm:{p:..}:a:MATCH` | string | the match JSON for the players' histories: written at commit, expires after the history's lifetime (30 days) |
//! | `mm:{p:..}:done` | zset | finished ticket and match ids -> finish time (for purging; a matched ticket goes with its match, whose `tk` lists it) |
//! | `mm:{p:..}:outbox` | zset | committed match ids not yet fanned out -> commit time |
//! | `mm:{p:..}:dec` | hash | match id -> one-time decision: `c` committed, `a` aborted |
//! | `mm:{p:..}:mx:MATCH` | hash | the match's lifecycle: `st` status, `why` reason, `n` players, `na` accepted, `dl` ready-check deadline, `nx` status after acceptance, `gr` disconnect grace ms, `ps` placing since, `a:PLAYER` answer (`a`/`d`), `g:PLAYER` disconnected at, `srv` server JSON, `res` result JSON, `set` settled, `tk` its tickets (comma-separated), `at` when they joined it (ms) |
//! | `mm:{p:..}:bf` | hash | match id -> backfill JSON: its server, open seats per team, generation, when opened, when it lapses, whether closed (a closed one keeps its generation; it goes when its match is purged) |
//! | `mm:{p:..}:due` | zset | match id -> when its saga's next step is due |
//! | `mm:{p:..}:rj` | hash | match id -> rating job JSON (match + result) until the rating service applied it |
//! | `mm:{p:..}:leader` | string | the pool leader's token (a token lock, expires with its lease) |
//! | `mm:{p:..}:fence` | string | the pool leader lock's fencing counter: one more each time it is taken |
//! | `mm:{p:..}:arr` | list | ticket ids queued while the pool has a leader, for it to read (it reads the queue, it does not take from it; see `lead_start.lua`) |
//! | `mm:{p:..}:rq` | zset | match id -> when a rating consumer may claim it: when it was queued (claimed oldest first), or its holder's lease expiry |
//! | `mm:{u:PLAYER}:active` | hash | mode -> `TICKET\|pool,pool`: the player's live ticket per mode |
//! | `mm:{u:PLAYER}:tix` | hash | the player's ticket ids -> its pools, comma-separated, home pool first, then `@` and the ticket's activation time in ms (see [`indexed_pools`]); and the player's history: `m:MATCH` -> `CREATED\|pool` (the match's archived JSON is `mm:{p:pool}:a:MATCH`), the newest [`crate::HISTORY_LEN`] read. One write in eight to an index of more than twice that many fields trims it: the live tickets stay, the newest half that many others, the newest that many matches (`trim_index` in `common.lua`) |
//! | `mm:{u:PLAYER}:hist` | zset | the history as it was kept before 2026-11-29: `MATCH\|pool` -> creation time; read, never written, until it expires |
//! | `mm:{u:PLAYER}:resv` | string | `MATCH\|pool\|ms`: the match the player is reserved for |
//! | `mm:{u:PLAYER}:match` | string | `MATCH\|pool`: the match the player is in while it is not over |
//! | `mm:{u:PLAYER}:ban` | string | until ms (expires then): the player may not queue |
//! | `mm:{u:PLAYER}:rv` | hash | mode -> freshness mark: the newest rating version applied or being applied |
//! | `mm:{u:PLAYER}:on` | hash | ingress id -> `o` while it holds an event socket of the player's, else when their last one there closed (ms); expires [`crate::OPEN_KEPT`] after a socket was noted open (ingresses note theirs again before), [`crate::ONLINE_KEPT`] after a close that leaves none noted open (`online_close.lua`; see `mm_store::Online`) |
//! | `mm:{on}:ingresses` | zset | ingress id -> until when it lives (ms): the sockets it noted open count as open until then; forgotten long after |
//! | `mm:{fleet}:srv` | hash | game server id -> server JSON |
//! | `mm:{fleet}:hb` | zset | server id -> heartbeat expiry (ms) |
//! | `mm:{fleet}:cap`, `:addr` | hash | server id -> capacity, address |
//! | `mm:{fleet}:zs` | hash | server id -> the free-slot sets it is offered in |
//! | `mm:{fleet}:free:REGION:MODE` | zset | server id -> free slots (live servers only) |
//! | `mm:{fleet}:on:SERVER` | set | allocation ids holding a slot on the server |
//! | `mm:{fleet}:alloc` | hash | allocation id -> `server\|address\|ms\|request JSON` |
//! | `mm:{fleet}:leaving` | set | servers that left: no new allocations |
//! | `mm:{u:PLAYER}:party` | string | the party the player is in (checked against the party: a pointer to a party that no longer lists the player is stale) |
//! | `mm:{pt:PARTY}:m`, `:i` | hash | member / invite adds: tag -> player id (OR-Sets) |
//! | `mm:{pt:PARTY}:mr`, `:ir` | set | tombstoned member / invite tags |
//! | `mm:{pt:PARTY}:meta` | hash | `created`, `leader`, `ltag` (the leader's tag: larger wins), `gone` (disbanded) |
//! | `mm:{u:PLAYER}:rl:CLASS` | string | the player's rate limiter for a class of call: its theoretical arrival time (µs, Redis clock); expires once idle |
//! | `mm:{rl:SHARD}:CLASS:a:ADDRESS` | string | an address's rate limiter, the same; SHARD is a stable hash of the rest of the key modulo 64 |
//! | `mm:{lk:NAME}:h`, `:f` | string | a named token lock's holder token, its fencing counter |
//! | `mm:events` | channel | event envelopes for every ingress: a JSON array of up to 256 per message (one bare envelope is read too; see `redis_store/events.rs`) |
//! | `mm:wake` | channel | names of pools a ticket arrived in (see `mm_store::Wakes`) |
//! | `mm:{p:..}:armed` | string | present after a claim: the next ticket in the pool publishes a wake-up |
//! | `mm:{reg}:pools` | zset | pool name -> when a supervisor last served it (ms; see `mm_store::Registry`) |

use crate::{RateKey, Who};
use mm_domain::{PlayerId, Pool};

/// Ingresses by until when they live, for their players' socket notes (see
/// `mm_store::Online`).
pub const ONLINE_INGRESSES: &str = "mm:{on}:ingresses";

/// The Pub/Sub channel that carries player events between processes.
pub const EVENTS_CHANNEL: &str = "mm:events";

/// The pools supervisors serve, by when one last did (see [`crate::Registry`]).
pub const POOL_REGISTRY: &str = "mm:{reg}:pools";

/// The Pub/Sub channel that wakes the workers of a pool (the message is the
/// pool's name) when a ticket arrives in it while it is armed.
pub const WAKE_CHANNEL: &str = "mm:wake";

/// How many slots the addresses' rate limiters are spread over (a cluster spreads
/// them over its nodes; the checks of one shard share a script call).
pub const RATE_SHARDS: u64 = 64;

/// A rate limiter's key and the hash tag of its slot: a player's limiter lives in
/// the player's slot (scripts acting for the player can charge it), an address's
/// in one of [`RATE_SHARDS`] shards.
pub fn limiter(key: &RateKey) -> (String, String) {
    match &key.who {
        Who::Player(p) => {
            let tag = format!("u:{p}");
            (format!("mm:{{{tag}}}:rl:{}", key.class), tag)
        }
        Who::Address(_) => {
            let name = key.name();
            let tag = format!("rl:{}", shard(&name));
            (format!("mm:{{{tag}}}:{name}"), tag)
        }
    }
}

/// A stable hash of `name` modulo [`RATE_SHARDS`] (FNV-1a: every ingress, of any
/// version, must agree).
fn shard(name: &str) -> u64 {
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    hash % RATE_SHARDS
}

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
    pub due: String,
    pub results: String,
    pub results_queue: String,
    /// Waiting tickets by enqueue time (for the oldest wait; see `depths.lua`).
    pub since: String,
    /// The latest committed match ids, newest first (a capped list).
    pub recent: String,
    /// Prefix of the matches' lifecycle hashes (`{prefix}MATCH`).
    pub life_prefix: String,
    /// Running matches' open seats: match id -> backfill JSON.
    pub backfills: String,
    /// Prefix of the matches' archived JSON (`{prefix}MATCH`), which the players'
    /// histories point to.
    pub archive_prefix: String,
    /// Set by every claim; the next enqueue deletes it and publishes a wake-up.
    pub armed: String,
    /// The pool leader's token lock, and its fencing counter.
    pub leader: String,
    pub fence: String,
    /// What was queued while the pool has a leader, for it to read: every
    /// script that puts a ticket in the queue also pushes it here while the
    /// leader's lock exists.
    pub arrivals: String,
    /// Workers running `COORDINATION=leader` on the pool, by lease expiry: the
    /// candidates to lead it (claim workers are not among them).
    pub candidates: String,
}

/// `prefix` and `suffix` as one key: one allocation of the right size, none of
/// `format!`'s machinery (a pool's or a player's keys are built on every call
/// that touches them; `format!` was 7% of a Redis ingress's CPU at saturation).
fn joined(prefix: &str, suffix: &str) -> String {
    let mut key = String::with_capacity(prefix.len() + suffix.len());
    key.push_str(prefix);
    key.push_str(suffix);
    key
}

impl PoolKeys {
    pub fn new(pool: &Pool) -> Self {
        let prefix = joined(&joined("mm:{p:", &pool.name()), "}");
        let at = |suffix: &str| joined(&prefix, suffix);
        Self {
            queue: at(":q"),
            tickets: at(":t"),
            state: at(":st"),
            leases: at(":leases"),
            matches: at(":m"),
            done: at(":done"),
            outbox: at(":outbox"),
            decisions: at(":dec"),
            due: at(":due"),
            results: at(":rj"),
            results_queue: at(":rq"),
            since: at(":since"),
            recent: at(":recent"),
            life_prefix: at(":mx:"),
            backfills: at(":bf"),
            archive_prefix: at(":a:"),
            armed: at(":armed"),
            leader: at(":leader"),
            fence: at(":fence"),
            arrivals: at(":arr"),
            candidates: at(":cand"),
            prefix,
        }
    }

    /// The lifecycle hash of a match of this pool.
    pub fn life(&self, id: &str) -> String {
        format!("{}{id}", self.life_prefix)
    }

    /// The archived JSON of a match of this pool.
    pub fn archived(&self, id: &str) -> String {
        format!("{}{id}", self.archive_prefix)
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
    pub in_match: String,
    pub ban: String,
    pub marks: String,
    pub party: String,
    /// The parties whose invites to the player are pending (zset: party id ->
    /// time noted), to bound them.
    pub invited: String,
    /// The attribute claims the player's token carried (JSON), for their party.
    pub attested: String,
    /// Whom the player blocked (set). (Versions before 2026-11-30 also kept
    /// who blocked the player, in `:blocked_by`: no longer written nor read.)
    pub blocks: String,
}

/// Keys of one party (one slot: every merge is one script).
#[derive(Debug, Clone)]
pub struct PartyKeys {
    pub members: String,
    pub member_tombs: String,
    pub invites: String,
    pub invite_tombs: String,
    pub meta: String,
}

impl PartyKeys {
    pub fn new(party: &mm_domain::PartyId) -> Self {
        let prefix = format!("mm:{{pt:{party}}}");
        Self {
            members: format!("{prefix}:m"),
            member_tombs: format!("{prefix}:mr"),
            invites: format!("{prefix}:i"),
            invite_tombs: format!("{prefix}:ir"),
            meta: format!("{prefix}:meta"),
        }
    }
}

/// The suffixes of a player's keys (the table above; [`PlayerKeys`] holds them
/// all, [`player_key`] builds one).
pub mod player_suffix {
    pub const ACTIVE: &str = ":active";
    pub const TICKETS: &str = ":tix";
    pub const HISTORY: &str = ":hist";
    pub const RESERVATION: &str = ":resv";
    pub const IN_MATCH: &str = ":match";
    pub const BAN: &str = ":ban";
    pub const MARKS: &str = ":rv";
    pub const PARTY: &str = ":party";
    pub const INVITED: &str = ":invited";
    pub const ATTESTED: &str = ":attested";
    pub const BLOCKS: &str = ":blocks";
    pub const ONLINE: &str = ":on";
}

/// The pools a ticket's field in its player's ticket index names (`tix`: the
/// pools comma-separated, home pool first, then `@` and when the ticket was
/// activated, which `trim_index` in `common.lua` orders by; a field written
/// before that has no time).
pub fn indexed_pools(value: &str) -> impl Iterator<Item = &str> {
    value
        .split(',')
        .filter(|p| !p.is_empty() && !p.starts_with('@'))
}

/// When the ticket of a ticket-index field (see [`indexed_pools`]) was
/// activated (ms, Redis's clock); `None` for a field written without it.
pub fn indexed_at(value: &str) -> Option<mm_domain::Millis> {
    value.rsplit_once(",@").and_then(|(_, ms)| ms.parse().ok())
}

/// One of `player`'s keys, `mm:{u:PLAYER}` and `suffix` (a
/// [`player_suffix`]), in one allocation: a script that takes a few keys of
/// each of a hundred players builds those, not all of [`PlayerKeys`].
pub fn player_key(player: &PlayerId, suffix: &str) -> String {
    const HEAD: &str = "mm:{u:";
    let id = player.as_str();
    let mut key = String::with_capacity(HEAD.len() + id.len() + 1 + suffix.len());
    key.push_str(HEAD);
    key.push_str(id);
    key.push('}');
    key.push_str(suffix);
    key
}

impl PlayerKeys {
    pub fn new(player: &PlayerId) -> Self {
        use player_suffix::*;
        let at = |suffix: &str| player_key(player, suffix);
        Self {
            active: at(ACTIVE),
            tickets: at(TICKETS),
            history: at(HISTORY),
            reservation: at(RESERVATION),
            in_match: at(IN_MATCH),
            ban: at(BAN),
            marks: at(MARKS),
            party: at(PARTY),
            invited: at(INVITED),
            attested: at(ATTESTED),
            blocks: at(BLOCKS),
        }
    }
}

/// Keys of the game-server fleet, all in one slot so allocation is one script.
#[derive(Debug, Clone)]
pub struct FleetKeys {
    pub servers: String,
    pub heartbeats: String,
    pub capacity: String,
    pub address: String,
    pub free_sets: String,
    pub allocations: String,
    pub leaving: String,
    /// Prefix of the servers' allocation sets.
    pub on_prefix: String,
}

impl Default for FleetKeys {
    fn default() -> Self {
        let p = "mm:{fleet}";
        Self {
            servers: format!("{p}:srv"),
            heartbeats: format!("{p}:hb"),
            capacity: format!("{p}:cap"),
            address: format!("{p}:addr"),
            free_sets: format!("{p}:zs"),
            allocations: format!("{p}:alloc"),
            leaving: format!("{p}:leaving"),
            on_prefix: format!("{p}:on:"),
        }
    }
}

impl FleetKeys {
    /// Free slots of live servers of one region and mode.
    pub fn free(&self, region: &str, mode: &str) -> String {
        format!("mm:{{fleet}}:free:{region}:{mode}")
    }

    /// Allocations on one server.
    pub fn on(&self, server: &str) -> String {
        format!("{}{server}", self.on_prefix)
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
            &k.due,
            &k.life("m-1"),
            &k.archived("m-1"),
            &k.held("w-1"),
        ] {
            assert_eq!(tag(key), "p:ranked:eu", "{key}");
        }
        let p = PlayerKeys::new(&PlayerId::new("alice").unwrap());
        for key in [
            &p.active,
            &p.tickets,
            &p.history,
            &p.reservation,
            &p.in_match,
            &p.ban,
        ] {
            assert_eq!(tag(key), "u:alice", "{key}");
        }
        let f = FleetKeys::default();
        for key in [
            &f.servers,
            &f.heartbeats,
            &f.capacity,
            &f.address,
            &f.free_sets,
            &f.allocations,
            &f.leaving,
            &f.free("eu", "5v5"),
            &f.on("gs-1"),
        ] {
            assert_eq!(tag(key), "fleet", "{key}");
        }
        assert_eq!(tag(EVENTS_CHANNEL), EVENTS_CHANNEL);
    }

    #[test]
    fn keys_are_spelled_as_stored() {
        // Keys already in a deployment's Redis must be found again.
        let k = PoolKeys::new(&Pool::new("ranked", "eu"));
        assert_eq!(k.prefix, "mm:{p:ranked:eu}");
        assert_eq!(k.queue, "mm:{p:ranked:eu}:q");
        assert_eq!(k.life("M1"), "mm:{p:ranked:eu}:mx:M1");
        let p = PlayerKeys::new(&PlayerId::new("alice").unwrap());
        assert_eq!(p.active, "mm:{u:alice}:active");
        assert_eq!(p.blocks, "mm:{u:alice}:blocks");
        assert_eq!(p.history, "mm:{u:alice}:hist");
        assert_eq!(p.reservation, "mm:{u:alice}:resv");
        assert_eq!(p.in_match, "mm:{u:alice}:match");
        assert_eq!(
            player_key(&PlayerId::new("alice").unwrap(), player_suffix::ONLINE),
            "mm:{u:alice}:on"
        );
    }

    #[test]
    fn one_player_key_is_the_one_of_all_the_player_s_keys() {
        use player_suffix::*;
        let alice = PlayerId::new("alice").unwrap();
        let p = PlayerKeys::new(&alice);
        for (suffix, key) in [
            (ACTIVE, &p.active),
            (TICKETS, &p.tickets),
            (HISTORY, &p.history),
            (RESERVATION, &p.reservation),
            (IN_MATCH, &p.in_match),
            (BAN, &p.ban),
            (MARKS, &p.marks),
            (PARTY, &p.party),
            (INVITED, &p.invited),
            (ATTESTED, &p.attested),
            (BLOCKS, &p.blocks),
        ] {
            let one = player_key(&alice, suffix);
            assert_eq!(&one, key);
            // Built to size: no second allocation.
            assert_eq!(one.capacity(), one.len(), "{one}");
        }
    }
}
