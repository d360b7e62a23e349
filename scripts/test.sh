#!/usr/bin/env bash
# The whole test suite: lint, format, typecheck, build, unit + integration + PostgreSQL + browser e2e.
# On a fresh Debian machine (as root) it installs what the suites need: Chromium for the
# e2e tests and a local PostgreSQL for the hub tests.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi; }

if [ ! -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ]; then
  echo "== installing Chromium for the browser tests"
  as_root apt-get update -qq && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null \
    || echo "!! could not install Chromium: the e2e tests will fail"
fi

if [ -z "${TIREWEAR_TEST_DATABASE_URL:-}" ] && [ -f scripts/pg-test-setup.sh ]; then
  echo "== preparing PostgreSQL for the hub tests"
  if url="$(bash scripts/pg-test-setup.sh | tail -n 1)"; then
    export TIREWEAR_TEST_DATABASE_URL="$url"
  elif [ "$(id -u)" = 0 ] || [ -n "${CI:-}" ]; then
    # root could install it and CI must run them: a skip here would pass a run that tested no hub
    echo "!! PostgreSQL could not be set up (see above); the hub tests cannot run. Fix it, or set TIREWEAR_TEST_DATABASE_URL." >&2
    exit 1
  else
    echo "!! PostgreSQL not available: the hub tests are skipped"
  fi
fi

echo "== lint (eslint) and format (prettier --check)"
npm run --silent lint
npm run --silent format:check
echo "== typecheck"
npm run --silent typecheck
echo "== build (electron-vite: main, preload, renderer)"
npx electron-vite build >/dev/null
echo "== tests"
npx vitest run "$@"
