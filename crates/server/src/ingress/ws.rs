//! `GET /v1/ws`: pushes the authenticated player's events as JSON text frames.
//! The first frame is `{"type": "session.ready", "player_id": ...}`, sent once the
//! subscription is live, so a client knows no later event will be missed.

use super::{ApiError, AppState, Player};
use axum::extract::State;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade, close_code};
use axum::response::Response;
use mm_domain::{Event, PlayerId};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How often the server pings an idle socket.
const PING_EVERY: Duration = Duration::from_secs(20);

pub async fn upgrade(
    State(state): State<AppState>,
    Player(player): Player,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    let upgrade =
        upgrade.map_err(|r| ApiError::new(r.status(), "websocket_required", r.body_text()))?;
    let events = state.store.subscribe(&player).await?;
    let shutdown = state.shutdown.clone();
    let sockets = state.sockets.clone();
    Ok(upgrade.on_upgrade(move |socket| async move {
        sockets.spawn(session(socket, player, events, shutdown));
    }))
}

async fn session(
    mut socket: WebSocket,
    player: PlayerId,
    mut events: mpsc::Receiver<Event>,
    shutdown: CancellationToken,
) {
    let hello = serde_json::json!({"type": "session.ready", "player_id": player});
    if socket
        .send(Message::Text(hello.to_string().into()))
        .await
        .is_err()
    {
        return;
    }
    let mut ping = tokio::time::interval(PING_EVERY);
    ping.tick().await;
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => {
                let frame = CloseFrame { code: close_code::AWAY, reason: "server shutting down".into() };
                let _ = socket.send(Message::Close(Some(frame))).await;
                return;
            }
            event = events.recv() => {
                let Some(event) = event else { return };
                let Ok(text) = serde_json::to_string(&event) else { continue };
                if socket.send(Message::Text(text.into())).await.is_err() {
                    return;
                }
            }
            incoming = socket.recv() => match incoming {
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return,
                Some(Ok(Message::Text(_))) | Some(Ok(Message::Binary(_))) => {
                    let reply = serde_json::json!({"type": "error", "error": {"code": "not_supported", "message": "this socket only pushes events"}});
                    if socket.send(Message::Text(reply.to_string().into())).await.is_err() {
                        return;
                    }
                }
                Some(Ok(_)) => {}
            },
            _ = ping.tick() => {
                if socket.send(Message::Ping(Vec::new().into())).await.is_err() {
                    return;
                }
            }
        }
    }
}
