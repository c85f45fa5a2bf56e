#!/usr/bin/env bash
# Counts the instructions Redis executes for one `matchmaker bench drain`, so two
# builds' Lua scripts can be compared without the machine's noise (a drain's
# wall-clock figures move by +-10% from round to round on a shared machine; the
# count repeats to within 2%: 3.30 and 3.36 G in two runs of the example below).
# Runs redis-server under valgrind's callgrind on a free port, the drain against
# it (`--redis-url`, no baselines), then prints the drain's own summary and
# Redis's instruction total, start-up and seeding included (both the same for two
# builds of the same command).
#
#   scripts/redis-instructions.sh [BINARY] -- [more `bench drain` arguments]
#   scripts/redis-instructions.sh /tmp/old -- --tickets 5000 --leader
#
# BINARY defaults to target/release/matchmaker. Keep the drain small (5,000 to
# 10,000 tickets): Redis runs some 50x slower under valgrind, and a script call
# longer than 5 s puts Redis in its busy-script mode, whose extra work swells the
# count. Needs valgrind (`apt-get install valgrind`).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/release/matchmaker
if [ $# -gt 0 ] && [ "$1" != "--" ]; then bin=$1; shift; fi
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
command -v valgrind >/dev/null || { echo "valgrind is missing: apt-get install valgrind" >&2; exit 1; }
[ -x "$bin" ] || { echo "no binary at $bin (cargo build --release)" >&2; exit 1; }

dir=$(mktemp -d)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
valgrind --tool=callgrind --callgrind-out-file="$dir/callgrind.out" \
  redis-server --port "$port" --save '' --appendonly no --dir "$dir" >"$dir/redis.log" 2>&1 &
redis=$!
trap 'kill $redis 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 1 120); do
  redis-cli -p "$port" ping >/dev/null 2>&1 && break
  sleep 0.5
done
"$bin" bench drain --no-baseline --redis-url "redis://127.0.0.1:$port" --out "$dir/out" "$@" 2>&1 |
  grep -E '^(run|ours)' | grep -v 'RSS' || true
redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
wait $redis || true
total=$(callgrind_annotate "$dir/callgrind.out" 2>/dev/null | awk '/PROGRAM TOTALS/ && !n { print $1; n = 1 }')
echo "redis-server instructions: $total"
