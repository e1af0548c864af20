#!/usr/bin/env bash
# Throwaway PKI of the test cluster (ECDSA P-256, openssl): one CA, the API server's serving cert,
# client certs, the kubelet's serving and client certs, metrics-server's cert, the front-proxy CA and
# client cert of the aggregation layer, the service-account key pair. Usage: pki.sh <dir>
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=env.sh
source "$here/env.sh"
d="${1:?usage: pki.sh <dir>}"; mkdir -p "$d"; cd "$d"
key() { openssl ecparam -name prime256v1 -genkey -noout -out "$1.key" 2>/dev/null; }
key ca
openssl req -x509 -new -key ca.key -subj "/CN=voice-test-cluster-ca" -days 2 -out ca.crt 2>/dev/null
cert() { # <name> <subject> <extendedKeyUsage> [<subjectAltName>]
  key "$1"
  { echo "basicConstraints=CA:FALSE"; echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$3"; [ -z "${4:-}" ] || echo "subjectAltName=$4"; } > "$1.ext"
  openssl req -new -key "$1.key" -subj "$2" 2>/dev/null \
    | openssl x509 -req -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile "$1.ext" -out "$1.crt" 2>/dev/null
  rm -f "$1.ext"
}
cert apiserver "/CN=kube-apiserver" serverAuth \
  "IP:$NODE_IP,IP:$KUBE_SERVICE_IP,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.$CLUSTER_DOMAIN"
# system:masters: the admin, and the control plane's controllers (a test cluster; fewer moving parts).
cert admin "/O=system:masters/CN=admin" clientAuth
cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth
# The kubelet must be system:node:<name> in system:nodes for the Node authorizer.
cert kubelet-client "/O=system:nodes/CN=system:node:$NODE_NAME" clientAuth
cert kubelet-serving "/CN=$NODE_NAME" serverAuth "IP:$NODE_IP,DNS:$NODE_NAME"
cert kube-proxy "/O=system:node-proxier/CN=system:kube-proxy" clientAuth
# The aggregation layer: the API server proxies metrics.k8s.io to metrics-server (a host process) as
# front-proxy-client, whose CA (a second one, as upstream keeps them apart) metrics-server trusts for
# the X-Remote-User headers; metrics-server serves under the cluster CA for its Service's name (the
# APIService's caBundle) and acts as system:metrics-server (RBAC in metrics-server-objects.sh).
cert metrics-server "/CN=system:metrics-server" serverAuth,clientAuth "DNS:metrics-server.kube-system.svc,IP:$NODE_IP"
key front-proxy-ca
openssl req -x509 -new -key front-proxy-ca.key -subj "/CN=voice-test-front-proxy-ca" -days 2 -out front-proxy-ca.crt 2>/dev/null
front_proxy_cert() { # <name> <subject>: a client cert from the front-proxy CA
  key "$1"
  printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n' > "$1.ext"
  openssl req -new -key "$1.key" -subj "$2" 2>/dev/null \
    | openssl x509 -req -CA front-proxy-ca.crt -CAkey front-proxy-ca.key -CAcreateserial -days 2 -extfile "$1.ext" -out "$1.crt" 2>/dev/null
  rm -f "$1.ext"
}
front_proxy_cert front-proxy-client "/CN=front-proxy-client"
openssl ecparam -name prime256v1 -genkey -noout -out sa.key 2>/dev/null
openssl ec -in sa.key -pubout -out sa.pub 2>/dev/null
chmod 600 ./*.key
