#!/usr/bin/env bash
# Builds the desktop packages (.deb and .rpm) with the `airlock` command-line tool inside, at
# /usr/bin/airlock beside the app: Settings → Agents installs hooks that run it, and people
# script it. (`tauri build` alone would not find the staged CLI: bundle.linux.*.files names it.)
# Extra arguments go to `tauri build`.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
(cd ui && npm run build)
cargo build --release --locked -p airlock-cli
mkdir -p src-tauri/bundle-extra
install -m 0755 "$target/release/airlock" src-tauri/bundle-extra/airlock
ui/node_modules/.bin/tauri build --bundles deb,rpm "$@"
echo "packages: $target/release/bundle/deb and $target/release/bundle/rpm (each ships /usr/bin/airlock-desktop and /usr/bin/airlock)"
