#!/usr/bin/env bash
# Start a throwaway PostgreSQL server on a free loopback port (trust auth, data
# in a temporary folder) for the storage tests, and print its SQLAlchemy URL.
set -euo pipefail
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
data=$(mktemp -d /tmp/donutbox-pg.XXXXXX)
chown postgres "$data"
su postgres -s /bin/sh -c "$bin/initdb -D $data --auth=trust -U postgres >/dev/null"
su postgres -s /bin/sh -c "$bin/pg_ctl -D $data -l $data/log -w -o '-k /tmp -p $port -c listen_addresses=127.0.0.1' start >/dev/null"
echo "postgresql+psycopg://postgres@127.0.0.1:$port/postgres"
