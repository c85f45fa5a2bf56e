/**
 * Errors the API answers with: every non-2xx answer becomes a
 * {@link MatchmakerError} (or its subclass for the status) carrying the API's
 * stable `code`, its message, and the error object's extra fields.
 */

import type { components } from "./openapi.js";

/**
 * The API's error codes (`error.code`): the `ErrorCode` schema of
 * `docs/openapi.json`, generated with the rest of the types, so the server's
 * codes and these cannot drift apart. New codes may appear; match on the ones
 * you handle.
 */
export type ErrorCode = components["schemas"]["ErrorCode"] | (string & {});

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
