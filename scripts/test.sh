#!/usr/bin/env bash
# Runs every test of the project: formatting, lints, Rust unit/integration/end-to-end tests
# (including the check that the UI's generated TypeScript types are current), the UI's type
# check, its Vitest component tests and its production build.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --deps-only
# The Node.js setup.sh chose (the system's, or the pinned one from npm where the system's is old).
source scripts/node.sh
use_recent_node
# The GitHub workflows (CI on Linux, macOS and Windows; the release builds) as GitHub would read
# them, with shellcheck on their scripts.
"${AIRLOCK_TOOLS_DIR:-$HOME/.cache/airlock-tools}/bin/actionlint" .github/workflows/*.yml
# The desktop app embeds ui/dist at compile time, so the UI is built before any cargo step.
(cd ui && npm run build)
# The Rust code is rustfmt-formatted (defaults); keep it so.
cargo fmt --all --check
# The test doubles (airlock-testkit: the test MCP server binary, the scripted model) and the
# benchmarks (airlock-bench) are workspace crates no shipped crate depends on; building the whole
# workspace's tests builds the test MCP server the CLI's and the resident's tests spawn.
# Every platform's packages of the lock file: crates/cli/tests/architecture.rs reads the whole
# resolved graph with `cargo metadata --offline`, which a Linux build alone does not download.
cargo fetch --locked
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
# The approval clients (clients/python, clients/typescript) with the real agent SDKs against a
# real engine and the scripted model (scripts/sdk-clients.sh builds what they run).
bash scripts/sdk-clients.sh
(cd ui && npm run check && npm test && npm run test:browser)
# The real app under Xvfb through WebDriver, and a notification's action on a private D-Bus.
bash scripts/e2e.sh
