#!/usr/bin/env bash
# Prints the objects that put metrics-server (a host process on the node's address) behind the API
# server's aggregation layer: its RBAC (as upstream's manifest grants), a Service without selector whose
# EndpointSlice is the node's address, and the APIService for metrics.k8s.io whose caBundle is the
# cluster CA that signed metrics-server's serving cert. Usage: metrics-server-objects.sh <ca.crt>
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=env.sh
source "$here/env.sh"
ca="${1:?usage: metrics-server-objects.sh <ca.crt>}"
cat <<YAML
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:metrics-server"}
rules:
- {apiGroups: [""], resources: [nodes/metrics], verbs: [get]}
- {apiGroups: [""], resources: [pods, nodes], verbs: [get, list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:metrics-server"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:metrics-server"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: "system:metrics-server"}]
---
# TokenReview and SubjectAccessReview for the callers the aggregator forwards.
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "metrics-server:system:auth-delegator"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:auth-delegator"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: "system:metrics-server"}]
---
# The front-proxy CA and allowed names, from the ConfigMap the API server publishes.
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: metrics-server-auth-reader, namespace: kube-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: extension-apiserver-authentication-reader}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: "system:metrics-server"}]
---
apiVersion: v1
kind: Service
metadata: {name: metrics-server, namespace: kube-system}
spec:
  ports: [{name: https, port: 443, targetPort: $METRICS_SERVER_PORT, protocol: TCP}]
---
# No selector: this slice is the Service's only endpoint, metrics-server on the node's address
# (the API server dials it directly: --enable-aggregator-routing).
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: metrics-server-node
  namespace: kube-system
  labels: {kubernetes.io/service-name: metrics-server, endpointslice.kubernetes.io/managed-by: voice-test-cluster}
addressType: IPv4
endpoints: [{addresses: ["$NODE_IP"], conditions: {ready: true}}]
ports: [{name: https, port: $METRICS_SERVER_PORT, protocol: TCP}]
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1beta1.metrics.k8s.io}
spec:
  group: metrics.k8s.io
  version: v1beta1
  groupPriorityMinimum: 100
  versionPriority: 100
  service: {namespace: kube-system, name: metrics-server, port: 443}
  caBundle: $(base64 -w0 "$ca")
YAML
