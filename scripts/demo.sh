#!/usr/bin/env bash
# The demo: installs what it needs, then runs scripts/demo.ts (starts the whole system: Redis, the
# api-stub with SQLite and a seed, a hosted and a self-hosted worker over HTTPS, the model stand-ins or
# real providers, OTLP and webhook receivers; runs one interview; prints a timeline; stops; exits 0).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export PATH="$PWD/node_modules/.bin:$PATH"
exec tsx scripts/demo.ts
