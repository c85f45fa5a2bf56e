// The session against a socket the server closes, and the token provider.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { MatchmakerClient, UnauthorizedError } from "../dist/index.js";
import { freePort, record, sessionOf, startService } from "./harness.mjs";

let service;
before(async () => {
  service = await startService({ gameServer: true });
});
after(() => service?.stop());

/**
 * A session that reconnects 300 ms after a drop (no jitter), but only once the
 * test calls `letIn()`.
 */
function gated(client) {
  let letIn;
  const gate = new Promise((resolve) => (letIn = resolve));
  let connects = 0;
  const session = sessionOf(client, {
    initialBackoffMs: 300,
    random: () => 1,
    beforeConnect: () => (connects++ === 0 ? Promise.resolve() : gate),
  });
  return { session, letIn };
}

test("the server closes the socket; the session reconnects and replays the missed ready check", async (t) => {
  const carol = service.client("carol");
  const dave = service.client("dave");
  // Carol's session comes back only after Dave was told of the match, so
  // Carol's socket surely missed it.
  const { session: sc, letIn } = gated(carol);
  const sd = sessionOf(dave);
  t.after(() => [sc, sd].forEach((s) => s.close()));
  const c = record(sc);
  const d = record(sd);
  await Promise.all([sc.connect(), sd.connect()]);

  // A frame over the server's 64 KiB limit: the server closes the socket.
  sc.rawSocket.send("x".repeat(70 * 1024));
  const dropped = await c.next("session.disconnected");
  assert.equal(dropped.retry_in_ms, 300);
  assert.equal(sc.connected, false);

  const tc = await carol.tickets.create({ mode: "1v1", players: ["carol"], regions: ["eu"] });
  await dave.tickets.create({ mode: "1v1", players: ["dave"], regions: ["eu"] });
  const live = await d.next("match.ready_check");
  assert.equal(live.replayed, undefined);
  letIn();

  // Carol's check was pushed while her socket was down; the session reads it back.
  const replayed = await c.next("match.ready_check");
  assert.equal(replayed.replayed, true);
  assert.equal(replayed.ticket_id, tc.id);
  assert.equal(replayed.match_id, live.match_id);
  assert.equal(replayed.deadline, live.deadline);
  assert.equal(c.events.filter((e) => e.type === "session.ready").length, 2);
  const resynced = await c.next("session.resynced", (e) => e.assignment !== null);
  assert.equal(resynced.assignment.status, "requires_acceptance");

  await sc.answer(replayed.match_id, true);
  await dave.matches.accept(live.match_id);
  const assigned = await c.next("match.assigned", (e) => e.match_id === live.match_id);
  assert.equal(assigned.replayed, undefined);
  assert.equal(c.events.filter((e) => e.type === "match.ready_check").length, 1, "told once");
});

test("a session replays a ticket that ended while it was away", async (t) => {
  const erin = service.client("erin");
  const { session: se, letIn } = gated(erin);
  t.after(() => se.close());
  const e = record(se);
  await se.connect();
  const ticket = await erin.tickets.create({ mode: "1v1", players: ["erin"], regions: ["eu"] });
  se.rawSocket.send("x".repeat(70 * 1024));
  await e.next("session.disconnected");
  await service.client("erin").tickets.cancel(ticket.id);
  letIn();
  const cancelled = await e.next("ticket.cancelled");
  assert.equal(cancelled.replayed, true);
  assert.equal(cancelled.ticket_id, ticket.id);
  assert.equal(erin.liveTickets.has(ticket.id), false, "the ended ticket is no longer watched");
});

test("the token provider is asked again after a 401", async () => {
  const calls = [];
  const client = new MatchmakerClient({
    baseUrl: service.baseUrl,
    // The first token is refused (dev tokens must be player ids); the refreshed one is good.
    token: ({ refresh }) => {
      calls.push(refresh);
      return refresh ? "frank" : "not a player id!";
    },
  });
  const ratings = await client.ratings.mine();
  assert.equal(ratings.player_id, "frank");
  assert.deepEqual(calls, [false, true]);

  const never = new MatchmakerClient({ baseUrl: service.baseUrl, token: () => "still bad!" });
  await assert.rejects(never.ratings.mine(), (e) => e instanceof UnauthorizedError && e.status === 401);
});

test("reconnect delays back off exponentially with jitter, up to the cap", async (t) => {
  const port = await freePort(); // nothing listens here
  const draws = [0, 0.5, 1, 0.25, 0.75];
  let i = 0;
  const client = new MatchmakerClient({ baseUrl: `http://127.0.0.1:${port}`, token: "gina" });
  const s = sessionOf(client, { initialBackoffMs: 20, maxBackoffMs: 100, random: () => draws[i++ % draws.length] });
  t.after(() => s.close());
  const r = record(s);
  void s.connect();
  await r.next("session.disconnected", () => r.events.length >= 5);
  const delays = r.events.filter((e) => e.type === "session.disconnected").slice(0, 5).map((e) => e.retry_in_ms);
  // base 20, 40, 80, 100, 100; delay = base/2 + base/2 * draw
  assert.deepEqual(delays, [10, 30, 80, 63, 88]);
});
