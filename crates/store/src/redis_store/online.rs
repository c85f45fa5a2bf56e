//! [`Online`] on Redis: a hash per player (`mm:{u:PLAYER}:on`), ingress id ->
//! until when it holds a socket, expiring [`ONLINE_KEPT`] after the latest
//! note (`PEXPIREAT ... GT`: a note never shortens another ingress's). A note
//! of many players is one pipeline on a single node and one per slot on a
//! cluster, sent together.

use super::RedisStore;
use super::conn::{Batches, Conn};
use crate::keys::{player_key, player_suffix};
use crate::{ONLINE_KEPT, Online, StoreError};
use async_trait::async_trait;
use mm_domain::{Millis, PlayerId};

/// Players noted per round trip.
const STEP: usize = 500;

#[async_trait]
impl Online for RedisStore {
    async fn hold(
        &self,
        holder: &str,
        players: &[PlayerId],
        until: Millis,
    ) -> Result<(), StoreError> {
        let expire_at = until + ONLINE_KEPT.as_millis() as Millis;
        let conn = self.conn();
        for step in players.chunks(STEP) {
            let mut batches = Batches::default();
            let mut single = redis::pipe();
            for p in step {
                let key = player_key(p, player_suffix::ONLINE);
                let pipe = match conn {
                    Conn::Single(_) => &mut single,
                    Conn::Cluster(_) => batches.at(&key),
                };
                pipe.hset(&key, holder, until).ignore();
                pipe.cmd("PEXPIREAT")
                    .arg(&key)
                    .arg(expire_at)
                    .arg("GT")
                    .ignore();
                // A new key has no expiry for GT to compare with: set it.
                pipe.cmd("PEXPIREAT")
                    .arg(&key)
                    .arg(expire_at)
                    .arg("NX")
                    .ignore();
            }
            match conn {
                Conn::Single(_) => {
                    let () = single.query_async(&mut conn.clone()).await?;
                }
                Conn::Cluster(_) => batches.run(&conn).await?,
            }
        }
        Ok(())
    }

    async fn last_seen(&self, player: &PlayerId) -> Result<Option<Millis>, StoreError> {
        let notes: Vec<String> = redis::cmd("HVALS")
            .arg(player_key(player, player_suffix::ONLINE))
            .query_async(&mut self.conn())
            .await?;
        Ok(notes.iter().filter_map(|n| n.parse::<Millis>().ok()).max())
    }
}
