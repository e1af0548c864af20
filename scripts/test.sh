#!/usr/bin/env bash
# Runs every test: the whole vitest suite (unit, integration over real sockets with a real Redis and a
# real kube-apiserver, the browser end-to-end test, and the single-node cluster tests, which need
# root: docs/cluster.md) and the checks outside it (format, lint, type check: scripts/checks.sh).
# It installs and builds what it needs first (the long first builds side by side, below), runs the
# tests that need none of those builds while they go on, and never skips quietly.
set -euo pipefail
cd "$(dirname "$0")/.."

# The cluster project (test/cluster) runs a real single-node Kubernetes: it needs root.
if [ "$(id -u)" -ne 0 ]; then
  echo "test: the cluster tests (test/cluster, docs/cluster.md) need root for containerd, bridges and iptables; run npm test as root" >&2
  exit 1
fi

# First builds on a fresh machine are long and independent of each other (docs/cluster.md, "Time budget"):
# they run side by side, each in its own process group with its own log, while the foreground installs
# the rest and runs the tests that need no build, then the checks. wait_builds fails the run with the
# log of every step that failed.
mkdir -p test-artifacts
declare -A build_pid=()
# They run at the lowest CPU priority: the foreground (npm ci, pip, then the first tests) is what a
# developer waits for, and the builds still take every cycle it leaves. setsid gives each step its own
# autogroup when the kernel groups by session (sched_autogroup), where nice alone would not count, so
# the step lowers its autogroup too.
build() { # <name> <command...>
  local name="$1"; shift
  setsid nice -n 19 bash -c '{ echo 19 > /proc/self/autogroup; } 2>/dev/null || true
    start=$SECONDS; "$@" || exit; echo "== $0 done in $((SECONDS - start)) s"' "$name" "$@" \
    > "test-artifacts/build-$name.log" 2>&1 < /dev/null &
  build_pid[$name]=$!
}
wait_builds() {
  local name failed=() running ticks=0
  # Say what is still building once a minute (a fresh machine builds for tens of minutes).
  while :; do
    running=()
    for name in "${!build_pid[@]}"; do if kill -0 "${build_pid[$name]}" 2>/dev/null; then running+=("$name"); fi; done
    [ "${#running[@]}" -gt 0 ] || break
    if [ $((ticks % 30)) -eq 0 ]; then echo "   still building: ${running[*]} (logs: test-artifacts/build-<step>.log)"; fi
    ticks=$((ticks + 1)); sleep 2
  done
  for name in "${!build_pid[@]}"; do
    if wait "${build_pid[$name]}"; then tail -n 1 "test-artifacts/build-$name.log"; else failed+=("$name"); fi
    unset "build_pid[$name]"
  done
  for name in "${failed[@]}"; do
    echo "test: the build step '$name' failed (test-artifacts/build-$name.log):" >&2
    tail -n 40 "test-artifacts/build-$name.log" >&2
  done
  [ "${#failed[@]}" -eq 0 ]
}
# A run that stops early (a failed check, Ctrl-C) stops the builds it started too.
stop_builds() {
  local pid
  # A step may not have reached its own process group yet: then its first process is enough.
  { for pid in "${build_pid[@]}"; do kill -- "-$pid" || kill "$pid" || true; done; } 2>/dev/null
}
trap stop_builds EXIT
trap 'exit 130' INT TERM

# apt first and alone (one dpkg at a time): the cluster's packages (buildah, mmdebstrap) feed the images.
bash scripts/cluster/deps.sh
echo "== building in the background: Kubernetes test binaries, the ecosystem validators, CoreDNS, metrics-server, livekit-server, the cluster's images"
build kube-binaries bash scripts/kube-binaries.sh
# kubeconform, kube-score, pluto, promtool and their schemas (helm comes from kube-binaries; the
# validator tests check it exists when they run, after wait_builds).
build validators bash scripts/validators.sh
build coredns bash scripts/cluster/coredns.sh
build metrics-server bash scripts/cluster/metrics-server.sh
build livekit-server bash scripts/livekit-server.sh
build cluster-images bash scripts/cluster/images.sh
# Meanwhile: Debian packages, npm ci and the Python venv.
bash scripts/bootstrap.sh
export PATH="$PWD/node_modules/.bin:$PATH"

# An assignment, not echo "$(...)": set -e stops here when the fetch or a checksum fails.
turn_models="$(bash scripts/turn-models.sh)"
echo "== turn models (Silero VAD, Smart Turn v3) in $turn_models"
# The speech server's tests (speech/, test/speech) run the real recogniser and voice: no models, no run.
speech_models="$(bash scripts/speech-models.sh)"
echo "== speech models (Moonshine base-en, Piper en_US-joe-medium) in $speech_models"

# Two vitest runs, one report: the 'default' project needs no background build, so it runs while the
# builds go on; the rest ('after-builds': livekit-server and the real-time turn-taking files; 'kube';
# 'e2e'; 'cluster') after wait_builds. The real-time files are all in the second run: the builds must
# not take the cores from a conversation (docs/testing.md, "Two runs"). Arguments go to both runs
# (a run they select nothing in passes empty); the closing line counts both.
status=0
reports=()
run_tests() { # <name> <vitest args...>
  local report="test-artifacts/vitest-$1.json" rc=0; shift
  rm -f "$report"
  vitest run --passWithNoTests --reporter=default --reporter=json --outputFile.json="$report" "$@" || rc=$?
  if [ "$rc" -ne 0 ]; then status=$rc; fi
  reports+=("$report:$rc")
}
# A closing line that any CI can read, whatever the runner prints above it: every run, counted together.
summarize() {
  node -e '
    const fs = require("fs");
    const runs = process.argv.slice(1).map((arg) => {
      const [file, rc] = arg.split(":");
      // A run that wrote no report did not run its tests (vitest failed to start): never a quiet pass.
      if (!fs.existsSync(file)) { console.error(`no test report in ${file}: that vitest run did not finish`); process.exitCode = 1; return null; }
      const report = JSON.parse(fs.readFileSync(file, "utf8"));
      // vitest fails a run for errors outside any test too (a globalSetup that threw), and its report
      // then reads as a success: say so, or the counts below would hide it.
      if (rc !== "0" && report.numFailedTests === 0 && report.numFailedTestSuites === 0) {
        console.error(`the vitest run of ${file} failed (exit ${rc}) outside its tests: see its "Unhandled Error" above`);
        process.exitCode = 1;
      }
      return report;
    }).filter(Boolean);
    const sum = (key) => runs.reduce((n, r) => n + r[key], 0);
    const notRun = sum("numPendingTests") + sum("numTodoTests");
    console.log(`tests: ${sum("numPassedTests")} passed, ${sum("numFailedTests")} failed, ${notRun} not run`);
    // A file can fail outside its tests (a hook that timed out, an import that threw): its tests are
    // then "skipped", so the counts above would read green. Name each such file and why.
    for (const f of runs.flatMap((r) => r.testResults).filter((f) => f.status !== "passed")) {
      console.error(`test file failed: ${f.name.replace(process.cwd() + "/", "")}: ${String(f.message || "a test failed").split("\n")[0]}`);
    }
    if (sum("numTotalTests") === 0) { console.error("no tests ran"); process.exit(1); }
    // Nothing is skipped quietly: a test that did not run fails the run.
    if (notRun > 0 || sum("numFailedTestSuites") > 0) process.exit(1);
  ' "${reports[@]}"
}

echo "== tests that need no build (vitest project default), while the builds run"
run_tests before-builds --project default "$@"

# Format, lint, type check and the Daily bridge's checks come after the first tests, not before them:
# they need no build either, and on a fresh machine they would hold the first test back by minutes.
# A failed check still fails the command, after the first run's count.
if ! bash scripts/checks.sh; then
  summarize || true
  echo "test: a check failed (above), so the tests after the builds (vitest projects after-builds, kube, e2e, cluster) did NOT run" >&2
  exit 1
fi

echo "== waiting for the background builds"
if ! wait_builds; then
  summarize || true
  echo "test: a background build failed (above), so the tests after the builds (vitest projects after-builds, kube, e2e, cluster) did NOT run" >&2
  exit 1
fi

echo "== tests after the builds (vitest projects after-builds, kube, e2e, cluster)"
run_tests after-builds --project after-builds --project kube --project e2e --project cluster "$@"

summarize || status=1
exit "$status"
