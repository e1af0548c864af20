#!/usr/bin/env bash
# Creates (once) the Python virtual environment the Daily bridge and its checks use, in a cache
# outside the repository keyed by the requirements' hash, and prints its interpreter's path.
# Called by scripts/bootstrap.sh, scripts/test.sh and the tests (test/fakes/daily-python.ts); idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
reqs=(worker/rooms/daily/requirements.txt worker/rooms/daily/requirements-dev.txt)
key="$(cat "${reqs[@]}" | sha256sum | cut -c1-16)"
root="${VOICE_PY_CACHE:-$HOME/.cache/voice-py}"
venv="$root/$key"
# Debian's interpreter (the worker image's too); any python3 >= 3.9 with venv works.
base="${PYTHON_FOR_VENV:-$(command -v /usr/bin/python3 || command -v python3)}"
mkdir -p "$root"
# Test files may ask at the same time: one creates, the others wait.
exec 9>"$root/.lock"
flock 9
if [ ! -x "$venv/bin/python" ] || [ ! -f "$venv/.complete" ]; then
  echo "python-env: creating $venv with $("$base" --version)" >&2
  rm -rf "$venv"
  "$base" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --require-hashes -r worker/rooms/daily/requirements.txt >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r worker/rooms/daily/requirements-dev.txt >&2
  touch "$venv/.complete"
fi
ln -sfn "$venv" "$root/current"
echo "$venv/bin/python"
