//! The process's two Pub/Sub subscriptions on Redis: player events (for this
//! process's sockets) and wake-ups (for its workers). Each is made once, when
//! first asked for, and fed until the process ends, resubscribing after a lost
//! connection (and waking every worker then, as wake-ups may have been missed).

use super::{RedisStore, events};
use crate::keys::{EVENTS_CHANNEL, WAKE_CHANNEL};
use crate::{Hub, StoreError};
use futures_util::StreamExt;
use std::sync::Arc;
use std::time::Duration;

impl RedisStore {
    /// Subscribes once to `feed`'s channel and feeds it until the process ends,
    /// resubscribing after a lost connection. Events and wake-ups have a
    /// subscription each: a worker wants only the wake-ups, an ingress mostly the
    /// events.
    pub(super) async fn ensure_feed(&self, feed: Feed) -> Result<(), StoreError> {
        let cell = match feed {
            Feed::Events(_) => &self.events_feed,
            Feed::Wakes(_) => &self.wakes_feed,
        };
        cell.get_or_try_init(|| async {
            let mut pubsub = self.client.get_async_pubsub().await?;
            pubsub.subscribe(feed.channel()).await?;
            tokio::spawn(listen(self.client.clone(), pubsub, feed));
            Ok::<(), StoreError>(())
        })
        .await?;
        Ok(())
    }
}

/// What a subscription feeds.
pub(super) enum Feed {
    /// Player events, to this process's sockets.
    Events(Arc<Hub>),
    /// Wake-ups, to this process's workers.
    Wakes(Arc<crate::Wakes>),
}

impl Feed {
    fn channel(&self) -> &'static str {
        match self {
            Feed::Events(_) => EVENTS_CHANNEL,
            Feed::Wakes(_) => WAKE_CHANNEL,
        }
    }

    fn deliver(&self, payload: &str) {
        match self {
            Feed::Events(hub) => match events::decode(payload) {
                Ok(elements) => {
                    for element in elements {
                        match element {
                            // A match none of whose players is connected here is not
                            // made into events.
                            events::Element::Formed { matched, .. }
                                if !matched.players().any(|p| hub.listening(p)) => {}
                            element => element.events().into_iter().for_each(|e| hub.dispatch(e)),
                        }
                    }
                }
                Err(e) => tracing::warn!(error = %e, "unreadable event on {EVENTS_CHANNEL}"),
            },
            Feed::Wakes(wakes) => wakes.wake(payload),
        }
    }

    /// Messages may have been missed: tickets may have arrived unannounced, so
    /// every worker looks (their periodic poll covers the rest). Missed events are
    /// notifications; a client reads its state again on reconnecting.
    fn gap(&self) {
        if let Feed::Wakes(wakes) = self {
            wakes.wake_all();
        }
    }
}

async fn listen(client: redis::Client, pubsub: redis::aio::PubSub, feed: Feed) {
    let channel = feed.channel();
    let mut stream = pubsub.into_on_message();
    loop {
        while let Some(msg) = stream.next().await {
            if let Ok(payload) = msg.get_payload::<String>() {
                feed.deliver(&payload);
            }
        }
        tracing::info!(channel, "lost a subscription; resubscribing");
        feed.gap();
        let mut tries = 0u32;
        stream = loop {
            tokio::time::sleep(Duration::from_millis(500)).await;
            tries += 1;
            let attempt = async {
                let mut ps = client.get_async_pubsub().await?;
                ps.subscribe(channel).await?;
                Ok::<_, redis::RedisError>(ps)
            };
            match attempt.await {
                Ok(ps) => {
                    tracing::info!(channel, tries, "subscription restored");
                    feed.gap();
                    break ps.into_on_message();
                }
                // An unreachable store is the outage's to log, once.
                Err(e) if crate::outage::unreachable(&e) => {
                    crate::outage::failed(&e);
                    tracing::debug!(error = %e, tries, "resubscribe failed");
                }
                Err(e) if tries == 1 => {
                    tracing::warn!(error = %e, channel, "resubscribe failed; retrying every 500ms")
                }
                Err(e) => tracing::debug!(error = %e, tries, "resubscribe failed"),
            }
        };
    }
}
