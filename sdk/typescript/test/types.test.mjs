// The committed src/openapi.ts is what openapi-typescript makes of docs/openapi.json.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const root = resolve(fileURLToPath(new URL(".", import.meta.url)), "..");

test("the generated types match docs/openapi.json (regenerate with npm run generate)", () => {
  const dir = mkdtempSync(join(tmpdir(), "mm-sdk-types-"));
  try {
    const out = join(dir, "openapi.ts");
    execFileSync(process.execPath, [join(root, "node_modules/openapi-typescript/bin/cli.js"), "../../docs/openapi.json", "-o", out], {
      cwd: root,
      stdio: "pipe",
    });
    const fresh = readFileSync(out, "utf8");
    const committed = readFileSync(join(root, "src/openapi.ts"), "utf8");
    assert.ok(fresh === committed, "src/openapi.ts is stale: run `npm run generate` and commit it");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
