//! The cross-pool step on Redis: how a match commits in its pool's slot while each
//! of its players may also wait in other pools (other regions of the same ticket,
//! other modes through other tickets), which live in other slots, maybe on other
//! nodes of a cluster. No script can touch two slots, so the commit is a small
//! Percolator-style protocol whose every step is one single-slot script:
//!
//! 1. **Reserve** each player in the player's slot: `resv = MATCH|pool|ms`
//!    (`reserve.lua`). A player already reserved by another match is contended:
//!    - that match committed: the player is taken; this match cannot commit;
//!    - it aborted: its reservation is replaced (compare-and-set);
//!    - it is still pending: the older of the two wins (by Redis time, then id). The
//!      older one aborts the younger by writing the younger's one-time decision
//!      (`decide.lua`) before taking the player; a reservation older than the
//!      worker lease is aborted whoever asks (its worker died). The younger gives
//!      up this cycle: no two live matches wait on each other.
//! 2. **Decide** in the pool's slot (`complete.lua`): the match commits only if
//!    nobody aborted it and its worker still holds every ticket. The decision is
//!    written once, so a commit and an abort can never both happen.
//! 3. **Settle**, from the outbox (worker right away, supervisor after a crash):
//!    withdraw the players' other tickets and the tickets' entries in other pools
//!    (`withdraw.lua`; they say `matched_elsewhere`), then free each player
//!    (`settle.lua`: history, live-ticket index, reservation; while the match is
//!    not over, the player's in-a-match mark keeps new tickets out).
//!
//! On a single node, where one script may touch every slot, a match whose players
//! are all simple skips the protocol: no reservation holds them and their one live
//! entry is the match's ticket in this pool alone, so their only ticket is held by
//! the committing worker and no other match can take them. `complete.lua` checks
//! that and commits and settles them in one step (its fast path); any other match
//! is left untouched by it and goes through the three steps.
//!
//! Safety: a player's reservation by a committed match is never replaced, and it is
//! dropped only after every other ticket of the player is withdrawn, so no entry of
//! theirs can commit elsewhere meanwhile. Every step is idempotent; a crash at any
//! point leaves either an aborted-or-stale reservation (taken over later) or a
//! committed match in the outbox (settled by the supervisor).

use super::RedisStore;
use super::events;
use crate::api::{MATCHED_ELSEWHERE, MATCHED_IN_OTHER_POOL, withdrawn_events};
use crate::keys::{EVENTS_CHANNEL, PoolKeys, player_key, player_suffix};
use crate::redis_store::conn::{Batches, bounded};
use crate::{HISTORY_LEN, StoreError};
use mm_domain::{Match, MatchId, MatchRecord, Millis, PlayerId, Pool, Ticket, TicketId};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::time::Duration;

/// Crash testing: with `MATCHMAKER_FAILPOINT=pause-after-reserve` a worker stops for
/// good between reserving its players and committing, so a test can SIGKILL it
/// exactly there.
fn failpoint_pause_after_reserve() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| {
        std::env::var("MATCHMAKER_FAILPOINT").is_ok_and(|v| v == "pause-after-reserve")
    })
}

/// The ids of matches this process committed and settled at once (the fast
/// path), until their fan-out, which then only publishes.
#[derive(Default)]
pub(super) struct SettledAtCommit(std::sync::Mutex<BTreeSet<String>>);

impl SettledAtCommit {
    /// Beyond this many unclaimed ids (fan-outs that failed and were left to the
    /// supervisor) the set starts over: a forgotten id only costs a second,
    /// idempotent settle.
    const MAX: usize = 100_000;

    fn note(&self, ids: Vec<String>) {
        if ids.is_empty() {
            return;
        }
        let mut set = self.0.lock().expect("settled-at-commit lock");
        if set.len() + ids.len() > Self::MAX {
            set.clear();
        }
        set.extend(ids);
    }

    /// Removes and returns the ids of `matches` that were settled at commit.
    fn take(&self, matches: &[Match]) -> BTreeSet<String> {
        let mut set = self.0.lock().expect("settled-at-commit lock");
        matches
            .iter()
            .filter_map(|m| set.take(m.id.as_str()))
            .collect()
    }
}

/// How a contended reservation ends for the match that asked.
enum Contest {
    /// The holder is out of the way: replace its reservation.
    Won,
    /// The player stays with the holder.
    Lost,
}

/// A reservation value, `MATCH|pool|ms`.
struct Holder<'a> {
    id: &'a str,
    pool: &'a str,
    at: Millis,
}

impl<'a> Holder<'a> {
    fn parse(raw: &'a str) -> Option<Self> {
        let mut parts = raw.splitn(3, '|');
        Some(Self {
            id: parts.next()?,
            pool: parts.next()?,
            at: parts.next()?.parse().ok()?,
        })
    }
}

impl RedisStore {
    /// Commits `matches` in `pool` (see the module doc). Returns the committed ids.
    /// On a single node a match whose players are all simple commits and settles
    /// in one step (`complete.lua`'s fast path); the rest take the protocol.
    pub(super) async fn commit(
        &self,
        worker: &str,
        pool: &Pool,
        fence: Option<u64>,
        matches: &[Match],
        lease: Duration,
    ) -> Result<Vec<MatchId>, StoreError> {
        if self.players_per_call() == 1 || failpoint_pause_after_reserve() {
            return self
                .commit_reserved(worker, pool, fence, matches, lease)
                .await;
        }
        let (mut ids, left) = self.commit_fast(worker, pool, fence, matches).await?;
        if !left.is_empty() {
            ids.extend(
                self.commit_reserved(worker, pool, fence, &left, lease)
                    .await?,
            );
        }
        Ok(ids)
    }

    /// Single node: commits and settles at once the matches whose players are all
    /// simple (no reservation, one live entry: this ticket in this pool). Returns
    /// the committed ids and the matches left for the protocol.
    async fn commit_fast(
        &self,
        worker: &str,
        pool: &Pool,
        fence: Option<u64>,
        matches: &[Match],
    ) -> Result<(Vec<MatchId>, Vec<Match>), StoreError> {
        let keys = PoolKeys::new(pool);
        let mut inv = self.scripts.complete.prepare_invoke();
        complete_header(&mut inv, &keys, worker, pool, fence);
        let mut next_key = COMPLETE_KEYS + 1;
        for m in matches {
            complete_group(&mut inv, m, "f")?;
            inv.arg(m.created_at)
                .arg(u8::from(!m.lifecycle.initial_status().is_terminal()))
                .arg(m.player_count());
            for t in &m.tickets {
                for player in &t.players {
                    fast_keys(&mut inv, player);
                    inv.arg(next_key).arg(t.ticket_id.as_str());
                    next_key += 4;
                }
            }
        }
        let (committed, fast, left): Completed = inv.invoke_async(&mut self.conn()).await?;
        self.settled_at_commit.note(fast);
        let left: BTreeSet<String> = left.into_iter().collect();
        let ids = match_ids(committed)?;
        let rest = matches
            .iter()
            .filter(|m| left.contains(m.id.as_str()))
            .cloned()
            .collect();
        Ok((ids, rest))
    }

    /// Reserves the players of `matches`, then commits in `pool` those that got all
    /// their players (see the module doc). Returns the committed ids.
    async fn commit_reserved(
        &self,
        worker: &str,
        pool: &Pool,
        fence: Option<u64>,
        matches: &[Match],
        lease: Duration,
    ) -> Result<Vec<MatchId>, StoreError> {
        let now = self.server_now().await?;
        let pool_name = pool.name();
        let values: Vec<String> = matches
            .iter()
            .map(|m| format!("{}|{pool_name}|{now}", m.id))
            .collect();
        // A match's players in one call on a single node, one by one on a cluster;
        // a contended player is then resolved alone.
        let per_call = self.players_per_call();
        let groups: Vec<(usize, Vec<&PlayerId>)> = matches
            .iter()
            .enumerate()
            .flat_map(|(i, m)| {
                let players: Vec<&PlayerId> = m.players().collect();
                players
                    .chunks(per_call)
                    .map(|c| (i, c.to_vec()))
                    .collect::<Vec<_>>()
            })
            .collect();
        let asks = groups.iter().map(|(i, players)| {
            let (i, value, id) = (*i, &values[*i], &matches[*i].id);
            async move {
                let got = self.reserve(players, value, "").await?;
                let mut out = Vec::with_capacity(players.len());
                for (&player, holder) in players.iter().zip(got) {
                    let won = match holder {
                        None => true,
                        Some(holder) => match self.contend(&holder, now, id, lease).await? {
                            Contest::Won => {
                                self.reserve(&[player], value, &holder).await?[0].is_none()
                            }
                            Contest::Lost => false,
                        },
                    };
                    out.push((i, player, won));
                }
                Ok::<_, StoreError>(out)
            }
        });
        let results = bounded(asks.collect::<Vec<_>>())
            .await?
            .into_iter()
            .flatten();
        let mut lost = vec![false; matches.len()];
        let mut taken: Vec<Vec<&PlayerId>> = vec![Vec::new(); matches.len()];
        for (i, player, won) in results {
            if won {
                taken[i].push(player);
            } else {
                lost[i] = true;
            }
        }

        if failpoint_pause_after_reserve() {
            let ids: Vec<&str> = matches.iter().map(|m| m.id.as_str()).collect();
            tracing::warn!(
                ?ids,
                "failpoint pause-after-reserve: players reserved, not committing; pausing for good"
            );
            std::future::pending::<()>().await;
        }

        let keys = PoolKeys::new(pool);
        let mut inv = self.scripts.complete.prepare_invoke();
        complete_header(&mut inv, &keys, worker, pool, fence);
        for (m, lost) in matches.iter().zip(&lost) {
            complete_group(&mut inv, m, if *lost { "a" } else { "c" })?;
        }
        // A fenced-off leader commits nothing: its reservations are given back
        // like an aborted match's, then it hears why.
        let (ids, fenced) = match inv.invoke_async::<Completed>(&mut self.conn()).await {
            Ok((ids, ..)) => (ids, None),
            Err(e) => match StoreError::from(e) {
                e @ StoreError::Fenced(_) => (Vec::new(), Some(e)),
                e => return Err(e),
            },
        };
        let committed: BTreeSet<&str> = ids.iter().map(String::as_str).collect();

        // Give back what the aborted matches reserved; a failure only delays others
        // until they see the abort.
        let undo = matches
            .iter()
            .zip(&values)
            .zip(&taken)
            .filter(|((m, _), _)| !committed.contains(m.id.as_str()))
            .flat_map(|((_, value), players)| players.iter().map(move |p| (*p, value)))
            .map(|(player, value)| async move {
                let _: i64 = self
                    .scripts
                    .unreserve
                    .key(player_key(player, player_suffix::RESERVATION))
                    .arg(value)
                    .invoke_async(&mut self.conn())
                    .await?;
                Ok::<_, StoreError>(())
            });
        if let Err(e) = bounded(undo.collect::<Vec<_>>()).await {
            tracing::warn!(error = %e, "could not drop the reservations of aborted matches");
        }
        if let Some(e) = fenced {
            return Err(e);
        }
        match_ids(ids)
    }

    /// Sets each player's reservation to `value` if free, ours, or `replacing`.
    /// Returns, per player, the holder where it was none of those.
    async fn reserve(
        &self,
        players: &[&PlayerId],
        value: &str,
        replacing: &str,
    ) -> Result<Vec<Option<String>>, StoreError> {
        let mut inv = self.scripts.reserve.prepare_invoke();
        for player in players {
            inv.key(player_key(player, player_suffix::RESERVATION));
        }
        let got: Vec<String> = inv
            .arg(value)
            .arg(replacing)
            .invoke_async(&mut self.conn())
            .await?;
        if got.len() != players.len() {
            return Err(StoreError::Corrupt(format!(
                "reserve.lua answered for {} players of {}",
                got.len(),
                players.len()
            )));
        }
        Ok(got
            .into_iter()
            .map(|h| (!h.is_empty()).then_some(h))
            .collect())
    }

    /// How many players' keys one script call may take: every player has a slot
    /// of their own, so one on a cluster; a single node takes them all.
    fn players_per_call(&self) -> usize {
        match self.conn {
            super::Conn::Single(_) => usize::MAX,
            super::Conn::Cluster(_) => 1,
        }
    }

    /// Decides whether a match reserving at `now` with id `ours` may take a player
    /// from the reservation `holder`.
    async fn contend(
        &self,
        holder: &str,
        now: Millis,
        ours: &MatchId,
        lease: Duration,
    ) -> Result<Contest, StoreError> {
        let Some(h) = Holder::parse(holder) else {
            // Not ours to read: replace it rather than block the player for good.
            tracing::warn!(holder, "unreadable reservation replaced");
            return Ok(Contest::Won);
        };
        let Some(h_pool) = Pool::parse(h.pool) else {
            return Ok(Contest::Won);
        };
        let keys = PoolKeys::new(&h_pool);
        let decision: Option<String> = redis::cmd("HGET")
            .arg(&keys.decisions)
            .arg(h.id)
            .query_async(&mut self.conn())
            .await?;
        let decision = match decision.as_deref() {
            Some(d) => d.to_string(),
            None => {
                let stale = h.at + (lease.as_millis() as Millis) < now;
                let older = (now, ours.as_str()) < (h.at, h.id);
                if !stale && !older {
                    return Ok(Contest::Lost);
                }
                self.scripts
                    .decide
                    .key(&keys.decisions)
                    .key(&keys.done)
                    .arg(h.id)
                    .invoke_async(&mut self.conn())
                    .await?
            }
        };
        Ok(if decision == "a" {
            Contest::Won
        } else {
            Contest::Lost
        })
    }

    /// Settles committed matches of `pool` (step 3 of the module doc).
    /// The tickets in `first` were first claimed by the cycle that formed their
    /// match: their players hear `ticket.searching` with it.
    pub(super) async fn settle(
        &self,
        pool: &Pool,
        matches: &[Match],
        first: &HashSet<TicketId>,
    ) -> Result<(), StoreError> {
        let pool_name = pool.name();
        // Matches this process committed on the fast path are settled already;
        // after a crash the supervisor settles them again, which changes nothing.
        let settled = self.settled_at_commit.take(matches);
        let players: Vec<(&Match, &TicketId, &PlayerId)> = matches
            .iter()
            .filter(|m| !settled.contains(m.id.as_str()))
            .flat_map(|m| {
                m.tickets
                    .iter()
                    .flat_map(move |t| t.players.iter().map(move |p| (m, &t.ticket_id, p)))
            })
            .collect();
        // Players with nothing else live settle in one step; the others report
        // their live tickets. A single node takes a match's players in one call; a
        // cluster one player per call (each player has a slot of their own).
        let name = pool_name.as_str();
        let per_call = self.players_per_call();
        let mut calls: Vec<&[(&Match, &TicketId, &PlayerId)]> = Vec::new();
        let mut rest = players.as_slice();
        while let Some((first, _)) = rest.split_first() {
            let n = rest
                .iter()
                .take(per_call)
                .take_while(|(m, ..)| m.id == first.0.id)
                .count();
            let (call, tail) = rest.split_at(n);
            calls.push(call);
            rest = tail;
        }
        let checks = calls.into_iter().map(|call| async move {
            let got = self.settle_check(name, call).await?;
            Ok::<_, StoreError>(call.iter().copied().zip(got).collect::<Vec<_>>())
        });
        let pending: Vec<_> = bounded(checks.collect::<Vec<_>>())
            .await?
            .into_iter()
            .flatten()
            .filter(|(_, got)| !got.is_empty())
            .map(|((m, t, p), got)| (m, t, p, got))
            .collect();

        // Entries to withdraw, once each, and what each player's index forgets.
        let mut withdraw: BTreeMap<(String, TicketId), &'static str> = BTreeMap::new();
        // Per player: the match, the matched ticket, and the (mode, live-ticket value)
        // pairs to forget.
        type Forget<'m> = (&'m Match, &'m TicketId, &'m PlayerId, Vec<String>);
        let mut forget: Vec<Forget> = Vec::new();
        for (m, t, p, got) in pending {
            let (own, active) = got.split_first().expect("non-empty");
            for other in crate::keys::indexed_pools(own) {
                if other != pool_name {
                    withdraw.insert((other.to_string(), t.clone()), MATCHED_IN_OTHER_POOL);
                }
            }
            for pair in active.chunks_exact(2) {
                let value = &pair[1];
                let (id, pools) = value.split_once('|').unwrap_or((value, ""));
                if id == t.as_str() {
                    continue;
                }
                let Ok(id) = TicketId::new(id) else { continue };
                for other in pools.split(',').filter(|s| !s.is_empty()) {
                    withdraw
                        .entry((other.to_string(), id.clone()))
                        .or_insert(MATCHED_ELSEWHERE);
                }
            }
            forget.push((m, t, p, active.to_vec()));
        }

        let withdrawals = withdraw.iter().map(|((pool, id), reason)| async move {
            let Some(pool) = Pool::parse(pool) else {
                return Ok(None);
            };
            let keys = PoolKeys::new(&pool);
            let got: Vec<String> = self
                .scripts
                .withdraw
                .key(&keys.queue)
                .key(&keys.state)
                .key(&keys.done)
                .key(&keys.tickets)
                .arg(id.as_str())
                .arg(*reason)
                .invoke_async(&mut self.conn())
                .await?;
            let ticket = match got.get(1) {
                Some(json) if !json.is_empty() && *reason == MATCHED_ELSEWHERE => {
                    Some(serde_json::from_str::<Ticket>(json)?)
                }
                _ => None,
            };
            Ok::<_, StoreError>(ticket)
        });
        let withdrawn = bounded(withdrawals.collect::<Vec<_>>()).await?;

        let frees = forget
            .iter()
            .map(|(m, t, p, pairs)| self.settle_force(&pool_name, m, t, p, pairs));
        bounded(frees.collect::<Vec<_>>()).await?;

        let keys = PoolKeys::new(pool);
        let mut out = Batches::default();
        let mut seen = BTreeSet::new();
        let mut told = events::Messages::default();
        for ticket in withdrawn.into_iter().flatten() {
            if seen.insert(ticket.id.clone()) {
                for e in withdrawn_events(&ticket, MATCHED_ELSEWHERE) {
                    told.event(&e)?;
                }
            }
        }
        for m in matches {
            told.formed(m, first)?;
        }
        for message in told.finish() {
            out.at(EVENTS_CHANNEL)
                .publish(EVENTS_CHANNEL, message)
                .ignore();
        }
        for m in matches {
            out.at(&keys.outbox)
                .zrem(&keys.outbox, m.id.as_str())
                .ignore();
        }
        out.run(&self.conn).await?;
        Ok(())
    }

    /// Runs `settle.lua` in `check` mode for `players` (of one match). Returns, per
    /// player, what it found live (empty: settled).
    async fn settle_check(
        &self,
        pool_name: &str,
        players: &[(&Match, &TicketId, &PlayerId)],
    ) -> Result<Vec<Vec<String>>, StoreError> {
        let Some((m, ..)) = players.first() else {
            return Ok(Vec::new());
        };
        let mut inv = self.scripts.settle.prepare_invoke();
        for (_, _, player) in players {
            settle_keys(&mut inv, player);
        }
        settle_args(&mut inv, pool_name, m, "check");
        for (_, ticket, _) in players {
            inv.arg(ticket.as_str());
        }
        let got: Vec<Vec<String>> = inv.invoke_async(&mut self.conn()).await?;
        if got.len() != players.len() {
            return Err(StoreError::Corrupt(format!(
                "settle.lua answered for {} players of {}",
                got.len(),
                players.len()
            )));
        }
        Ok(got)
    }

    /// Runs `settle.lua` in `force` mode for one player, forgetting the (mode,
    /// live-ticket value) `pairs` withdrawn.
    async fn settle_force(
        &self,
        pool_name: &str,
        m: &Match,
        ticket: &TicketId,
        player: &PlayerId,
        pairs: &[String],
    ) -> Result<(), StoreError> {
        let mut inv = self.scripts.settle.prepare_invoke();
        settle_keys(&mut inv, player);
        settle_args(&mut inv, pool_name, m, "force");
        inv.arg(ticket.as_str());
        for v in pairs {
            inv.arg(v);
        }
        let _: Vec<Vec<String>> = inv.invoke_async(&mut self.conn()).await?;
        Ok(())
    }
}

/// The match ids a script answered.
fn match_ids(raw: Vec<String>) -> Result<Vec<MatchId>, StoreError> {
    raw.into_iter()
        .map(|id| MatchId::new(id).map_err(|e| StoreError::Corrupt(e.to_string())))
        .collect()
}

/// `complete.lua`'s answer: the committed ids, those of them settled at once (the
/// fast path), and the fast-path matches left for the protocol.
type Completed = (Vec<String>, Vec<String>, Vec<String>);

/// The keys `complete.lua` takes before the players' (see the script).
const COMPLETE_KEYS: usize = 12;

/// `complete.lua`'s keys and the arguments before the matches.
fn complete_header(
    inv: &mut redis::ScriptInvocation<'_>,
    keys: &PoolKeys,
    worker: &str,
    pool: &Pool,
    fence: Option<u64>,
) {
    // A leader's tickets stay in the queue until their match commits: the
    // queue is its held set (see `lead_read.lua`).
    inv.key(&keys.state)
        .key(match fence {
            Some(_) => keys.queue.clone(),
            None => keys.held(worker),
        })
        .key(&keys.matches)
        .key(&keys.done)
        .key(&keys.outbox)
        .key(&keys.decisions)
        .key(&keys.due)
        .key(&keys.recent)
        .key(&keys.fence)
        .key(&keys.since)
        .key(&keys.backfills)
        .key(&keys.leader)
        .arg(&keys.life_prefix)
        .arg(crate::RECENT_MATCHES)
        .arg(super::leading::fence_arg(fence))
        .arg(&keys.archive_prefix)
        .arg(super::PLAYER_TTL_SECS)
        .arg(HISTORY_LEN)
        .arg(pool.name());
}

/// One match's group of `complete.lua` arguments, to try (`c`), abort (`a`) or
/// try fast (`f`, followed by its players).
fn complete_group(
    inv: &mut redis::ScriptInvocation<'_>,
    m: &Match,
    try_as: &str,
) -> Result<(), StoreError> {
    let start = MatchRecord::start(m);
    inv.arg(m.id.as_str())
        .arg(serde_json::to_string(m)?)
        .arg(try_as)
        .arg(start.status.as_str())
        .arg(start.deadline.map(|d| d.to_string()).unwrap_or_default())
        .arg(m.player_count())
        .arg(start.due.map(|d| d.to_string()).unwrap_or_default())
        .arg(m.lifecycle.after_acceptance().as_str())
        .arg(m.lifecycle.disconnect_grace_ms)
        .arg(fill_spec(m))
        .arg(m.tickets.len());
    for t in &m.tickets {
        inv.arg(t.ticket_id.as_str());
    }
    for t in &m.tickets {
        inv.arg(t.enqueued_at);
    }
    Ok(())
}

/// A fill as `complete.lua` takes it: `running match|generation|players per
/// team,...`; '' for a match that is not a fill.
fn fill_spec(m: &Match) -> String {
    let Some(of) = m.fills() else {
        return String::new();
    };
    let sizes: Vec<String> = m.team_sizes().iter().map(u32::to_string).collect();
    format!("{}|{}|{}", of.match_id, of.generation, sizes.join(","))
}

/// The five keys `settle.lua` takes for each player.
fn settle_keys(inv: &mut redis::ScriptInvocation<'_>, player: &PlayerId) {
    use player_suffix::{ACTIVE, HISTORY, IN_MATCH, RESERVATION, TICKETS};
    for suffix in [ACTIVE, TICKETS, HISTORY, RESERVATION, IN_MATCH] {
        inv.key(player_key(player, suffix));
    }
}

/// The four keys `complete.lua`'s fast path takes for each player: those of
/// [`settle_keys`] but the history zset players had before (the history is
/// now kept in the ticket index), which settling at commit never reads.
fn fast_keys(inv: &mut redis::ScriptInvocation<'_>, player: &PlayerId) {
    use player_suffix::{ACTIVE, IN_MATCH, RESERVATION, TICKETS};
    for suffix in [ACTIVE, TICKETS, RESERVATION, IN_MATCH] {
        inv.key(player_key(player, suffix));
    }
}

/// The arguments `settle.lua` takes for every player of `m`.
fn settle_args(inv: &mut redis::ScriptInvocation<'_>, pool_name: &str, m: &Match, mode: &str) {
    let ongoing = !m.lifecycle.initial_status().is_terminal();
    inv.arg(m.id.as_str())
        .arg(pool_name)
        .arg(m.created_at)
        .arg(HISTORY_LEN)
        .arg(super::PLAYER_TTL_SECS)
        .arg(mode)
        .arg(u8::from(ongoing));
}
