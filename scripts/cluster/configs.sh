#!/usr/bin/env bash
# Writes the test cluster's configuration files into $RUN_DIR: containerd, CNI, kubeconfigs (metrics-server's
# too), kubelet, kube-proxy and CoreDNS. Usage: configs.sh <pause image>
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=env.sh
source "$here/env.sh"
pause="${1:?usage: configs.sh <pause image>}"
r="$RUN_DIR"; p="$r/pki"
mkdir -p "$r/containerd" "$r/cni/net.d" "$r/kubelet" "$r/pod-logs" "$CACHE_DIR/containerd"

# containerd 1.6: a root of its own (kept in the cache, so imported images survive), state and socket in
# the run dir. No CAP_SYS_RESOURCE here: restrict_oom_score_adj, or every sandbox fails to start.
cat > "$r/containerd/config.toml" <<TOML
version = 2
root = "$CACHE_DIR/containerd"
state = "$r/containerd/state"
[grpc]
  address = "$CONTAINERD_SOCK"
[ttrpc]
  address = "$CONTAINERD_SOCK.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$pause"
  disable_apparmor = true
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$r/cni/net.d"
TOML

# One bridge for the pods, no masquerade: pod traffic never leaves the machine.
cat > "$r/cni/net.d/10-voice.conflist" <<JSON
{"cniVersion": "0.4.0", "name": "voice-test", "plugins": [
  {"type": "bridge", "bridge": "$POD_BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$r/cni/ipam", "ranges": [[{"subnet": "$POD_CIDR"}]],
            "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}
]}
JSON

kubeconfig() { # <file> <cert name>
  cat > "$1" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: voice-test
  cluster: {server: "https://$NODE_IP:$APISERVER_PORT", certificate-authority: "$p/ca.crt"}
users:
- name: $2
  user: {client-certificate: "$p/$2.crt", client-key: "$p/$2.key"}
contexts:
- name: voice-test
  context: {cluster: voice-test, user: $2}
current-context: voice-test
YAML
}
kubeconfig "$r/admin.kubeconfig" admin
kubeconfig "$r/kubelet.kubeconfig" kubelet-client
kubeconfig "$r/kube-proxy.kubeconfig" kube-proxy
kubeconfig "$r/metrics-server.kubeconfig" metrics-server

: > "$r/resolv.conf"  # pods get only cluster DNS, no search domains of the host
cat > "$r/kubelet/config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: $NODE_IP
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: "$p/ca.crt"}
authorization: {mode: Webhook}
tlsCertFile: "$p/kubelet-serving.crt"
tlsPrivateKeyFile: "$p/kubelet-serving.key"
containerRuntimeEndpoint: "unix://$CONTAINERD_SOCK"
cgroupDriver: cgroupfs
failSwapOn: false
failCgroupV1: false
oomScoreAdj: 0
clusterDomain: $CLUSTER_DOMAIN
clusterDNS: [$DNS_IP]
resolvConf: "$r/resolv.conf"
podLogsDir: "$r/pod-logs"
serializeImagePulls: false
evictionHard: {memory.available: "50Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
maxPods: 60
YAML

# iptables mode; conntrack values 0 leave the host's conntrack settings alone.
cat > "$r/kube-proxy.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: "$r/kube-proxy.kubeconfig"}
hostnameOverride: $NODE_NAME
mode: iptables
clusterCIDR: $POD_CIDR
bindAddress: $NODE_IP
healthzBindAddress: "$NODE_IP:10256"
metricsBindAddress: "$NODE_IP:10249"
nodePortAddresses: ["$NODE_IP/32"]
oomScoreAdj: 0
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
YAML

# Cluster names only: anything else is refused, nothing is forwarded off the machine.
cat > "$r/Corefile" <<COREFILE
$CLUSTER_DOMAIN $SERVICE_CIDR $POD_CIDR {
  bind $DNS_IP
  errors
  ready $DNS_IP:8181
  kubernetes $CLUSTER_DOMAIN $SERVICE_CIDR $POD_CIDR {
    kubeconfig "$r/admin.kubeconfig"
    pods insecure
  }
  cache 5
}
. {
  bind $DNS_IP
  template ANY ANY {
    rcode REFUSED
  }
}
COREFILE
