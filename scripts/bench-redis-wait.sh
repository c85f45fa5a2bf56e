#!/usr/bin/env bash
# Cost of REDIS_WAIT_REPLICAS=1: one ingress over a Redis primary with one replica,
# without and with WAIT, each measured by `bench throughput --url` (client ratings).
set -u
B="$(cd "$(dirname "$0")/.." && pwd)/target/release/matchmaker"
W=/tmp/waitb; rm -rf $W; mkdir -p $W; printf "[modes.bench]\nteams = 8\nteam_size = 1\nmin_players = 2\nstart_below_max_after = \"0s\"\nready_check = false\nplacement = \"none\"\n" > $W/modes.toml
redis-server --port 7501 --save "" --appendonly no --daemonize yes --logfile $W/p.log --dir $W
redis-server --port 7502 --save "" --appendonly no --daemonize yes --logfile $W/r.log --dir $W --replicaof 127.0.0.1 7501
sleep 2
for round in 1 2 3; do
for wait in 0 1; do
  redis-cli -p 7501 flushall >/dev/null
  MODES=bench REGIONS=eu REDIS_URL=redis://127.0.0.1:7501 DATABASE_URL=sqlite://$W/r.db AUTH=dev ALLOW_CLIENT_RATINGS=true \
    RATE_LIMIT_TICKETS=off,off RATE_LIMIT_READS=off,off RATE_LIMIT_ANSWERS=off,off RATE_LIMIT_CONNECTS=off,off RATE_LIMIT_MESSAGES=off,off \
    MODES_FILE=$W/modes.toml RUST_LOG=warn REDIS_WAIT_REPLICAS=$wait LISTEN_ADDR=127.0.0.1:7503 $B ingress > $W/ing-$wait.log 2>&1 &
  pid=$!
  sleep 2
  echo "== round $round, REDIS_WAIT_REPLICAS=$wait"
  $B bench throughput --url http://127.0.0.1:7503 --clients 64 --duration 10s --ratings client --out $W/out-$wait 2>/dev/null | grep -E "POST /v1/tickets|ratio" | grep -v "^ratio.*healthz" | head -4
  kill $pid; wait $pid 2>/dev/null
done
done
redis-cli -p 7502 shutdown nosave; redis-cli -p 7501 shutdown nosave
