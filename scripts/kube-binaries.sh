#!/usr/bin/env bash
# Builds the Kubernetes test binaries from the Go module proxy into a cache outside the repo, keyed by
# version: kube-apiserver, kubectl, etcd and helm for the API-server tests, and kubelet,
# kube-controller-manager, kube-scheduler and kube-proxy for the single-node cluster
# (scripts/cluster.sh). Builds only what is missing; fails loudly.
#   bash scripts/kube-binaries.sh              build what is missing, print the bin dir last
#   bash scripts/kube-binaries.sh --bin-dir    only print the bin dir
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=kube-versions.env
source "$here/kube-versions.env"
cache="${VOICE_KUBE_CACHE:-$HOME/.cache/voice-kube}"
# r3: Kubernetes binaries stamped with their version, node binaries added (bump when the recipe changes).
key="k8s-${KUBE_VERSION}_etcd-${ETCD_VERSION}_helm-${HELM_VERSION}_r3"
bin="$cache/$key/bin"
if [ "${1:-}" = "--bin-dir" ]; then echo "$bin"; exit 0; fi

# Go's usual install places, for shells whose PATH lacks them.
export PATH="$PATH:/usr/local/go/bin:/usr/lib/go/bin"
command -v go >/dev/null || { echo "kube-binaries: 'go' is not on PATH; install Go 1.24+ first" >&2; exit 1; }
mkdir -p "$bin" "$cache/$key/work"
# One builder at a time per cache (tests and benches may call this concurrently).
exec 9>"$cache/$key/.lock"
flock 9

export CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false" GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
export GOMAXPROCS="${GOMAXPROCS:-$(nproc)}"
ldflags='-s -w'

# build_from_wrapper <name> <module@version> <go.mod extra lines> <package> [<package> <output>]...
wrapper() { # <dir> <go.mod body>
  rm -rf "$1" && mkdir -p "$1"
  printf 'module voice.local/kubebuild\n\ngo 1.24\n\n%s\n' "$2" > "$1/go.mod"
}
build() { # <wrapper dir> <output name> <package>
  local start=$SECONDS
  echo "kube-binaries: building $2 from $3 ($key)"
  (cd "$1" && go build -trimpath -ldflags="$ldflags" -o "$bin/$2.tmp" "$3")
  mv "$bin/$2.tmp" "$bin/$2"
  echo "kube-binaries: built $2 in $((SECONDS - start)) s"
}

need() { [ ! -x "$bin/$1" ]; }

kube_cmds=(kube-apiserver kubectl kubelet kube-controller-manager kube-scheduler kube-proxy)
missing_kube=()
for c in "${kube_cmds[@]}"; do need "$c" && missing_kube+=("$c"); done

if [ "${#missing_kube[@]}" -gt 0 ]; then
  dir="$cache/$key/work/kubernetes"
  minor="v0.${KUBE_VERSION#v1.}"
  # Every staging module the tag's go.mod replaces with a local path gets its published v0.Y.Z.
  modfile="$(cd "$cache" && GOFLAGS= go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  [ -f "$modfile" ] || { echo "kube-binaries: could not download k8s.io/kubernetes@$KUBE_VERSION" >&2; exit 1; }
  staging="$(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$modfile")"
  [ -n "$staging" ] || { echo "kube-binaries: no staging replaces found in $modfile" >&2; exit 1; }
  body="require k8s.io/kubernetes $KUBE_VERSION"$'\n\nreplace (\n'
  for m in $staging; do body+="	$m => $m $minor"$'\n'; done
  body+=")"
  wrapper "$dir" "$body"
  # Unstamped binaries report v0.0.0-master, which `helm install` of a chart with a kubeVersion
  # constraint refuses; stamp both places that report the version, as Kubernetes' release build does.
  kminor="${KUBE_VERSION#v1.}"; kminor="${kminor%%.*}"
  stamp=""
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    stamp+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$kminor -X $p.gitTreeState=clean"
  done
  # One go build for all of them shares the compile of the common packages.
  start=$SECONDS
  echo "kube-binaries: building ${missing_kube[*]} from k8s.io/kubernetes@$KUBE_VERSION ($key)"
  out="$cache/$key/work/out"; rm -rf "$out"; mkdir -p "$out"
  pkgs=(); for c in "${missing_kube[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
  (cd "$dir" && go build -trimpath -ldflags="$ldflags$stamp" -o "$out/" "${pkgs[@]}")
  for c in "${missing_kube[@]}"; do mv "$out/$c" "$bin/$c"; done
  echo "kube-binaries: built ${missing_kube[*]} in $((SECONDS - start)) s"
fi

if need etcd; then
  dir="$cache/$key/work/etcd"
  wrapper "$dir" "require go.etcd.io/etcd/server/v3 $ETCD_VERSION"
  build "$dir" etcd go.etcd.io/etcd/server/v3
fi

if need helm; then
  dir="$cache/$key/work/helm"
  wrapper "$dir" "require helm.sh/helm/v3 $HELM_VERSION"
  # Stamp the version and the Kubernetes version `helm template` assumes (its client-go's minor),
  # as helm's own release build does.
  helm_mod="$(cd "$cache" && GOFLAGS= go mod download -json "helm.sh/helm/v3@$HELM_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  k8s_minor="$(sed -n 's#^[[:space:]]*k8s.io/client-go v0\.\([0-9]*\)\..*#\1#p' "$helm_mod" | head -1)"
  [ -n "$k8s_minor" ] || { echo "kube-binaries: no k8s.io/client-go version in $helm_mod" >&2; exit 1; }
  ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$k8s_minor"
  build "$dir" helm helm.sh/helm/v3/cmd/helm
fi

for b in "${kube_cmds[@]}" etcd helm; do
  [ -x "$bin/$b" ] || { echo "kube-binaries: $b is missing after the build" >&2; exit 1; }
done
echo "kube-binaries: ready in $bin"
echo "$bin"
