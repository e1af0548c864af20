#!/usr/bin/env bash
# Builds one Go command of the test cluster from the Go module proxy into a cache outside the repo,
# keyed by name and version, and prints the binary's path last. Builds only when missing; fails loudly.
#   bash scripts/cluster/go-binary.sh <name> <version> <package path>
# Called by coredns.sh and metrics-server.sh, which pin the versions.
set -euo pipefail
name="$1" version="$2" package="$3"
cache="${VOICE_KUBE_CACHE:-$HOME/.cache/voice-kube}/$name-$version"
export PATH="$PATH:/usr/local/go/bin:/usr/lib/go/bin"
command -v go >/dev/null || { echo "$name: 'go' is not on PATH; install Go 1.24+ first" >&2; exit 1; }
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
if [ ! -x "$cache/$name" ]; then
  start=$SECONDS
  echo "$name: building $package@$version" >&2
  CGO_ENABLED=0 GOBIN="$cache/tmp" GOTOOLCHAIN="${GOTOOLCHAIN:-local}" GOFLAGS=-buildvcs=false \
    go install -trimpath -ldflags='-s -w' "$package@$version"
  mv "$cache/tmp/$(basename "$package")" "$cache/$name"
  echo "$name: built in $((SECONDS - start)) s" >&2
fi
echo "$cache/$name"
