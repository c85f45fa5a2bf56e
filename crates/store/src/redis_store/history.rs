//! Players' match histories on Redis. A player's history zset holds references,
//! `MATCH|pool`, scored by creation time; the match's JSON is written once, at
//! commit, to the pool's archive key (`mm:{p:pool}:a:MATCH`), which expires after
//! the histories' lifetime. A match of eight players is stored once instead of
//! eight times, and settling a player writes a short member instead of the JSON.
//! Histories written before references (whole JSON members) are still read.

use super::RedisStore;
use crate::StoreError;
use crate::keys::{PlayerKeys, PoolKeys};
use futures_util::future::try_join_all;
use mm_domain::{Match, MatchId, PlayerId, Pool};
use redis::AsyncCommands;
use std::collections::{BTreeMap, BTreeSet};

/// One history member.
#[derive(Debug, PartialEq)]
enum Member<'a> {
    /// A reference: the match id and its pool's name.
    Ref { id: &'a str, pool: &'a str },
    /// A whole match JSON (histories written before references).
    Json(&'a str),
}

impl<'a> Member<'a> {
    fn parse(raw: &'a str) -> Option<Self> {
        if raw.starts_with('{') {
            return Some(Self::Json(raw));
        }
        let (id, pool) = raw.split_once('|')?;
        Some(Self::Ref { id, pool })
    }
}

impl RedisStore {
    /// The pool of match `id` in the player's newest [`crate::HISTORY_LEN`]
    /// history members: from the references alone (one short read); only an old
    /// whole-JSON member is parsed.
    pub(super) async fn history_pool_of(
        &self,
        player: &PlayerId,
        id: &MatchId,
    ) -> Result<Option<Pool>, StoreError> {
        let raw: Vec<String> = self
            .conn()
            .zrevrange(
                &PlayerKeys::new(player).history,
                0,
                crate::HISTORY_LEN as isize - 1,
            )
            .await?;
        for member in raw.iter().filter_map(|r| Member::parse(r)) {
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
        let raw: Vec<String> = self
            .conn()
            .zrevrange(&PlayerKeys::new(player).history, 0, limit as isize - 1)
            .await?;
        let members: Vec<Option<Member>> = raw.iter().map(|r| Member::parse(r)).collect();

        // The archived JSON of the references: one MGET per pool (one slot each).
        let mut by_pool: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (i, m) in members.iter().enumerate() {
            if let Some(Member::Ref { pool, .. }) = m {
                by_pool.entry(pool).or_default().push(i);
            }
        }
        let reads = by_pool.into_iter().filter_map(|(pool, at)| {
            let keys = PoolKeys::new(&Pool::parse(pool)?);
            let archived: Vec<String> = at
                .iter()
                .filter_map(|&i| match members[i] {
                    Some(Member::Ref { id, .. }) => Some(keys.archived(id)),
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
                Some(Member::Json(j)) => *j,
                Some(Member::Ref { .. }) => match jsons.get(&i) {
                    Some(j) => j.as_str(),
                    None => continue,
                },
                None => continue,
            };
            let matched: Match = serde_json::from_str(json)?;
            // A match settled again after an upgrade may be there as both.
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
