#!/usr/bin/env bash
# Throwaway PKI of the test cluster (ECDSA P-256, openssl): one CA, the API server's serving cert,
# client certs, the kubelet's serving and client certs, the service-account key pair. Usage: pki.sh <dir>
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
openssl ecparam -name prime256v1 -genkey -noout -out sa.key 2>/dev/null
openssl ec -in sa.key -pubout -out sa.pub 2>/dev/null
chmod 600 ./*.key
