#!/usr/bin/env bash
# The checks of `npm test` outside vitest: format, long lines, lint, type check, exports nothing
# imports, then the Daily bridge's ruff, mypy and pytest (and its live test when DAILY_API_KEY is set).
# scripts/test.sh runs it after the first vitest run (docs/testing.md, "Two runs"); the first failure
# stops it with a non-zero exit. Needs node_modules/.bin on PATH and the Python venv (bootstrap.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== format, lint and type check"
# Prettier formats the tree (npm run format); a string or comment it cannot wrap is split by hand.
prettier --check . || { echo "test: the tree is not formatted: run npm run format" >&2; exit 1; }
node scripts/long-lines.ts
eslint .
tsc --noEmit
node scripts/unused-exports.ts

echo "== Daily bridge: ruff, mypy (against daily-python's own type stubs), pytest (fake SDK)"
py="$(bash scripts/python-env.sh)"
pybin="$(dirname "$py")"
(cd worker/rooms/daily && "$pybin/ruff" check . ../../../test/fakes/daily_module \
  && "$pybin/ruff" format --check . ../../../test/fakes/daily_module \
  && "$pybin/mypy" bridge.py \
  && "$py" -m pytest -q -p no:cacheprovider)
if [ -n "${DAILY_API_KEY:-}" ]; then
  echo "== Daily live test (DAILY_API_KEY is set): a real room on Daily"
  DAILY_BRIDGE_PYTHON="$py" node test/live/daily-live.ts
else
  echo "NOTE: the live Daily test did NOT run (DAILY_API_KEY is not set); the bot's Daily transport is tested here against a fake SDK only"
fi
