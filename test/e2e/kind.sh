#!/usr/bin/env bash
# End to end on a real cluster, for machines with Docker (CI here has none): build both images,
# create a kind cluster, load the images, install the operator chart with a pool, wait for Ready.
#   bash test/e2e/kind.sh                 # KEEP_CLUSTER=1 keeps the cluster afterwards
#   KIND_NODE_IMAGE=kindest/node:v1.27.16 bash test/e2e/kind.sh   # the oldest supported version
set -euo pipefail
cd "$(dirname "$0")/../.."

CLUSTER="${KIND_CLUSTER:-voice-e2e}"
NS=voice-system
OPERATOR_IMAGE=voice-operator:v1.3.0
WORKER_IMAGE=voice-worker:v1.3.0

need() { command -v "$1" >/dev/null 2>&1 || { echo "kind.sh: '$1' is required (install it first); this script needs Docker and kind" >&2; exit 2; }; }
need docker
need kind
docker info >/dev/null 2>&1 || { echo "kind.sh: the Docker engine is not reachable" >&2; exit 2; }
# kubectl and helm: the versions our tests use, built by scripts/kube-binaries.sh.
bash scripts/kube-binaries.sh >/dev/null
export PATH="$(bash scripts/kube-binaries.sh --bin-dir):$PATH"

echo "== images"
docker build -f Dockerfile.operator -t "$OPERATOR_IMAGE" .
docker build -f Dockerfile.worker -t "$WORKER_IMAGE" .

echo "== cluster $CLUSTER"
kind create cluster --name "$CLUSTER" ${KIND_NODE_IMAGE:+--image "$KIND_NODE_IMAGE"} --wait 120s
cleanup() { [ "${KEEP_CLUSTER:-0}" = 1 ] || kind delete cluster --name "$CLUSTER"; }
trap cleanup EXIT
kind load docker-image --name "$CLUSTER" "$OPERATOR_IMAGE" "$WORKER_IMAGE"
kubectl create namespace "$NS"

echo "== Redis and the worker's Secrets"
kubectl -n "$NS" create deployment redis --image=redis:7-alpine --port=6379
kubectl -n "$NS" expose deployment redis --port=6379
kubectl -n "$NS" create secret generic worker --from-literal=token="$(head -c 24 /dev/urandom | base64)"
kubectl -n "$NS" create secret generic providers --from-literal=llm=e2e --from-literal=stt=e2e --from-literal=tts=e2e

echo "== chart"
values="$(mktemp)"
cat > "$values" <<YAML
image: {repository: voice-operator, tag: "v1.3.0", pullPolicy: Never}
pool:
  enabled: true
  name: e2e
  spec:
    image: {repository: voice-worker, tag: v1.3.0, pullPolicy: Never}
    replicas: 1
    resources:
      requests: {cpu: 250m, memory: 256Mi}
      limits: {cpu: "1", memory: 1Gi}
    secrets:
      workerToken: {name: worker}
      llmApiKey: {name: providers, key: llm}
      sttApiKey: {name: providers, key: stt}
      ttsApiKey: {name: providers, key: tts}
    redis: {url: "redis://redis.$NS.svc:6379"}
    backendUrl: "http://backend.$NS.svc"
    roomProvider: local
    terminationGracePeriodSeconds: 60
YAML
helm install voice-operator charts/voice-operator --namespace "$NS" -f "$values" --wait --timeout 5m

echo "== waiting for the pool to be Ready"
if ! kubectl -n "$NS" wait vwp/e2e --for=condition=Ready --timeout=5m; then
  kubectl -n "$NS" get vwp,deploy,pods,events -o wide || true
  kubectl -n "$NS" logs deploy/voice-operator --all-containers --tail=100 || true
  exit 1
fi
kubectl -n "$NS" get vwp e2e
echo "kind.sh: pool e2e is Ready"
