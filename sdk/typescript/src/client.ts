/**
 * The HTTP client: one method per API call a game client makes, typed from the
 * OpenAPI document. It owns authentication (a token provider asked again after
 * a 401), retries of 429 and 503 answers after their `Retry-After`, and turning
 * error answers into typed errors.
 */
import { errorFor, MatchmakerError } from "./errors.js";
import { Session, type SessionOptions } from "./session.js";
import type {
  Assignment,
  BlockList,
  CreateTicket,
  Leaderboard,
  MatchList,
  MatchRecord,
  Party,
  QueueStats,
  RatingHistory,
  Ratings,
  Ticket,
} from "./types.js";

/**
 * Where the bearer token comes from: a fixed string, or a function the client
 * calls before its first request and again (with `refresh: true`) after a 401,
 * so an expired token is replaced by the login service's next one.
 */
export type TokenProvider = string | ((context: { refresh: boolean }) => string | Promise<string>);

export interface ClientOptions {
  /** The API's base URL, e.g. `https://mm.example.com` or `http://127.0.0.1:8080`. */
  baseUrl: string;
  token: TokenProvider;
  /** Retries of a 429 or 503 answer, each after its `Retry-After` (default 3). */
  maxRetries?: number;
  /** A longer `Retry-After` than this is not waited for: the error is thrown (default 30 s). */
  maxRetryWaitMs?: number;
  /** The `fetch` to use (default: the platform's). */
  fetch?: typeof fetch;
  /** For trusted backends (service tokens): act for this player (`X-Player-Id`). */
  actAs?: string;
}

interface Request {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The wait an answer asks for: `Retry-After` seconds, or the body's `retry_after_ms`. */
function retryAfter(response: Response, body: unknown): number | undefined {
  const header = response.headers.get("retry-after");
  if (header !== null && /^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const ms = (body as { error?: { retry_after_ms?: unknown } } | null)?.error?.retry_after_ms;
  return typeof ms === "number" ? ms : undefined;
}

export class MatchmakerClient {
  readonly baseUrl: string;
  private readonly options: ClientOptions;
  private readonly fetcher: typeof fetch;
  private token: string | undefined;
  /** Tickets this client created that may still be live; sessions re-read them after a reconnect. */
  readonly liveTickets = new Set<string>();

  constructor(options: ClientOptions) {
    this.options = options;
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    const f = options.fetch ?? globalThis.fetch;
    if (typeof f !== "function") throw new TypeError("no fetch: pass options.fetch");
    this.fetcher = f.bind(globalThis);
  }

  /** The current token, asking the provider when there is none yet or `refresh` is set. */
  async currentToken(refresh = false): Promise<string> {
    const provider = this.options.token;
    if (typeof provider === "string") return provider;
    if (this.token === undefined || refresh) this.token = await provider({ refresh });
    return this.token;
  }

  /** Sends a request; returns the parsed body, or undefined for 204 (and for 404 when `allow404`). */
  async request<T>(req: Request, allow404 = false): Promise<T> {
    const url = new URL(this.baseUrl + req.path);
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const maxRetries = this.options.maxRetries ?? 3;
    const maxWait = this.options.maxRetryWaitMs ?? 30_000;
    let refreshed = false;
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = {
        authorization: `Bearer ${await this.currentToken(false)}`,
        accept: "application/json",
      };
      if (this.options.actAs !== undefined) headers["x-player-id"] = this.options.actAs;
      if (req.body !== undefined) headers["content-type"] = "application/json";
      let response: Response;
      try {
        response = await this.fetcher(url, {
          method: req.method,
          headers,
          body: req.body === undefined ? undefined : JSON.stringify(req.body),
        });
      } catch (e) {
        throw new MatchmakerError(0, "network_error", `${req.method} ${req.path}: ${(e as Error).message}`);
      }
      const text = await response.text();
      let body: unknown = undefined;
      if (text.length > 0) {
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
      }
      if (response.ok) return body as T;
      if (response.status === 404 && allow404) return undefined as T;
      if (response.status === 401 && !refreshed && typeof this.options.token === "function") {
        refreshed = true;
        await this.currentToken(true);
        continue;
      }
      const wait = retryAfter(response, body);
      if ((response.status === 429 || response.status === 503) && attempt < maxRetries && (wait ?? 1000) <= maxWait) {
        await sleep(wait ?? 1000);
        continue;
      }
      throw errorFor(response.status, body, wait);
    }
  }

  /** Opens a session on the player's event socket (see {@link Session}). */
  session(options: SessionOptions = {}): Session {
    return new Session(this, options);
  }

  /** Forgets a ticket once it is over (sessions stop re-reading it). */
  settled(ticketId: string): void {
    this.liveTickets.delete(ticketId);
  }

  readonly tickets = {
    /** Queues a ticket: the caller alone, or the caller's party (leader only). */
    create: async (ticket: CreateTicket): Promise<Ticket> => {
      const created = await this.request<Ticket>({ method: "POST", path: "/v1/tickets", body: ticket });
      this.liveTickets.add(created.id);
      return created;
    },
    get: (id: string): Promise<Ticket> => this.request({ method: "GET", path: `/v1/tickets/${encodeURIComponent(id)}` }),
    /** Cancels a ticket not yet in a match (`ConflictError` `ticket_matched` once it is). */
    cancel: (id: string): Promise<Ticket> =>
      this.request({ method: "DELETE", path: `/v1/tickets/${encodeURIComponent(id)}` }),
  };

  readonly parties = {
    create: (): Promise<Party> => this.request({ method: "POST", path: "/v1/parties" }),
    get: (id: string): Promise<Party> => this.request({ method: "GET", path: `/v1/parties/${encodeURIComponent(id)}` }),
    /** The caller's party, or null when they are in none. */
    mine: async (): Promise<Party | null> => {
      try {
        return await this.request<Party>({ method: "GET", path: "/v1/players/me/party" });
      } catch (e) {
        if (e instanceof MatchmakerError && e.code === "no_party") return null;
        throw e;
      }
    },
    invite: (id: string, playerId: string): Promise<Party> =>
      this.request({ method: "POST", path: `/v1/parties/${encodeURIComponent(id)}/invites`, body: { player_id: playerId } }),
    join: (id: string): Promise<Party> => this.request({ method: "POST", path: `/v1/parties/${encodeURIComponent(id)}/join` }),
    leave: (id: string): Promise<Party> => this.request({ method: "POST", path: `/v1/parties/${encodeURIComponent(id)}/leave` }),
    kick: (id: string, playerId: string): Promise<Party> =>
      this.request({ method: "POST", path: `/v1/parties/${encodeURIComponent(id)}/kick`, body: { player_id: playerId } }),
    disband: (id: string): Promise<Party> => this.request({ method: "DELETE", path: `/v1/parties/${encodeURIComponent(id)}` }),
  };

  readonly matches = {
    get: (id: string): Promise<MatchRecord> => this.request({ method: "GET", path: `/v1/matches/${encodeURIComponent(id)}` }),
    /** The caller's matches, newest first. */
    list: (limit?: number): Promise<MatchList> =>
      this.request({ method: "GET", path: "/v1/players/me/matches", query: { limit } }),
    accept: (id: string): Promise<MatchRecord> =>
      this.request({ method: "POST", path: `/v1/matches/${encodeURIComponent(id)}/accept` }),
    decline: (id: string): Promise<MatchRecord> =>
      this.request({ method: "POST", path: `/v1/matches/${encodeURIComponent(id)}/decline` }),
  };

  readonly ratings = {
    /** The caller's rating in every mode. */
    mine: (): Promise<Ratings> => this.request({ method: "GET", path: "/v1/players/me/ratings" }),
    history: (mode: string, limit?: number): Promise<RatingHistory> =>
      this.request({ method: "GET", path: "/v1/players/me/ratings/history", query: { mode, limit } }),
    leaderboard: (mode: string, options: { limit?: number; aroundMe?: boolean } = {}): Promise<Leaderboard> =>
      this.request({
        method: "GET",
        path: `/v1/leaderboards/${encodeURIComponent(mode)}`,
        query: { limit: options.limit, around: options.aroundMe ? "me" : undefined },
      }),
  };

  /**
   * The caller's block list (at most 200). A player blocked (or who blocked the
   * caller) is never in one match with the caller; `add` and `remove` hold for
   * tickets already waiting once they resolve.
   */
  readonly blocks = {
    list: (): Promise<BlockList> => this.request({ method: "GET", path: "/v1/players/me/blocks" }),
    add: (playerId: string): Promise<BlockList> =>
      this.request({ method: "PUT", path: `/v1/players/me/blocks/${encodeURIComponent(playerId)}` }),
    remove: (playerId: string): Promise<BlockList> =>
      this.request({ method: "DELETE", path: `/v1/players/me/blocks/${encodeURIComponent(playerId)}` }),
  };

  /** The caller's match that is not over (with `server.address` once assigned), or null. */
  assignment(): Promise<Assignment | null> {
    return this.request<Assignment | null>({ method: "GET", path: "/v1/players/me/assignment" }, true).then(
      (a) => a ?? null,
    );
  }

  /** A mode's queue figures per region: players waiting, matches per minute, time to match. */
  queues(mode: string): Promise<QueueStats> {
    return this.request({ method: "GET", path: `/v1/queues/${encodeURIComponent(mode)}` });
  }
}
