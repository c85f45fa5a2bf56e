// Whole flows through a real `serve` and the example game server: a 1v1 from
// queue to rating, and a party of three in a 5v5.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { record, sessionOf, startService } from "./harness.mjs";

let service;
before(async () => {
  service = await startService({ gameServer: true });
});
after(() => service?.stop());

test("two players queue 1v1, accept the ready check, are assigned and rated", async (t) => {
  const alice = service.client("alice");
  const bob = service.client("bob");
  const sessions = [sessionOf(alice), sessionOf(bob)];
  t.after(() => sessions.forEach((s) => s.close()));
  const [a, b] = sessions.map(record);
  const ready = await Promise.all(sessions.map((s) => s.connect()));
  assert.deepEqual(ready.map((r) => r.player_id), ["alice", "bob"]);
  // Connecting a connected session answers at once.
  assert.equal((await sessions[0].connect()).player_id, "alice");

  // Bob's events as an async iterator, from before the tickets exist.
  const bobsEvents = sessions[1].events();
  const ta = await alice.tickets.create({ mode: "1v1", players: ["alice"], regions: ["eu"] });
  assert.equal(ta.status, "queued");
  assert.equal(ta.estimated_wait_ms, null);
  const tb = await bob.tickets.create({ mode: "1v1", regions: [{ region: "eu", latency_ms: 20 }] });
  assert.deepEqual(tb.players, ["bob"], "players left out: the caller alone");

  const check = await a.next("match.ready_check", (e) => e.ticket_id === ta.id);
  const checkB = await b.next("match.ready_check", (e) => e.ticket_id === tb.id);
  const iterated = [];
  for await (const e of bobsEvents) {
    iterated.push(e.type);
    if (e.type === "match.ready_check") break;
  }
  assert.equal(iterated.at(-1), "match.ready_check");
  assert.equal(check.match_id, checkB.match_id);
  assert.ok(check.deadline > Date.now());
  assert.equal((await alice.tickets.get(ta.id)).status, "requires_acceptance");

  // Alice answers on the socket, Bob over HTTP.
  await sessions[0].answer(check.match_id, true);
  const answer = await a.next("match.answer", (e) => e.match_id === check.match_id);
  assert.equal(answer.status, "requires_acceptance");
  const record_ = await bob.matches.accept(check.match_id);
  assert.equal(record_.answers.bob, "accepted");

  const assigned = await a.next("match.assigned", (e) => e.match_id === check.match_id);
  assert.equal(assigned.server.address, "127.0.0.1:7777");
  await b.next("match.assigned", (e) => e.match_id === check.match_id);
  // The example game server plays for 1 s: the match is still on.
  const assignment = await alice.assignment();
  assert.equal(assignment.match_id, check.match_id);
  assert.equal(assignment.status, "assigned");
  assert.equal(assignment.server.address, "127.0.0.1:7777");

  const completed = await a.next("match.completed", (e) => e.match_id === check.match_id);
  assert.ok(completed.result, "the game server's result");
  const rated = await a.next("rating.updated", (e) => e.match_id === check.match_id);
  assert.equal(rated.mode, "1v1");
  assert.equal(rated.new.version, 1);
  await b.next("rating.updated", (e) => e.match_id === check.match_id);

  const ratings = await alice.ratings.mine();
  const oneVone = ratings.ratings.find((r) => r.mode === "1v1");
  assert.equal(oneVone.rating, rated.new.rating);
  assert.equal((await alice.ratings.history("1v1")).history.length, 1);
  assert.equal((await alice.matches.list()).matches[0].id, check.match_id);
  assert.equal((await alice.tickets.get(ta.id)).status, "completed");
  assert.equal(await alice.assignment(), null);
  const board = await alice.ratings.leaderboard("1v1", { aroundMe: true });
  assert.ok(board.entries.some((e) => e.player_id === "alice"));
  const queues = await alice.queues("1v1");
  assert.equal(queues.mode, "1v1");

  // Closing the session ends its iterators.
  const last = sessions[0].events();
  sessions[0].close();
  const rest = [];
  for await (const e of last) rest.push(e.type);
  assert.deepEqual(rest, ["session.disconnected"]);
});

test("a party of three queues 5v5 with seven solo players and plays on one team", async (t) => {
  const leader = service.client("p-lead");
  const friends = ["p-two", "p-three"].map((p) => service.client(p));
  const solos = Array.from({ length: 7 }, (_, i) => service.client(`solo-${i}`));
  const everyone = [leader, ...friends, ...solos];
  const sessions = everyone.map((c) => sessionOf(c));
  t.after(() => sessions.forEach((s) => s.close()));
  const recs = sessions.map(record);
  await Promise.all(sessions.map((s) => s.connect()));

  const party = await leader.parties.create();
  assert.equal(party.leader, "p-lead");
  for (const f of ["p-two", "p-three"]) await leader.parties.invite(party.id, f);
  const invited = await recs[1].next("party.invited", (e) => e.party.id === party.id);
  assert.equal(invited.by, "p-lead");
  for (const f of friends) await f.parties.join(party.id);
  const mine = await friends[0].parties.mine();
  assert.deepEqual(mine.members, ["p-lead", "p-two", "p-three"]);
  await recs[0].next("party.updated", (e) => e.change === "joined" && e.player_id === "p-three");

  const partyTicket = await leader.tickets.create({ mode: "5v5", players: mine.members, regions: ["eu"] });
  assert.deepEqual(partyTicket.players, ["p-lead", "p-two", "p-three"]);
  for (const [i, s] of solos.entries()) {
    await s.tickets.create({ mode: "5v5", players: [`solo-${i}`], regions: ["eu"] });
  }

  const checks = await Promise.all(recs.map((r) => r.next("match.ready_check")));
  const matchId = checks[0].match_id;
  assert.ok(checks.every((c) => c.match_id === matchId), "all ten are in one match");
  // A party member's ready check names the party's ticket.
  assert.equal(checks[1].ticket_id, partyTicket.id);
  await Promise.all(everyone.map((c) => c.matches.accept(matchId)));
  const assigned = await Promise.all(recs.map((r) => r.next("match.assigned", (e) => e.match_id === matchId)));
  const match = assigned[0].match;
  const partyEntry = match.tickets.find((x) => x.ticket_id === partyTicket.id);
  assert.deepEqual(partyEntry.players, ["p-lead", "p-two", "p-three"]);
  const team = partyEntry.team;
  const teamSize = match.tickets.filter((x) => x.team === team).reduce((n, x) => n + x.players.length, 0);
  assert.equal(teamSize, 5);
  assert.equal((await friends[1].tickets.get(partyTicket.id)).status, "assigned");
});
