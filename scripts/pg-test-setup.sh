#!/usr/bin/env bash
# Prepare a local PostgreSQL for the hub-mode tests (idempotent; Debian or Ubuntu, as root or
# with sudo). Prints the URL to export as TIREWEAR_TEST_DATABASE_URL:
#   export TIREWEAR_TEST_DATABASE_URL=$(scripts/pg-test-setup.sh)
set -euo pipefail

SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi

ROLE=${TIREWEAR_PG_ROLE:-tirewear}
PASSWORD=${TIREWEAR_PG_PASSWORD:-tirewear}
DB=${TIREWEAR_PG_DB:-tirewear_test}

if ! command -v pg_lsclusters >/dev/null 2>&1; then
  $SUDO apt-get update -qq >&2
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
fi

# The newest installed cluster; create one when the package came without.
read -r VERSION CLUSTER PORT STATUS _ < <(pg_lsclusters --no-header | sort -V | tail -n 1) || true
if [ -z "${VERSION:-}" ]; then
  VERSION=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
  $SUDO pg_createcluster "$VERSION" main >&2
  read -r VERSION CLUSTER PORT STATUS _ < <(pg_lsclusters --no-header | sort -V | tail -n 1)
fi
if [ "$STATUS" != "online" ]; then
  $SUDO pg_ctlcluster "$VERSION" "$CLUSTER" start >&2
fi

as_postgres() {
  if [ -z "$SUDO" ]; then su postgres -c "$1"; else sudo -u postgres sh -c "$1"; fi
}
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
