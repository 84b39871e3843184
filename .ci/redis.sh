#!/usr/bin/env bash
# Start a throwaway Redis server (Debian's redis-server) on a free loopback
# port, no persistence, for the many-process server tests, and print its URL.
set -euo pipefail
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
data=$(mktemp -d /tmp/donutbox-redis.XXXXXX)
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
  --dir "$data" --logfile "$data/log" --pidfile "$data/pid" --daemonize yes >/dev/null
for _ in $(seq 50); do
  redis-cli -p "$port" ping >/dev/null 2>&1 && break
  sleep 0.1
done
redis-cli -p "$port" ping >/dev/null
echo "redis://127.0.0.1:$port/0"
