//! [`Parties`] on Redis: a party's OR-Sets and meta in its own slot
//! (`mm:{pt:PARTY}:*`), merged by `party_merge.lua`; players' pointers in their
//! slots (`party_pointer.lua`).

use super::RedisStore;
use crate::keys::{PartyKeys, PlayerKeys};
use crate::parties::{PARTY_TTL, PartyLimits, PartyMerge};
use crate::{Parties, StoreError};
use async_trait::async_trait;
use mm_domain::{Attributes, OrSet, Party, PartyId, PlayerId};
use redis::Value;

/// The five keys of a party, in the scripts' order.
fn keys(id: &PartyId) -> [String; 5] {
    let k = PartyKeys::new(id);
    [k.members, k.member_tombs, k.invites, k.invite_tombs, k.meta]
}

fn corrupt(what: &str) -> StoreError {
    StoreError::Corrupt(format!("party: {what}"))
}

fn strings(v: &Value) -> Result<Vec<String>, StoreError> {
    redis::from_redis_value_ref(v).map_err(|e| corrupt(&e.to_string()))
}

fn player(s: String) -> Result<PlayerId, StoreError> {
    PlayerId::new(s).map_err(|e| corrupt(&e.to_string()))
}

/// Builds a party from `party_read.lua`'s answer (`None`: no such party).
fn parse(id: &PartyId, v: &Value) -> Result<Option<Party>, StoreError> {
    let Value::Array(parts) = v else {
        return Err(corrupt("not an array"));
    };
    let [madds, mtombs, iadds, itombs, meta] = parts.as_slice() else {
        return Err(corrupt("expected five parts"));
    };
    let meta = strings(meta)?;
    if meta.is_empty() {
        return Ok(None);
    }
    let field = |name: &str| {
        meta.chunks(2)
            .find(|kv| kv[0] == name)
            .and_then(|kv| kv.get(1))
            .cloned()
    };
    let orset = |adds: &Value, tombs: &Value| -> Result<OrSet<PlayerId>, StoreError> {
        let adds = strings(adds)?;
        let pairs = adds
            .chunks(2)
            .map(|kv| {
                Ok((
                    player(kv.get(1).cloned().unwrap_or_default())?,
                    kv[0].clone(),
                ))
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        Ok(OrSet::from_parts(pairs, strings(tombs)?))
    };
    Ok(Some(Party {
        id: id.clone(),
        created_at: field("created")
            .and_then(|c| c.parse().ok())
            .unwrap_or_default(),
        leader: player(field("leader").ok_or_else(|| corrupt("no leader"))?)?,
        leader_tag: field("ltag").unwrap_or_default(),
        members: orset(madds, mtombs)?,
        invites: orset(iadds, itombs)?,
        disbanded: field("gone").is_some(),
    }))
}

#[async_trait]
impl Parties for RedisStore {
    async fn party(&self, id: &PartyId) -> Result<Option<Party>, StoreError> {
        let mut inv = self.scripts.party_read.prepare_invoke();
        for k in keys(id) {
            inv.key(k);
        }
        let v: Value = inv.invoke_async(&mut self.conn()).await?;
        parse(id, &v)
    }

    async fn merge_party(
        &self,
        delta: &Party,
        limits: PartyLimits,
    ) -> Result<PartyMerge, StoreError> {
        let mut inv = self.scripts.party_merge.prepare_invoke();
        for k in keys(&delta.id) {
            inv.key(k);
        }
        inv.arg(limits.members)
            .arg(limits.invites)
            .arg(super::PARTY_TTL_MS)
            .arg(delta.created_at)
            .arg(delta.leader.as_str())
            .arg(&delta.leader_tag)
            .arg(if delta.disbanded { "1" } else { "0" });
        for set in [&delta.members, &delta.invites] {
            let adds: Vec<_> = set.adds().collect();
            inv.arg(adds.len());
            for (p, tag) in adds {
                inv.arg(tag).arg(p.as_str());
            }
            let tombs: Vec<_> = set.removed().collect();
            inv.arg(tombs.len());
            for t in tombs {
                inv.arg(t);
            }
        }
        let v: Value = inv.invoke_async(&mut self.conn()).await?;
        match redis::from_redis_value_ref::<String>(&v).as_deref() {
            Ok("FULL") => return Ok(PartyMerge::Full),
            Ok("INVITES") => return Ok(PartyMerge::TooManyInvites),
            _ => {}
        }
        parse(&delta.id, &v)?
            .map(PartyMerge::Merged)
            .ok_or_else(|| corrupt("missing after a merge"))
    }

    async fn note_invite(
        &self,
        invitee: &PlayerId,
        party: &PartyId,
        max: usize,
    ) -> Result<Result<(), Vec<PartyId>>, StoreError> {
        let noted: Vec<String> = self
            .scripts
            .invite_note
            .key(PlayerKeys::new(invitee).invited)
            .arg(party.as_str())
            .arg(max)
            .arg(super::PARTY_TTL_MS)
            .invoke_async(&mut self.conn())
            .await?;
        if noted.is_empty() {
            return Ok(Ok(()));
        }
        noted
            .into_iter()
            .map(|p| PartyId::new(p).map_err(|e| corrupt(&e.to_string())))
            .collect::<Result<Vec<_>, _>>()
            .map(Err)
    }

    async fn forget_invite(&self, invitee: &PlayerId, party: &PartyId) -> Result<(), StoreError> {
        let _: i64 = redis::cmd("ZREM")
            .arg(PlayerKeys::new(invitee).invited)
            .arg(party.as_str())
            .query_async(&mut self.conn())
            .await?;
        Ok(())
    }

    async fn attest(&self, player: &PlayerId, claims: &Attributes) -> Result<(), StoreError> {
        let () = redis::cmd("SET")
            .arg(PlayerKeys::new(player).attested)
            .arg(serde_json::to_string(claims)?)
            .arg("PX")
            .arg(super::PARTY_TTL_MS)
            .query_async(&mut self.conn())
            .await?;
        Ok(())
    }

    async fn attested(&self, player: &PlayerId) -> Result<Option<Attributes>, StoreError> {
        let raw: Option<String> = redis::cmd("GET")
            .arg(PlayerKeys::new(player).attested)
            .query_async(&mut self.conn())
            .await?;
        raw.map(|r| serde_json::from_str(&r).map_err(|e| corrupt(&e.to_string())))
            .transpose()
    }

    async fn player_party(&self, p: &PlayerId) -> Result<Option<PartyId>, StoreError> {
        let raw: Option<String> = redis::cmd("GET")
            .arg(PlayerKeys::new(p).party)
            .query_async(&mut self.conn())
            .await?;
        raw.map(|r| PartyId::new(r).map_err(|e| corrupt(&e.to_string())))
            .transpose()
    }

    async fn claim_party(
        &self,
        p: &PlayerId,
        party: &PartyId,
        stale: Option<&PartyId>,
    ) -> Result<Option<PartyId>, StoreError> {
        let other: String = self
            .scripts
            .party_pointer
            .key(PlayerKeys::new(p).party)
            .arg("claim")
            .arg(party.as_str())
            .arg(PARTY_TTL.as_millis() as u64)
            .arg(stale.map(PartyId::as_str).unwrap_or(""))
            .invoke_async(&mut self.conn())
            .await?;
        if other.is_empty() {
            return Ok(None);
        }
        PartyId::new(other)
            .map(Some)
            .map_err(|e| corrupt(&e.to_string()))
    }

    async fn release_party(&self, p: &PlayerId, party: &PartyId) -> Result<(), StoreError> {
        let _: String = self
            .scripts
            .party_pointer
            .key(PlayerKeys::new(p).party)
            .arg("release")
            .arg(party.as_str())
            .arg(PARTY_TTL.as_millis() as u64)
            .arg("")
            .invoke_async(&mut self.conn())
            .await?;
        Ok(())
    }
}
