#!/usr/bin/env bash
# Runs the whole test suite on a fresh Debian machine that has only the Rust
# toolchain: installs what is missing (redis-server, PostgreSQL, Python with venv
# for the API fuzzer, schemathesis from PyPI, promtool, chromium, Node and npm
# with the TypeScript SDK's locked packages, mono for the C# SDK), then lints and
# tests.
# Every server a test needs is started by the test itself on a free port.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)

apt_install() {
  "${sudo_cmd[@]}" apt-get update -qq &&
    "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"
}

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
# The rating tests start throwaway PostgreSQL servers (initdb + pg_ctl).
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql)
# The API fuzz test runs schemathesis (PyPI) from a virtualenv.
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing+=(python3 python3-venv)
# The deploy test checks the shipped alert rules with promtool (Debian's prometheus).
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
# The dashboard test drives a real headless browser.
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
# The SDKs' tests: Node's test runner for TypeScript, mono (mcs) for C#.
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
command -v mcs >/dev/null 2>&1 || missing+=(mono-complete)
# The C# SDK's .NET Standard check reads assemblies with Mono.Cecil.
compgen -G '/usr/lib/mono/gac/Mono.Cecil/*/Mono.Cecil.dll' >/dev/null || missing+=(libmono-cecil-private-cil)
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing: ${missing[*]}"
  # The first apt call on a new machine can fail; retry once.
  apt_install "${missing[@]}" || { echo "apt-get failed; retrying once"; sleep 5; apt_install "${missing[@]}"; }
fi

# schemathesis, pinned, in target/fuzz-venv (the fuzz test installs it too when
# run on its own).
venv=target/fuzz-venv
if [ ! -x "$venv/bin/schemathesis" ]; then
  echo "== installing schemathesis into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "schemathesis==4.32.5" ||
    { echo "pip failed; retrying once"; sleep 5; "$venv/bin/pip" install -q "schemathesis==4.32.5"; }
fi

# The TypeScript SDK's dev packages, exactly as package-lock.json pins them.
if [ ! -f sdk/typescript/node_modules/.package-lock.json ] ||
  [ sdk/typescript/package-lock.json -nt sdk/typescript/node_modules/.package-lock.json ]; then
  echo "== installing the TypeScript SDK's packages (npm ci)"
  (cd sdk/typescript && { npm ci --no-audit --no-fund || { echo "npm failed; retrying once"; sleep 5; npm ci --no-audit --no-fund; }; })
fi

echo "== formatting and lints"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings

echo "== tests"
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --workspace --all-targets --locked
else
  cargo test --workspace --all-targets --locked
fi
