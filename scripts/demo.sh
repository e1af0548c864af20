#!/usr/bin/env bash
# The demo: installs what it needs, then runs scripts/demo.ts (starts the whole system: Redis, the
# api-stub with SQLite and a seed, a hosted and a self-hosted worker over HTTPS, the model stand-ins or
# real providers, OTLP and webhook receivers, and a livekit-server for the rooms when it can be built;
# runs one interview; prints a timeline; stops; exits 0).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export PATH="$PWD/node_modules/.bin:$PATH"
# LiveKit rooms by default: the server is built on the first run (about 2 minutes, needs Go). Without
# it the demo says so and uses the workers' own rooms.
if [ "${DEMO_ROOMS:-}" != "local" ]; then
  bash scripts/livekit-server.sh >/dev/null || echo "demo: livekit-server could not be built; using local rooms" >&2
fi
exec tsx scripts/demo.ts
