#!/usr/bin/env bash
# The approval clients for agent SDKs, tested with the real SDKs (pinned: tests/sdk-clients/
# requirements.txt and constraints.txt for PydanticAI, the OpenAI Agents SDK and LangGraph;
# clients/typescript/package-lock.json for the Vercel AI SDK) against a real `airlock serve` and
# the scripted model server on 127.0.0.1, and the README's "Use it from your own agent" examples
# as written. Installs nothing: `bash scripts/setup.sh --deps-only` does.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=tests/sdk-clients/.venv
if [ ! -x "$venv/bin/pytest" ] || [ ! -d clients/typescript/node_modules ]; then
  echo "The agent SDKs are not installed: run \`bash scripts/setup.sh --deps-only\`." >&2
  exit 1
fi
# The binaries (`airlock`, the scripted model): from $AIRLOCK_BIN_DIR where the caller built them
# already (scripts/test.sh), else built here.
if [ -z "${AIRLOCK_BIN_DIR:-}" ]; then
  cargo build --locked -p airlock-cli -p airlock-testkit --bins
  export AIRLOCK_BIN_DIR="${CARGO_TARGET_DIR:-$PWD/target}/debug"
fi
(cd clients/typescript && npm run build && npm test)
# The Python client is typed (py.typed): strictly, against the SDKs it adapts.
"$venv/bin/python" -m mypy --strict clients/python/src
"$venv/bin/python" -m pytest -q tests/sdk-clients
