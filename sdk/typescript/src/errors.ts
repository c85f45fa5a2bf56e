/**
 * Errors the API answers with: every non-2xx answer becomes a
 * {@link MatchmakerError} (or its subclass for the status) carrying the API's
 * stable `code`, its message, and the error object's extra fields.
 */

/** The API's error codes (`error.code`). New codes may appear; match on the ones you handle. */
export type ErrorCode =
  | "already_in_party"
  | "already_member"
  | "attribute_from_token"
  | "attributes_disagree"
  | "bad_body"
  | "body_timeout"
  | "body_too_large"
  | "forbidden"
  | "invalid_attribute"
  | "invalid_latency"
  | "invalid_player"
  | "invalid_query"
  | "invalid_rating"
  | "invalid_request"
  | "invalid_token"
  | "malformed_json"
  | "match_not_found"
  | "method_not_allowed"
  | "missing_player"
  | "missing_region"
  | "no_assignment"
  | "no_party"
  | "not_in_party"
  | "not_party_leader"
  | "not_party_member"
  | "not_your_match"
  | "not_your_ticket"
  | "operator_token"
  | "party_full"
  | "party_not_found"
  | "party_too_large"
  | "player_busy"
  | "player_in_match"
  | "player_not_in_party"
  | "queue_banned"
  | "rate_limited"
  | "rating_not_allowed"
  | "ratings_unavailable"
  | "ready_check_closed"
  | "store_unavailable"
  | "ticket_matched"
  | "ticket_not_found"
  | "too_many_blocks"
  | "too_many_invites"
  | "unauthorized"
  | "unknown_mode"
  | "unknown_region"
  | "unsupported_media_type"
  | "websocket_required"
  | (string & {});

/** An error answer from the API (or a transport failure, with status 0). */
export class MatchmakerError extends Error {
  /** HTTP status; 0 when no answer arrived (network error). */
  readonly status: number;
  /** The API's stable code, e.g. `player_busy`. */
  readonly code: ErrorCode;
  /** The whole error object: extra fields such as `ticket_id`, `banned_until`, `retry_after_ms`. */
  readonly details: Record<string, unknown>;
  /** How long the server asked the client to wait before trying again, if it said. */
  readonly retryAfterMs: number | undefined;

  constructor(status: number, code: ErrorCode, message: string, details: Record<string, unknown> = {}, retryAfterMs?: number) {
    super(message);
    this.name = new.target.name;
    this.status = status;
    this.code = code;
    this.details = details;
    this.retryAfterMs = retryAfterMs;
  }
}

/** 400: the request is malformed or names an unknown mode, region or attribute. */
export class BadRequestError extends MatchmakerError {}
/** 401: no token, or one that does not verify (`unauthorized`, `invalid_token`). */
export class UnauthorizedError extends MatchmakerError {}
/** 403: not allowed (`queue_banned` carries `banned_until`, `not_party_leader`, ...). */
export class ForbiddenError extends MatchmakerError {}
/** 404: no such ticket, match, party or assignment, or not the caller's. */
export class NotFoundError extends MatchmakerError {}
/** 409: the state forbids it (`player_busy` carries `ticket_id`, `ticket_matched`, `ready_check_closed`, ...). */
export class ConflictError extends MatchmakerError {}
/** 429: over a rate limit, still after the client's retries. */
export class RateLimitedError extends MatchmakerError {}
/** 503: the service's store or rating service is down for now, still after retries. */
export class UnavailableError extends MatchmakerError {}

/** Builds the error for an answer's status, code and body. */
export function errorFor(status: number, body: unknown, retryAfterMs?: number): MatchmakerError {
  const object = (body as { error?: Record<string, unknown> } | null)?.error ?? {};
  const code = typeof object.code === "string" ? object.code : `http_${status}`;
  const message = typeof object.message === "string" ? object.message : `HTTP ${status}`;
  const Kind =
    status === 400 ? BadRequestError
    : status === 401 ? UnauthorizedError
    : status === 403 ? ForbiddenError
    : status === 404 ? NotFoundError
    : status === 409 ? ConflictError
    : status === 429 ? RateLimitedError
    : status === 503 ? UnavailableError
    : MatchmakerError;
  return new Kind(status, code, message, object, retryAfterMs);
}

/** True if `e` is an API error with this code. */
export function isErrorCode(e: unknown, code: ErrorCode): e is MatchmakerError {
  return e instanceof MatchmakerError && e.code === code;
}
