#!/usr/bin/env bash
# Runs every test: lint, type check, then the whole vitest suite (unit, integration over real
# sockets with a real Redis and a real kube-apiserver, the browser end-to-end test, and the
# single-node cluster tests, which need root: docs/cluster.md).
# It installs what it needs first and never skips quietly.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export PATH="$PWD/node_modules/.bin:$PATH"

# An assignment, not echo "$(...)": set -e stops here when the fetch or a checksum fails.
turn_models="$(bash scripts/turn-models.sh)"
echo "== turn models (Silero VAD, Smart Turn v3) in $turn_models"

echo "== lint and type check"
eslint .
tsc --noEmit

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

# The cluster project (test/cluster) runs a real single-node Kubernetes: it needs root.
if [ "$(id -u)" -ne 0 ]; then
  echo "test: the cluster tests (test/cluster, docs/cluster.md) need root for containerd, bridges and iptables; run npm test as root" >&2
  exit 1
fi
bash scripts/cluster/deps.sh
echo "== Kubernetes test binaries, CoreDNS and the cluster's images"
# The images (mostly network: mmdebstrap, npm ci) build while the Go builds use the cores.
mkdir -p test-artifacts
bash scripts/cluster/images.sh > test-artifacts/cluster-images.log 2>&1 &
images_pid=$!
bash scripts/kube-binaries.sh
bash scripts/cluster/coredns.sh
wait "$images_pid" || { echo "test: building the cluster's images failed:" >&2; tail -n 40 test-artifacts/cluster-images.log >&2; exit 1; }

echo "== LiveKit server (the rooms of the ROOM_PROVIDER=livekit tests)"
bash scripts/livekit-server.sh

echo "== tests"
status=0
vitest run --reporter=default --reporter=json --outputFile.json=test-artifacts/vitest.json "$@" || status=$?
# A closing line that any CI can read, whatever the runner prints above it.
node -e '
  const r = JSON.parse(require("fs").readFileSync("test-artifacts/vitest.json", "utf8"));
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed`);
  if (r.numTotalTests === 0) { console.error("no tests ran"); process.exit(1); }
' || status=1
exit "$status"
