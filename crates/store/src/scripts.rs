//! The Lua scripts, compiled into the binary from `src/lua/`. Scripts that need the
//! shared helpers get `common.lua` prepended.

use redis::Script;

macro_rules! script {
    ($file:literal) => {
        Script::new(concat!(
            include_str!("lua/common.lua"),
            include_str!(concat!("lua/", $file))
        ))
    };
}

/// Every script the Redis store runs, hashed once.
pub struct Scripts {
    pub enqueue: Script,
    pub claim: Script,
    pub complete: Script,
    pub release: Script,
    pub heartbeat: Script,
    pub reclaim: Script,
    pub lead_prune: Script,
    pub adopt: Script,
    pub cancel: Script,
    pub activate: Script,
    pub deactivate: Script,
    pub purge: Script,
    pub depths: Script,
    pub withdraw: Script,
    pub reserve: Script,
    pub unreserve: Script,
    pub decide: Script,
    pub settle: Script,
    pub answer: Script,
    pub presence: Script,
    pub transition: Script,
    pub step_done: Script,
    pub unwind_entry: Script,
    pub fleet_register: Script,
    pub fleet_heartbeat: Script,
    pub fleet_allocate: Script,
    pub fleet_release: Script,
    pub fleet_remove: Script,
    pub fleet_census: Script,
    pub unwind_player: Script,
    pub fleet_leave: Script,
    pub results_claim: Script,
    pub results_ack: Script,
    pub results_queue: Script,
    pub skill_mark: Script,
    pub rate: Script,
    pub party_merge: Script,
    pub party_read: Script,
    pub party_pointer: Script,
    pub invite_note: Script,
    pub block: Script,
    pub overdue: Script,
    pub lock_acquire: Script,
    pub lock_extend: Script,
    pub lock_release: Script,
    pub candidates: Script,
}

impl Scripts {
    pub fn new() -> Self {
        Self {
            enqueue: script!("enqueue.lua"),
            claim: script!("claim.lua"),
            complete: script!("complete.lua"),
            release: script!("release.lua"),
            heartbeat: script!("heartbeat.lua"),
            reclaim: script!("reclaim.lua"),
            lead_prune: script!("lead_prune.lua"),
            adopt: script!("adopt.lua"),
            cancel: script!("cancel.lua"),
            activate: script!("activate.lua"),
            deactivate: Script::new(include_str!("lua/deactivate.lua")),
            purge: script!("purge.lua"),
            depths: Script::new(include_str!("lua/depths.lua")),
            withdraw: script!("withdraw.lua"),
            reserve: Script::new(include_str!("lua/reserve.lua")),
            unreserve: Script::new(include_str!("lua/unreserve.lua")),
            decide: script!("decide.lua"),
            settle: script!("settle.lua"),
            answer: script!("answer.lua"),
            presence: script!("presence.lua"),
            transition: script!("transition.lua"),
            step_done: script!("step_done.lua"),
            unwind_entry: script!("unwind_entry.lua"),
            fleet_register: script!("fleet_register.lua"),
            fleet_heartbeat: script!("fleet_heartbeat.lua"),
            fleet_allocate: script!("fleet_allocate.lua"),
            fleet_release: script!("fleet_release.lua"),
            fleet_remove: script!("fleet_remove.lua"),
            fleet_census: script!("fleet_census.lua"),
            unwind_player: Script::new(include_str!("lua/unwind_player.lua")),
            fleet_leave: Script::new(include_str!("lua/fleet_leave.lua")),
            results_claim: script!("results_claim.lua"),
            results_ack: Script::new(include_str!("lua/results_ack.lua")),
            results_queue: script!("results_queue.lua"),
            skill_mark: Script::new(include_str!("lua/skill_mark.lua")),
            rate: script!("rate.lua"),
            party_merge: Script::new(include_str!("lua/party_merge.lua")),
            party_read: Script::new(include_str!("lua/party_read.lua")),
            party_pointer: Script::new(include_str!("lua/party_pointer.lua")),
            invite_note: script!("invite_note.lua"),
            block: Script::new(include_str!("lua/block.lua")),
            overdue: script!("overdue.lua"),
            lock_acquire: Script::new(include_str!("lua/lock_acquire.lua")),
            lock_extend: Script::new(include_str!("lua/lock_extend.lua")),
            lock_release: Script::new(include_str!("lua/lock_release.lua")),
            candidates: script!("candidates.lua"),
        }
    }
}
