#!/usr/bin/env bash
# End to end on a real cluster, for machines with Docker (CI here has none): build both images,
# create a kind cluster, load the images, install the operator chart with a pool, wait for Ready.
#   bash test/e2e/kind.sh                 # KEEP_CLUSTER=1 keeps the cluster afterwards
#   KIND_NODE_IMAGE=kindest/node:v1.27.16 bash test/e2e/kind.sh   # the oldest supported version
#   INGRESS=1 bash test/e2e/kind.sh       # also a real Ingress controller (ingress-nginx) in front of the pool
# INGRESS=1 has never run on the project's own machines (no Docker, and ingress-nginx is not served by
# their registries); the cluster tests prove the same path with Debian's nginx fed from the Ingress
# object (test/cluster/ingress-edge.ts, docs/cluster.md "Ingress").
set -euo pipefail
cd "$(dirname "$0")/../.."

CLUSTER="${KIND_CLUSTER:-voice-e2e}"
NS=voice-system
# Under the registry name `localhost` (docs/install.md, "On a local cluster"): loaded, never pulled.
OPERATOR_IMAGE=localhost/voice-operator:v1.3.0
WORKER_IMAGE=localhost/voice-worker:v1.3.0

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
if [ "${INGRESS:-0}" = 1 ]; then
  echo "== ingress-nginx (its published manifest for kind)"
  kubectl apply -f "https://raw.githubusercontent.com/kubernetes/ingress-nginx/controller-v${INGRESS_NGINX_VERSION:-1.12.1}/deploy/static/provider/kind/deploy.yaml"
  kubectl -n ingress-nginx wait pod -l app.kubernetes.io/component=controller --for=condition=Ready --timeout=300s
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=e2e.kind.test \
    -addext subjectAltName=DNS:e2e.kind.test -keyout /tmp/e2e-tls.key -out /tmp/e2e-tls.crt 2>/dev/null
  kubectl -n "$NS" create secret tls e2e-tls --cert=/tmp/e2e-tls.crt --key=/tmp/e2e-tls.key
fi

echo "== Redis and the worker's Secrets"
kubectl -n "$NS" create deployment redis --image=redis:7-alpine --port=6379
kubectl -n "$NS" expose deployment redis --port=6379
kubectl -n "$NS" create secret generic worker --from-literal=token="$(head -c 24 /dev/urandom | base64)"
kubectl -n "$NS" create secret generic providers --from-literal=llm=e2e --from-literal=stt=e2e --from-literal=tts=e2e

echo "== chart"
values="$(mktemp)"
cat > "$values" <<YAML
image: {registry: localhost, repository: voice-operator, tag: "v1.3.0", pullPolicy: Never}
pool:
  enabled: true
  name: e2e
  spec:
    image: {repository: localhost/voice-worker, tag: v1.3.0, pullPolicy: Never}
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
if [ "${INGRESS:-0}" = 1 ]; then
  printf '    ingress: {host: e2e.kind.test, tlsSecretName: e2e-tls, className: nginx}\n' >> "$values"
fi
helm install voice-operator charts/voice-operator --namespace "$NS" -f "$values" --wait --timeout 5m

echo "== waiting for the pool to be Ready"
if ! kubectl -n "$NS" wait vwp/e2e --for=condition=Ready --timeout=5m; then
  kubectl -n "$NS" get vwp,deploy,pods,events -o wide || true
  kubectl -n "$NS" logs deploy/voice-operator --all-containers --tail=100 || true
  exit 1
fi
kubectl -n "$NS" get vwp e2e
if [ "${INGRESS:-0}" = 1 ]; then
  echo "== a spawn through the Ingress (TLS at ingress-nginx, the worker's answer behind it)"
  kubectl -n ingress-nginx port-forward service/ingress-nginx-controller 8443:443 >/dev/null 2>&1 &
  forward=$!
  sleep 3
  # The worker refuses a spawn without its token in the documented shape: proof the edge reached it.
  answer="$(curl -sS --cacert /tmp/e2e-tls.crt --resolve e2e.kind.test:8443:127.0.0.1 -X POST https://e2e.kind.test:8443/ \
    -H 'content-type: application/json' -d '{}')"
  kill "$forward"
  echo "$answer" | grep -q '"error"' || { echo "kind.sh: no worker answer through the Ingress: $answer" >&2; exit 1; }
fi
echo "kind.sh: pool e2e is Ready"
