#!/usr/bin/env bash
# Airlock's approval round against the Vercel AI SDK's (a tool with needsApproval), both asking
# the same mock OpenAI-compatible server (bench/mock_openai.py) in the same run, alternating
# (BENCHMARKS.md, "Against the Vercel AI SDK"). Installs the peer's pinned packages itself.
#
#   bash bench/compare.sh [airlock-bench binary] [runs] [rounds]
#   e.g. bash bench/compare.sh target/release/airlock-bench 3 500   (cargo build --release -p airlock-bench)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
airlock_bench=${1:-$here/../target/release/airlock-bench}
runs=${2:-3}
rounds=${3:-500}
port=${PORT:-18765}
command -v node >/dev/null || { echo "node is missing: bash scripts/setup.sh --deps-only" >&2; exit 1; }
if [ ! -d "$here/peer-vercel/node_modules" ] || [ "$here/peer-vercel/package-lock.json" -nt "$here/peer-vercel/node_modules" ]; then
  (cd "$here/peer-vercel" && npm ci --no-audit --no-fund)
fi
python3 "$here/mock_openai.py" --port "$port" &
mock=$!
trap 'kill $mock' EXIT
# The mock is up when it answers.
for _ in $(seq 100); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.1)" 2>/dev/null && break
  sleep 0.05
done
base="http://127.0.0.1:$port/v1"
for run in $(seq "$runs"); do
  echo "run $run airlock: $("$airlock_bench" roundtrip --base-url "$base" --rounds "$rounds" | head -1)"
  echo "run $run vercel-ai-sdk: $(node "$here/peer-vercel/roundtrip.mjs" --base-url "$base" --rounds "$rounds")"
done
