//! Tickets of players who left the game. A mode with `cancel_offline_after`
//! ends a waiting ticket (`cancelled`, reason `disconnected`, a
//! `ticket.cancelled` to each of its players) once one of its players has had
//! no event socket open for that long, so that nobody is matched with a
//! player who quit: without a ready check the match would start a player
//! short, with one it would fail after its whole deadline.
//!
//! Each ingress keeps count of the sockets open on it per player
//! ([`Sockets`]) and notes in the store ([`mm_store::Online`]) when a
//! player's first socket on it opens and when their last one closes, and
//! notes itself alive a few renewals ahead, renewed every `PRESENCE_RENEW`: a
//! socket noted open counts as open while its ingress lives, so a crashed
//! ingress's players count as gone once its note runs out, and the renewal is
//! one write per ingress whatever its sockets. A player is offline from the
//! latest of their notes; a ticket's grace starts at the later of that and
//! its queueing, so a ticket queued before its player opens a socket has the
//! whole grace to open one.
//!
//! Who looks: the ingress whose socket closed (after the grace, for each of
//! the player's waiting tickets), the ingress that created a ticket whose
//! players have no socket open on it (after the grace, in case none is ever
//! opened), and now and then the supervisor ([`sweep`]: a pool's
//! longest-waiting tickets, which covers an ingress that crashed with its
//! sockets and its timers). An ingress keeps its looks due in one timer queue
//! ([`Sockets::run`]), not a task each.

use crate::Catalog;
use futures_util::StreamExt as _;
use mm_domain::{EventEnvelope, Millis, PlayerId, Pool, TicketId, now_ms, reasons};
use mm_store::{CancelOutcome, Store, StoreError};
use mm_telemetry::names;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::time::DelayQueue;

/// How often an ingress renews its notes by default (`PRESENCE_RENEW`).
pub const RENEW_EVERY: Duration = Duration::from_secs(10);
/// An ingress's note of itself holds for this many renewals: a crashed
/// ingress's players are taken for gone at most this many intervals after it
/// died (plus the grace).
const HOLD_FOR_RENEWALS: u32 = 3;
/// How soon an ingress tries again to note itself alive after it could not.
const RETRY_RENEWAL: Duration = Duration::from_secs(1);
/// How long the supervisor waits after a store outage (as its own calls saw
/// it) before it sweeps again: ingresses whose notes ran out during it note
/// themselves alive again within a second of its end (they try every second
/// until they can).
pub const SETTLE_AFTER_OUTAGE: Duration = Duration::from_secs(30);
/// Most tickets of a pool the supervisor looks at in one sweep.
pub const SWEPT_PER_POOL: usize = 1000;

/// A look due at a ticket: its player, its id, when (ms).
type Due = (PlayerId, TicketId, Millis);

/// The sockets open on this ingress, per player, the name it notes them
/// under, and the looks due at tickets. Does nothing when no mode cancels
/// offline players' tickets.
pub struct Sockets {
    holder: String,
    on: bool,
    renew_every: Duration,
    /// Player -> sockets open here, and when they were noted open.
    open: Mutex<HashMap<PlayerId, (usize, Millis)>>,
    due: mpsc::UnboundedSender<Due>,
    /// Taken by [`Sockets::run`].
    due_rx: Mutex<Option<mpsc::UnboundedReceiver<Due>>>,
}

impl Sockets {
    /// Sockets of an ingress serving `catalog`, renewing its notes every
    /// `renew_every`.
    pub fn new(catalog: &Catalog, renew_every: Duration) -> Self {
        let (due, due_rx) = mpsc::unbounded_channel();
        Self {
            holder: format!("ingress-{}", uuid::Uuid::new_v4().simple()),
            on: catalog
                .modes()
                .iter()
                .any(|m| m.cancel_offline_after.is_some()),
            renew_every,
            open: Mutex::new(HashMap::new()),
            due,
            due_rx: Mutex::new(Some(due_rx)),
        }
    }

    fn hold_until(&self, now: Millis) -> Millis {
        now + (self.renew_every * HOLD_FOR_RENEWALS).as_millis() as Millis
    }

    fn open(&self) -> std::sync::MutexGuard<'_, HashMap<PlayerId, (usize, Millis)>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A socket of `player`'s opened here; the first one is noted at once.
    pub async fn opened(&self, store: &dyn Store, player: &PlayerId) {
        if !self.on {
            return;
        }
        let now = now_ms();
        let first = {
            let mut open = self.open();
            let (n, _) = open.entry(player.clone()).or_insert((0, now));
            *n += 1;
            *n == 1
        };
        if first && let Err(e) = store.hold(&self.holder, player, true, now).await {
            warn_store!(e, "could not note the player's socket");
        }
    }

    /// A socket of `player`'s closed here. When it was their last one here,
    /// notes them as held until now and looks at each of their waiting
    /// tickets once the grace has run.
    pub async fn closed(&self, store: &dyn Store, catalog: &Catalog, player: &PlayerId) {
        if !self.on {
            return;
        }
        let last = {
            let mut open = self.open();
            match open.get_mut(player) {
                Some((n, _)) if *n > 1 => {
                    *n -= 1;
                    false
                }
                Some(_) => {
                    open.remove(player);
                    true
                }
                None => false,
            }
        };
        if !last {
            return;
        }
        if let Err(e) = store.hold(&self.holder, player, false, now_ms()).await {
            warn_store!(e, "could not note the player's socket closed");
        }
        // A socket opened here meanwhile may have been noted before this
        // note: note it again, after.
        if self.open().contains_key(player) {
            if let Err(e) = store.hold(&self.holder, player, true, now_ms()).await {
                warn_store!(e, "could not note the player's socket");
            }
            return;
        }
        let ids = match store.live_tickets(player).await {
            Ok(ids) => ids,
            Err(e) => {
                warn_store!(e, "could not list the tickets of a player who left");
                return;
            }
        };
        for id in ids {
            let Ok(Some(view)) = store.ticket(player, &id).await else {
                continue;
            };
            if let Some(grace) = catalog
                .mode(&view.mode)
                .and_then(|m| m.cancel_offline_after)
                && waiting(view.status)
            {
                self.look_at(player.clone(), id, now_ms() + grace);
            }
        }
    }

    /// A ticket of `mode` was queued here at `at` for `players`: unless each
    /// has a socket open here (whose closing would be seen), it is looked at
    /// once the grace has run, in case a player never opens one.
    pub fn queued(
        &self,
        catalog: &Catalog,
        mode: &str,
        players: &[PlayerId],
        id: &TicketId,
        at: Millis,
    ) {
        if !self.on {
            return;
        }
        let Some(grace) = catalog.mode(mode).and_then(|m| m.cancel_offline_after) else {
            return;
        };
        let all_here = {
            let open = self.open();
            players.iter().all(|p| open.contains_key(p))
        };
        if !all_here {
            self.look_at(players[0].clone(), id.clone(), at + grace);
        }
    }

    /// Looks at `player`'s ticket `id` at `at` (see [`Sockets::run`]).
    fn look_at(&self, player: PlayerId, id: TicketId, at: Millis) {
        if self.on {
            // Only fails once `run` has stopped, at shutdown.
            let _ = self.due.send((player, id, at));
        }
    }

    /// Until `shutdown`: renews the notes of every player with a socket open
    /// here every `renew_every`, and takes each look when it is due (one
    /// timer queue; each look in a task of its own, looked at again later
    /// while a player is gone but not yet for the grace).
    pub async fn run(
        self: Arc<Self>,
        store: Arc<dyn Store>,
        catalog: Arc<Catalog>,
        shutdown: tokio_util::sync::CancellationToken,
    ) {
        let Some(mut due_rx) = self.due_rx.lock().unwrap_or_else(|p| p.into_inner()).take() else {
            return;
        };
        if !self.on {
            return;
        }
        let mut tick = tokio::time::interval(self.renew_every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut looks: DelayQueue<(PlayerId, TicketId)> = DelayQueue::new();
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tick.tick() => {
                    if !self.renew(&*store).await {
                        // Noted alive again as soon as the store answers:
                        // past its note, this ingress's players count as gone.
                        tick.reset_after(RETRY_RENEWAL);
                    }
                }
                Some((player, id, at)) = due_rx.recv() => {
                    let wait = Duration::from_millis(at.saturating_sub(now_ms()) + 20);
                    looks.insert((player, id), wait);
                }
                Some(look) = looks.next(), if !looks.is_empty() => {
                    let (player, id) = look.into_inner();
                    let (me, store, catalog) = (self.clone(), store.clone(), catalog.clone());
                    tokio::spawn(async move {
                        if let Some(next) = look_again(&*store, &catalog, &player, &id).await {
                            me.look_at(player, id, next);
                        }
                    });
                }
            }
        }
    }

    /// Notes this ingress alive a few renewals ahead, and notes again the
    /// sockets open here for half of [`mm_store::OPEN_KEPT`], before their
    /// notes run out. Returns whether it was noted alive.
    async fn renew(&self, store: &dyn Store) -> bool {
        let now = now_ms();
        if let Err(e) = store.alive(&self.holder, self.hold_until(now)).await {
            warn_store!(
                e,
                "could not note this ingress alive for its players' sockets"
            );
            return false;
        }
        let half = (mm_store::OPEN_KEPT / 2).as_millis() as Millis;
        let stale: Vec<PlayerId> = {
            let mut open = self.open();
            open.iter_mut()
                .filter(|(_, (_, at))| *at + half < now)
                .map(|(p, (_, at))| {
                    *at = now;
                    p.clone()
                })
                .collect()
        };
        for p in stale {
            if let Err(e) = store.hold(&self.holder, &p, true, now).await {
                warn_store!(e, "could not note the player's socket again");
            }
        }
        true
    }
}

fn waiting(status: mm_domain::TicketStatus) -> bool {
    matches!(
        status,
        mm_domain::TicketStatus::Queued | mm_domain::TicketStatus::Searching
    )
}

/// Looks at `player`'s ticket `id` now: returns when to look again (a player
/// is gone, not yet for the grace), or `None` once there is nothing more to
/// look at (cancelled, in a match, over, every player back, or the store not
/// answering: the supervisor's sweep looks later).
async fn look_again(
    store: &dyn Store,
    catalog: &Catalog,
    player: &PlayerId,
    id: &TicketId,
) -> Option<Millis> {
    let view = match store.ticket(player, id).await {
        Ok(Some(v)) => v,
        Ok(None) => return None,
        Err(e) => {
            warn_store!(e, ticket_id = %id, "could not read a ticket to check its players are connected");
            return None;
        }
    };
    let grace = catalog.mode(&view.mode)?.cancel_offline_after?;
    if !waiting(view.status) {
        return None;
    }
    let pool = Pool::new(&view.mode, &view.region);
    let ticket = Waiting {
        id: view.id.clone(),
        players: view.players.clone(),
        enqueued_at: view.enqueued_at,
    };
    match settle(store, &pool, &ticket, grace, now_ms()).await {
        Ok(Verdict::LookAt(next)) => Some(next),
        Ok(_) => None,
        Err(e) => {
            warn_store!(e, ticket_id = %id, "could not check a ticket's players are connected");
            None
        }
    }
}

/// The pools the supervisor sweeps, with their grace: the open pools of every
/// mode with `cancel_offline_after`.
pub fn pools(catalog: &Catalog) -> Vec<(Pool, Millis)> {
    catalog
        .open_pools()
        .into_iter()
        .filter_map(|pool| {
            let grace = catalog.mode(&pool.mode)?.cancel_offline_after?;
            Some((pool, grace))
        })
        .collect()
}

/// A waiting ticket, as far as the check needs it.
#[derive(Debug, Clone)]
pub struct Waiting {
    pub id: TicketId,
    pub players: Vec<PlayerId>,
    pub enqueued_at: Millis,
}

/// What a look at a waiting ticket found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Ended: a player was gone for the grace.
    Cancelled,
    /// Every player has a socket open.
    Online,
    /// A player is gone, not yet for the grace: look again then.
    LookAt(Millis),
    /// Not cancelled: already in a match or over.
    Left,
}

/// Looks at `ticket` of `pool` at `now`: ends it if a player of it has been
/// gone for `grace`.
pub async fn settle(
    store: &dyn Store,
    pool: &Pool,
    ticket: &Waiting,
    grace: Millis,
    now: Millis,
) -> Result<Verdict, StoreError> {
    let mut due: Option<Millis> = None;
    let mut gone: Option<&PlayerId> = None;
    for p in &ticket.players {
        let seen = store.last_seen(p).await?;
        if seen.is_some_and(|s| s > now) {
            continue;
        }
        let since = seen.unwrap_or(0).max(ticket.enqueued_at);
        if since + grace <= now {
            gone = Some(p);
            break;
        }
        due = Some(due.map_or(since + grace, |d| d.min(since + grace)));
    }
    let Some(player) = gone else {
        return Ok(due.map_or(Verdict::Online, Verdict::LookAt));
    };
    if store
        .withdraw(player, &ticket.id, Some(reasons::DISCONNECTED))
        .await?
        != CancelOutcome::Cancelled
    {
        return Ok(Verdict::Left);
    }
    metrics::counter!(names::TICKETS_GIVEN_UP, "pool" => pool.name(), "reason" => reasons::DISCONNECTED)
        .increment(1);
    tracing::info!(ticket_id = %ticket.id, player = %player, "ticket cancelled: a player left the game");
    let events = EventEnvelope::cancelled(&ticket.players, &ticket.id, Some(reasons::DISCONNECTED));
    if let Err(e) = store.publish(&events).await {
        warn_store!(e, "could not publish ticket.cancelled");
    }
    Ok(Verdict::Cancelled)
}

/// The supervisor's look at `pool`, whose mode cancels offline players'
/// tickets after `grace`: its longest-waiting tickets that waited that long.
/// Returns how many it cancelled.
pub async fn sweep(store: &dyn Store, pool: &Pool, grace: Millis) -> usize {
    let now = now_ms();
    let tickets = match store
        .overdue(pool, now.saturating_sub(grace), SWEPT_PER_POOL)
        .await
    {
        Ok(t) => t,
        Err(e) => {
            warn_store!(e, pool = %pool.name(), "listing tickets to check their players are connected failed");
            return 0;
        }
    };
    let mut cancelled = 0;
    for t in tickets {
        let ticket = Waiting {
            id: t.id,
            players: t.players,
            enqueued_at: t.enqueued_at,
        };
        match settle(store, pool, &ticket, grace, now).await {
            Ok(Verdict::Cancelled) => cancelled += 1,
            Ok(_) => {}
            Err(e) => {
                warn_store!(e, ticket_id = %ticket.id, "checking a ticket's players are connected failed")
            }
        }
    }
    cancelled
}
