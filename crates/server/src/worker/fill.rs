//! Backfill in a worker's cycle (issue 34): before it forms new matches, a
//! cycle serves its pool's open backfills from the tickets it holds. For each
//! backfill it reads the running match, lets the engine pick the tickets that
//! fit its seats, windows and rules ([`mm_engine::fill_with`], the match's
//! tickets as one more row), and proposes one *fill*: a match of those tickets
//! that names the running match and the backfill generation it read. The fill
//! commits with the new matches, and only if the backfill is still at that
//! generation ([`mm_store::Backfills`]); the tickets left form new matches as
//! usual. Backfills never fill each other: only waiting tickets are candidates.
//! Players the server reported leaving count neither in their team's average
//! nor as holding their role, nor in their party's size; a filler's role
//! (with a `roles` rule) is one its team misses, recorded in the fill.

use super::{Reading, WorkerConfig, propose_for, to_match};
use mm_domain::{Decided, FillOf, Match, MatchStatus, MatchTicket, PlayerId, Pool, Value, now_ms};
use mm_engine::{BackfillPolicy, Described, Entry, Mode, Traits};
use mm_store::{Claimed, Store};

/// A row the mode's rules read: a waiting ticket, or a running match's
/// tickets together with whom their players blocked (read from the store
/// when the fill is formed: a match keeps no block lists).
enum Row<'a> {
    Ticket(&'a mm_domain::Ticket),
    Running(&'a [MatchTicket], &'a [PlayerId]),
}

impl Row<'_> {
    /// The ticket holding player `i` of a running match, and the player's
    /// index in it.
    fn seat(tickets: &[MatchTicket], mut i: usize) -> Option<(&MatchTicket, usize)> {
        for t in tickets {
            if i < t.players.len() {
                return Some((t, i));
            }
            i -= t.players.len();
        }
        None
    }
}

impl Described for Row<'_> {
    fn players(&self) -> usize {
        match self {
            Row::Ticket(t) => t.players.len(),
            Row::Running(ts, _) => ts.iter().map(|t| t.players.len()).sum(),
        }
    }

    fn value(&self, i: usize, attribute: &str) -> Option<&Value> {
        match self {
            Row::Ticket(t) => t.attribute(i, attribute),
            Row::Running(ts, _) => {
                let (t, k) = Row::seat(ts, i)?;
                t.player_attributes
                    .get(k)
                    .and_then(|a| a.get(attribute))
                    .or_else(|| t.attributes.get(attribute))
            }
        }
    }

    fn player(&self, i: usize) -> Option<&PlayerId> {
        match self {
            Row::Ticket(t) => t.players.get(i),
            Row::Running(ts, _) => Row::seat(ts, i).and_then(|(t, k)| t.players.get(k)),
        }
    }

    fn blocks(&self) -> &[PlayerId] {
        match self {
            Row::Ticket(t) => &t.blocks,
            Row::Running(_, blocks) => blocks,
        }
    }
}

/// The matches a cycle proposes from `claimed`: fills of the pool's open
/// backfills first (when the mode has backfill), then new matches of the
/// tickets left. A store error while reading backfills skips the fills: new
/// matches still form.
pub(crate) async fn fill_then_propose(
    store: &dyn Store,
    cfg: &WorkerConfig,
    claimed: &[Claimed],
    pool: &Pool,
    mode: &Mode,
    reading: Reading<'_>,
) -> Vec<Match> {
    if mode.backfill == BackfillPolicy::Off {
        return propose_for(cfg, claimed, pool, mode, &reading);
    }
    let fills = match fills(store, claimed, pool, mode).await {
        Ok(fills) => fills,
        Err(e) => {
            warn_store!(e, pool = %pool.name(), "could not read the open backfills; forming new matches only");
            Vec::new()
        }
    };
    if fills.is_empty() {
        return propose_for(cfg, claimed, pool, mode, &reading);
    }
    let taken: std::collections::HashSet<&mm_domain::TicketId> = fills
        .iter()
        .flat_map(|m| m.tickets.iter().map(|t| &t.ticket_id))
        .collect();
    let left: Vec<bool> = claimed
        .iter()
        .map(|c| !taken.contains(&c.ticket.id))
        .collect();
    let rest: Vec<Claimed> = claimed
        .iter()
        .zip(&left)
        .filter(|(_, left)| **left)
        .map(|(c, _)| c.clone())
        .collect();
    let mut matches = fills;
    matches.extend(propose_for(cfg, &rest, pool, mode, &reading.only(&left)));
    matches
}

/// One fill per open backfill of `pool` that some of `claimed` fit.
async fn fills(
    store: &dyn Store,
    claimed: &[Claimed],
    pool: &Pool,
    mode: &Mode,
) -> Result<Vec<Match>, mm_store::StoreError> {
    let open = store.open_backfills(pool).await?;
    if open.is_empty() || claimed.is_empty() {
        return Ok(Vec::new());
    }
    let now = now_ms();
    let mut free: Vec<usize> = (0..claimed.len()).collect();
    let mut out = Vec::new();
    // The running matches, read at once rather than one after another.
    let records = futures_util::future::try_join_all(
        open.iter().map(|b| store.match_record(pool, &b.match_id)),
    )
    .await?;
    // Whom the players still in each running match blocked, as the store has
    // them now (a match keeps no block lists), read at once as well. Block
    // lists apply in every mode, rules or none.
    let lists = futures_util::future::try_join_all(records.iter().map(|record| {
        let present: Vec<PlayerId> = record
            .iter()
            .filter(|(running, _)| running.status == MatchStatus::Assigned)
            .flat_map(|(running, _)| {
                running.matched.tickets.iter().flat_map(|t| {
                    t.players
                        .iter()
                        .filter(|p| !running.left.contains_key(*p))
                        .cloned()
                })
            })
            .collect();
        async move {
            if present.is_empty() {
                return Ok(Vec::new());
            }
            store.kept_apart(&present).await
        }
    }))
    .await?;
    for ((b, record), blocks) in open.into_iter().zip(records).zip(lists) {
        if free.is_empty() {
            break;
        }
        let Some((running, _)) = record else {
            continue;
        };
        if running.status != MatchStatus::Assigned {
            continue;
        }
        let m = &running.matched;
        let teams = b.open.len().max(m.team_sizes().len());
        // The players still in it: not those the server reported leaving.
        let mut ratings = vec![Vec::new(); teams];
        let mut held_roles = vec![Vec::new(); teams];
        let mut parties = vec![0usize; teams];
        for t in &m.tickets {
            let mut here = 0;
            for p in t.players.iter().filter(|p| !running.left.contains_key(*p)) {
                ratings[t.team].push(t.rating);
                if let Some(role) = m.decided.roles.get(p) {
                    held_roles[t.team].push(role.clone());
                }
                here += 1;
            }
            parties[t.team] = parties[t.team].max(here);
        }
        let request = mm_engine::Backfill {
            teams: ratings,
            open: (0..teams)
                .map(|k| b.open.get(k).copied().unwrap_or(0) as usize)
                .collect(),
            opened_at: b.opened_at,
            held_roles,
            parties,
            // A filler plays on the map the match chose.
            chosen: m.decided.chosen.clone(),
        };
        let entries: Vec<Entry> = free
            .iter()
            .map(|&i| {
                let t = &claimed[i].ticket;
                Entry {
                    rating: t.rating,
                    size: t.players.len(),
                    enqueued_at: t.enqueued_at,
                    eligible_at: t.eligible_at(&pool.region),
                }
            })
            .collect();
        let traits = if mode.rules.is_empty()
            && blocks.is_empty()
            && free.iter().all(|&i| claimed[i].ticket.blocks.is_empty())
        {
            Traits::none()
        } else {
            let rows: Vec<Row> = free
                .iter()
                .map(|&i| Row::Ticket(&claimed[i].ticket))
                .chain(std::iter::once(Row::Running(&m.tickets, &blocks)))
                .collect();
            Traits::new(&mode.rules, &rows)
        };
        let placed = mm_engine::fill_with(mode, &request, &entries, &traits, now);
        if placed.is_empty() {
            continue;
        }
        let members: Vec<(usize, usize)> =
            placed.iter().map(|&(k, team)| (free[k], team)).collect();
        let roles = mm_engine::backfill::fill_roles(&request, &entries, &traits, &placed, now)
            .into_iter()
            .filter_map(|(k, p, role)| {
                let player = claimed[free[k]].ticket.players.get(p)?;
                Some((player.clone(), role))
            })
            .collect();
        let decided = Decided {
            // The running match's choices stand (its map, say).
            chosen: m.decided.chosen.clone(),
            roles,
            backfill: Some(FillOf {
                match_id: b.match_id.clone(),
                generation: b.generation,
            }),
            ..Decided::default()
        };
        let mut fill = to_match(claimed, pool, mode, &members, now, decided);
        fill.lifecycle = mode.fill_lifecycle();
        let used: std::collections::HashSet<usize> = members.iter().map(|&(i, _)| i).collect();
        free.retain(|i| !used.contains(i));
        out.push(fill);
    }
    Ok(out)
}
