#!/usr/bin/env bash
# Builds CoreDNS (the test cluster's DNS) from the Go module proxy into a cache outside the repo,
# keyed by version, and prints the binary's path last. Builds only when missing; fails loudly.
set -euo pipefail
exec bash "$(dirname "$0")/go-binary.sh" coredns "${COREDNS_VERSION:-v1.14.7}" github.com/coredns/coredns
