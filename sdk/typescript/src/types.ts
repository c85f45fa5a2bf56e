/**
 * Friendly names for the API's request and response types. Every type here is
 * an alias of `openapi.ts`, which `npm run generate` writes from
 * `docs/openapi.json` (a test fails when the two drift).
 */
import type { components } from "./openapi.js";

type Schemas = components["schemas"];

export type CreateTicket = Schemas["CreateTicket"];
export type Ticket = Schemas["TicketView"];
export type TicketStatus = Schemas["TicketStatus"];
export type Match = Schemas["Match"];
export type MatchRecord = Schemas["MatchRecord"];
export type MatchStatus = Schemas["MatchStatus"];
export type MatchList = Schemas["MatchList"];
export type Assignment = Schemas["Assignment"];
export type ServerAssignment = Schemas["ServerAssignment"];
export type Party = Schemas["PartyView"];
export type Ratings = Schemas["RatingsView"];
export type RatingHistory = Schemas["HistoryView"];
export type Leaderboard = Schemas["BoardView"];
export type QueueStats = Schemas["QueueStats"];
export type BlockList = Schemas["BlockList"];
export type Attributes = Schemas["Attributes"];
export type MatchResult = Schemas["MatchResult"];

/** An event the server pushes on the socket (the API's `Event` schema). */
export type ServerEvent = Schemas["Event"];
/** Every server event's `type`. */
export type ServerEventType = ServerEvent["type"];

/** The socket's first frame: from here on no event is missed. */
export interface SessionReady {
  type: "session.ready";
  player_id: string;
}

/** The server's reply to a ready-check answer sent on the socket. */
export interface MatchAnswer {
  type: "match.answer";
  match_id: string;
  status: MatchStatus;
  at: number;
}

/** The server refused a message on the socket (`rate_limited` closes it). */
export interface SocketError {
  type: "error";
  error: { code: string; message: string; retry_after_ms?: number | null };
}

/** The socket closed; the session tries again in `retry_in_ms` (null: it stopped). */
export interface SessionDisconnected {
  type: "session.disconnected";
  code: number;
  reason: string;
  retry_in_ms: number | null;
}

/**
 * Sent after every `session.ready`: what the session read over HTTP so that
 * nothing that happened while the socket was down is missed. Events it
 * missed are also replayed before this one, marked `replayed: true`.
 */
export interface SessionResynced {
  type: "session.resynced";
  assignment: Assignment | null;
  tickets: Ticket[];
}

/** A server event, possibly rebuilt from a read after a reconnect (`replayed`). */
export type Replayable<E> = E & { replayed?: boolean };

/** Everything a session delivers. */
export type SessionEvent =
  | Replayable<ServerEvent>
  | SessionReady
  | MatchAnswer
  | SocketError
  | SessionDisconnected
  | SessionResynced;

export type SessionEventType = SessionEvent["type"];

/** The event of one `type`. */
export type EventOf<T extends SessionEventType> = Extract<SessionEvent, { type: T }>;
