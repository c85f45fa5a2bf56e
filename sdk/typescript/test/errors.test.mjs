// Typed errors from the API's codes, and 429s retried after Retry-After.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import {
  BadRequestError,
  ConflictError,
  MatchmakerClient,
  NotFoundError,
  RateLimitedError,
  isErrorCode,
} from "../dist/index.js";
import { startService } from "./harness.mjs";

let service;
before(async () => {
  // Reads: a burst of 3 per player, one more every second.
  service = await startService({ env: { RATE_LIMIT_READS: "3/3s,6000/1m" } });
});
after(() => service?.stop());

test("errors are typed from the API's status and code", async () => {
  const hank = service.client("hank");
  await assert.rejects(hank.tickets.create({ mode: "nope", players: ["hank"], regions: ["eu"] }), (e) => {
    assert.ok(e instanceof BadRequestError);
    assert.equal(e.code, "unknown_mode");
    return true;
  });
  const t = await hank.tickets.create({ mode: "1v1", players: ["hank"], regions: ["eu"] });
  await assert.rejects(hank.tickets.create({ mode: "1v1", players: ["hank"], regions: ["eu"] }), (e) => {
    assert.ok(e instanceof ConflictError);
    assert.ok(isErrorCode(e, "player_busy"));
    assert.equal(e.details.ticket_id, t.id);
    return true;
  });
  await assert.rejects(service.client("ivy").tickets.get(t.id), (e) => e instanceof NotFoundError && e.status === 404);
  const cancelled = await hank.tickets.cancel(t.id);
  assert.equal(cancelled.status, "cancelled");
  assert.equal(await hank.parties.mine(), null);
  assert.equal(await hank.assignment(), null);
});

test("a 429 is retried after its Retry-After, and surfaces once retries run out", async () => {
  const seen = [];
  const counting = (input, init) =>
    fetch(input, init).then((r) => {
      seen.push(r.status);
      return r;
    });
  const jane = new MatchmakerClient({ baseUrl: service.baseUrl, token: "jane", fetch: counting });
  for (let i = 0; i < 5; i++) await jane.ratings.mine();
  assert.ok(seen.includes(429), `a read was limited: ${seen}`);
  assert.equal(seen.at(-1), 200);

  const impatient = new MatchmakerClient({ baseUrl: service.baseUrl, token: "kim", maxRetries: 0 });
  const errors = [];
  for (let i = 0; i < 5; i++) await impatient.ratings.mine().catch((e) => errors.push(e));
  assert.ok(errors.length > 0);
  assert.ok(errors[0] instanceof RateLimitedError);
  assert.equal(errors[0].code, "rate_limited");
  assert.ok(errors[0].retryAfterMs >= 1000);
});
