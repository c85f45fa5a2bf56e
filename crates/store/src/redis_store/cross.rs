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
//! Safety: a player's reservation by a committed match is never replaced, and it is
//! dropped only after every other ticket of the player is withdrawn, so no entry of
//! theirs can commit elsewhere meanwhile. Every step is idempotent; a crash at any
//! point leaves either an aborted-or-stale reservation (taken over later) or a
//! committed match in the outbox (settled by the supervisor).

use super::RedisStore;
use crate::api::{MATCHED_ELSEWHERE, MATCHED_IN_OTHER_POOL, formed_events, withdrawn_events};
use crate::keys::{EVENTS_CHANNEL, PlayerKeys, PoolKeys};
use crate::redis_store::conn::{Batches, bounded};
use crate::{HISTORY_LEN, StoreError};
use mm_domain::{Match, MatchId, MatchRecord, Millis, PlayerId, Pool, Ticket, TicketId};
use std::collections::{BTreeMap, BTreeSet};
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
    /// Reserves the players of `matches`, then commits in `pool` those that got all
    /// their players (see the module doc). Returns the committed ids.
    pub(super) async fn commit(
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
        let asks = matches
            .iter()
            .enumerate()
            .flat_map(|(i, m)| m.players().map(move |p| (i, p)))
            .map(|(i, player)| {
                let value = &values[i];
                let id = &matches[i].id;
                async move {
                    let got = self.reserve(player, value, "").await?;
                    let won = match got {
                        None => true,
                        Some(holder) => match self.contend(&holder, now, id, lease).await? {
                            Contest::Won => self.reserve(player, value, &holder).await?.is_none(),
                            Contest::Lost => false,
                        },
                    };
                    Ok::<_, StoreError>((i, player, won))
                }
            });
        let results = bounded(asks.collect::<Vec<_>>()).await?;
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
        inv.key(&keys.state)
            .key(keys.held(worker))
            .key(&keys.matches)
            .key(&keys.done)
            .key(&keys.outbox)
            .key(&keys.decisions)
            .key(&keys.due)
            .key(&keys.recent)
            .key(&keys.fence)
            .arg(&keys.life_prefix)
            .arg(crate::RECENT_MATCHES)
            .arg(super::leading::fence_arg(fence));
        for (m, lost) in matches.iter().zip(&lost) {
            let (record, due) = MatchRecord::committed(m.clone());
            inv.arg(m.id.as_str())
                .arg(serde_json::to_string(m)?)
                .arg(if *lost { "a" } else { "c" })
                .arg(record.status.as_str())
                .arg(record.deadline.map(|d| d.to_string()).unwrap_or_default())
                .arg(m.player_count())
                .arg(due.map(|d| d.to_string()).unwrap_or_default())
                .arg(m.lifecycle.after_acceptance().as_str())
                .arg(m.lifecycle.disconnect_grace_ms)
                .arg(m.tickets.len());
            for t in &m.tickets {
                inv.arg(t.ticket_id.as_str());
            }
        }
        // A fenced-off leader commits nothing: its reservations are given back
        // like an aborted match's, then it hears why.
        let (ids, fenced) = match inv.invoke_async::<Vec<String>>(&mut self.conn()).await {
            Ok(ids) => (ids, None),
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
                    .key(PlayerKeys::new(player).reservation)
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
        ids.into_iter()
            .map(|id| MatchId::new(id).map_err(|e| StoreError::Corrupt(e.to_string())))
            .collect()
    }

    /// Sets `player`'s reservation to `value` if free, ours, or `replacing`.
    /// Returns the holder otherwise.
    async fn reserve(
        &self,
        player: &PlayerId,
        value: &str,
        replacing: &str,
    ) -> Result<Option<String>, StoreError> {
        let got: String = self
            .scripts
            .reserve
            .key(PlayerKeys::new(player).reservation)
            .arg(value)
            .arg(replacing)
            .invoke_async(&mut self.conn())
            .await?;
        Ok((!got.is_empty()).then_some(got))
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
    pub(super) async fn settle(&self, pool: &Pool, matches: &[Match]) -> Result<(), StoreError> {
        let pool_name = pool.name();
        // Each match's JSON once, for every one of its players' histories.
        let jsons: Vec<String> = matches
            .iter()
            .map(serde_json::to_string)
            .collect::<Result<_, _>>()?;
        let players: Vec<(&Match, &str, &TicketId, &PlayerId)> = matches
            .iter()
            .zip(&jsons)
            .flat_map(|(m, json)| {
                m.tickets.iter().flat_map(move |t| {
                    t.players
                        .iter()
                        .map(move |p| (m, json.as_str(), &t.ticket_id, p))
                })
            })
            .collect();
        // Players with nothing else live settle in one step; the others report
        // their live tickets.
        let name = pool_name.as_str();
        let checks = players.iter().map(|&(m, json, t, p)| async move {
            let got = self.settle_player(name, m, json, t, p, None).await?;
            Ok::<_, StoreError>((m, json, t, p, got))
        });
        let pending: Vec<_> = bounded(checks.collect::<Vec<_>>())
            .await?
            .into_iter()
            .filter(|(.., got)| !got.is_empty())
            .collect();

        // Entries to withdraw, once each, and what each player's index forgets.
        let mut withdraw: BTreeMap<(String, TicketId), &'static str> = BTreeMap::new();
        // Per player: the match, the matched ticket, and the (mode, live-ticket value)
        // pairs to forget.
        type Forget<'m> = (&'m Match, &'m str, &'m TicketId, &'m PlayerId, Vec<String>);
        let mut forget: Vec<Forget> = Vec::new();
        for (m, json, t, p, got) in pending {
            let (own, active) = got.split_first().expect("non-empty");
            for other in own.split(',') {
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
            forget.push((m, json, t, p, active.to_vec()));
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

        let frees = forget.iter().map(|(m, json, t, p, pairs)| {
            self.settle_player(&pool_name, m, json, t, p, Some(pairs))
        });
        bounded(frees.collect::<Vec<_>>()).await?;

        let keys = PoolKeys::new(pool);
        let mut out = Batches::default();
        let mut seen = BTreeSet::new();
        for ticket in withdrawn.into_iter().flatten() {
            if seen.insert(ticket.id.clone()) {
                for e in withdrawn_events(&ticket, MATCHED_ELSEWHERE) {
                    out.at(EVENTS_CHANNEL)
                        .publish(EVENTS_CHANNEL, serde_json::to_string(&e)?)
                        .ignore();
                }
            }
        }
        for m in matches {
            for e in formed_events(m) {
                out.at(EVENTS_CHANNEL)
                    .publish(EVENTS_CHANNEL, serde_json::to_string(&e)?)
                    .ignore();
            }
            out.at(&keys.outbox)
                .zrem(&keys.outbox, m.id.as_str())
                .ignore();
        }
        out.run(&self.conn).await?;
        Ok(())
    }

    /// Runs `settle.lua` for one player: `check` mode without `pairs`, `force` mode
    /// with the (mode, value) pairs withdrawn. Returns what `check` found live.
    async fn settle_player(
        &self,
        pool_name: &str,
        m: &Match,
        json: &str,
        ticket: &TicketId,
        player: &PlayerId,
        pairs: Option<&[String]>,
    ) -> Result<Vec<String>, StoreError> {
        let pk = PlayerKeys::new(player);
        let ongoing = !m.lifecycle.initial_status().is_terminal();
        let mut inv = self.scripts.settle.prepare_invoke();
        inv.key(&pk.active)
            .key(&pk.tickets)
            .key(&pk.history)
            .key(&pk.reservation)
            .key(&pk.in_match)
            .arg(m.id.as_str())
            .arg(pool_name)
            .arg(ticket.as_str())
            .arg(json)
            .arg(m.created_at)
            .arg(HISTORY_LEN)
            .arg(super::PLAYER_TTL_SECS)
            .arg(if pairs.is_some() { "force" } else { "check" })
            .arg(if ongoing {
                format!("{}|{pool_name}", m.id)
            } else {
                String::new()
            });
        for v in pairs.unwrap_or_default() {
            inv.arg(v);
        }
        Ok(inv.invoke_async(&mut self.conn()).await?)
    }
}
