//! The pipelines the drain and recovery benches run on one Redis: ours
//! (`matchmaker worker` and `supervisor` over the store) and the seed-000 port
//! ([`super::seed000`]), behind what those benches read of them: queue and
//! processing depth, what a worker holds, how many matches were formed, how many
//! players have been told of their match, and what an audit needs.

use super::seed000::worker::Poll;
use super::seed000::{self, MATCH_CHANNEL, Port, PortMatch, PortTicket};
use anyhow::Result;
use clap::ValueEnum;
use futures_util::StreamExt;
use mm_domain::{Match, Pool, Ticket};
use mm_store::keys::{EVENTS_CHANNEL, PoolKeys};
use mm_store::{RedisStore, Store};
use redis::AsyncCommands;
use redis::aio::MultiplexedConnection;
use std::collections::HashSet;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// A pipeline's state in Redis, as a bench watches it.
pub(crate) enum Watch {
    Ours {
        store: Arc<dyn Store>,
        keys: Box<PoolKeys>,
        pool: Pool,
        admin: MultiplexedConnection,
        /// The pool's players told of their match since the watch began.
        told: Arc<AtomicUsize>,
        listener: tokio::task::JoinHandle<()>,
    },
    Port {
        port: Port,
        /// Its workers' ids, whose processing hashes are watched.
        workers: Vec<String>,
        /// Matches seen on the port's channel since the watch began.
        formed: Arc<AtomicUsize>,
        /// Tickets of those matches.
        told: Arc<AtomicUsize>,
        listener: tokio::task::JoinHandle<()>,
    },
}

impl Drop for Watch {
    fn drop(&mut self) {
        match self {
            Watch::Ours { listener, .. } | Watch::Port { listener, .. } => listener.abort(),
        }
    }
}

/// What the told-counter reads of an event on our channel: whose it is and its
/// type (the rest is skipped unparsed).
#[derive(serde::Deserialize)]
struct Told<'a> {
    #[serde(borrow)]
    player: std::borrow::Cow<'a, str>,
    event: Kind<'a>,
}

#[derive(serde::Deserialize)]
struct Kind<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
}

/// What the told-counter reads of a committed match on our channel (it stands
/// for its players' first events): its players.
#[derive(serde::Deserialize)]
struct Formed<'a> {
    #[serde(borrow)]
    formed: FormedMatch<'a>,
}

#[derive(serde::Deserialize)]
struct FormedMatch<'a> {
    #[serde(borrow)]
    tickets: Vec<FormedTicket<'a>>,
}

#[derive(serde::Deserialize)]
struct FormedTicket<'a> {
    #[serde(borrow)]
    players: Vec<std::borrow::Cow<'a, str>>,
}

/// How many players whose ids start with `players` the message `payload` tells
/// that they were matched: the first event of a match, whatever its lifecycle
/// (ready check, placing, or done at once), sent as a committed match for all
/// its players or (before 2026-11-28) an event per player. A message is an
/// array of those, or one event (see `mm_store::RedisStore`'s events channel).
fn told_of_match(payload: &str, players: &str) -> usize {
    let tells = |e: &Told| {
        matches!(
            e.event.kind,
            "match.ready_check" | "match.placing" | "match.completed"
        ) && e.player.starts_with(players)
    };
    let element = |raw: &serde_json::value::RawValue| {
        if !raw.get().starts_with(mm_store::events::FORMED_HEAD) {
            return serde_json::from_str::<Told>(raw.get()).map_or(0, |e| usize::from(tells(&e)));
        }
        serde_json::from_str::<Formed>(raw.get()).map_or(0, |m| {
            m.formed
                .tickets
                .iter()
                .flat_map(|t| &t.players)
                .filter(|p| p.starts_with(players))
                .count()
        })
    };
    if let Ok(all) = serde_json::from_str::<Vec<&serde_json::value::RawValue>>(payload) {
        all.into_iter().map(element).sum()
    } else {
        serde_json::from_str::<Told>(payload).map_or(0, |e| usize::from(tells(&e)))
    }
}

impl Watch {
    /// Our pipeline's state in `pool`; counts the players whose ids start with
    /// `players` told of a match (on the events channel the ingress relays to
    /// sockets) from now on.
    pub async fn ours(url: &str, pool: &Pool, players: &str) -> Result<Self> {
        let told = Arc::new(AtomicUsize::new(0));
        let mut sub = redis::Client::open(url)?.get_async_pubsub().await?;
        sub.subscribe(EVENTS_CHANNEL).await?;
        let listener = {
            let told = told.clone();
            let players = players.to_string();
            tokio::spawn(async move {
                let mut messages = sub.on_message();
                while let Some(m) = messages.next().await {
                    let payload: String = m.get_payload().unwrap_or_default();
                    told.fetch_add(told_of_match(&payload, &players), Ordering::Relaxed);
                }
            })
        };
        Ok(Watch::Ours {
            store: Arc::new(RedisStore::connect(url).await?),
            keys: Box::new(PoolKeys::new(pool)),
            pool: pool.clone(),
            admin: admin(url).await?,
            told,
            listener,
        })
    }

    /// The port's state in `pool`'s region, run by `workers` (ids); counts
    /// matches, and their tickets, from now on.
    pub async fn port(url: &str, pool: &Pool, workers: Vec<String>) -> Result<Self> {
        let formed = Arc::new(AtomicUsize::new(0));
        let told = Arc::new(AtomicUsize::new(0));
        let mut sub = redis::Client::open(url)?.get_async_pubsub().await?;
        sub.subscribe(MATCH_CHANNEL).await?;
        let listener = {
            let formed = formed.clone();
            let told = told.clone();
            tokio::spawn(async move {
                let mut messages = sub.on_message();
                while let Some(m) = messages.next().await {
                    formed.fetch_add(1, Ordering::Relaxed);
                    let payload: String = m.get_payload().unwrap_or_default();
                    if let Ok(m) = serde_json::from_str::<PortMatch>(&payload) {
                        told.fetch_add(m.tickets.len(), Ordering::Relaxed);
                    }
                }
            })
        };
        Ok(Watch::Port {
            port: Port::connect(url, &pool.region).await?,
            workers,
            formed,
            told,
            listener,
        })
    }

    /// Tickets whose players were told of their match since the watch began: ours
    /// once the match is settled and its events published, the port once it
    /// publishes the match.
    pub fn told(&self) -> u64 {
        match self {
            Watch::Ours { told, .. } | Watch::Port { told, .. } => {
                told.load(Ordering::Relaxed) as u64
            }
        }
    }

    /// Enqueues `tickets` as the pipeline's ingress would, 32 at a time.
    pub async fn seed(&self, tickets: &[Ticket]) -> Result<()> {
        let mut tasks = tokio::task::JoinSet::new();
        for chunk in tickets.chunks(tickets.len().div_ceil(32).max(1)) {
            let chunk = chunk.to_vec();
            match self {
                Watch::Ours { store, .. } => {
                    let store = store.clone();
                    tasks.spawn(async move {
                        for t in &chunk {
                            store.enqueue(t).await?;
                        }
                        Ok::<_, anyhow::Error>(())
                    });
                }
                Watch::Port { port, .. } => {
                    let mut port = port.clone();
                    tasks.spawn(async move {
                        for t in &chunk {
                            port.enqueue(&port_ticket(t)).await?;
                        }
                        Ok(())
                    });
                }
            }
        }
        while let Some(r) = tasks.join_next().await {
            r??;
        }
        Ok(())
    }

    /// (queued, processing).
    pub async fn depths(&mut self) -> Result<(u64, u64)> {
        match self {
            Watch::Ours { store, pool, .. } => {
                let d = store.depths(pool).await?;
                Ok((d.queued, d.processing))
            }
            Watch::Port { port, workers, .. } => port.depths(workers).await,
        }
    }

    /// The ids `worker` holds.
    pub async fn held(&mut self, worker: &str) -> Result<Vec<String>> {
        match self {
            Watch::Ours { keys, admin, .. } => Ok(admin.zrange(keys.held(worker), 0, -1).await?),
            Watch::Port { port, .. } => port.held(worker).await,
        }
    }

    /// What a SIGKILL of `worker` would strand: a claim worker's held
    /// tickets; for a pool leader (`leader`), which reads its pool and holds
    /// nothing, the tickets waiting in the pool while it leads (none when
    /// another worker leads or none does).
    pub async fn strands(&mut self, worker: &str, leader: bool) -> Result<Vec<String>> {
        match self {
            Watch::Ours { keys, admin, .. } if leader => {
                let holder: Option<String> = admin.get(&keys.leader).await?;
                if holder.as_deref().and_then(lock_holder) != Some(worker) {
                    return Ok(Vec::new());
                }
                Ok(admin.zrange(&keys.queue, 0, -1).await?)
            }
            _ => self.held(worker).await,
        }
    }

    /// Whether what a SIGKILL of `worker` stranded is back: a claim worker's
    /// held tickets in the queue (or matched); a pool leader's pool led by
    /// another worker, which has taken over its queue.
    pub async fn back_from(&mut self, worker: &str, leader: bool) -> Result<bool> {
        match self {
            Watch::Ours { keys, admin, .. } if leader => {
                let holder: Option<String> = admin.get(&keys.leader).await?;
                let other = holder.as_deref().and_then(lock_holder);
                let unread: usize = admin.llen(&keys.arrivals).await?;
                Ok(other.is_some_and(|w| w != worker) && unread == 0)
            }
            _ => Ok(self.held(worker).await?.is_empty()),
        }
    }

    /// Matches formed so far (ours: in the pool; the port: since the watch began).
    pub async fn formed(&mut self) -> Result<usize> {
        match self {
            Watch::Ours { keys, admin, .. } => Ok(admin.hlen(&keys.matches).await?),
            Watch::Port { formed, .. } => Ok(formed.load(Ordering::Relaxed)),
        }
    }

    /// Every match's ticket ids, and the ids waiting in the queue.
    pub async fn settled(&mut self) -> Result<(Vec<Vec<String>>, HashSet<String>)> {
        match self {
            Watch::Ours { keys, admin, .. } => {
                let mut matches = Vec::new();
                for json in admin.hvals::<_, Vec<String>>(&keys.matches).await? {
                    let m: Match = serde_json::from_str(&json)?;
                    matches.push(
                        m.tickets
                            .iter()
                            .map(|t| t.ticket_id.as_str().to_string())
                            .collect(),
                    );
                }
                let queued: Vec<String> = admin.zrange(&keys.queue, 0, -1).await?;
                Ok((matches, queued.into_iter().collect()))
            }
            Watch::Port { port, .. } => Ok((port.matches().await?, port.queued().await?)),
        }
    }
}

/// The worker a pool leader lock's token names (`WORKER.RANDOM`, see
/// `mm_store::TokenLock::held_by`).
fn lock_holder(token: &str) -> Option<&str> {
    token.rsplit_once('.').map(|(worker, _)| worker)
}

/// The ids the benches give their `n` worker processes.
pub(crate) fn worker_ids(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("bench-w{i}")).collect()
}

async fn admin(url: &str) -> Result<MultiplexedConnection> {
    Ok(redis::Client::open(url)?
        .get_multiplexed_async_connection()
        .await?)
}

/// A bench ticket as the port's ingress would enqueue it.
pub(crate) fn port_ticket(t: &Ticket) -> PortTicket {
    PortTicket {
        id: t.id.as_str().to_string(),
        player_id: t.players[0].as_str().to_string(),
        mmr: t.rating,
        region: t.regions[0].region.clone(),
        created_at: t.enqueued_at,
    }
}

/// A worker of the port: `matchmaker bench seed000-worker`.
pub(crate) fn port_worker(
    url: &str,
    pool: &Pool,
    id: &str,
    consumers: usize,
    lock_ttl: Duration,
    heartbeat: Duration,
    poll: Poll,
) -> Result<Command> {
    let mut cmd = Command::new(std::env::current_exe()?);
    let poll = poll.to_possible_value().expect("no variant is skipped");
    cmd.args(["bench", "seed000-worker", "--redis-url", url])
        .args(["--poll", poll.get_name()])
        .args([
            "--poll-interval",
            &humantime::format_duration(seed000::POLL_INTERVAL).to_string(),
        ])
        .args(["--region", &pool.region, "--worker-id", id])
        .args(["--worker-pool-size", &consumers.to_string()])
        .args([
            "--lock-ttl",
            &humantime::format_duration(lock_ttl).to_string(),
        ])
        .args([
            "--heartbeat-interval",
            &humantime::format_duration(heartbeat).to_string(),
        ]);
    Ok(cmd)
}

/// The port's supervisor: `matchmaker bench seed000-supervisor`.
pub(crate) fn port_supervisor(url: &str, lock_ttl: Duration, every: Duration) -> Result<Command> {
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.args(["bench", "seed000-supervisor", "--redis-url", url])
        .args([
            "--lock-ttl",
            &humantime::format_duration(lock_ttl).to_string(),
        ])
        .args([
            "--supervise-interval",
            &humantime::format_duration(every).to_string(),
        ]);
    Ok(cmd)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mm_domain::{Event, EventEnvelope, MatchId, MatchTicket, PlayerId, TicketId};

    fn envelope(player: &str, event: Event) -> String {
        serde_json::to_string(&EventEnvelope {
            player: PlayerId::new(player).unwrap(),
            event,
        })
        .unwrap()
    }

    #[test]
    fn only_a_match_event_of_the_runs_players_counts_as_told() {
        let ticket = TicketId::new("t-1").unwrap();
        let searching = Event::Searching {
            ticket_id: ticket.clone(),
        };
        assert_eq!(
            told_of_match(&envelope("bench-ab12-1", searching.clone()), "bench-ab12-"),
            0
        );
        let m = Match {
            id: MatchId::new("m-1").unwrap(),
            mode: "bench".into(),
            region: "eu".into(),
            tickets: Vec::new(),
            created_at: 1,
            lifecycle: Default::default(),
            decided: Default::default(),
        };
        let done = |p| {
            envelope(
                p,
                Event::Completed {
                    ticket_id: ticket.clone(),
                    match_id: MatchId::new("m-1").unwrap(),
                    matched: m.clone(),
                    result: None,
                },
            )
        };
        assert_eq!(told_of_match(&done("bench-ab12-1"), "bench-ab12-"), 1);
        assert_eq!(told_of_match(&done("bench-cd34-1"), "bench-ab12-"), 0);
        assert_eq!(told_of_match("not json", "bench-ab12-"), 0);
        // A message of several envelopes counts each.
        let batch = format!(
            "[{},{},{},{}]",
            done("bench-ab12-1"),
            done("bench-ab12-2"),
            done("bench-cd34-1"),
            envelope("bench-ab12-3", searching)
        );
        assert_eq!(told_of_match(&batch, "bench-ab12-"), 2);

        // A committed match stands for its players' first events: each player
        // of the run counts, in a message with other events.
        let ticket_of = |id: &str, players: &[&str]| MatchTicket {
            ticket_id: TicketId::new(id).unwrap(),
            players: players.iter().map(|p| PlayerId::new(*p).unwrap()).collect(),
            rating: 1500.0,
            enqueued_at: 0,
            team: 0,
            skills: Vec::new(),
            attributes: Default::default(),
            player_attributes: Vec::new(),
        };
        let formed = Match {
            tickets: vec![
                ticket_of("t-2", &["bench-ab12-4", "bench-ab12-5"]),
                ticket_of("t-3", &["bench-cd34-2"]),
            ],
            ..m.clone()
        };
        let mut message = mm_store::events::Messages::default();
        message.formed(&formed, &Default::default()).unwrap();
        message
            .event(&serde_json::from_str(&done("bench-ab12-6")).unwrap())
            .unwrap();
        let message = message.finish();
        assert_eq!(told_of_match(&message[0], "bench-ab12-"), 3);
    }
}
