#!/usr/bin/env bash
# Builds livekit-server (the LiveKit SFU the worker's ROOM_PROVIDER=livekit rooms run on) from the Go
# module proxy into a cache outside the repo, keyed by version. Builds only when missing; fails loudly.
#   bash scripts/livekit-server.sh              build if missing, print the binary's path last
#   bash scripts/livekit-server.sh --bin-path   only print the binary's path
# Pinned to v1.13.5: later tags replace pion modules with forks the module proxy refuses.
set -euo pipefail
version="${LIVEKIT_SERVER_VERSION:-v1.13.5}"
cache="${VOICE_LIVEKIT_CACHE:-$HOME/.cache/voice-livekit}"
dir="$cache/$version"
bin="$dir/livekit-server"
if [ "${1:-}" = "--bin-path" ]; then echo "$bin"; exit 0; fi

# Go's usual install places, for shells whose PATH lacks them.
export PATH="$PATH:/usr/local/go/bin:/usr/lib/go/bin"
mkdir -p "$dir"
# One builder at a time per version (tests, the demo and benches may call this concurrently).
exec 9>"$dir/.lock"
flock 9

if [ ! -x "$bin" ]; then
  command -v go >/dev/null || { echo "livekit-server: 'go' is not on PATH; install Go 1.24+ first" >&2; exit 1; }
  start=$SECONDS
  echo "livekit-server: building github.com/livekit/livekit-server@$version (about 100 s)" >&2
  out="$dir/work"; rm -rf "$out"; mkdir -p "$out"
  # A pure-Go build: no C toolchain needed, and the binary runs on any linux of the same arch.
  (cd "$dir" && CGO_ENABLED=0 GOFLAGS= GOBIN="$out" GOTOOLCHAIN="${GOTOOLCHAIN:-local}" \
    go install -trimpath -ldflags='-s -w' "github.com/livekit/livekit-server/cmd/server@$version")
  mv "$out/server" "$bin"
  rm -rf "$out"
  echo "livekit-server: built in $((SECONDS - start)) s" >&2
fi
"$bin" --version >/dev/null 2>&1 || { echo "livekit-server: $bin does not run" >&2; exit 1; }
echo "$bin"
