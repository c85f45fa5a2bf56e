// Errors the API answers with: every non-2xx answer becomes a
// MatchmakerException (or the subclass for its status) with the API's stable
// Code, its message and the error object's extra fields.
using System;

namespace Matchmaker
{
    /// <summary>An error answer from the API; Status 0 when no answer arrived.</summary>
    public class MatchmakerException : Exception
    {
        /// <summary>HTTP status (0: network error).</summary>
        public readonly int Status;
        /// <summary>The API's stable code, e.g. "player_busy" (see ErrorCodes).</summary>
        public readonly string Code;
        /// <summary>The whole error object: extra fields such as ticket_id, banned_until, retry_after_ms.</summary>
        public readonly JsonObject Details;
        /// <summary>How long the server asked the client to wait, if it said.</summary>
        public readonly TimeSpan? RetryAfter;

        public MatchmakerException(int status, string code, string message, JsonObject details = null, TimeSpan? retryAfter = null, Exception inner = null)
            : base(message, inner)
        {
            Status = status;
            Code = code;
            Details = details ?? new JsonObject();
            RetryAfter = retryAfter;
        }

        /// <summary>Builds the exception for an answer's status and body.</summary>
        public static MatchmakerException For(int status, JsonObject body, TimeSpan? retryAfter)
        {
            var error = body?.GetObject("error") ?? new JsonObject();
            var code = error.GetString("code") ?? "http_" + status;
            var message = error.GetString("message") ?? "HTTP " + status;
            switch (status)
            {
                case 400: return new BadRequestException(status, code, message, error, retryAfter);
                case 401: return new UnauthorizedException(status, code, message, error, retryAfter);
                case 403: return new ForbiddenException(status, code, message, error, retryAfter);
                case 404: return new NotFoundException(status, code, message, error, retryAfter);
                case 409: return new ConflictException(status, code, message, error, retryAfter);
                case 429: return new RateLimitedException(status, code, message, error, retryAfter);
                case 503: return new UnavailableException(status, code, message, error, retryAfter);
                default: return new MatchmakerException(status, code, message, error, retryAfter);
            }
        }
    }

    /// <summary>400: malformed, or an unknown mode, region or attribute.</summary>
    public class BadRequestException : MatchmakerException
    {
        public BadRequestException(int s, string c, string m, JsonObject d, TimeSpan? r) : base(s, c, m, d, r) { }
    }

    /// <summary>401: no token, or one that does not verify.</summary>
    public class UnauthorizedException : MatchmakerException
    {
        public UnauthorizedException(int s, string c, string m, JsonObject d, TimeSpan? r) : base(s, c, m, d, r) { }
    }

    /// <summary>403: not allowed (queue_banned carries banned_until).</summary>
    public class ForbiddenException : MatchmakerException
    {
        public ForbiddenException(int s, string c, string m, JsonObject d, TimeSpan? r) : base(s, c, m, d, r) { }
    }

    /// <summary>404: no such thing, or not the caller's.</summary>
    public class NotFoundException : MatchmakerException
    {
        public NotFoundException(int s, string c, string m, JsonObject d, TimeSpan? r) : base(s, c, m, d, r) { }
    }

    /// <summary>409: the state forbids it (player_busy carries ticket_id).</summary>
    public class ConflictException : MatchmakerException
    {
        public ConflictException(int s, string c, string m, JsonObject d, TimeSpan? r) : base(s, c, m, d, r) { }
    }

    /// <summary>429: over a rate limit, still after the client's retries.</summary>
    public class RateLimitedException : MatchmakerException
    {
        public RateLimitedException(int s, string c, string m, JsonObject d, TimeSpan? r) : base(s, c, m, d, r) { }
    }

    /// <summary>503: the store or rating service is down for now, still after retries.</summary>
    public class UnavailableException : MatchmakerException
    {
        public UnavailableException(int s, string c, string m, JsonObject d, TimeSpan? r) : base(s, c, m, d, r) { }
    }

    /// <summary>Every code the API answers with (the OpenAPI document's ErrorCode schema; a test checks both ways).</summary>
    public static class ErrorCodes
    {
        /// <summary>409: the player is in another party; leave it first.</summary>
        public const string AlreadyInParty = "already_in_party";
        /// <summary>409: the player invited is already in the party.</summary>
        public const string AlreadyMember = "already_member";
        /// <summary>403: the mode takes this attribute from the player's token; leave it out (`attribute`).</summary>
        public const string AttributeFromToken = "attribute_from_token";
        /// <summary>400: a rule of the mode that never turns off needs this attribute, and a ticket without it could never be matched (`attribute`).</summary>
        public const string AttributeRequired = "attribute_required";
        /// <summary>400: the players of one ticket could never meet a rule of the mode together (builds of different groups, no map in common, roles one team cannot hold) (`attribute`).</summary>
        public const string AttributesDisagree = "attributes_disagree";
        /// <summary>404: the match has no open backfill.</summary>
        public const string BackfillNotFound = "backfill_not_found";
        /// <summary>409: the match's mode does not backfill.</summary>
        public const string BackfillOff = "backfill_off";
        /// <summary>400: the request body could not be read.</summary>
        public const string BadBody = "bad_body";
        /// <summary>408: the request body did not arrive in time.</summary>
        public const string BodyTimeout = "body_timeout";
        /// <summary>413: the request body is larger than 16 KiB.</summary>
        public const string BodyTooLarge = "body_too_large";
        /// <summary>503: the operator dashboard cannot read the store now; retry shortly.</summary>
        public const string DashboardUnavailable = "dashboard_unavailable";
        /// <summary>403: a valid caller acting on what is not theirs (another player's ticket, party, ratings, block list or assignment).</summary>
        public const string Forbidden = "forbidden";
        /// <summary>400: an attribute over the limits, or a value the mode's rule cannot use: of the wrong kind, too few values, no role the mode needs (`attribute`).</summary>
        public const string InvalidAttribute = "invalid_attribute";
        /// <summary>400: a region's `latency_ms` is above the most the service takes.</summary>
        public const string InvalidLatency = "invalid_latency";
        /// <summary>WebSocket: a frame that is not a ready-check answer the session understands.</summary>
        public const string InvalidMessage = "invalid_message";
        /// <summary>400: a player id that is not valid, listed twice, or one the call cannot take (blocking oneself, kicking oneself).</summary>
        public const string InvalidPlayer = "invalid_player";
        /// <summary>400: a query parameter out of range or malformed.</summary>
        public const string InvalidQuery = "invalid_query";
        /// <summary>400: a rating outside the range the service takes.</summary>
        public const string InvalidRating = "invalid_rating";
        /// <summary>400 or 422: the JSON does not have the expected shape, or its fields do not make sense together (a region listed twice).</summary>
        public const string InvalidRequest = "invalid_request";
        /// <summary>400: a backfill's seats do not fit the match.</summary>
        public const string InvalidSeats = "invalid_seats";
        /// <summary>401: a token that does not verify: expired, forged, or for another audience.</summary>
        public const string InvalidToken = "invalid_token";
        /// <summary>400: the body is not JSON.</summary>
        public const string MalformedJson = "malformed_json";
        /// <summary>404: no such match (or not the caller's to see).</summary>
        public const string MatchNotFound = "match_not_found";
        /// <summary>409: the match is not being played, so it has no seats to fill.</summary>
        public const string MatchNotRunning = "match_not_running";
        /// <summary>405: the method is not allowed on this path.</summary>
        public const string MethodNotAllowed = "method_not_allowed";
        /// <summary>400: the ticket lists no player, or a trusted backend named none.</summary>
        public const string MissingPlayer = "missing_player";
        /// <summary>400: a player has no rating and the ticket gives none (where ratings come with the ticket).</summary>
        public const string MissingRating = "missing_rating";
        /// <summary>400: the ticket lists no region.</summary>
        public const string MissingRegion = "missing_region";
        /// <summary>409: the mode is closed: it takes no new ticket or backfill.</summary>
        public const string ModeClosed = "mode_closed";
        /// <summary>404: the player is not in a match.</summary>
        public const string NoAssignment = "no_assignment";
        /// <summary>404: the player is in no party.</summary>
        public const string NoParty = "no_party";
        /// <summary>404: no such endpoint.</summary>
        public const string NoRoute = "no_route";
        /// <summary>403: a ticket names other players, but the caller is in no party.</summary>
        public const string NotInParty = "not_in_party";
        /// <summary>403: the operator plane takes only operators' tokens.</summary>
        public const string NotOperator = "not_operator";
        /// <summary>403: only the party's leader may do this.</summary>
        public const string NotPartyLeader = "not_party_leader";
        /// <summary>403: a party's ticket names a player who is not in the party (`player_id`).</summary>
        public const string NotPartyMember = "not_party_member";
        /// <summary>503: the ticket was written but not yet replicated; look it up or retry shortly.</summary>
        public const string NotReplicated = "not_replicated";
        /// <summary>WebSocket: the session takes JSON text frames only.</summary>
        public const string NotSupported = "not_supported";
        /// <summary>403: the match is hosted by another game server.</summary>
        public const string NotYourMatch = "not_your_match";
        /// <summary>403: the ticket is another player's.</summary>
        public const string NotYourTicket = "not_your_ticket";
        /// <summary>403: an operator token is for the operator plane, not the player API.</summary>
        public const string OperatorToken = "operator_token";
        /// <summary>409: the party has as many members as it may.</summary>
        public const string PartyFull = "party_full";
        /// <summary>404: no such party.</summary>
        public const string PartyNotFound = "party_not_found";
        /// <summary>400: the party is larger than the mode takes.</summary>
        public const string PartyTooLarge = "party_too_large";
        /// <summary>409: a player already has an active ticket (`ticket_id`).</summary>
        public const string PlayerBusy = "player_busy";
        /// <summary>409: a player is in a match that is not over (`match_id`).</summary>
        public const string PlayerInMatch = "player_in_match";
        /// <summary>404: the player named is not in the party.</summary>
        public const string PlayerNotInParty = "player_not_in_party";
        /// <summary>400: a service token must name the player it acts for (`X-Player-Id`).</summary>
        public const string PlayerRequired = "player_required";
        /// <summary>403: the player declined or ignored a ready check and may not queue until `banned_until`.</summary>
        public const string QueueBanned = "queue_banned";
        /// <summary>429: over a rate limit; retry after `Retry-After` (`retry_after_ms`, `scope`).</summary>
        public const string RateLimited = "rate_limited";
        /// <summary>409: a player's rating changed while the ticket was queued; retry.</summary>
        public const string RatingChanged = "rating_changed";
        /// <summary>403: only a trusted backend may send ratings.</summary>
        public const string RatingNotAllowed = "rating_not_allowed";
        /// <summary>503: the rating database is unavailable; retry shortly.</summary>
        public const string RatingsUnavailable = "ratings_unavailable";
        /// <summary>409: the match's ready check is over.</summary>
        public const string ReadyCheckClosed = "ready_check_closed";
        /// <summary>409: the region is closed (being retired: `CLOSED_REGIONS`): it takes no new ticket (none the ticket lists that is served here is open) or backfill.</summary>
        public const string RegionClosed = "region_closed";
        /// <summary>503: the matchmaking store is unavailable; retry shortly.</summary>
        public const string StoreUnavailable = "store_unavailable";
        /// <summary>409: the ticket is already in a match and can no longer be cancelled.</summary>
        public const string TicketMatched = "ticket_matched";
        /// <summary>404: no such ticket (or not the caller's to see).</summary>
        public const string TicketNotFound = "ticket_not_found";
        /// <summary>409: the player's block list is full.</summary>
        public const string TooManyBlocks = "too_many_blocks";
        /// <summary>409: too many invites pending at once, for the party or the player invited.</summary>
        public const string TooManyInvites = "too_many_invites";
        /// <summary>429: too many dashboard streams open at once.</summary>
        public const string TooManyStreams = "too_many_streams";
        /// <summary>401: no token, or not in the form asked for.</summary>
        public const string Unauthorized = "unauthorized";
        /// <summary>400 (a ticket) or 404 (queue figures, ratings): no such mode.</summary>
        public const string UnknownMode = "unknown_mode";
        /// <summary>400: none of the ticket's regions is served.</summary>
        public const string UnknownRegion = "unknown_region";
        /// <summary>415: the body is not sent as `application/json`.</summary>
        public const string UnsupportedMediaType = "unsupported_media_type";
        /// <summary>400, 405 or 426: the events endpoint takes WebSocket upgrades only.</summary>
        public const string WebsocketRequired = "websocket_required";
    }
}
