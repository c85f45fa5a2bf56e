#!/usr/bin/env bash
# Times the engine bench's 100k pool with and without rules by the clock, for
# one or more builds of the engine alternated round by round, and prints each
# run's ruled / unruled ratio and each build's median: issue 33's figure ("the
# ruled cycle within 2x the unruled") as the machine reads it. On this shared
# VM a cycle's time moves by 10-50% within the hour, and a build's unruled
# cycle can move by 15% with the code's layout alone, so alternate builds in
# one command rather than comparing runs of different hours, and read the
# instructions too (scripts/engine-instructions.sh).
#
#   scripts/engine-wall.sh [-r ROUNDS] [-c CPUS] [BINARY...]
#   scripts/engine-wall.sh -r 4 /tmp/engine-before /tmp/engine-after
#   scripts/engine-wall.sh -c 0            # one core (taskset -c 0)
#
# BINARY defaults to the engine bench `cargo bench -p mm-sim --bench engine
# --no-run` builds (copy it aside before building another). ROUNDS defaults to
# 3. Each run is criterion's `--warm-up-time 1 --measurement-time 4` of both
# entries (about 15 s).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=3
cpus=
while getopts "r:c:" opt; do
  case $opt in
    r) rounds=$OPTARG ;;
    c) cpus=$OPTARG ;;
    *) sed -n '2,17p' "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
bins=("$@")
if [ ${#bins[@]} -eq 0 ]; then
  bins=("$(cargo bench -p mm-sim --bench engine --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "engine" and m.get("executable"):
        print(m["executable"])')")
fi
for b in "${bins[@]}"; do
  [ -x "$b" ] || { echo "not an executable: $b (cargo bench -p mm-sim --bench engine --no-run)" >&2; exit 1; }
done
run=()
[ -z "$cpus" ] || run=(taskset -c "$cpus")

out=$(mktemp)
trap 'rm -f "$out"' EXIT
for r in $(seq "$rounds"); do
  for b in "${bins[@]}"; do
    "${run[@]}" "$b" --bench '^engine_cycle/5v5_100k_(no_)?rules$' --warm-up-time 1 --measurement-time 4 2>/dev/null |
      python3 -c 'import re, sys
name, times = None, {}
scale = {"ns": 1e-6, "µs": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1e3}
for line in sys.stdin:
    m = re.match(r"^(engine_cycle/\S+)", line)
    if m:
        name = m.group(1)
    m = re.search(r"time:\s+\[\S+ \S+ (\S+) (\S+)", line)
    if m and name:
        times[name] = float(m.group(1)) * scale[m.group(2)]
        name = None
plain, ruled = times["engine_cycle/5v5_100k_no_rules"], times["engine_cycle/5v5_100k_rules"]
print(f"{sys.argv[1]}\t{sys.argv[2]}\t{plain:.2f}\t{ruled:.2f}\t{ruled / plain:.2f}")' "$r" "$b" | tee -a "$out" |
      awk -F'\t' '{ printf "round %s  %-40s no rules %7s ms  rules %7s ms  %sx\n", $1, $2, $3, $4, $5 }'
  done
done
python3 - "$out" <<'EOF'
import statistics, sys
by = {}
for line in open(sys.argv[1]):
    _, b, plain, ruled, ratio = line.rstrip("\n").split("\t")
    by.setdefault(b, []).append((float(plain), float(ruled), float(ratio)))
for b, runs in by.items():
    med = [statistics.median(x) for x in zip(*runs)]
    print(f"median {b:<40} no rules {med[0]:7.2f} ms  rules {med[1]:7.2f} ms  {med[2]:.2f}x ({len(runs)} runs)")
EOF
