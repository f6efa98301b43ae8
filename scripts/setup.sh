#!/usr/bin/env bash
# Installs what is missing on Debian/Ubuntu (C toolchain, pkg-config, Node.js and the pinned MCP
# servers of tests/mcp-servers for the end-to-end tests) and, unless --deps-only,
# builds and starts the Airlock engine.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v cc >/dev/null || need+=(build-essential)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v npm >/dev/null || need+=(nodejs npm)
if ((${#need[@]})); then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends "${need[@]}"
fi
if ! command -v cargo >/dev/null; then
  echo "Rust (cargo) is needed: install it with rustup (https://rustup.rs) and run this again." >&2
  exit 1
fi
# The real MCP servers the end-to-end tests run against, at the versions pinned in the lock file.
mcp_servers=tests/mcp-servers
if [ ! -d "$mcp_servers/node_modules" ] || [ "$mcp_servers/package-lock.json" -nt "$mcp_servers/node_modules" ]; then
  (cd "$mcp_servers" && npm ci --no-audit --no-fund)
fi
[ "${1:-}" = "--deps-only" ] && exit 0
cargo build --release -p airlock-cli
exec ./target/release/airlock serve "$@"
