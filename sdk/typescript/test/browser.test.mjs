// The SDK in a real browser (headless Chromium, its own fetch and WebSocket),
// loaded from a page on another origin than the API's: CORS_ALLOWED_ORIGINS
// lets it call the API. Two players queue 1v1, accept on the socket, and are
// assigned by the example game server.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join, normalize, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { freePort, startService } from "./harness.mjs";

const dist = resolve(fileURLToPath(new URL(".", import.meta.url)), "../dist");

const PAGE = (api) => `<!doctype html><meta charset="utf-8"><title>sdk</title>
<script type="module">
import { MatchmakerClient, NotFoundError } from "/dist/index.js";
const report = (body) => fetch("/result", { method: "POST", body: JSON.stringify(body) });
try {
  const players = ["web-ann", "web-ben"];
  const clients = players.map((p) => new MatchmakerClient({ baseUrl: ${JSON.stringify(api)}, token: p }));
  const sessions = clients.map((c) => c.session());
  await Promise.all(sessions.map((s) => s.connect()));
  const checks = sessions.map((s) => s.waitFor("match.ready_check", () => true, 20000));
  const assigned = sessions.map((s) => s.waitFor("match.assigned", () => true, 20000));
  for (const [i, c] of clients.entries()) await c.tickets.create({ mode: "1v1", players: [players[i]], regions: ["eu"] });
  const got = await Promise.all(checks);
  for (const [i, s] of sessions.entries()) await s.answer(got[i].match_id, true);
  const done = await Promise.all(assigned);
  let notFound = null;
  try { await clients[0].tickets.get("t-nope"); } catch (e) { notFound = { typed: e instanceof NotFoundError, code: e.code }; }
  sessions.forEach((s) => s.close());
  await report({ ok: true, matches: done.map((e) => e.match_id), address: done[0].server.address, notFound });
} catch (e) {
  await report({ ok: false, error: String(e && e.stack || e) });
}
</script>`;

test("the SDK runs in a browser page on another origin", async (t) => {
  const pagePort = await freePort();
  const origin = `http://127.0.0.1:${pagePort}`;
  const service = await startService({ gameServer: true, env: { CORS_ALLOWED_ORIGINS: origin } });
  t.after(() => service.stop());

  let deliver;
  const result = new Promise((resolve) => (deliver = resolve));
  const page = createServer((req, res) => {
    const url = new URL(req.url, origin);
    if (req.method === "POST" && url.pathname === "/result") {
      let body = "";
      req.on("data", (d) => (body += d));
      req.on("end", () => {
        res.end("ok");
        deliver(JSON.parse(body));
      });
      return;
    }
    if (url.pathname === "/") {
      res.setHeader("content-type", "text/html");
      return res.end(PAGE(service.baseUrl));
    }
    if (url.pathname.startsWith("/dist/")) {
      const file = normalize(join(dist, url.pathname.slice("/dist/".length)));
      if (file.startsWith(dist)) {
        try {
          const text = readFileSync(file);
          res.setHeader("content-type", file.endsWith(".js") ? "text/javascript" : "application/json");
          return res.end(text);
        } catch {
          // fall through to 404
        }
      }
    }
    res.statusCode = 404;
    res.end();
  });
  await new Promise((r) => page.listen(pagePort, "127.0.0.1", r));
  t.after(() => page.close());

  const profile = mkdtempSync(join(tmpdir(), "mm-sdk-chromium-"));
  const browser = spawn(
    process.env.CHROMIUM_BIN ?? "chromium",
    ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
      `--user-data-dir=${profile}`, `${origin}/`],
    // Its own process group, so its renderers and helpers die with it; its
    // singleton socket folder in the profile, so that it goes with it.
    { stdio: "ignore", detached: true, env: { ...process.env, TMPDIR: profile } },
  );
  const exited = new Promise((r) => browser.on("exit", r));
  t.after(async () => {
    try {
      process.kill(-browser.pid, "SIGKILL");
    } catch {
      // already gone
    }
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    // A helper may still be flushing the profile for a moment.
    rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  });
  const failed = new Promise((_, reject) => browser.on("error", (e) => reject(new Error(`chromium: ${e.message} (scripts/test.sh installs it)`))));
  const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error("the page reported nothing in 40 s")), 40_000).unref());
  const r = await Promise.race([result, failed, timeout]);
  assert.equal(r.ok, true, r.error);
  assert.equal(r.matches[0], r.matches[1]);
  assert.equal(r.address, "127.0.0.1:7777");
  assert.deepEqual(r.notFound, { typed: true, code: "ticket_not_found" });
});
