#!/usr/bin/env bash
# Runs every benchmark in bench/ (soak.bench.ts included: a few minutes with a backend outage, a
# worker kill -9 and a Redis restart; turns.bench.ts: about 10 minutes of real-time interviews) and prints
# their tables. Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export PATH="$PWD/node_modules/.bin:$PATH"
[ -x scripts/kube-binaries.sh ] && bash scripts/kube-binaries.sh
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, $(uname -sm), node $(node --version)"
for file in bench/*.bench.ts; do
  echo
  echo "== $file"
  tsx "$file"
done
