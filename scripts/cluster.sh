#!/usr/bin/env bash
# A real single-node Kubernetes on this machine, for the tests (docs/cluster.md):
#   bash scripts/cluster.sh up     build/cache binaries and images, start etcd, the control plane,
#                                  containerd, kubelet, kube-proxy, CoreDNS and metrics-server (behind
#                                  the aggregation layer, for the HPAs); prints KEY=value lines
#                                  (KUBECONFIG, images) last, also kept in $RUN_DIR/cluster.env
#   bash scripts/cluster.sh down   stop everything and put back what up changed on the machine
#                                  (iptables/nftables rules, bridges, network namespaces, mounts,
#                                  cgroups, sysctls)
# Needs root. `up` on a machine where a previous run was not taken down takes that one down first.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"; repo="$(cd "$here/.." && pwd)"
# shellcheck source=cluster/env.sh
source "$here/cluster/env.sh"
[ "$(id -u)" -eq 0 ] || { echo "cluster: needs root (containerd, bridges, iptables, sysctls); run as root" >&2; exit 1; }
saved="$RUN_DIR/saved"   # what the machine looked like before up
log() { echo "cluster: $*" >&2; }
t0=$SECONDS
timed() { log "$1 ($((SECONDS - t0)) s)"; }

start_daemon() { # <name> <command...>: background, own session, log and pid in the run dir
  local name="$1"; shift
  setsid "$@" > "$RUN_DIR/logs/$name.log" 2>&1 < /dev/null &
  echo $! > "$RUN_DIR/pids/$name"
}
wait_for() { # <what> <seconds> <command...>
  local what="$1" limit="$2"; shift 2
  local deadline=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      log "$what not ready after $limit s; last log lines:"; tail -n 30 "$RUN_DIR/logs/"*.log >&2 || true
      return 1
    fi
    sleep 0.3
  done
}

down() {
  [ -d "$RUN_DIR" ] || return 0
  log "taking the cluster down"
  # Reverse order of start; the kubelet first so nothing restarts containers.
  for name in metrics-server coredns kube-proxy kubelet kube-scheduler kube-controller-manager kube-apiserver etcd; do
    stop_pid "$name"
  done
  if [ -S "$CONTAINERD_SOCK" ]; then
    local ctr=(ctr --address "$CONTAINERD_SOCK" -n k8s.io)
    for t in $("${ctr[@]}" tasks ls -q 2>/dev/null); do "${ctr[@]}" tasks kill -s SIGKILL "$t" >/dev/null 2>&1 || true; done
    for t in $("${ctr[@]}" tasks ls -q 2>/dev/null); do
      for _ in 1 2 3 4 5 6 7 8 9 10; do "${ctr[@]}" tasks delete "$t" >/dev/null 2>&1 && break; sleep 0.3; done
    done
    # The pods' containers and sandboxes (their CRI records), so the next containerd starts clean.
    for c in $("${ctr[@]}" containers ls -q 2>/dev/null); do "${ctr[@]}" containers rm "$c" >/dev/null 2>&1 || true; done
  fi
  stop_pid containerd
  # Network namespaces the CRI made for our pods (the bridge's veths go with them).
  if [ -f "$saved/netns" ]; then
    for ns in /var/run/netns/cni-*; do
      [ -e "$ns" ] || continue
      grep -qxF "$(basename "$ns")" "$saved/netns" && continue
      for _ in 1 2 3 4 5; do mountpoint -q "$ns" || break; umount "$ns" 2>/dev/null || umount -l "$ns" 2>/dev/null || true; done
      rm -f "$ns" 2>/dev/null || log "could not remove $ns"
    done
  fi
  # Mounts under our directories (pod volumes, container root filesystems), deepest first.
  { findmnt -rn -o TARGET | grep -E "^($RUN_DIR|$CACHE_DIR/containerd)/" || true; } | sort -r | while read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done
  for dev in "$POD_BRIDGE" "$NODE_BRIDGE"; do ip link show "$dev" >/dev/null 2>&1 && ip link del "$dev"; done
  # The kubelet's cgroups (cgroupfs driver): kubepods and below, in every hierarchy.
  for h in /sys/fs/cgroup/*/; do
    [ -d "$h/kubepods" ] && find "$h/kubepods" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
  if [ -f "$saved/nft.ruleset" ]; then
    nft flush ruleset && nft -f "$saved/nft.ruleset"
  fi
  if [ -f "$saved/fixed-paths" ]; then
    for p in "${FIXED_PATHS[@]}"; do
      grep -qxF "$p" "$saved/fixed-paths" && continue
      while mountpoint -q "$p" 2>/dev/null; do umount "$p" || break; done
      rm -rf "$p"
    done
  fi
  if [ -f "$saved/sysctl.conf" ]; then sysctl -q -p "$saved/sysctl.conf" >/dev/null || log "could not restore every sysctl"; fi
  rm -rf "$RUN_DIR"
  timed "down"
}
stop_pid() { # <name>: SIGTERM, then SIGKILL after 10 s
  local f="$RUN_DIR/pids/$1" pid
  [ -f "$f" ] || return 0
  pid="$(cat "$f")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

save_machine_state() {
  mkdir -p "$saved"
  : > "$saved/sysctl.conf"
  for k in "${SAVED_SYSCTLS[@]}"; do
    v="$(sysctl -n "$k" 2>/dev/null)" && echo "$k = $v" >> "$saved/sysctl.conf"
  done
  nft list ruleset > "$saved/nft.ruleset"
  ls /var/run/netns 2>/dev/null > "$saved/netns" || : > "$saved/netns"
  : > "$saved/fixed-paths"
  for p in "${FIXED_PATHS[@]}"; do if [ -e "$p" ]; then echo "$p" >> "$saved/fixed-paths"; fi; done
}

up() {
  [ -d "$RUN_DIR" ] && down
  bash "$here/cluster/deps.sh"
  mkdir -p "$RUN_DIR/logs" "$RUN_DIR/pids"
  save_machine_state
  # From here on, a failed up leaves nothing behind.
  trap 'status=$?; if [ "$status" -ne 0 ]; then log "up failed; taking it down"; down; fi' EXIT
  local bin coredns metrics_server
  bin="$(bash "$repo/scripts/kube-binaries.sh" | tail -n 1)"
  coredns="$(bash "$here/cluster/coredns.sh" | tail -n 1)"
  metrics_server="$(bash "$here/cluster/metrics-server.sh" | tail -n 1)"
  timed "binaries ready"
  bash "$here/cluster/images.sh" > "$RUN_DIR/images.env"
  # shellcheck source=/dev/null
  source "$RUN_DIR/images.env"
  timed "images built"
  bash "$here/cluster/pki.sh" "$RUN_DIR/pki"
  bash "$here/cluster/configs.sh" "$PAUSE_IMAGE"
  timed "certificates and configs written"

  ip link add "$NODE_BRIDGE" type bridge
  ip addr add "$NODE_IP/${NODE_CIDR#*/}" dev "$NODE_BRIDGE"
  ip link set "$NODE_BRIDGE" up
  # Pod -> Service -> pod on one bridge, and pods reaching the node's address, need both.
  sysctl -q -w net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1

  # The CRI bind-mounts each pod's network namespace under /run/netns; as `ip netns` does, make that
  # directory a shared mount of its own first, or mounts copied into other mount namespaces keep the
  # files busy and pods never finish terminating.
  mkdir -p /run/netns
  mountpoint -q /run/netns || mount --bind /run/netns /run/netns
  mount --make-shared /run/netns
  start_daemon containerd containerd --config "$RUN_DIR/containerd/config.toml"
  start_daemon etcd "$bin/etcd" --data-dir "$RUN_DIR/etcd" --unsafe-no-fsync \
    --listen-client-urls "http://$NODE_IP:$ETCD_CLIENT_PORT" --advertise-client-urls "http://$NODE_IP:$ETCD_CLIENT_PORT" \
    --listen-peer-urls "http://$NODE_IP:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://$NODE_IP:$ETCD_PEER_PORT" \
    --initial-cluster "default=http://$NODE_IP:$ETCD_PEER_PORT"
  wait_for etcd 30 curl -sf "http://$NODE_IP:$ETCD_CLIENT_PORT/health"
  local p="$RUN_DIR/pki"
  start_daemon kube-apiserver "$bin/kube-apiserver" --etcd-servers "http://$NODE_IP:$ETCD_CLIENT_PORT" \
    --bind-address "$NODE_IP" --advertise-address "$NODE_IP" --secure-port "$APISERVER_PORT" \
    --tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" --client-ca-file "$p/ca.crt" \
    --service-account-key-file "$p/sa.pub" --service-account-signing-key-file "$p/sa.key" \
    --service-account-issuer "https://kubernetes.default.svc.$CLUSTER_DOMAIN" \
    --service-cluster-ip-range "$SERVICE_CIDR" --authorization-mode Node,RBAC --allow-privileged=true \
    --kubelet-client-certificate "$p/apiserver-kubelet-client.crt" --kubelet-client-key "$p/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types InternalIP,Hostname \
    --requestheader-client-ca-file "$p/front-proxy-ca.crt" --requestheader-allowed-names front-proxy-client \
    --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
    --requestheader-extra-headers-prefix X-Remote-Extra- \
    --proxy-client-cert-file "$p/front-proxy-client.crt" --proxy-client-key-file "$p/front-proxy-client.key" \
    --enable-aggregator-routing=true
  export KUBECONFIG="$RUN_DIR/admin.kubeconfig"
  wait_for kube-apiserver 60 "$bin/kubectl" get --raw /readyz
  timed "API server ready"
  start_daemon kube-controller-manager "$bin/kube-controller-manager" --kubeconfig "$KUBECONFIG" \
    --authentication-kubeconfig "$KUBECONFIG" --authorization-kubeconfig "$KUBECONFIG" \
    --bind-address "$NODE_IP" --leader-elect=false --service-account-private-key-file "$p/sa.key" \
    --root-ca-file "$p/ca.crt" --service-cluster-ip-range "$SERVICE_CIDR" --cluster-cidr "$POD_CIDR" \
    --use-service-account-credentials=true
  start_daemon kube-scheduler "$bin/kube-scheduler" --kubeconfig "$KUBECONFIG" \
    --authentication-kubeconfig "$KUBECONFIG" --authorization-kubeconfig "$KUBECONFIG" \
    --bind-address "$NODE_IP" --leader-elect=false
  wait_for containerd 30 ctr --address "$CONTAINERD_SOCK" version
  bash "$here/cluster/images.sh" "$CONTAINERD_SOCK" > /dev/null
  timed "images in containerd"
  start_daemon kubelet "$bin/kubelet" --config "$RUN_DIR/kubelet/config.yaml" --kubeconfig "$RUN_DIR/kubelet.kubeconfig" \
    --root-dir "$RUN_DIR/kubelet" --cert-dir "$RUN_DIR/kubelet/pki" --hostname-override "$NODE_NAME" --node-ip "$NODE_IP"
  start_daemon kube-proxy "$bin/kube-proxy" --config "$RUN_DIR/kube-proxy.yaml"
  start_daemon coredns "$coredns" -conf "$RUN_DIR/Corefile"
  wait_for "node $NODE_NAME" 60 "$bin/kubectl" wait --for=condition=Ready "node/$NODE_NAME" --timeout=2s
  wait_for coredns 30 curl -sf "http://$DNS_IP:8181/ready"
  wait_for "default service account" 30 "$bin/kubectl" get serviceaccount default
  # metrics-server (what the HPAs read CPU from) as a host process, like CoreDNS: it scrapes the kubelet
  # with the cluster CA (no --kubelet-insecure-tls) and serves metrics.k8s.io through the APIService.
  # Its RBAC first: at start it reads the extension-apiserver-authentication ConfigMap and exits (with
  # its usage text) if that is still forbidden; started before the apply, it lost that race once.
  bash "$here/cluster/metrics-server-objects.sh" "$p/ca.crt" | "$bin/kubectl" apply -f - > /dev/null
  start_metrics_server() {
    start_daemon metrics-server "$metrics_server" --bind-address "$NODE_IP" --secure-port "$METRICS_SERVER_PORT" \
      --tls-cert-file "$p/metrics-server.crt" --tls-private-key-file "$p/metrics-server.key" \
      --kubeconfig "$RUN_DIR/metrics-server.kubeconfig" --authentication-kubeconfig "$RUN_DIR/metrics-server.kubeconfig" \
      --authorization-kubeconfig "$RUN_DIR/metrics-server.kubeconfig" \
      --kubelet-certificate-authority "$p/ca.crt" --kubelet-preferred-address-types InternalIP \
      --kubelet-use-node-status-port --metric-resolution 15s
  }
  # Available, or started again if it exited (a refusal at start, e.g. RBAC not yet seen by the
  # authorizer): the first run's log is kept as metrics-server.first.log.
  metrics_api_available() {
    if ! kill -0 "$(cat "$RUN_DIR/pids/metrics-server")" 2>/dev/null; then
      [ -f "$RUN_DIR/logs/metrics-server.first.log" ] || cp "$RUN_DIR/logs/metrics-server.log" "$RUN_DIR/logs/metrics-server.first.log"
      log "metrics-server exited; starting it again"
      start_metrics_server
      return 1
    fi
    "$bin/kubectl" wait --for=condition=Available apiservice/v1beta1.metrics.k8s.io --timeout=2s
  }
  start_metrics_server
  if ! wait_for "the metrics.k8s.io APIService" 60 metrics_api_available; then
    # The reason is in the log's first lines (the tail above is its usage text when it refused to start).
    log "metrics-server's first log lines:"
    head -n 5 "$RUN_DIR/logs/metrics-server.first.log" "$RUN_DIR/logs/metrics-server.log" 2>/dev/null >&2 || true
    return 1
  fi
  timed "node Ready"
  {
    echo "KUBECONFIG=$KUBECONFIG"
    echo "KUBE_BIN_DIR=$bin"
    echo "NODE_IP=$NODE_IP"
    cat "$RUN_DIR/images.env"
  } > "$RUN_DIR/cluster.env"
  trap - EXIT
  log "up in $((SECONDS - t0)) s; kubeconfig: $KUBECONFIG"
  cat "$RUN_DIR/cluster.env"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  *) echo "usage: cluster.sh up|down" >&2; exit 2 ;;
esac
