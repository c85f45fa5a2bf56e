//! [`Online`] on Redis: a hash per player (`mm:{u:PLAYER}:on`), ingress id ->
//! `o` while it holds a socket of theirs, else when their last one there
//! closed (ms). It expires [`OPEN_KEPT`] after a socket was noted open
//! (`PEXPIREAT ... GT`, so a note never shortens another's; `NX` for a new
//! key), and [`ONLINE_KEPT`] after a close that leaves no socket noted open
//! (`online_close.lua`). Ingresses
//! note themselves in one sorted set ([`keys::ONLINE_INGRESSES`]), id -> until
//! when it lives: one write per ingress and renewal, whatever its sockets.

use super::RedisStore;
use crate::keys::{self, player_key, player_suffix};
use crate::{ONLINE_KEPT, OPEN_KEPT, Online, StoreError};
use async_trait::async_trait;
use mm_domain::{Millis, PlayerId};
use std::collections::HashMap;

/// The value of a socket noted open.
const OPEN: &str = "o";

#[async_trait]
impl Online for RedisStore {
    async fn hold(
        &self,
        holder: &str,
        player: &PlayerId,
        open: bool,
        now: Millis,
    ) -> Result<(), StoreError> {
        let key = player_key(player, player_suffix::ONLINE);
        if !open {
            let _: i64 = self
                .scripts
                .online_close
                .key(&key)
                .arg(holder)
                .arg(now)
                .arg(now + ONLINE_KEPT.as_millis() as Millis)
                .invoke_async(&mut self.conn())
                .await?;
            return Ok(());
        }
        let expire_at = now + OPEN_KEPT.as_millis() as Millis;
        let mut pipe = redis::pipe();
        pipe.hset(&key, holder, OPEN).ignore();
        pipe.cmd("PEXPIREAT")
            .arg(&key)
            .arg(expire_at)
            .arg("GT")
            .ignore();
        // A new key has no expiry for GT to compare with.
        pipe.cmd("PEXPIREAT")
            .arg(&key)
            .arg(expire_at)
            .arg("NX")
            .ignore();
        let () = pipe.query_async(&mut self.conn()).await?;
        Ok(())
    }

    async fn alive(&self, holder: &str, until: Millis) -> Result<(), StoreError> {
        let forgotten = until.saturating_sub(2 * ONLINE_KEPT.as_millis() as Millis);
        let mut pipe = redis::pipe();
        pipe.zadd(keys::ONLINE_INGRESSES, holder, until).ignore();
        pipe.cmd("ZREMRANGEBYSCORE")
            .arg(keys::ONLINE_INGRESSES)
            .arg("-inf")
            .arg(format!("({forgotten}"))
            .ignore();
        let () = pipe.query_async(&mut self.conn()).await?;
        Ok(())
    }

    async fn last_seen(&self, player: &PlayerId) -> Result<Option<Millis>, StoreError> {
        let notes: HashMap<String, String> = redis::cmd("HGETALL")
            .arg(player_key(player, player_suffix::ONLINE))
            .query_async(&mut self.conn())
            .await?;
        let mut latest: Option<Millis> = None;
        let mut open_on = Vec::new();
        for (holder, note) in &notes {
            if note == OPEN {
                open_on.push(holder.as_str());
            } else if let Ok(at) = note.parse::<Millis>() {
                latest = latest.max(Some(at));
            }
        }
        if !open_on.is_empty() {
            let lives: Vec<Option<f64>> = redis::cmd("ZMSCORE")
                .arg(keys::ONLINE_INGRESSES)
                .arg(&open_on)
                .query_async(&mut self.conn())
                .await?;
            for until in lives.into_iter().flatten() {
                latest = latest.max(Some(until as Millis));
            }
        }
        Ok(latest)
    }
}
