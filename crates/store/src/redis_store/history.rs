//! Players' match histories on Redis. A player's history is kept in their
//! ticket index (`mm:{u:PLAYER}:tix`, ticket id -> pools), as fields
//! `m:MATCH` -> `CREATED|pool` (see `record_history` in `common.lua`); the
//! match's JSON is written once, at commit, to the pool's archive key
//! (`mm:{p:pool}:a:MATCH`), which expires after the histories' lifetime.
//! Histories written before (a zset of its own per player, `mm:{u:PLAYER}:hist`,
//! members `MATCH|pool` or, older still, the whole match JSON, scored by creation
//! time) are still read until they expire.

use super::RedisStore;
use crate::StoreError;
use crate::keys::{PlayerKeys, PoolKeys};
use futures_util::future::try_join_all;
use mm_domain::{Match, MatchId, PlayerId, Pool};
use redis::AsyncCommands;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The prefix of a history field in a player's ticket index.
const FIELD: &str = "m:";

/// One history entry.
#[derive(Debug, PartialEq)]
enum Member<'a> {
    /// A reference: the match id and its pool's name.
    Ref { id: &'a str, pool: &'a str },
    /// A whole match JSON (old histories written before references).
    Json(&'a str),
}

impl<'a> Member<'a> {
    /// A member of the old history zset.
    fn parse(raw: &'a str) -> Option<Self> {
        if raw.starts_with('{') {
            return Some(Self::Json(raw));
        }
        let (id, pool) = raw.split_once('|')?;
        Some(Self::Ref { id, pool })
    }

    /// A field of the ticket index and its value, if it is a history entry:
    /// the entry and its creation time.
    fn of_field(field: &'a str, value: &'a str) -> Option<(Self, f64)> {
        let id = field.strip_prefix(FIELD)?;
        let (created, pool) = value.split_once('|')?;
        Some((Self::Ref { id, pool }, created.parse().ok()?))
    }

    /// What orders entries created in the same millisecond: the old zset's
    /// member text for a reference (`MATCH|pool`, its id first).
    fn order(&self) -> (&str, &str) {
        match *self {
            Member::Ref { id, pool } => (id, pool),
            Member::Json(j) => (j, ""),
        }
    }
}

impl RedisStore {
    /// The pool of match `id` in the player's history: one field of their
    /// ticket index, or (for a match settled before histories moved there) the
    /// newest [`crate::HISTORY_LEN`] members of the old history zset.
    pub(super) async fn history_pool_of(
        &self,
        player: &PlayerId,
        id: &MatchId,
    ) -> Result<Option<Pool>, StoreError> {
        let keys = PlayerKeys::new(player);
        let field = format!("{FIELD}{id}");
        let entry: Option<String> = self.conn().hget(&keys.tickets, &field).await?;
        if let Some(value) = entry {
            return Ok(match Member::of_field(&field, &value) {
                Some((Member::Ref { pool, .. }, _)) => Pool::parse(pool),
                _ => None,
            });
        }
        // Not there: a match settled before histories moved (the common case
        // above costs one read, not this one as well).
        let old: Vec<String> = self
            .conn()
            .zrevrange(&keys.history, 0, crate::HISTORY_LEN as isize - 1)
            .await?;
        for member in old.iter().filter_map(|r| Member::parse(r)) {
            match member {
                Member::Ref { id: m, pool } if m == id.as_str() => return Ok(Pool::parse(pool)),
                Member::Json(json) => {
                    if let Ok(m) = serde_json::from_str::<Match>(json)
                        && m.id == *id
                    {
                        return Ok(Some(Pool::new(m.mode, m.region)));
                    }
                }
                Member::Ref { .. } => {}
            }
        }
        Ok(None)
    }

    /// The player's newest `limit` matches, newest first. A match whose archived
    /// JSON has expired is left out.
    pub(super) async fn history(
        &self,
        player: &PlayerId,
        limit: usize,
    ) -> Result<Vec<Match>, StoreError> {
        // A history may hold a few more than its length until the next trim.
        let limit = limit.min(crate::HISTORY_LEN);
        if limit == 0 {
            return Ok(Vec::new());
        }
        // The ticket index's fields and the old zset's newest members with
        // their scores, in one round trip.
        let keys = PlayerKeys::new(player);
        let (index, old): (HashMap<String, String>, Vec<(String, f64)>) = redis::pipe()
            .hgetall(&keys.tickets)
            .zrevrange_withscores(&keys.history, 0, limit as isize - 1)
            .query_async(&mut self.conn())
            .await?;
        let mut entries: Vec<(f64, Member)> = index
            .iter()
            .filter_map(|(f, v)| Member::of_field(f, v).map(|(m, at)| (at, m)))
            .chain(
                old.iter()
                    .filter_map(|(raw, at)| Member::parse(raw).map(|m| (*at, m))),
            )
            .collect();
        // Newest first; among matches created in the same millisecond, as the
        // old zset listed them (its members in reverse order).
        entries.sort_by(|(a, x), (b, y)| b.total_cmp(a).then_with(|| y.order().cmp(&x.order())));
        // A match settled again after an upgrade may be in both.
        let mut listed = BTreeSet::new();
        entries.retain(|(_, m)| match m {
            Member::Ref { id, .. } => listed.insert(*id),
            Member::Json(_) => true,
        });
        entries.truncate(limit);
        let members: Vec<Member> = entries.into_iter().map(|(_, m)| m).collect();

        // The archived JSON of the references: one MGET per pool (one slot each).
        let mut by_pool: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (i, m) in members.iter().enumerate() {
            if let Member::Ref { pool, .. } = m {
                by_pool.entry(pool).or_default().push(i);
            }
        }
        let reads = by_pool.into_iter().filter_map(|(pool, at)| {
            let keys = PoolKeys::new(&Pool::parse(pool)?);
            let archived: Vec<String> = at
                .iter()
                .filter_map(|&i| match members[i] {
                    Member::Ref { id, .. } => Some(keys.archived(id)),
                    _ => None,
                })
                .collect();
            Some(async move {
                let found: Vec<Option<String>> = redis::cmd("MGET")
                    .arg(&archived)
                    .query_async(&mut self.conn())
                    .await?;
                Ok::<_, StoreError>(at.into_iter().zip(found).collect::<Vec<_>>())
            })
        });
        let mut jsons: BTreeMap<usize, String> = BTreeMap::new();
        for found in try_join_all(reads).await? {
            jsons.extend(found.into_iter().filter_map(|(i, j)| Some((i, j?))));
        }

        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for (i, m) in members.iter().enumerate() {
            let json = match m {
                Member::Json(j) => *j,
                Member::Ref { .. } => match jsons.get(&i) {
                    Some(j) => j.as_str(),
                    None => continue,
                },
            };
            let matched: Match = serde_json::from_str(json)?;
            // A match settled again after an upgrade may be there twice.
            if seen.insert(matched.id.clone()) {
                out.push(matched);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_are_references_or_old_json() {
        assert_eq!(
            Member::parse("m-1|ranked:eu"),
            Some(Member::Ref {
                id: "m-1",
                pool: "ranked:eu"
            })
        );
        assert_eq!(
            Member::parse(r#"{"id":"m-1"}"#),
            Some(Member::Json(r#"{"id":"m-1"}"#))
        );
        assert_eq!(Member::parse("garbage"), None);
    }
}
