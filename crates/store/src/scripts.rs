//! The Lua scripts, compiled into the binary from `src/lua/`. Scripts that need the
//! shared helpers get those of `common.lua` they call prepended ([`with_helpers`]).

use redis::Script;
use std::sync::OnceLock;

macro_rules! script {
    ($file:literal) => {
        Script::new(&with_helpers(include_str!(concat!("lua/", $file))))
    };
}

/// `common.lua`'s helpers, in order: (name, its text with the comment above it).
fn helpers() -> &'static [(String, String)] {
    static HELPERS: OnceLock<Vec<(String, String)>> = OnceLock::new();
    HELPERS.get_or_init(|| split_helpers(include_str!("lua/common.lua")))
}

/// Splits a file of `local function NAME(...)` definitions into them, each
/// with the comment lines right above it (what precedes the first comment of
/// the first is the file's own header, dropped).
fn split_helpers(common: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = common.lines().collect();
    let mut starts = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if let Some(rest) = line.strip_prefix("local function ") {
            let name = rest
                .split('(')
                .next()
                .unwrap_or_default()
                .trim()
                .to_string();
            let mut first = i;
            while first > 0 && lines[first - 1].starts_with("--") {
                first -= 1;
            }
            starts.push((first, name));
        }
    }
    let mut out = Vec::with_capacity(starts.len());
    for (k, (first, name)) in starts.iter().enumerate() {
        let end = starts.get(k + 1).map_or(lines.len(), |(next, _)| *next);
        let mut text = lines[*first..end].join("\n");
        text.push('\n');
        out.push((name.clone(), text));
    }
    out
}

/// Whether `text` calls `name` (`name(` not preceded by a letter, digit or `_`).
fn calls(text: &str, name: &str) -> bool {
    let pattern = format!("{name}(");
    text.match_indices(&pattern).any(|(at, _)| {
        !text[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// `body` after the helpers of `common.lua` it calls and those they call, in
/// their order there (each is defined before its callers). A script call runs
/// its whole text, and each `local function` it defines makes a closure: all of
/// `common.lua` cost every call about 1.3 us of Redis (`redis-benchmark` of an
/// `EVALSHA` of it and `return 1`), whatever the script used.
fn with_helpers(body: &str) -> String {
    let helpers = helpers();
    let mut needed = vec![false; helpers.len()];
    let mut changed = true;
    while changed {
        changed = false;
        for (i, (name, _)) in helpers.iter().enumerate() {
            if needed[i] {
                continue;
            }
            let called = calls(body, name)
                || helpers
                    .iter()
                    .zip(&needed)
                    .any(|((_, text), &on)| on && calls(text, name));
            if called {
                needed[i] = true;
                changed = true;
            }
        }
    }
    let mut out = String::new();
    for ((_, text), on) in helpers.iter().zip(needed) {
        if on {
            out.push_str(text);
        }
    }
    out.push_str(body);
    out
}

/// Every script the Redis store runs, hashed once.
pub struct Scripts {
    pub backfill_open: Script,
    pub backfill_close: Script,
    pub backfill_list: Script,
    pub backfill_refresh: Script,
    pub backfill_left: Script,
    pub backfill_join: Script,
    pub backfill_mark: Script,
    pub backfill_unjoin: Script,
    pub backfill_return: Script,
    pub enqueue: Script,
    pub create: Script,
    pub claim: Script,
    pub complete: Script,
    pub release: Script,
    pub heartbeat: Script,
    pub reclaim: Script,
    pub lead_prune: Script,
    pub lead_read: Script,
    pub lead_recount: Script,
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
    pub late_block: Script,
    pub overdue: Script,
    pub lock_acquire: Script,
    pub lock_extend: Script,
    pub lock_release: Script,
    pub candidates: Script,
    pub pool_forget: Script,
    pub online_close: Script,
}

impl Scripts {
    pub fn new() -> Self {
        Self {
            enqueue: script!("enqueue.lua"),
            create: script!("create.lua"),
            claim: script!("claim.lua"),
            complete: script!("complete.lua"),
            release: script!("release.lua"),
            heartbeat: script!("heartbeat.lua"),
            reclaim: script!("reclaim.lua"),
            lead_prune: script!("lead_prune.lua"),
            lead_read: script!("lead_read.lua"),
            lead_recount: script!("lead_recount.lua"),
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
            late_block: script!("late_block.lua"),
            overdue: script!("overdue.lua"),
            lock_acquire: Script::new(include_str!("lua/lock_acquire.lua")),
            lock_extend: Script::new(include_str!("lua/lock_extend.lua")),
            lock_release: Script::new(include_str!("lua/lock_release.lua")),
            candidates: script!("candidates.lua"),
            pool_forget: Script::new(include_str!("lua/pool_forget.lua")),
            online_close: Script::new(include_str!("lua/online_close.lua")),
            backfill_open: Script::new(include_str!("lua/backfill_open.lua")),
            backfill_close: Script::new(include_str!("lua/backfill_close.lua")),
            backfill_list: Script::new(include_str!("lua/backfill_list.lua")),
            backfill_refresh: script!("backfill_refresh.lua"),
            backfill_left: script!("backfill_left.lua"),
            backfill_join: script!("backfill_join.lua"),
            backfill_mark: script!("backfill_mark.lua"),
            backfill_unjoin: script!("backfill_unjoin.lua"),
            backfill_return: script!("backfill_return.lua"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_gets_the_helpers_it_calls_and_theirs_only() {
        let all: Vec<&str> = helpers().iter().map(|(n, _)| n.as_str()).collect();
        for name in ["now_ms", "requeue", "record_history", "trim_index", "gcra"] {
            assert!(all.contains(&name), "{name} not found in {all:?}");
        }
        // requeue calls arrived; trim_index calls oldest_beyond.
        let text = with_helpers("requeue(a, b, c, d, e, f)\nrecord_history(i, a, m, c, p, 1)\n");
        for name in [
            "requeue",
            "arrived",
            "record_history",
            "trim_index",
            "oldest_beyond",
        ] {
            assert!(
                text.contains(&format!("local function {name}(")),
                "{name} missing:\n{text}"
            );
        }
        for name in ["now_us", "gcra", "gcra_store", "wake", "since_add"] {
            assert!(
                !text.contains(&format!("local function {name}(")),
                "{name} included"
            );
        }
        // Defined before they are called, in common.lua's order.
        let at = |name: &str| text.find(&format!("local function {name}(")).unwrap();
        assert!(at("arrived") < at("requeue"));
        assert!(at("oldest_beyond") < at("trim_index"));
        assert!(at("trim_index") < at("record_history"));
        // `gcra(` is not called by `gcra_store(`, nor `now_ms(` by `xnow_ms(`.
        assert!(!calls("gcra_store(k, t, n)", "gcra"));
        assert!(!calls("xnow_ms()", "now_ms"));
        assert!(calls("local t = now_ms()", "now_ms"));
        // A script that calls none gets none.
        assert_eq!(with_helpers("return 1\n"), "return 1\n");
    }
}
