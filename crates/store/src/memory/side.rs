//! The in-process store's side tables, each behind a lock of its own so that
//! none waits for the queues' lock: token locks, parties, rate limits and block
//! lists.

use super::MemoryStore;
use crate::StoreError;
use async_trait::async_trait;
use mm_domain::PlayerId;

#[async_trait]
impl crate::Locks for MemoryStore {
    async fn try_lock(
        &self,
        lock: &crate::LockName,
        token: &str,
        ttl: std::time::Duration,
    ) -> Result<Option<u64>, StoreError> {
        let _gate = self.leading.lock().await;
        Ok(self.locks.try_lock(lock, token, ttl))
    }

    async fn extend_lock(
        &self,
        lock: &crate::LockName,
        token: &str,
        ttl: std::time::Duration,
    ) -> Result<bool, StoreError> {
        Ok(self.locks.extend_lock(lock, token, ttl))
    }

    async fn unlock(&self, lock: &crate::LockName, token: &str) -> Result<bool, StoreError> {
        Ok(self.locks.unlock(lock, token))
    }
}

#[async_trait]
impl crate::Parties for MemoryStore {
    async fn party(&self, id: &mm_domain::PartyId) -> Result<Option<mm_domain::Party>, StoreError> {
        Ok(self.parties.party(id))
    }

    async fn merge_party(
        &self,
        delta: &mm_domain::Party,
        limits: crate::PartyLimits,
    ) -> Result<crate::PartyMerge, StoreError> {
        Ok(self.parties.merge(delta, limits))
    }

    async fn note_invite(
        &self,
        invitee: &PlayerId,
        party: &mm_domain::PartyId,
        max: usize,
    ) -> Result<Result<(), Vec<mm_domain::PartyId>>, StoreError> {
        Ok(self.parties.note_invite(invitee, party, max))
    }

    async fn forget_invite(
        &self,
        invitee: &PlayerId,
        party: &mm_domain::PartyId,
    ) -> Result<(), StoreError> {
        self.parties.forget_invite(invitee, party);
        Ok(())
    }

    async fn attest(
        &self,
        player: &PlayerId,
        claims: &mm_domain::Attributes,
    ) -> Result<(), StoreError> {
        self.parties.attest(player, claims);
        Ok(())
    }

    async fn attested(
        &self,
        player: &PlayerId,
    ) -> Result<Option<mm_domain::Attributes>, StoreError> {
        Ok(self.parties.attested(player))
    }

    async fn player_party(&self, p: &PlayerId) -> Result<Option<mm_domain::PartyId>, StoreError> {
        Ok(self.parties.player_party(p))
    }

    async fn claim_party(
        &self,
        p: &PlayerId,
        party: &mm_domain::PartyId,
        stale: Option<&mm_domain::PartyId>,
    ) -> Result<Option<mm_domain::PartyId>, StoreError> {
        Ok(self.parties.claim(p, party, stale))
    }

    async fn release_party(
        &self,
        p: &PlayerId,
        party: &mm_domain::PartyId,
    ) -> Result<(), StoreError> {
        self.parties.release(p, party);
        Ok(())
    }
}

#[async_trait]
impl crate::Limits for MemoryStore {
    async fn check_rates(
        &self,
        checks: &[crate::RateCheck],
    ) -> Result<Vec<crate::Verdict>, StoreError> {
        Ok(self.limits.check(checks))
    }
}

#[async_trait]
impl crate::Blocks for MemoryStore {
    async fn block(
        &self,
        player: &PlayerId,
        other: &PlayerId,
    ) -> Result<crate::Blocked, StoreError> {
        Ok(self.blocks.block(player, other))
    }

    async fn unblock(&self, player: &PlayerId, other: &PlayerId) -> Result<bool, StoreError> {
        Ok(self.blocks.unblock(player, other))
    }

    async fn blocks(&self, player: &PlayerId) -> Result<Vec<PlayerId>, StoreError> {
        Ok(self.blocks.blocks(player))
    }

    async fn kept_apart(&self, players: &[PlayerId]) -> Result<Vec<PlayerId>, StoreError> {
        Ok(self.blocks.kept_apart(players))
    }

    async fn add_blocks_to_waiting(
        &self,
        player: &PlayerId,
        others: &[PlayerId],
    ) -> Result<bool, StoreError> {
        let (taken, all_queued) = self.lock().add_blocks(player, others, mm_domain::now_ms());
        for pool in taken {
            self.wakes.wake(&pool.name());
        }
        Ok(all_queued)
    }

    async fn drop_block_from_waiting(
        &self,
        player: &PlayerId,
        other: &PlayerId,
    ) -> Result<(), StoreError> {
        // The lists read under the pools' lock: a block made meanwhile reaches
        // the tickets after this rewrite (it waits for the lock) or is read here.
        let taken = self
            .lock()
            .drop_block(player, other, |players| self.blocks.kept_apart(players));
        for pool in taken {
            self.wakes.wake(&pool.name());
        }
        Ok(())
    }
}
