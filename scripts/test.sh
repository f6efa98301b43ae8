#!/usr/bin/env bash
# Runs every test of the project: formatting, lints, Rust unit/integration/end-to-end tests
# (including the check that the UI's generated TypeScript types are current), the UI's type
# check, its Vitest component tests and its production build, the approval clients with the real
# agent SDKs, the UI in a browser and the real desktop app.
#
# Independent steps run side by side (scripts/steps.sh): cargo's builds and test runs one after
# another in one lane, the light checks (Node, Python) in another lane beside them. Each step
# writes its own log to test-output/ci/STEP.log; the summary at the end says which passed, which
# failed and which could not run, and the exit code is 1 if any did not pass.
#
#   bash scripts/test.sh                 everything
#   bash scripts/test.sh --dry-run       the plan: each lane's steps, what they wait for, their
#                                        commands; runs nothing
#   bash scripts/test.sh --only a,b      only those steps (e.g. --only fmt,ui-check,vitest); what
#                                        they need must be there already
set -euo pipefail
cd "$(dirname "$0")/.."
while [ $# -gt 0 ]; do
  case $1 in
    --dry-run) export STEPS_DRY_RUN=1 ;;
    --only) export STEPS_ONLY=${2:?--only takes a comma-separated list of steps}; shift ;;
    *) echo "usage: bash scripts/test.sh [--dry-run] [--only STEP,…]" >&2; exit 2 ;;
  esac
  shift
done
# shellcheck source=scripts/steps.sh
source scripts/steps.sh
TARGET=${CARGO_TARGET_DIR:-$PWD/target}

# -- The cargo lane: builds and test runs, which share the target directory (and its lock).

# The desktop app embeds ui/dist at compile time, so the UI is built before any cargo step.
step_ui_build() { cd ui && npm run build; }
# Every platform's packages of the lock file: crates/cli/tests/architecture.rs reads the whole
# resolved graph with `cargo metadata --offline`, which a Linux build alone does not download.
step_fetch() { cargo fetch --locked; }
step_clippy() { cargo clippy --workspace --all-targets --locked -- -D warnings; }
# Everything the later steps run: the workspace's binaries (the test doubles of airlock-testkit
# among them: the test MCP server, the scripted model) and its test binaries, built last so that
# the binaries in the target directory are those `cargo test` would leave there.
step_cargo_build() {
  cargo build --workspace --locked --bins
  cargo test --workspace --locked --no-run
}
step_cargo_test() { cargo test --workspace --locked; }
# The real app under Xvfb through WebDriver, and a notification's action on a private D-Bus.
step_e2e() { bash scripts/e2e.sh; }

# -- The light lane: checks that build nothing with cargo.

# The Rust code is rustfmt-formatted (defaults); keep it so.
step_fmt() { cargo fmt --all --check; }
# The GitHub workflows (CI on Linux, macOS and Windows; the release builds) as GitHub would read
# them, with shellcheck on their scripts.
step_actionlint() { "${AIRLOCK_TOOLS_DIR:-$HOME/.cache/airlock-tools}/bin/actionlint" .github/workflows/*.yml; }
# The project's own scripts, as shellcheck reads them.
step_shellcheck() { shellcheck -x scripts/*.sh .ci/run; }
step_ui_check() { cd ui && npm run check; }
step_vitest() { cd ui && npm test; }
# The built UI in chromium with the shell mocked (10,000 pending items).
step_browser() { cd ui && npm run test:browser; }
# The approval clients (clients/python, clients/typescript) with the real agent SDKs against a
# real engine and the scripted model. They start the binaries from a snapshot of their own (hard
# links): the cargo lane's later runs replace the ones in the target directory meanwhile.
step_sdk_clients() {
  local bins="$TARGET/sdk-clients-bin"
  rm -rf "$bins"
  mkdir -p "$bins"
  cp -l "$TARGET"/debug/{airlock,airlock-hook,airlock-scripted-model,airlock-test-mcp-server} "$bins/"
  AIRLOCK_BIN_DIR="$bins" bash scripts/sdk-clients.sh
}

# Each step waits only for steps declared before it: NAME LANE NEEDS AFTER.
step ui-build cargo
step fmt light
step actionlint light
step shellcheck light
step ui-check light
step vitest light
step browser light ui-build
step fetch cargo
step clippy cargo ui-build,fetch
step cargo-build cargo ui-build,fetch
step sdk-clients light cargo-build
step cargo-test cargo cargo-build
# Alone on the CPU as far as this run goes: the window's WebDriver waits have deadlines.
step e2e cargo cargo-build sdk-clients,browser

steps_check_only
if [ "${STEPS_DRY_RUN:-0}" != 1 ]; then
  # What the tests use (Xvfb, chromium, PostgreSQL, the agents, the SDKs…): before any step.
  bash scripts/setup.sh --deps-only
  # The Node.js setup.sh chose (the system's, or the pinned one from npm where the system's is
  # old), for every step.
  # shellcheck source=scripts/node.sh
  source scripts/node.sh
  use_recent_node
fi
steps_run
