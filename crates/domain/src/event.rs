//! Events pushed to players over the WebSocket, JSON objects tagged by `type`.

use crate::{
    Match, MatchId, MatchResult, Millis, PartyView, PlayerId, ServerAssignment, Skill, TicketId,
};
use serde::{Deserialize, Serialize};

/// Something that happened to one of a player's tickets or matches. Every `match.*`
/// event but `match.accepted` names the player's ticket in the match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "type")]
pub enum Event {
    /// A worker looked at the ticket for the first time.
    #[serde(rename = "ticket.searching")]
    Searching { ticket_id: TicketId },
    /// The ticket was cancelled by one of its players, or withdrawn by the
    /// matchmaker with a `reason`: `matched_elsewhere`, `party_changed`, or
    /// `disconnected` (a player had no event socket open for the mode's
    /// `cancel_offline_after`).
    #[serde(rename = "ticket.cancelled")]
    Cancelled {
        ticket_id: TicketId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// The service ended the ticket's wait: `timed_out` with `reason`
    /// `no_match_found` (it waited its mode's `give_up_after` without a match),
    /// `mode_closed` (its mode was closed while it waited), `region_closed`
    /// (every region it waited in was closed meanwhile), `party_too_large`
    /// (its mode's `max_party` was lowered while it waited) or `unmatchable`
    /// (its attributes could never meet its mode's rules as they are now).
    #[serde(rename = "ticket.timed_out")]
    TimedOut { ticket_id: TicketId, reason: String },
    /// The ticket was placed in a match that every player must accept by
    /// `deadline` (`POST /v1/matches/{id}/accept` or `.../decline`, or the same
    /// over this socket).
    #[serde(rename = "match.ready_check")]
    ReadyCheck {
        ticket_id: TicketId,
        match_id: MatchId,
        deadline: Millis,
        #[serde(rename = "match")]
        matched: Match,
    },
    /// A player of the match accepted.
    #[serde(rename = "match.accepted")]
    Accepted {
        match_id: MatchId,
        player_id: PlayerId,
        accepted: usize,
        total: usize,
    },
    /// The ticket is in a match that is being placed on a game server.
    #[serde(rename = "match.placing")]
    Placing {
        ticket_id: TicketId,
        match_id: MatchId,
        #[serde(rename = "match")]
        matched: Match,
    },
    /// The match has a game server: connect to `server.address`.
    #[serde(rename = "match.assigned")]
    Assigned {
        ticket_id: TicketId,
        match_id: MatchId,
        server: ServerAssignment,
        #[serde(rename = "match")]
        matched: Match,
    },
    /// Matchmaking is done with the match: without placement, as soon as it is
    /// formed (and accepted); with placement, once the game server reported the
    /// result.
    #[serde(rename = "match.completed")]
    Completed {
        ticket_id: TicketId,
        match_id: MatchId,
        #[serde(rename = "match")]
        matched: Match,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<MatchResult>,
    },
    /// The match was called off before it started (`reason`: `declined`,
    /// `ready_check_expired`, `disconnected`). `requeued`: this player's ticket is
    /// back in the queue with its original wait; `banned_until`: this player may not
    /// queue before then.
    #[serde(rename = "match.cancelled")]
    MatchCancelled {
        ticket_id: TicketId,
        match_id: MatchId,
        reason: String,
        requeued: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        banned_until: Option<Millis>,
    },
    /// The match failed (`no_server_available`: back in the queue; `server_lost`,
    /// `released_without_result`, `match_expired` (still on its server after
    /// the mode's `max_match_duration`): no rating change, queue again when
    /// ready).
    #[serde(rename = "match.failed")]
    MatchFailed {
        ticket_id: TicketId,
        match_id: MatchId,
        reason: String,
        requeued: bool,
    },
    /// The player's rating in `mode` changed after `match_id` was scored.
    #[serde(rename = "rating.updated")]
    RatingUpdated {
        mode: String,
        match_id: MatchId,
        old: Skill,
        new: Skill,
    },
    /// The player was invited to a party (join with `POST /v1/parties/{id}/join`).
    #[serde(rename = "party.invited")]
    PartyInvited { party: PartyView, by: PlayerId },
    /// A party the player is in (or was just removed from, or was invited to)
    /// changed: `change` says how (`created`, `invited`, `joined`, `left`,
    /// `kicked`, `disbanded`), `player_id` whom it concerned.
    #[serde(rename = "party.updated")]
    PartyUpdated {
        party: PartyView,
        change: String,
        player_id: PlayerId,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        disbanded: bool,
    },
}

/// An event addressed to one player, as it travels between processes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventEnvelope {
    pub player: PlayerId,
    pub event: Event,
}

impl EventEnvelope {
    /// `ticket.cancelled` of ticket `id` for each of its `players`, with the
    /// matchmaker's `reason` if it withdrew the ticket.
    pub fn cancelled(players: &[PlayerId], id: &TicketId, reason: Option<&str>) -> Vec<Self> {
        players
            .iter()
            .map(|p| Self {
                player: p.clone(),
                event: Event::Cancelled {
                    ticket_id: id.clone(),
                    reason: reason.map(String::from),
                },
            })
            .collect()
    }
}
