#!/usr/bin/env bash
# The demo: installs what it needs, then runs scripts/demo.ts (starts the api-stub on a temp SQLite
# file with examples/seed.json, creates and retrieves a session with the server SDK, prints a timeline).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export PATH="$PWD/node_modules/.bin:$PATH"
exec tsx scripts/demo.ts
