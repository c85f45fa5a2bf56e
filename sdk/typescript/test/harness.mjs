// Starts a real `matchmaker serve` (dev tokens, the shipped modes) and, when
// asked, the example game server, on free ports; stops both after the test.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import { MatchmakerClient } from "../dist/index.js";

const here = fileURLToPath(new URL(".", import.meta.url));

/** The binary under test: MATCHMAKER_BIN, or the workspace's debug build. */
export function binary() {
  const bin = process.env.MATCHMAKER_BIN ?? resolve(here, "../../../target/debug/matchmaker");
  if (!existsSync(bin)) throw new Error(`no matchmaker binary at ${bin}: build it (cargo build) or set MATCHMAKER_BIN`);
  return bin;
}

export function freePort() {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.unref();
    server.on("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => ok(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A child process whose output is kept for assertions and failure reports. */
function start(name, args, env) {
  const child = spawn(binary(), args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const proc = { name, child, out: "", exited: null };
  child.stdout.on("data", (d) => (proc.out += d));
  child.stderr.on("data", (d) => (proc.out += d));
  child.on("exit", (code, signal) => (proc.exited = { code, signal }));
  return proc;
}

async function until(what, check, timeoutMs = 20_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/**
 * A running service. `env` is added to serve's environment; with `gameServer`
 * the example game server (region eu, every mode) registers before this resolves.
 */
export async function startService({ env = {}, gameServer = false } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "mm-sdk-ts-"));
  const http = `127.0.0.1:${await freePort()}`;
  const grpc = `127.0.0.1:${await freePort()}`;
  const procs = [];
  const serve = start("serve", ["serve"], {
    LISTEN_ADDR: http,
    GRPC_LISTEN_ADDR: grpc,
    DATA_DIR: dir,
    AUTH: "dev",
    RUST_LOG: "warn",
    POLL_INTERVAL: "20ms",
    RATING_POLL_INTERVAL: "20ms",
    SERVER_HEARTBEAT_INTERVAL: "200ms",
    SUPERVISE_INTERVAL: "200ms",
    ...env,
  });
  procs.push(serve);
  const baseUrl = `http://${http}`;
  const stop = () => {
    for (const p of procs) if (p.exited === null) p.child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await until("serve to be ready", async () => {
      if (serve.exited !== null) throw new Error(`serve exited ${JSON.stringify(serve.exited)}:\n${serve.out}`);
      try {
        return (await fetch(`${baseUrl}/readyz`)).ok;
      } catch {
        return false;
      }
    });
    if (gameServer) {
      const gs = start("game-server", ["example-game-server"], {
        SERVER_MANAGER_URL: `http://${grpc}`,
        GAME_SERVER_REGION: "eu",
        GAME_SERVER_CAPACITY: "8",
        MATCH_DURATION: "1s",
        RUST_LOG: "warn",
      });
      procs.push(gs);
      await until("the game server to register", () => {
        if (gs.exited !== null) throw new Error(`game server exited:\n${gs.out}`);
        return gs.out.includes('"event":"registered"');
      });
    }
  } catch (e) {
    stop();
    throw e;
  }
  return {
    baseUrl,
    logs: () => procs.map((p) => `--- ${p.name}\n${p.out}`).join("\n"),
    /** A client acting as `player` (dev tokens: the token is the player id). */
    client: (player, options = {}) => new MatchmakerClient({ baseUrl, token: player, ...options }),
    stop,
  };
}

/** A session on Node 20 (no global WebSocket): `ws` stands in for it. */
export function sessionOf(client, options = {}) {
  return client.session({ WebSocket, ...options });
}

/** Records every event of a session, so a test can wait for one that came before it asked. */
export function record(session) {
  const events = [];
  session.on("*", (e) => events.push(e));
  return {
    events,
    async next(type, predicate = () => true, timeoutMs = 20_000) {
      let found;
      await until(`${type} on ${session.playerId ?? "a session"}`, () => {
        found = events.find((e) => e.type === type && predicate(e));
        return found !== undefined;
      }, timeoutMs);
      return found;
    },
  };
}
