#!/usr/bin/env bash
# Builds metrics-server (what the test cluster's HorizontalPodAutoscalers read CPU from) from the Go
# module proxy into a cache outside the repo, keyed by version, and prints the binary's path last.
# Builds only when missing; fails loudly.
set -euo pipefail
exec bash "$(dirname "$0")/go-binary.sh" metrics-server "${METRICS_SERVER_VERSION:-v0.8.0}" sigs.k8s.io/metrics-server/cmd/metrics-server
