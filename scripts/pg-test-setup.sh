#!/usr/bin/env bash
# Prepare a local PostgreSQL for the hub-mode tests (idempotent; run as root on Debian).
# Prints the URL to export as TIREWEAR_TEST_DATABASE_URL.
set -euo pipefail

ROLE=${TIREWEAR_PG_ROLE:-tirewear}
PASSWORD=${TIREWEAR_PG_PASSWORD:-tirewear}
DB=${TIREWEAR_PG_DB:-tirewear_test}

if ! command -v pg_lsclusters >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq postgresql >&2
fi

# The newest installed cluster; create one when the package came without.
read -r VERSION CLUSTER PORT STATUS _ < <(pg_lsclusters --no-header | sort -V | tail -n 1) || true
if [ -z "${VERSION:-}" ]; then
  VERSION=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
  pg_createcluster "$VERSION" main >&2
  read -r VERSION CLUSTER PORT STATUS _ < <(pg_lsclusters --no-header | sort -V | tail -n 1)
fi
if [ "$STATUS" != "online" ]; then
  pg_ctlcluster "$VERSION" "$CLUSTER" start >&2
fi

as_postgres() { su postgres -c "$1"; }
psql_admin() { as_postgres "psql -p $PORT -v ON_ERROR_STOP=1 -qtAc \"$1\""; }

for _ in $(seq 1 30); do
  if as_postgres "pg_isready -q -p $PORT"; then break; fi
  sleep 1
done

if [ "$(psql_admin "SELECT 1 FROM pg_roles WHERE rolname = '$ROLE'")" != "1" ]; then
  psql_admin "CREATE ROLE $ROLE LOGIN PASSWORD '$PASSWORD' SUPERUSER" >&2
fi
if [ "$(psql_admin "SELECT 1 FROM pg_database WHERE datname = '$DB'")" != "1" ]; then
  psql_admin "CREATE DATABASE $DB OWNER $ROLE" >&2
fi

echo "postgres://$ROLE:$PASSWORD@127.0.0.1:$PORT/$DB"
