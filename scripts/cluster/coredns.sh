#!/usr/bin/env bash
# Builds CoreDNS (the test cluster's DNS) from the Go module proxy into a cache outside the repo,
# keyed by version, and prints the binary's path last. Builds only when missing; fails loudly.
set -euo pipefail
COREDNS_VERSION="${COREDNS_VERSION:-v1.14.7}"
cache="${VOICE_KUBE_CACHE:-$HOME/.cache/voice-kube}/coredns-$COREDNS_VERSION"
export PATH="$PATH:/usr/local/go/bin:/usr/lib/go/bin"
command -v go >/dev/null || { echo "coredns: 'go' is not on PATH; install Go 1.24+ first" >&2; exit 1; }
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
if [ ! -x "$cache/coredns" ]; then
  start=$SECONDS
  echo "coredns: building github.com/coredns/coredns@$COREDNS_VERSION" >&2
  CGO_ENABLED=0 GOBIN="$cache/tmp" GOTOOLCHAIN="${GOTOOLCHAIN:-local}" GOFLAGS=-buildvcs=false \
    go install -trimpath -ldflags='-s -w' "github.com/coredns/coredns@$COREDNS_VERSION"
  mv "$cache/tmp/coredns" "$cache/coredns"
  echo "coredns: built in $((SECONDS - start)) s" >&2
fi
echo "$cache/coredns"
