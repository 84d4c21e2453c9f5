#!/bin/bash
# The official postgres image's first-start contract, in short: initialise PGDATA once with
# POSTGRES_USER as superuser (password POSTGRES_PASSWORD, scram-sha-256 over TCP), create
# POSTGRES_DB, then run the server listening on every address.
set -euo pipefail
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set}"
user="${POSTGRES_USER:-postgres}"
database="${POSTGRES_DB:-$user}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile="$(mktemp)"
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
  initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 \
    -E UTF8 --locale=C.UTF-8 > /dev/null
  rm -f "$pwfile"
  printf 'host all all all scram-sha-256\n' >> "$PGDATA/pg_hba.conf"
  if [ "$database" != postgres ]; then
    printf 'CREATE DATABASE "%s" OWNER "%s";\n' "$database" "$user" \
      | postgres --single -D "$PGDATA" -j postgres > /dev/null
  fi
  echo "initialised $PGDATA (superuser $user, database $database)"
fi
if [ "${1:-}" = postgres ]; then
  shift
  exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
fi
exec "$@"
