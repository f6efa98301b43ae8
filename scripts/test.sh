#!/usr/bin/env bash
# Runs every test of the project: formatting-independent lints, unit, integration and end-to-end.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --deps-only
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
