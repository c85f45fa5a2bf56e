//! The seed-000 port as the latency scenario's players reach it: they enqueue
//! straight into its Redis and hear of their match on its Pub/Sub channel (no
//! HTTP or WebSocket hop, which flatters it).

use super::{MATCH_TIMEOUT, PlayerCtx, Timings};
use crate::seed000::{MATCH_CHANNEL, Port, PortMatch, PortTicket};
use anyhow::Result;
use futures_util::StreamExt;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::oneshot;

/// A match heard on the port's channel: when, wall-clock ms, and the match.
type Heard = (Instant, u64, PortMatch);

/// The seed-000 port as its players reach it: a connection to enqueue on, and
/// one subscriber that hands each published match to the tickets waiting for it
/// (as the seed's ingress forwards matches to sockets).
#[derive(Clone)]
pub(super) struct PortLink {
    port: Port,
    waiters: Arc<std::sync::Mutex<HashMap<String, oneshot::Sender<Heard>>>>,
    _listener: Arc<AbortOnDrop>,
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl PortLink {
    pub(super) async fn connect(url: &str, region: &str) -> Result<Self> {
        let mut sub = redis::Client::open(url)?.get_async_pubsub().await?;
        sub.subscribe(MATCH_CHANNEL).await?;
        let waiters: Arc<std::sync::Mutex<HashMap<String, oneshot::Sender<Heard>>>> =
            Arc::default();
        let listener = {
            let waiters = waiters.clone();
            tokio::spawn(async move {
                let mut messages = sub.on_message();
                while let Some(msg) = messages.next().await {
                    let (at, at_ms) = (Instant::now(), mm_domain::now_ms());
                    let Ok(m) = msg
                        .get_payload::<String>()
                        .map_err(anyhow::Error::from)
                        .and_then(|p| Ok(serde_json::from_str::<PortMatch>(&p)?))
                    else {
                        continue;
                    };
                    let mut w = waiters.lock().expect("not poisoned");
                    for t in &m.tickets {
                        if let Some(tx) = w.remove(t) {
                            let _ = tx.send((at, at_ms, m.clone()));
                        }
                    }
                }
            })
        };
        Ok(Self {
            port: Port::connect(url, region).await?,
            waiters,
            _listener: Arc::new(AbortOnDrop(listener)),
        })
    }
}

/// One ticket of the seed-000 port: enqueued, then waited for on its channel.
pub(super) async fn one_port_ticket(
    ctx: &PlayerCtx,
    link: &PortLink,
    intended: Instant,
    k: u32,
) -> Result<Timings, String> {
    let id = format!("{}-{k}", ctx.player);
    let (tx, rx) = oneshot::channel();
    // Listening before the ticket exists, so no match can be missed.
    link.waiters
        .lock()
        .expect("not poisoned")
        .insert(id.clone(), tx);
    let ticket = PortTicket {
        id: id.clone(),
        player_id: ctx.player.clone(),
        mmr: ctx.rating.unwrap_or(1500.0),
        region: ctx.region.clone(),
        created_at: mm_domain::now_ms(),
    };
    let deadline = tokio::time::Instant::from(intended + MATCH_TIMEOUT);
    let mut port = link.port.clone();
    let forget = |e: String| {
        link.waiters.lock().expect("not poisoned").remove(&id);
        Err(e)
    };
    tokio::select! {
        r = port.enqueue(&ticket) => if let Err(e) = r { return forget(format!("enqueue failed: {e}")) },
        _ = tokio::time::sleep_until(deadline) => return forget("request timed out".into()),
        _ = ctx.stop.notified() => return forget("stopped before the match".into()),
    }
    let created = Instant::now();
    let (at, at_ms, m) = tokio::select! {
        r = rx => r.map_err(|_| "the listener stopped".to_string())?,
        _ = tokio::time::sleep_until(deadline) => return forget("no match within 30 s".into()),
        _ = ctx.stop.notified() => return forget("stopped before the match".into()),
    };
    Ok(Timings {
        create: created - intended,
        matched: at.saturating_duration_since(intended),
        match_id: m.id,
        after_formation_ms: at_ms.saturating_sub(m.created_at),
    })
}
