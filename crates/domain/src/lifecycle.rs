//! A match's life after it is formed: the ready check, the game server it is placed
//! on, its result; the statuses and reasons the API shows for it.

use crate::{Match, Millis, PlayerId};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How long a saga step may take its driver before the supervisor does it instead.
pub const STEP_GRACE_MS: Millis = 3_000;

/// How a match proceeds once formed; copied from its mode when the match is made.
/// The default (no ready check, no placement) ends matchmaking at the match itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Lifecycle {
    /// Every player must accept within this long; `None`: no ready check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_check_ms: Option<Millis>,
    /// Queue ban for players who decline or let the ready check run out.
    #[serde(default)]
    pub decline_ban_ms: Millis,
    /// A player whose connection drops during the ready check has this long to come
    /// back before it counts as a decline.
    #[serde(default)]
    pub disconnect_grace_ms: Millis,
    #[serde(default)]
    pub placement: Placement,
    /// How long placement keeps trying for a free game server before the match
    /// fails and its players go back to the queue.
    #[serde(default = "default_placement_timeout")]
    pub placement_timeout_ms: Millis,
    /// Set when the mode has `backfill = "auto"`: a match placed below full
    /// opens a backfill for its empty seats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_backfill: Option<AutoBackfill>,
}

/// What an automatic backfill opens: seats up to `team_size` per team, kept
/// open for `ttl_ms` unless the game server refreshes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct AutoBackfill {
    pub teams: u32,
    pub team_size: u32,
    pub ttl_ms: Millis,
}

/// Default time placement waits for a free game server.
pub const DEFAULT_PLACEMENT_TIMEOUT: Millis = 10_000;

fn default_placement_timeout() -> Millis {
    DEFAULT_PLACEMENT_TIMEOUT
}

/// Pause between attempts to find a free game server.
pub const PLACEMENT_RETRY_MS: Millis = 250;

impl Default for Lifecycle {
    fn default() -> Self {
        Self {
            ready_check_ms: None,
            decline_ban_ms: 0,
            disconnect_grace_ms: 0,
            placement: Placement::None,
            placement_timeout_ms: DEFAULT_PLACEMENT_TIMEOUT,
            auto_backfill: None,
        }
    }
}

/// Who finds the match a game server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// Nobody: matchmaking completes with the match (the studio's backend takes it
    /// from `match.completed`).
    #[default]
    None,
    /// The server manager allocates a slot on a registered game server.
    Servers,
}

impl Lifecycle {
    /// The status a match starts in when committed.
    pub fn initial_status(&self) -> MatchStatus {
        if self.ready_check_ms.is_some() {
            MatchStatus::RequiresAcceptance
        } else {
            self.after_acceptance()
        }
    }

    /// The status once every player accepted (or at once without a ready check).
    pub fn after_acceptance(&self) -> MatchStatus {
        match self.placement {
            Placement::Servers => MatchStatus::Placing,
            Placement::None => MatchStatus::Completed,
        }
    }
}

/// Where a match is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum MatchStatus {
    /// Waiting for every player to accept.
    RequiresAcceptance,
    /// Everyone accepted; a game server is being allocated.
    Placing,
    /// On a game server; players were told where to connect.
    Assigned,
    /// Over: the game server reported the result (or, without placement, matchmaking
    /// is done).
    Completed,
    /// Called off before it started (a player declined).
    Cancelled,
    /// Called off because a player did not accept in time.
    TimedOut,
    /// Could not be placed, or its game server was lost.
    Failed,
}

impl MatchStatus {
    pub const ALL: [MatchStatus; 7] = [
        Self::RequiresAcceptance,
        Self::Placing,
        Self::Assigned,
        Self::Completed,
        Self::Cancelled,
        Self::TimedOut,
        Self::Failed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::RequiresAcceptance => "requires_acceptance",
            Self::Placing => "placing",
            Self::Assigned => "assigned",
            Self::Completed => "completed",
            Self::Cancelled => "cancelled",
            Self::TimedOut => "timed_out",
            Self::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == s)
    }

    /// Over: nothing more happens to the match.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            Self::Completed | Self::Cancelled | Self::TimedOut | Self::Failed
        )
    }
}

/// Why a match or ticket ended badly (the `reason` field).
pub mod reasons {
    /// A player declined the ready check.
    pub const DECLINED: &str = "declined";
    /// A player did not answer the ready check in time.
    pub const READY_CHECK_EXPIRED: &str = "ready_check_expired";
    /// A player's connection dropped during the ready check and did not come back
    /// within the grace period.
    pub const DISCONNECTED: &str = "disconnected";
    /// No live game server of the region and mode had a free slot.
    pub const NO_SERVER: &str = "no_server_available";
    /// The game server stopped heartbeating during the match.
    pub const SERVER_LOST: &str = "server_lost";
    /// The game server released the match without reporting a result.
    pub const RELEASED: &str = "released_without_result";
    /// The game server refused a fill's players (`AckBackfill` with accept
    /// false); they went back to the queue.
    pub const BACKFILL_REFUSED: &str = "backfill_refused";
    /// The game server did not acknowledge a fill's players in time; they went
    /// back to the queue.
    pub const BACKFILL_UNACKNOWLEDGED: &str = "backfill_unacknowledged";
    /// Another match of the same players was cancelled or failed; the ticket went
    /// back to the queue.
    pub const REQUEUED: &str = "requeued";
    /// The ticket waited its mode's `give_up_after` without a match.
    pub const NO_MATCH_FOUND: &str = "no_match_found";
    /// The ticket's mode was closed (`closed = true`) while it waited.
    pub const MODE_CLOSED: &str = "mode_closed";
    /// Every region the ticket waited in was closed (`CLOSED_REGIONS`)
    /// while it waited; as the state of its entry in a closed region's pool,
    /// the ticket left that region and waits on in another.
    pub const REGION_CLOSED: &str = "region_closed";
    /// The ticket's party is larger than its mode takes now (`max_party` or
    /// `team_size` lowered while it waited): it could never be matched.
    pub const PARTY_TOO_LARGE: &str = "party_too_large";
    /// The ticket's attributes could never meet its mode's rules as they are
    /// now (a rule added or tightened while it waited): a value of the wrong
    /// kind, one a rule that never turns off needs, or players who could never
    /// meet a rule together.
    pub const UNMATCHABLE: &str = "unmatchable";
    /// The match was still on its game server after its mode's
    /// `max_match_duration`.
    pub const MATCH_EXPIRED: &str = "match_expired";
    /// A fill could not join its running match: the match ended, or its
    /// backfill closed, before the fill's players got there. They went back to
    /// the queue.
    pub const BACKFILL_CLOSED: &str = "backfill_closed";
}

/// A player's answer to the ready check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    Accepted,
    Declined,
}

/// A game server slot given to a match.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ServerAssignment {
    pub server_id: String,
    /// Where players connect.
    pub address: String,
}

/// Win, loss or draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Win,
    Loss,
    Draw,
}

/// One team's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TeamResult {
    pub team: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// 1 for first place; `None` when not ranked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<u32>,
}

/// One player's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PlayerResult {
    pub player_id: PlayerId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<u32>,
}

/// What the game server reported at the end of a match.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct MatchResult {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub teams: Vec<TeamResult>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub players: Vec<PlayerResult>,
    /// Players who left before the end.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub abandoned: Vec<PlayerId>,
    pub reported_at: Millis,
}

/// A match and where it is in its life, as the API shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct MatchRecord {
    #[serde(rename = "match")]
    pub matched: Match,
    pub status: MatchStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// When the ready check ends, while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<Millis>,
    /// Ready-check answers so far.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub answers: BTreeMap<PlayerId, Answer>,
    /// Players whose connection dropped during the ready check, and when.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub disconnected: BTreeMap<PlayerId, Millis>,
    /// When placement started (every player accepted, or the match formed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placing_since: Option<Millis>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerAssignment>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<MatchResult>,
    /// The players' tickets were handled after the match ended (requeued, ended or
    /// freed) and everyone was told.
    #[serde(default)]
    pub settled: bool,
    /// Fills that joined this running match (backfill), in the order they
    /// joined; they end when it ends.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fills: Vec<crate::MatchId>,
    /// For a fill that joined its running match: when, and how far the game
    /// server has taken its players.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joined: Option<Joined>,
    /// Players the game server reported leaving the running match, and when.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub left: BTreeMap<PlayerId, Millis>,
}

/// A fill's life after it joined its running match: its players are told at
/// once, and the game server must acknowledge them within the fill's
/// placement timeout, or they go back to the queue with their wait.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Joined {
    /// When the fill joined (ms since the epoch).
    pub at: Millis,
    /// Its players were told (`match.assigned`).
    pub notified: bool,
    /// The game server acknowledged its players.
    pub acknowledged: bool,
}

/// How a match's record starts when it commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordStart {
    pub status: MatchStatus,
    /// The ready check's deadline, if it has one.
    pub deadline: Option<Millis>,
    /// When its saga's first step is due (`None`: nothing to do).
    pub due: Option<Millis>,
}

impl MatchRecord {
    /// A match just committed: its initial status, ready-check deadline, and when
    /// its first step is due (`None`: nothing to do).
    pub fn committed(matched: Match) -> (Self, Option<Millis>) {
        let RecordStart {
            status,
            deadline,
            due,
        } = Self::start(&matched);
        let created_at = matched.created_at;
        let record = Self {
            matched,
            status,
            reason: None,
            deadline,
            answers: BTreeMap::new(),
            disconnected: BTreeMap::new(),
            placing_since: (status == MatchStatus::Placing).then_some(created_at),
            server: None,
            result: None,
            settled: !matches!(
                status,
                MatchStatus::RequiresAcceptance | MatchStatus::Placing
            ),
            fills: Vec::new(),
            joined: None,
            left: BTreeMap::new(),
        };
        (record, due)
    }

    /// How `matched`'s record starts when it commits ([`MatchRecord::committed`]
    /// without building the record).
    pub fn start(matched: &Match) -> RecordStart {
        let lc = matched.lifecycle;
        let status = lc.initial_status();
        let deadline = lc
            .ready_check_ms
            .map(|t| matched.created_at.saturating_add(t));
        let due = match status {
            MatchStatus::RequiresAcceptance => deadline,
            MatchStatus::Placing => Some(matched.created_at.saturating_add(STEP_GRACE_MS)),
            _ => None,
        };
        RecordStart {
            status,
            deadline,
            due,
        }
    }

    /// Players who have not answered the ready check.
    pub fn pending(&self) -> Vec<PlayerId> {
        self.matched
            .players()
            .filter(|p| !self.answers.contains_key(*p))
            .cloned()
            .collect()
    }

    /// Players whose disconnection outlasted the grace period at `now`.
    pub fn gone(&self, now: Millis) -> Vec<PlayerId> {
        let grace = self.matched.lifecycle.disconnect_grace_ms;
        self.disconnected
            .iter()
            .filter(|(_, at)| now >= at.saturating_add(grace))
            .map(|(p, _)| p.clone())
            .collect()
    }

    /// When the ready check needs looking at next: its deadline, or sooner if a
    /// disconnected player's grace runs out first.
    pub fn next_check(&self) -> Option<Millis> {
        let grace = self.matched.lifecycle.disconnect_grace_ms;
        let dl = self.deadline?;
        Some(
            self.disconnected
                .values()
                .map(|at| at.saturating_add(grace))
                .fold(dl, Millis::min),
        )
    }
}

/// How one ticket of a match that ended before it was played comes out of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TicketFate {
    /// Back in the queue with its original wait.
    Requeue,
    /// Ended with this ticket status and reason; `ban` players may not queue until
    /// the given time.
    End {
        status: crate::TicketStatus,
        reason: String,
    },
    /// The match was played (or at least placed): the ticket stays with it.
    Stay,
}

impl MatchRecord {
    /// What happens to a ticket with `players` once this match is over: before the
    /// pivot (cancelled, timed out, or failed while placing) tickets without a
    /// player at fault go back to the queue; after it they stay with the match.
    pub fn fate(&self, players: &[PlayerId]) -> TicketFate {
        use crate::TicketStatus;
        match self.status {
            MatchStatus::Cancelled | MatchStatus::TimedOut => {
                let declined = players
                    .iter()
                    .any(|p| self.answers.get(p) == Some(&Answer::Declined));
                let silent = players.iter().any(|p| !self.answers.contains_key(p));
                if declined {
                    TicketFate::End {
                        status: TicketStatus::Cancelled,
                        reason: self
                            .reason
                            .clone()
                            .filter(|r| r == reasons::DISCONNECTED)
                            .unwrap_or_else(|| reasons::DECLINED.to_string()),
                    }
                } else if silent && self.status == MatchStatus::TimedOut {
                    TicketFate::End {
                        status: TicketStatus::TimedOut,
                        reason: reasons::READY_CHECK_EXPIRED.to_string(),
                    }
                } else {
                    TicketFate::Requeue
                }
            }
            MatchStatus::Failed if self.server.is_none() => TicketFate::Requeue,
            _ => TicketFate::Stay,
        }
    }

    /// Players banned from queueing when this match ended: those who declined (or
    /// dropped), and on a timeout those who never answered.
    pub fn at_fault(&self) -> Vec<PlayerId> {
        match self.status {
            MatchStatus::Cancelled | MatchStatus::TimedOut => self
                .matched
                .players()
                .filter(|p| match self.answers.get(*p) {
                    Some(Answer::Declined) => true,
                    Some(Answer::Accepted) => false,
                    None => self.status == MatchStatus::TimedOut,
                })
                .cloned()
                .collect(),
            _ => Vec::new(),
        }
    }
}
