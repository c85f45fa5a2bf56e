//! `GET /v1/ws`: pushes the authenticated player's events as JSON text frames.
//! The first frame is `{"type": "session.ready", "player_id": ...}`, sent once the
//! subscription is live, so a client knows no later event will be missed.
//!
//! The client may answer a ready check on the socket: `{"type": "match.accept",
//! "match_id": ...}` or `match.decline`; the reply is `{"type": "match.answer",
//! "match_id", "status"}` or `{"type": "error", ...}`. While the player has a ready
//! check running, the socket closing starts the player's disconnect grace (a new
//! socket within it cancels it; past it, it counts as a decline). In a mode with
//! `cancel_offline_after`, the player's last socket closing starts that grace for
//! their waiting tickets ([`crate::offline`]).
//!
//! Messages count against the `messages` rate limit; over it, the socket gets
//! `{"type": "error", "error": {"code": "rate_limited", ...}}` and is closed with
//! 1008 (policy violation).

use super::Code;
use super::limits::{self, Class, ClientAddr};
use super::{ApiError, AppState, Player, matches};
use crate::saga;
use axum::Extension;
use axum::extract::State;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade, close_code};
use axum::response::Response;
use mm_domain::{Answer, MatchId, MatchStatus, PlayerId, now_ms};
use mm_store::Store;
use mm_telemetry::names;
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often the server pings an idle socket.
const PING_EVERY: Duration = Duration::from_secs(20);

/// Read buffer per socket. Clients send only small JSON answers (a larger frame is
/// read in several chunks). The library's default (128 KiB) costs that much memory
/// per connected player, and tungstenite zero-fills the whole buffer on every read
/// poll (snapview/tungstenite-rs#547): at 1,000 sockets that memset was the
/// ingress's largest CPU cost while pushing. 1 KiB rather than 4 KiB saves 3 KiB per
/// socket: 123 instead of 153 MiB at 10,000 idle sockets (BENCHMARKS.md).
const READ_BUFFER: usize = 1024;
/// Largest message a client may send; anything bigger closes the socket.
const MAX_MESSAGE: usize = 64 * 1024;

#[utoipa::path(get, path = "/v1/ws", tag = "events",
    params(("token" = Option<String>, Query, description = "The bearer token, for clients that cannot set headers")),
    responses(
        (status = 101, description = "Switching to a WebSocket of the caller's events (`Event` schema)"),
        (status = 426, description = "Not a WebSocket upgrade", body = crate::ingress::openapi::ErrorBody),
        crate::ingress::openapi::Errors),
    security(("bearer" = [])))]
pub async fn upgrade(
    State(state): State<AppState>,
    Player(player): Player,
    addr: Option<Extension<ClientAddr>>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    let upgrade = upgrade
        .map_err(|r| ApiError::new(r.status(), Code::WEBSOCKET_REQUIRED, r.body_text()))?
        .read_buffer_size(READ_BUFFER)
        .max_message_size(MAX_MESSAGE)
        .max_frame_size(MAX_MESSAGE);
    let addr = addr.and_then(|Extension(ClientAddr(a))| a);
    let events = state.store.subscribe(&player).await?;
    let sockets = state.sockets.clone();
    let store = state.store.clone();
    // Every connected player holds this task for as long as the socket is open,
    // and a task is as big as the largest state its future can be in: the
    // futures awaited once in a while (presence, a client's answer, its rate
    // limit) are boxed, so they take memory only while they run (2.8 -> 2.0 KB a
    // task; 10,000 idle sockets 90 -> 82 MiB, BENCHMARKS.md).
    Ok(upgrade.on_upgrade(move |socket| async move {
        sockets.spawn(async move {
            Box::pin(presence(&store, &player, true)).await;
            Box::pin(state.online.opened(&*store, &player)).await;
            let open = metrics::gauge!(names::WS_CONNECTIONS);
            open.increment(1.0);
            let closed_by_client = session(socket, &state, &player, addr, events).await;
            open.decrement(1.0);
            if closed_by_client {
                Box::pin(presence(&store, &player, false)).await;
                // Their last socket here: their waiting tickets end if they
                // stay away (modes with `cancel_offline_after`). At shutdown
                // the notes run out by themselves while the players reconnect
                // elsewhere.
                Box::pin(state.online.closed(&*store, &state.catalog, &player)).await;
            }
        });
    }))
}

/// A message a client may send.
#[derive(Deserialize)]
#[serde(tag = "type", deny_unknown_fields)]
enum Incoming {
    #[serde(rename = "match.accept")]
    Accept { match_id: String },
    #[serde(rename = "match.decline")]
    Decline { match_id: String },
}

/// Tells the store the player's connection came or went, if they have a ready
/// check running; a drop also wakes the saga when the grace runs out.
async fn presence(store: &Arc<dyn Store>, player: &PlayerId, connected: bool) {
    let current = match store.current_match(player).await {
        Ok(Some(c)) => c,
        Ok(None) => return,
        Err(e) => {
            warn_store!(e, "could not read the player's match");
            return;
        }
    };
    let (pool, id) = current;
    let record = match store.match_record(&pool, &id).await {
        Ok(Some((r, _))) if r.status == MatchStatus::RequiresAcceptance => r,
        _ => return,
    };
    if let Err(e) = store.presence(&pool, &id, player, connected).await {
        warn_store!(e, "could not record the player's presence");
        return;
    }
    if !connected {
        let grace = record.matched.lifecycle.disconnect_grace_ms;
        let store = store.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(grace + 50)).await;
            if let Err(e) = saga::advance(&*store, &pool, &id).await {
                warn_store!(e, "saga step failed; the supervisor will retry");
            }
        });
    }
}

/// Handles one text frame from the client; returns the reply.
async fn handle(store: &Arc<dyn Store>, player: &PlayerId, text: &str) -> serde_json::Value {
    let error = |code: Code, message: String| serde_json::json!({"type": "error", "error": {"code": code.as_str(), "message": message}});
    let msg: Incoming = match serde_json::from_str(text) {
        Ok(m) => m,
        Err(e) => {
            return error(
                Code::INVALID_MESSAGE,
                format!(
                    "expected {{\"type\": \"match.accept\" | \"match.decline\", \"match_id\": ...}}: {e}"
                ),
            );
        }
    };
    let (raw, answer) = match msg {
        Incoming::Accept { match_id } => (match_id, Answer::Accepted),
        Incoming::Decline { match_id } => (match_id, Answer::Declined),
    };
    let Ok(id) = MatchId::new(raw) else {
        return error(Code::MATCH_NOT_FOUND, "no such match".into());
    };
    match matches::respond(store, player, &id, answer).await {
        Ok(record) => serde_json::json!({
            "type": "match.answer",
            "match_id": id,
            "status": record.status,
            "at": now_ms(),
        }),
        Err(e) => error(e.code, e.message),
    }
}

/// The `type` of a serialized event (serde writes an enum's tag first).
fn event_type(json: &str) -> String {
    json.strip_prefix(r#"{"type":""#)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or("unknown")
        .to_owned()
}

/// Runs the socket until it closes. Returns true if the client went away (not a
/// server shutdown).
async fn session(
    mut socket: WebSocket,
    state: &AppState,
    player: &PlayerId,
    addr: Option<std::net::IpAddr>,
    mut events: mm_store::Events,
) -> bool {
    let store = &state.store;
    let shutdown: &CancellationToken = &state.shutdown;
    let hello = serde_json::json!({"type": "session.ready", "player_id": player});
    if socket
        .send(Message::Text(hello.to_string().into()))
        .await
        .is_err()
    {
        return true;
    }
    let mut ping = tokio::time::interval(PING_EVERY);
    ping.tick().await;
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => {
                let frame = CloseFrame { code: close_code::AWAY, reason: "server shutting down".into() };
                let _ = socket.send(Message::Close(Some(frame))).await;
                return false;
            }
            event = events.recv() => {
                let Some(event) = event else { return true };
                let Ok(text) = serde_json::to_string(&event) else { continue };
                metrics::counter!(names::WS_EVENTS, "event" => event_type(&text)).increment(1);
                if socket.send(Message::Text(text.into())).await.is_err() {
                    return true;
                }
            }
            incoming = socket.recv() => match incoming {
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return true,
                Some(Ok(msg @ (Message::Text(_) | Message::Binary(_)))) => {
                    if let Err(e) = Box::pin(limits::check(state, Class::Messages, Some(player), addr)).await {
                        let wait = e.details.as_ref().and_then(|d| d.get("retry_after_ms")).cloned();
                        let reply = serde_json::json!({"type": "error", "error": {"code": e.code.as_str(), "message": e.message, "retry_after_ms": wait}});
                        let _ = socket.send(Message::Text(reply.to_string().into())).await;
                        let frame = CloseFrame { code: close_code::POLICY, reason: "rate limited".into() };
                        let _ = socket.send(Message::Close(Some(frame))).await;
                        return true;
                    }
                    let reply = match msg {
                        Message::Text(text) => Box::pin(handle(store, player, text.as_str())).await,
                        _ => serde_json::json!({"type": "error", "error": {"code": Code::NOT_SUPPORTED.as_str(), "message": "send JSON text frames"}}),
                    };
                    if socket.send(Message::Text(reply.to_string().into())).await.is_err() {
                        return true;
                    }
                }
                Some(Ok(_)) => {}
            },
            _ = ping.tick() => {
                if socket.send(Message::Ping(Vec::new().into())).await.is_err() {
                    return true;
                }
            }
        }
    }
}
