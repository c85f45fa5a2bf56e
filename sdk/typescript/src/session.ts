/**
 * The player's event session over `GET /v1/ws`: typed events (by handler or as
 * an async iterator), reconnects with exponential backoff and jitter, and after
 * every `session.ready` a read of the live tickets and the assignment, so that
 * what happened while the socket was down is replayed (`replayed: true`)
 * instead of missed.
 */
import type { MatchmakerClient } from "./client.js";
import { MatchmakerError } from "./errors.js";
import type {
  Assignment,
  EventOf,
  ServerEvent,
  SessionEvent,
  SessionEventType,
  SessionReady,
  Ticket,
} from "./types.js";

/** The part of the WebSocket API the session uses (the browser's, Node 22's, or `ws`'s). */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
}

export type WebSocketConstructor = new (url: string) => WebSocketLike;

export interface SessionOptions {
  /** The WebSocket class (default: the global one; on Node 20 pass `ws`'s). */
  WebSocket?: WebSocketConstructor;
  /** First reconnect delay before jitter (default 500 ms); it doubles per failed try. */
  initialBackoffMs?: number;
  /** Longest reconnect delay (default 30 s). */
  maxBackoffMs?: number;
  /** Source of jitter in [0, 1) (default Math.random). */
  random?: () => number;
  /** Awaited before every connection attempt (e.g. until the device is online again). */
  beforeConnect?: () => Promise<void>;
}

type Handler<E> = (event: E) => void;
type State = "idle" | "connecting" | "open" | "waiting" | "closed";

/** How far a match has got, as the player has been told. */
const MATCH_RANK: Partial<Record<ServerEvent["type"], number>> = {
  "match.ready_check": 1,
  "match.placing": 2,
  "match.assigned": 3,
  "match.completed": 4,
  "match.cancelled": 4,
  "match.failed": 4,
};

const TERMINAL: ReadonlySet<Ticket["status"]> = new Set(["completed", "cancelled", "timed_out", "failed"]);

const OPEN = 1;

export class Session {
  private readonly client: MatchmakerClient;
  private readonly options: SessionOptions;
  private readonly Ctor: WebSocketConstructor;
  private readonly handlers = new Map<string, Set<Handler<SessionEvent>>>();
  private socket: WebSocketLike | undefined;
  private state: State = "idle";
  private failures = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private waitAfterClose = 0;
  private readyWaiters: Array<(ready: SessionReady) => void> = [];
  /** Ends each open `events()` iterator. */
  private readonly iterators = new Set<() => void>();
  /** The furthest each match got in what this session delivered. */
  private readonly matchRank = new Map<string, number>();
  /** Tickets whose end this session delivered. */
  private readonly ended = new Set<string>();
  /** The player, from `session.ready`. */
  playerId: string | undefined;
  private lastReady: SessionReady | undefined;

  constructor(client: MatchmakerClient, options: SessionOptions = {}) {
    this.client = client;
    this.options = options;
    const Ctor = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (Ctor === undefined) {
      throw new TypeError("no global WebSocket (Node 20): pass options.WebSocket, e.g. `import WebSocket from \"ws\"`");
    }
    this.Ctor = Ctor;
  }

  /** True while the socket is open and past `session.ready`. */
  get connected(): boolean {
    return this.state === "open";
  }

  /**
   * Opens the socket (once) and resolves at `session.ready` (at once when the
   * session is already connected); it reconnects on its own after.
   */
  connect(): Promise<SessionReady> {
    if (this.state === "closed") return Promise.reject(new Error("session closed"));
    if (this.state === "open" && this.lastReady !== undefined) return Promise.resolve(this.lastReady);
    const ready = new Promise<SessionReady>((resolve) => this.readyWaiters.push(resolve));
    if (this.state === "idle") void this.open();
    return ready;
  }

  /** Closes the socket for good: no reconnect; async iterators end. */
  close(): void {
    if (this.state === "closed") return;
    this.state = "closed";
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.socket?.close(1000, "client closed");
    this.emit({ type: "session.disconnected", code: 1000, reason: "client closed", retry_in_ms: null });
    for (const end of [...this.iterators]) end();
  }

  /** Calls `handler` for every event of `type` (or every event, with "*"); returns the unsubscribe. */
  on<T extends SessionEventType>(type: T, handler: Handler<EventOf<T>>): () => void;
  on(type: "*", handler: Handler<SessionEvent>): () => void;
  on(type: string, handler: Handler<never>): () => void {
    let set = this.handlers.get(type);
    if (set === undefined) this.handlers.set(type, (set = new Set()));
    set.add(handler as Handler<SessionEvent>);
    return () => set.delete(handler as Handler<SessionEvent>);
  }

  /** Resolves with the next event of `type` that satisfies `predicate` (rejects after `timeoutMs`). */
  waitFor<T extends SessionEventType>(
    type: T,
    predicate: (event: EventOf<T>) => boolean = () => true,
    timeoutMs = 60_000,
  ): Promise<EventOf<T>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        reject(new Error(`no ${type} within ${timeoutMs} ms`));
      }, timeoutMs);
      const off = this.on(type, (event) => {
        if (!predicate(event)) return;
        clearTimeout(timer);
        off();
        resolve(event);
      });
    });
  }

  /**
   * Every event from this call on, until the session is closed (or the loop
   * breaks): `for await (const event of session.events())`.
   */
  events(): AsyncIterableIterator<SessionEvent> {
    const queue: SessionEvent[] = [];
    let wake: (() => void) | undefined;
    let done = this.state === "closed";
    const off = this.on("*", (event) => {
      queue.push(event);
      wake?.();
    });
    const end = () => {
      done = true;
      off();
      this.iterators.delete(end);
      wake?.();
    };
    this.iterators.add(end);
    const iterator: AsyncIterableIterator<SessionEvent> = {
      next: async () => {
        for (;;) {
          if (queue.length > 0) return { value: queue.shift()!, done: false };
          if (done) return { value: undefined, done: true };
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
        }
      },
      return: async () => {
        end();
        return { value: undefined, done: true };
      },
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }

  /** Answers a ready check: on the socket when it is open (the reply is a `match.answer` event), else over HTTP. */
  async answer(matchId: string, accept: boolean): Promise<void> {
    if (this.socket !== undefined && this.state === "open" && this.socket.readyState === OPEN) {
      this.socket.send(JSON.stringify({ type: accept ? "match.accept" : "match.decline", match_id: matchId }));
      return;
    }
    await (accept ? this.client.matches.accept(matchId) : this.client.matches.decline(matchId));
  }

  /** The socket in use (tests and diagnostics). */
  get rawSocket(): WebSocketLike | undefined {
    return this.socket;
  }

  private async open(): Promise<void> {
    if (this.state === "closed") return;
    this.state = "connecting";
    let token: string;
    try {
      await this.options.beforeConnect?.();
      if (this.state !== "connecting") return;
      // After two upgrades in a row failed, the token may have expired: ask for a new one.
      token = await this.client.currentToken(this.failures >= 2);
    } catch (e) {
      this.retry(0, `before connecting: ${(e as Error).message}`);
      return;
    }
    if (this.state !== "connecting") return;
    const url = new URL(this.client.baseUrl + "/v1/ws");
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    url.searchParams.set("token", token);
    const socket = new this.Ctor(url.toString());
    this.socket = socket;
    this.waitAfterClose = 0;
    socket.onmessage = (event) => this.received(event.data);
    socket.onerror = () => {};
    socket.onclose = (event) => {
      if (this.socket !== socket) return;
      this.socket = undefined;
      if (this.state === "closed") return;
      this.retry(event.code, event.reason);
    };
  }

  private retry(code: number, reason: string): void {
    const initial = this.options.initialBackoffMs ?? 500;
    const max = this.options.maxBackoffMs ?? 30_000;
    const base = Math.min(max, initial * 2 ** this.failures);
    const jitter = (this.options.random ?? Math.random)();
    const delay = Math.max(Math.round(base / 2 + (base / 2) * jitter), this.waitAfterClose);
    this.failures += 1;
    this.state = "waiting";
    this.emit({ type: "session.disconnected", code, reason, retry_in_ms: delay });
    this.timer = setTimeout(() => void this.open(), delay);
  }

  private received(data: unknown): void {
    if (typeof data !== "string") data = String(data);
    let event: SessionEvent;
    try {
      event = JSON.parse(data as string) as SessionEvent;
    } catch {
      return;
    }
    switch (event.type) {
      case "session.ready": {
        this.failures = 0;
        this.state = "open";
        this.playerId = event.player_id;
        this.lastReady = event;
        this.emit(event);
        for (const resolve of this.readyWaiters.splice(0)) resolve(event);
        void this.resync();
        return;
      }
      case "error": {
        const wait = event.error.retry_after_ms;
        if (typeof wait === "number") this.waitAfterClose = wait;
        this.emit(event);
        return;
      }
      default:
        this.deliver(event, false);
    }
  }

  /** Delivers a server event unless the player was already told as much (or more). */
  private deliver(event: SessionEvent, replayed: boolean): void {
    const e = event as ServerEvent & { match_id?: string; ticket_id?: string; requeued?: boolean };
    const rank = MATCH_RANK[e.type as ServerEvent["type"]];
    if (rank !== undefined && e.match_id !== undefined) {
      const seen = this.matchRank.get(e.match_id) ?? 0;
      if (replayed && seen >= rank) return;
      this.matchRank.set(e.match_id, Math.max(seen, rank));
    }
    if (e.ticket_id !== undefined) {
      const ends =
        e.type === "ticket.cancelled" ||
        e.type === "ticket.timed_out" ||
        e.type === "match.completed" ||
        ((e.type === "match.cancelled" || e.type === "match.failed") && e.requeued === false);
      if (replayed && ends && this.ended.has(e.ticket_id)) return;
      if (ends) {
        this.ended.add(e.ticket_id);
        this.client.settled(e.ticket_id);
      }
    }
    this.emit(replayed ? ({ ...event, replayed: true } as SessionEvent) : event);
  }

  /** Reads the assignment and every live ticket; replays what the socket missed. */
  private async resync(attempt = 0): Promise<void> {
    const ids = [...this.client.liveTickets];
    let assignment: Assignment | null;
    let tickets: Ticket[];
    try {
      [assignment, tickets] = await Promise.all([
        this.client.assignment(),
        Promise.all(
          ids.map((id) =>
            this.client.tickets.get(id).catch((e: unknown) => {
              if (e instanceof MatchmakerError && e.status === 404) {
                this.client.settled(id);
                return null;
              }
              throw e;
            }),
          ),
        ).then((views) => views.filter((v): v is Ticket => v !== null)),
      ]);
    } catch (e) {
      if (this.state === "open" && attempt < 3) {
        setTimeout(() => void this.resync(attempt + 1), 1000 * (attempt + 1));
      } else {
        this.emit({ type: "error", error: { code: "resync_failed", message: (e as Error).message } });
      }
      return;
    }
    if (assignment !== null) {
      const ticketId =
        tickets.find((t) => t.match_id === assignment.match_id)?.id ??
        assignment.match.tickets.find((t) => this.playerId !== undefined && t.players.includes(this.playerId))?.ticket_id;
      if (ticketId !== undefined) {
        const base = { ticket_id: ticketId, match_id: assignment.match_id, match: assignment.match };
        if (assignment.status === "requires_acceptance" && assignment.deadline != null) {
          this.deliver({ type: "match.ready_check", ...base, deadline: assignment.deadline }, true);
        } else if (assignment.status === "placing") {
          this.deliver({ type: "match.placing", ...base }, true);
        } else if (assignment.status === "assigned" && assignment.server != null) {
          this.deliver({ type: "match.assigned", ...base, server: assignment.server }, true);
        }
      }
    }
    for (const t of tickets) {
      if (!TERMINAL.has(t.status)) continue;
      const reason = t.reason ?? t.status;
      if (t.status === "completed" && t.match_id != null) {
        try {
          const record = await this.client.matches.get(t.match_id);
          this.deliver(
            { type: "match.completed", ticket_id: t.id, match_id: t.match_id, match: record.match, result: record.result ?? null },
            true,
          );
        } catch {
          // The match aged out of the player's history: the ticket says it completed.
        }
      } else if (t.status === "cancelled") {
        this.deliver({ type: "ticket.cancelled", ticket_id: t.id, reason }, true);
      } else if (t.status === "timed_out") {
        this.deliver({ type: "ticket.timed_out", ticket_id: t.id, reason }, true);
      } else if (t.status === "failed") {
        this.deliver({ type: "match.failed", ticket_id: t.id, match_id: t.match_id ?? "", reason, requeued: false }, true);
      }
      this.client.settled(t.id);
    }
    if (this.state === "open") this.emit({ type: "session.resynced", assignment, tickets });
  }

  private emit(event: SessionEvent): void {
    for (const key of [event.type, "*"]) {
      for (const handler of [...(this.handlers.get(key) ?? [])]) {
        try {
          handler(event);
        } catch (e) {
          queueMicrotask(() => {
            throw e;
          });
        }
      }
    }
  }
}
