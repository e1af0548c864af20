#!/usr/bin/env bash
# Runs every test: lint, type check, then the whole vitest suite (unit, integration over real
# sockets with a real Redis and a real kube-apiserver, and the browser end-to-end test).
# It installs what it needs first and never skips quietly.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export PATH="$PWD/node_modules/.bin:$PATH"

echo "== lint and type check"
eslint .
tsc --noEmit

if [ -x scripts/kube-binaries.sh ]; then
  echo "== Kubernetes test binaries"
  bash scripts/kube-binaries.sh
fi

echo "== LiveKit server (the rooms of the ROOM_PROVIDER=livekit tests)"
bash scripts/livekit-server.sh

echo "== tests"
mkdir -p test-artifacts
status=0
vitest run --reporter=default --reporter=json --outputFile.json=test-artifacts/vitest.json "$@" || status=$?
# A closing line that any CI can read, whatever the runner prints above it.
node -e '
  const r = JSON.parse(require("fs").readFileSync("test-artifacts/vitest.json", "utf8"));
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed`);
  if (r.numTotalTests === 0) { console.error("no tests ran"); process.exit(1); }
' || status=1
exit "$status"
