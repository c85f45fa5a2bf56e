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

    /// <summary>The API's error codes a game client is most likely to handle (every one is listed, with
    /// what it means, in the ErrorCode schema of docs/openapi.json).</summary>
    public static class ErrorCodes
    {
        public const string PlayerBusy = "player_busy";
        public const string PlayerInMatch = "player_in_match";
        public const string QueueBanned = "queue_banned";
        public const string RateLimited = "rate_limited";
        public const string ReadyCheckClosed = "ready_check_closed";
        public const string TicketMatched = "ticket_matched";
        public const string TicketNotFound = "ticket_not_found";
        public const string MatchNotFound = "match_not_found";
        public const string NoAssignment = "no_assignment";
        public const string NoParty = "no_party";
        public const string NotPartyLeader = "not_party_leader";
        public const string PartyFull = "party_full";
        public const string AlreadyInParty = "already_in_party";
        public const string UnknownMode = "unknown_mode";
        public const string UnknownRegion = "unknown_region";
        public const string InvalidAttribute = "invalid_attribute";
        public const string AttributeFromToken = "attribute_from_token";
        public const string Unauthorized = "unauthorized";
        public const string InvalidToken = "invalid_token";
        public const string StoreUnavailable = "store_unavailable";
        public const string TooManyBlocks = "too_many_blocks";
        public const string ModeClosed = "mode_closed";
        public const string PartyTooLarge = "party_too_large";
        public const string NotPartyMember = "not_party_member";
        public const string AttributeRequired = "attribute_required";
        public const string AttributesDisagree = "attributes_disagree";
        public const string RatingChanged = "rating_changed";
        public const string RatingsUnavailable = "ratings_unavailable";
        public const string NotReplicated = "not_replicated";
    }
}
