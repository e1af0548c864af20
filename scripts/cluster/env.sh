# Addresses, ports and places of the single-node test cluster (sourced by scripts/cluster.sh).
# Its own private ranges, none of them the envtest API server's (127.0.0.1, service range 10.0.0.0/24).
NODE_NAME=voice-node
NODE_BRIDGE=vtnode0            # the node's own address lives on this bridge
NODE_IP=10.213.0.1             # apiserver, etcd, kubelet, CoreDNS bind here (never 0.0.0.0)
NODE_CIDR=10.213.0.0/24
POD_BRIDGE=vtpods0             # the CNI bridge plugin creates it; its gateway is POD_GATEWAY
POD_CIDR=10.214.0.0/24
SERVICE_CIDR=10.215.0.0/24     # kubernetes.default is 10.215.0.1
KUBE_SERVICE_IP=10.215.0.1
DNS_IP=$NODE_IP                # CoreDNS runs on the node, clusterDNS points at it
APISERVER_PORT=16443
ETCD_CLIENT_PORT=12379
ETCD_PEER_PORT=12380
METRICS_SERVER_PORT=14443      # metrics-server on the node's address, behind the APIService
CLUSTER_DOMAIN=cluster.local
RUN_DIR="${VOICE_CLUSTER_DIR:-/run/voice-cluster}"
CACHE_DIR="${VOICE_KUBE_CACHE:-$HOME/.cache/voice-kube}"
CONTAINERD_SOCK="$RUN_DIR/containerd/containerd.sock"
# The machine-wide kernel settings the kubelet, kube-proxy and the CNI plugins may change: saved at up,
# restored at down.
SAVED_SYSCTLS=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
  kernel.keys.root_maxkeys kernel.keys.root_maxbytes net.ipv4.ip_forward net.ipv4.conf.all.route_localnet
  net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables)
# Places the kubelet, containerd and the CNI library use whatever their config says: removed at down
# when up found them absent (/run/netns is also a mount the CRI makes).
FIXED_PATHS=(/var/lib/kubelet /var/log/containers /var/log/pods /run/containerd /var/lib/cni /run/netns)
