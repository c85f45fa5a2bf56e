//! The API's error codes: every `error.code` an answer (or a WebSocket error
//! frame) may carry, each with what it means, in one list. [`super::ApiError`]
//! takes only a [`Code`], so a code missing here does not compile; the OpenAPI
//! document lists them all as the `ErrorCode` schema, from which the SDKs'
//! error types are generated.

use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaType, Type};

/// One of the API's error codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Code(&'static str);

impl Code {
    /// The code as the API writes it.
    pub fn as_str(self) -> &'static str {
        self.0
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

macro_rules! codes {
    ($($name:ident = $text:literal: $about:literal,)*) => {
        impl Code {
            $(#[doc = $about] pub const $name: Code = Code($text);)*
            /// Every code, with what it means.
            pub const ALL: &'static [(Code, &'static str)] = &[$((Code::$name, $about),)*];
        }
    };
}

codes! {
    ALREADY_IN_PARTY = "already_in_party": "409: the player is in another party; leave it first.",
    ALREADY_MEMBER = "already_member": "409: the player invited is already in the party.",
    ATTRIBUTE_FROM_TOKEN = "attribute_from_token": "403: the mode takes this attribute from the player's token; leave it out (`attribute`).",
    ATTRIBUTE_REQUIRED = "attribute_required": "400: a rule of the mode that never turns off needs this attribute, and a ticket without it could never be matched (`attribute`).",
    ATTRIBUTES_DISAGREE = "attributes_disagree": "400: the players of one ticket could never meet a rule of the mode together (builds of different groups, no map in common, roles one team cannot hold) (`attribute`).",
    BACKFILL_NOT_FOUND = "backfill_not_found": "404: the match has no open backfill.",
    BACKFILL_OFF = "backfill_off": "409: the match's mode does not backfill.",
    BAD_BODY = "bad_body": "400: the request body could not be read.",
    BODY_TIMEOUT = "body_timeout": "408: the request body did not arrive in time.",
    BODY_TOO_LARGE = "body_too_large": "413: the request body is larger than 16 KiB.",
    DASHBOARD_UNAVAILABLE = "dashboard_unavailable": "503: the operator dashboard cannot read the store now; retry shortly.",
    FORBIDDEN = "forbidden": "403: a valid caller acting on what is not theirs (another player's ticket, party, ratings, block list or assignment).",
    INVALID_ATTRIBUTE = "invalid_attribute": "400: an attribute over the limits, or a value the mode's rule cannot use: of the wrong kind, too few values, no role the mode needs (`attribute`).",
    INVALID_LATENCY = "invalid_latency": "400: a region's `latency_ms` is above the most the service takes.",
    INVALID_MESSAGE = "invalid_message": "WebSocket: a frame that is not a ready-check answer the session understands.",
    INVALID_PLAYER = "invalid_player": "400: a player id that is not valid, listed twice, or one the call cannot take (blocking oneself, kicking oneself).",
    INVALID_QUERY = "invalid_query": "400: a query parameter out of range or malformed.",
    INVALID_RATING = "invalid_rating": "400: a rating outside the range the service takes.",
    INVALID_REQUEST = "invalid_request": "400 or 422: the JSON does not have the expected shape, or its fields do not make sense together (a region listed twice).",
    INVALID_SEATS = "invalid_seats": "400: a backfill's seats do not fit the match.",
    INVALID_TOKEN = "invalid_token": "401: a token that does not verify: expired, forged, or for another audience.",
    MALFORMED_JSON = "malformed_json": "400: the body is not JSON.",
    MATCH_NOT_FOUND = "match_not_found": "404: no such match (or not the caller's to see).",
    MATCH_NOT_RUNNING = "match_not_running": "409: the match is not being played, so it has no seats to fill.",
    METHOD_NOT_ALLOWED = "method_not_allowed": "405: the method is not allowed on this path.",
    MISSING_PLAYER = "missing_player": "400: the ticket lists no player, or a trusted backend named none.",
    MISSING_RATING = "missing_rating": "400: a player has no rating and the ticket gives none (where ratings come with the ticket).",
    MISSING_REGION = "missing_region": "400: the ticket lists no region.",
    MODE_CLOSED = "mode_closed": "409: the mode is closed: it takes no new ticket or backfill.",
    NO_ASSIGNMENT = "no_assignment": "404: the player is not in a match.",
    NO_PARTY = "no_party": "404: the player is in no party.",
    NO_ROUTE = "no_route": "404: no such endpoint.",
    NOT_IN_PARTY = "not_in_party": "403: a ticket names other players, but the caller is in no party.",
    NOT_OPERATOR = "not_operator": "403: the operator plane takes only operators' tokens.",
    NOT_PARTY_LEADER = "not_party_leader": "403: only the party's leader may do this.",
    NOT_PARTY_MEMBER = "not_party_member": "403: a party's ticket names a player who is not in the party (`player_id`).",
    NOT_REPLICATED = "not_replicated": "503: the ticket was written but not yet replicated; look it up or retry shortly.",
    NOT_SUPPORTED = "not_supported": "WebSocket: the session takes JSON text frames only.",
    NOT_YOUR_MATCH = "not_your_match": "403: the match is hosted by another game server.",
    NOT_YOUR_TICKET = "not_your_ticket": "403: the ticket is another player's.",
    OPERATOR_TOKEN = "operator_token": "403: an operator token is for the operator plane, not the player API.",
    PARTY_FULL = "party_full": "409: the party has as many members as it may.",
    PARTY_NOT_FOUND = "party_not_found": "404: no such party.",
    PARTY_TOO_LARGE = "party_too_large": "400: the party is larger than the mode takes.",
    PLAYER_BUSY = "player_busy": "409: a player already has an active ticket (`ticket_id`).",
    PLAYER_IN_MATCH = "player_in_match": "409: a player is in a match that is not over (`match_id`).",
    PLAYER_NOT_IN_PARTY = "player_not_in_party": "404: the player named is not in the party.",
    PLAYER_REQUIRED = "player_required": "400: a service token must name the player it acts for (`X-Player-Id`).",
    QUEUE_BANNED = "queue_banned": "403: the player declined or ignored a ready check and may not queue until `banned_until`.",
    RATE_LIMITED = "rate_limited": "429: over a rate limit; retry after `Retry-After` (`retry_after_ms`, `scope`).",
    RATING_CHANGED = "rating_changed": "409: a player's rating changed while the ticket was queued; retry.",
    RATING_NOT_ALLOWED = "rating_not_allowed": "403: only a trusted backend may send ratings.",
    RATINGS_UNAVAILABLE = "ratings_unavailable": "503: the rating database is unavailable; retry shortly.",
    READY_CHECK_CLOSED = "ready_check_closed": "409: the match's ready check is over.",
    REGION_CLOSED = "region_closed": "409: the region is closed (being retired: `CLOSED_REGIONS`): it takes no new ticket (none the ticket lists that is served here is open) or backfill.",
    STORE_UNAVAILABLE = "store_unavailable": "503: the matchmaking store is unavailable; retry shortly.",
    TICKET_MATCHED = "ticket_matched": "409: the ticket is already in a match and can no longer be cancelled.",
    TICKET_NOT_FOUND = "ticket_not_found": "404: no such ticket (or not the caller's to see).",
    TOO_MANY_BLOCKS = "too_many_blocks": "409: the player's block list is full.",
    TOO_MANY_INVITES = "too_many_invites": "409: too many invites pending at once, for the party or the player invited.",
    TOO_MANY_STREAMS = "too_many_streams": "429: too many dashboard streams open at once.",
    UNAUTHORIZED = "unauthorized": "401: no token, or not in the form asked for.",
    UNKNOWN_MODE = "unknown_mode": "400 (a ticket) or 404 (queue figures, ratings): no such mode.",
    UNKNOWN_REGION = "unknown_region": "400: none of the ticket's regions is served.",
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type": "415: the body is not sent as `application/json`.",
    WEBSOCKET_REQUIRED = "websocket_required": "400, 405 or 426: the events endpoint takes WebSocket upgrades only.",
}

/// The `ErrorCode` schema: every code, in a string enum, with what each means
/// in the description.
pub fn schema() -> RefOr<Schema> {
    let about: Vec<String> = Code::ALL
        .iter()
        .map(|(c, about)| format!("- `{c}`: {about}"))
        .collect();
    ObjectBuilder::new()
        .schema_type(SchemaType::Type(Type::String))
        .description(Some(format!(
            "The codes an error's `code` may hold (new ones may be added; treat an unknown code by its status):\n{}",
            about.join("\n")
        )))
        .enum_values(Some(Code::ALL.iter().map(|(c, _)| c.as_str())))
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct_snake_case_and_described() {
        let mut seen = std::collections::BTreeSet::new();
        for (c, about) in Code::ALL {
            assert!(seen.insert(c.as_str()), "{c} twice");
            assert!(
                c.as_str()
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{c}"
            );
            assert!(about.len() > 10, "{c}");
        }
    }
}
