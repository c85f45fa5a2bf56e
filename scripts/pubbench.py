"""Redis CPU per event on a Pub/Sub channel: one PUBLISH per event against messages
of 100 events, with one subscriber. The figure behind "Events in batches" in
BENCHMARKS.md. Starts its own redis-server on a free port.

    python3 -m pip install redis   # the client, if missing
    python3 scripts/pubbench.py
"""
import json
import socket
import subprocess
import threading
import time

import redis


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


port = free_port()
server = subprocess.Popen(
    ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    stdout=subprocess.DEVNULL,
)
try:
    r = redis.Redis(port=port)
    for _ in range(100):
        try:
            r.ping()
            break
        except redis.ConnectionError:
            time.sleep(0.05)

    def cpu():
        i = r.info("cpu")
        return i["used_cpu_user"] + i["used_cpu_sys"]

    # About the size of a player's match event.
    event = json.dumps({"player": "bench-abcdef12-12345", "event": {"type": "match.completed"}})
    event = event + " " * (350 - len(event))

    def subscribe():
        p = redis.Redis(port=port).pubsub()
        p.subscribe("ch")
        for _ in p.listen():
            pass

    threading.Thread(target=subscribe, daemon=True).start()
    time.sleep(0.5)
    n = 100_000
    for per_message in [1, 100, 1, 100]:
        payload = event if per_message == 1 else "[" + ",".join([event] * per_message) + "]"
        before = cpu()
        pipe = r.pipeline(transaction=False)
        for _ in range(n // per_message):
            pipe.publish("ch", payload)
            if len(pipe) >= 200:
                pipe.execute()
        pipe.execute()
        time.sleep(1.0)  # the subscriber's deliveries finish
        print(f"{per_message:4d} events per PUBLISH: {(cpu() - before) / n * 1e6:5.2f} us of Redis CPU per event")
finally:
    server.terminate()
