//! A ticket read back on Redis: its entry in each pool it waits in (data,
//! state, finish time, one round trip a pool), combined into what the API
//! shows of it ([`crate::api::combine`], [`crate::api::view`]).

use super::RedisStore;
use crate::StoreError;
use crate::api::{Entry, State, combine, moved_region, view};
use crate::keys::{PlayerKeys, PoolKeys};
use futures_util::future::try_join_all;
use mm_domain::{Millis, PlayerId, Pool, Ticket, TicketId, TicketView};
use redis::AsyncCommands;

/// What [`RedisStore::pool_state`] reads of one entry.
struct Stored {
    ticket: Option<Ticket>,
    entry: Entry,
    now: Millis,
}

impl RedisStore {
    /// `player`'s ticket `id` as the API shows it, or `None` if the player
    /// has no such ticket.
    pub(super) async fn read_ticket(
        &self,
        player: &PlayerId,
        id: &TicketId,
    ) -> Result<Option<TicketView>, StoreError> {
        let pools = self.ticket_pools(player, id).await?;
        let stored: Vec<Stored> = try_join_all(pools.into_iter().map(|p| self.pool_state(p, id)))
            .await?
            .into_iter()
            .flatten()
            .collect();
        let now = stored.iter().map(|s| s.now).max().unwrap_or_default();
        let Some(ticket) = stored.iter().find_map(|s| s.ticket.clone()) else {
            return Ok(None);
        };
        let entries: Vec<Entry> = stored.into_iter().map(|s| s.entry).collect();
        let moved = moved_region(&entries, ticket.best_region()).map(str::to_string);
        let Some(Entry {
            pool,
            state,
            finished_at,
        }) = combine(entries)
        else {
            return Ok(None);
        };
        let found = match &state {
            State::Matched(mid) => self.read_record(&pool, mid).await?.map(|(r, _)| r),
            _ => None,
        };
        let mut v = view(&ticket, &state, finished_at, found.as_ref(), now);
        if let Some(region) = moved {
            v.region = region;
        }
        Ok(Some(v))
    }

    /// A ticket's entry in one pool: data, state and finish time, and the Redis
    /// clock, in one round trip.
    async fn pool_state(&self, pool: Pool, id: &TicketId) -> Result<Option<Stored>, StoreError> {
        let keys = PoolKeys::new(&pool);
        type Row = (Option<String>, Option<String>, Option<f64>, (u64, u64));
        let (data, state, done, (secs, micros)): Row = redis::pipe()
            .hget(&keys.tickets, id.as_str())
            .hget(&keys.state, id.as_str())
            .zscore(&keys.done, id.as_str())
            .cmd("TIME")
            .query_async(&mut self.conn())
            .await?;
        let Some(state) = state else {
            return Ok(None);
        };
        let ticket = data
            .map(|d| serde_json::from_str::<Ticket>(&d))
            .transpose()?;
        let state = State::parse(&state)
            .ok_or_else(|| StoreError::Corrupt(format!("ticket state {state:?}")))?;
        // A matched ticket finished when it joined its match: complete.lua records
        // that on the match's lifecycle hash, not in the done zset (a ticket matched
        // before it did has its own entry there).
        let finished_at = match (&state, done) {
            (_, Some(done)) => Some(done as Millis),
            (State::Matched(mid), None) => {
                let at: Option<Millis> = self.conn().hget(keys.life(mid.as_str()), "at").await?;
                at
            }
            _ => None,
        };
        Ok(Some(Stored {
            ticket,
            entry: Entry {
                pool,
                state,
                finished_at,
            },
            now: secs * 1000 + micros / 1000,
        }))
    }

    /// The pools a ticket of `player`'s waits in, home pool first (empty if the
    /// player has no such ticket).
    pub(super) async fn ticket_pools(
        &self,
        player: &PlayerId,
        id: &TicketId,
    ) -> Result<Vec<Pool>, StoreError> {
        let pk = PlayerKeys::new(player);
        let pools: Option<String> = self.conn().hget(&pk.tickets, id.as_str()).await?;
        Ok(pools
            .iter()
            .flat_map(|p| crate::keys::indexed_pools(p))
            .filter_map(Pool::parse)
            .collect())
    }
}
