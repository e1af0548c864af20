#!/usr/bin/env bash
# Installs the Debian packages the single-node test cluster needs (idempotent, as root, with apt-get):
# containerd + runc (the node's runtime), the CNI plugins, buildah (builds our images from the
# Dockerfiles), mmdebstrap (the base images), iptables/nftables (kube-proxy's rules), conntrack,
# and nginx (the Ingress's TLS edge in the cluster tests: test/cluster/ingress-edge.ts).
# The packages' own services are not started: scripts/cluster.sh runs containerd with its own config.
set -euo pipefail
[ "$(id -u)" -eq 0 ] || { echo "cluster deps: the test cluster needs root (containerd, bridges, iptables)" >&2; exit 1; }
declare -A pkg_of=(
  [containerd]=containerd [runc]=runc [/usr/lib/cni/bridge]=containernetworking-plugins
  [buildah]=buildah [mmdebstrap]=mmdebstrap [iptables]=iptables [nft]=nftables [conntrack]=conntrack
  [/usr/sbin/nginx]=nginx-light
)
need=()
for probe in "${!pkg_of[@]}"; do
  if [[ "$probe" == /* ]]; then [ -x "$probe" ] || need+=("${pkg_of[$probe]}")
  else command -v "$probe" >/dev/null 2>&1 || need+=("${pkg_of[$probe]}"); fi
done
if [ "${#need[@]}" -gt 0 ]; then
  echo "cluster deps: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # No init system runs services here; keep package scripts from trying to start containerd.
  policy=/usr/sbin/policy-rc.d; made_policy=0
  if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' > "$policy"; chmod +x "$policy"; made_policy=1; fi
  trap '[ "$made_policy" = 1 ] && rm -f "$policy"' EXIT
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
