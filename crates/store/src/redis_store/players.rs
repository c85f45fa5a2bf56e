//! A player's keys around a ticket: making a ticket the player's live one
//! (`activate.lua`, with the ban, in-match and live-ticket checks), letting it
//! go, and reading or clearing the player's in-match mark.

use super::*;

impl RedisStore {
    /// Makes `ticket` the player's live ticket for its mode (compare-and-set; a
    /// finished ticket may be replaced), unless the player is banned, in a match
    /// that is not over, or has a live ticket for the mode.
    /// Each retry follows a ticket or match that finished, so a few tries always
    /// suffice unless the player is racing themselves.
    /// With `charge` (a limiter of the player's), the first try is charged to it.
    /// Done, it gives the players this one blocked (read in the same call).
    pub(super) async fn activate_player(
        &self,
        player: &PlayerId,
        ticket: &Ticket,
        pools: &str,
        mut charge: Option<&crate::RateCheck>,
    ) -> Result<Activation, StoreError> {
        let pk = PlayerKeys::new(player);
        let mut expected = String::new();
        for _ in 0..5 {
            let mut call = self.scripts.activate.key(&pk.active);
            call.key(&pk.tickets)
                .key(&pk.ban)
                .key(&pk.in_match)
                .key(&pk.marks)
                .key(&pk.blocks)
                .arg(ticket.id.as_str())
                .arg(&ticket.mode)
                .arg(pools)
                .arg(&expected)
                .arg(PLAYER_TTL_SECS)
                .arg(checked_version(ticket, player))
                .arg(crate::HISTORY_LEN);
            if let Some((key, rate)) = charge.take() {
                call.key(crate::keys::limiter(key).0)
                    .arg(rate.interval().as_micros() as u64)
                    .arg(rate.count.max(1));
            }
            // Acknowledged only once replicated, when replicas are waited for.
            let current: String = self.invoke_durable(&call).await?;
            if let Some(done) = current.strip_prefix('=') {
                let (mark, apart) = done.split_once('|').unwrap_or((done, ""));
                let apart = apart
                    .split(',')
                    .filter(|p| !p.is_empty())
                    .map(|p| PlayerId::new(p).map_err(|e| StoreError::Corrupt(e.to_string())))
                    .collect::<Result<_, _>>()?;
                return Ok(Activation::Done(mark.parse().unwrap_or(0), apart));
            }
            if let Some(wait) = current.strip_prefix("!rate|") {
                let us = wait.parse().unwrap_or(1);
                return Ok(Activation::Limited(std::time::Duration::from_micros(us)));
            }
            if current.starts_with("!stale|") {
                return Ok(Activation::Stale);
            }
            if let Some(until) = current.strip_prefix("!ban|") {
                return Ok(Activation::Banned(until.parse().unwrap_or_default()));
            }
            if let Some(mark) = current.strip_prefix("!match|") {
                match self.ongoing(mark).await? {
                    Some(mid) => return Ok(Activation::InMatch(mid)),
                    None => {
                        // The match is over and its unwind already ran (or the mark
                        // was set late): the mark is stale.
                        self.clear_mark(player, mark).await?;
                        continue;
                    }
                }
            }
            let current = TicketId::new(current).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            match self.ticket(player, &current).await? {
                Some(v) if !v.status.is_terminal() => return Ok(Activation::Busy(current)),
                _ => expected = current.to_string(),
            }
        }
        Ok(Activation::Busy(
            TicketId::new(expected).map_err(|e| StoreError::Corrupt(e.to_string()))?,
        ))
    }

    /// Gives back the activations of `ticket` by `players`.
    pub(super) async fn deactivate_players(
        &self,
        ticket: &Ticket,
        players: &[PlayerId],
    ) -> Result<(), StoreError> {
        for done in players {
            let pk = PlayerKeys::new(done);
            let _: i64 = self
                .scripts
                .deactivate
                .key(&pk.active)
                .key(&pk.tickets)
                .arg(ticket.id.as_str())
                .arg(&ticket.mode)
                .invoke_async(&mut self.conn())
                .await?;
        }
        Ok(())
    }

    /// The match of an in-a-match mark `MATCH|pool`, if it is not over.
    pub(super) async fn ongoing(&self, mark: &str) -> Result<Option<MatchId>, StoreError> {
        let Some((mid, pool)) = mark.split_once('|') else {
            return Ok(None);
        };
        let (Ok(mid), Some(pool)) = (MatchId::new(mid), Pool::parse(pool)) else {
            return Ok(None);
        };
        let st: Option<String> = self
            .conn()
            .hget(PoolKeys::new(&pool).life(mid.as_str()), "st")
            .await?;
        let over = st
            .as_deref()
            .and_then(MatchStatus::parse)
            .is_none_or(MatchStatus::is_terminal);
        Ok((!over).then_some(mid))
    }

    /// Drops `player`'s in-a-match mark if it is still `mark`.
    pub(super) async fn clear_mark(&self, player: &PlayerId, mark: &str) -> Result<(), StoreError> {
        let pk = PlayerKeys::new(player);
        let _: i64 = self
            .scripts
            .unwind_player
            .key(&pk.in_match)
            .key(&pk.ban)
            .key(&pk.active)
            .arg(mark)
            .arg("")
            .arg(0)
            .arg("")
            .arg("")
            .arg(PLAYER_TTL_SECS)
            .invoke_async(&mut self.conn())
            .await?;
        Ok(())
    }
}
