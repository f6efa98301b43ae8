#!/usr/bin/env bash
# Installs what is missing on Debian/Ubuntu (C toolchain, pkg-config) and, unless --deps-only,
# builds and starts the Airlock engine.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v cc >/dev/null || need+=(build-essential)
command -v pkg-config >/dev/null || need+=(pkg-config)
if ((${#need[@]})); then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends "${need[@]}"
fi
if ! command -v cargo >/dev/null; then
  echo "Rust (cargo) is needed: install it with rustup (https://rustup.rs) and run this again." >&2
  exit 1
fi
[ "${1:-}" = "--deps-only" ] && exit 0
cargo build --release -p airlock-cli
exec ./target/release/airlock serve "$@"
