#!/usr/bin/env bash
# Counts the instructions of one engine cycle of the engine bench
# (`crates/sim/benches/engine.rs`), so two builds of the engine can be compared
# without the machine's noise: on this shared VM a cycle's wall clock moves by
# 10-50% within the hour, the count by less than 0.1%. Runs each entry under
# valgrind's callgrind in criterion's profile mode, collecting inside
# criterion's `Bencher` only (not the bench's set-up, which forms every pool
# once to print its digest), and divides by the iterations it ran: what one
# `b.iter` costs, the ruled entries' compiling of their traits included.
#
# A pool split by `equal` rules is formed part by part on the machine's cores,
# and callgrind collects only the thread that entered the `Bencher`: the parts
# formed on another thread are not counted. So each entry is counted twice:
#   - `one thread`: under `taskset -c 0`, where the engine forms every part on
#     the calling thread: the whole cycle's work;
#   - `main thread`: as the bench runs (a thread per core), the calling
#     thread's share: the set-up, the traits, and the parts it forms itself
#     (the largest first). With two cores that is the cycle's critical path
#     whenever the other thread's parts are the smaller load.
# A pool that is not split (every unruled entry) counts the same both ways and
# is counted once.
#
#   scripts/engine-instructions.sh [BINARY] [ENTRY...]
#   scripts/engine-instructions.sh /tmp/engine-old engine_cycle/5v5_100k_rules
#
# BINARY defaults to the engine bench `cargo bench -p mm-sim --bench engine
# --no-run` builds; ENTRY defaults to the 100k pool with and without rules and
# the backlog pair (each an exact criterion id). Prints each entry's
# instructions per iteration, then the ruled / unruled ratios of each pair. The
# set-up's digest lines (the same matches?) are printed first. Needs valgrind
# (`apt-get install valgrind`); about a minute per count.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is missing: apt-get install valgrind" >&2; exit 1; }
if [ $# -gt 0 ] && [ -x "$1" ] && [ -f "$1" ]; then
  bin=$1
  shift
else
  bin=$(cargo bench -p mm-sim --bench engine --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "engine" and m.get("executable"):
        print(m["executable"])')
fi
[ -x "$bin" ] || { echo "no engine bench binary (cargo bench -p mm-sim --bench engine --no-run)" >&2; exit 1; }
entries=("$@")
[ ${#entries[@]} -gt 0 ] || entries=(engine_cycle/5v5_100k_no_rules engine_cycle/5v5_100k_rules
  engine_cycle/5v5_50k_backlog_no_rules engine_cycle/5v5_50k_backlog_rules)

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
declare -A one main

# Instructions per iteration of criterion id $1, run under the command prefix
# in the remaining arguments (none, or `taskset -c 0`).
count() {
  local entry=$1
  shift
  local out="$dir/callgrind.out"
  "$@" valgrind --tool=callgrind --callgrind-out-file="$out" --toggle-collect='criterion::bencher::Bencher*' \
    "$bin" --bench "^${entry}\$" --profile-time 1 >"$dir/log" 2>&1
  # Once (this runs in a subshell: a variable would not remember).
  if [ ! -e "$dir/digests-shown" ]; then
    grep -E 'digest' "$dir/log" | sed 's/^/  /' >&2 || true
    touch "$dir/digests-shown"
  fi
  local total iters
  total=$(callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ && !n { gsub(",", "", $1); print $1; n = 1 }')
  # Iterations: the calls of `propose_with` from criterion's `iter` (one per
  # iteration in every entry of the bench).
  iters=$(callgrind_annotate --inclusive=yes --tree=calling "$out" 2>/dev/null | python3 -c 'import re, sys
on, found = False, None
for line in sys.stdin:  # read to the end: no broken pipe for the annotator
    if found:
        continue
    if re.search(r"\* .*engine\.rs:criterion::bencher::Bencher<M>::iter$", line):
        on = True
    elif on and not line.strip():
        on = False
    elif on and "engine::propose_with (" in line:
        found = re.search(r"\((\d+)x\)", line).group(1)
print(found or "")')
  if [ -z "$total" ] || [ -z "$iters" ] || [ "$total" = 0 ]; then
    echo "$entry: nothing collected (is it an exact criterion id?)" >&2
    return 1
  fi
  echo $((total / iters))
}

fmt() { python3 -c "print(f'{$1:,}')"; }

for entry in "${entries[@]}"; do
  main[$entry]=$(count "$entry") || continue
  case $entry in
  *_no_rules) split=no ;;
  *_rules) split=yes ;;
  *) split=no ;;
  esac
  case $split in
  yes)
    one[$entry]=$(count "$entry" taskset -c 0) || continue
    other=$((one[$entry] - main[$entry]))
    printf '%-40s %15s one thread, %15s main thread, %15s formed on the other\n' "$entry" \
      "$(fmt "${one[$entry]}")" "$(fmt "${main[$entry]}")" "$(fmt "$other")"
    ;;
  *)
    one[$entry]=${main[$entry]}
    printf '%-40s %15s (not split: one thread)\n' "$entry" "$(fmt "${main[$entry]}")"
    ;;
  esac
done
for ruled in "${entries[@]}"; do
  case $ruled in *_no_rules) continue ;; *_rules) ;; *) continue ;; esac
  plain=${ruled%_rules}_no_rules
  if [ -n "${one[$ruled]:-}" ] && [ -n "${one[$plain]:-}" ]; then
    python3 -c "print(f'${ruled#*/} / ${plain#*/}: one thread {${one[$ruled]} / ${one[$plain]}:.2f}x, main thread {${main[$ruled]} / ${one[$plain]}:.2f}x')"
  fi
done
