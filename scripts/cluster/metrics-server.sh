#!/usr/bin/env bash
# Builds metrics-server (what the test cluster's HorizontalPodAutoscalers read CPU from) from the Go
# module proxy into a cache outside the repo, keyed by version, and prints the binary's path last.
# Builds only when missing; fails loudly.
set -euo pipefail
METRICS_SERVER_VERSION="${METRICS_SERVER_VERSION:-v0.8.0}"
cache="${VOICE_KUBE_CACHE:-$HOME/.cache/voice-kube}/metrics-server-$METRICS_SERVER_VERSION"
export PATH="$PATH:/usr/local/go/bin:/usr/lib/go/bin"
command -v go >/dev/null || { echo "metrics-server: 'go' is not on PATH; install Go 1.24+ first" >&2; exit 1; }
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
if [ ! -x "$cache/metrics-server" ]; then
  start=$SECONDS
  echo "metrics-server: building sigs.k8s.io/metrics-server/cmd/metrics-server@$METRICS_SERVER_VERSION" >&2
  CGO_ENABLED=0 GOBIN="$cache/tmp" GOTOOLCHAIN="${GOTOOLCHAIN:-local}" GOFLAGS=-buildvcs=false \
    go install -trimpath -ldflags='-s -w' "sigs.k8s.io/metrics-server/cmd/metrics-server@$METRICS_SERVER_VERSION"
  mv "$cache/tmp/metrics-server" "$cache/metrics-server"
  echo "metrics-server: built in $((SECONDS - start)) s" >&2
fi
echo "$cache/metrics-server"
