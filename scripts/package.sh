#!/usr/bin/env bash
# Builds the desktop packages (.deb and .rpm) with the app's resident process and the
# command-line tools inside, beside the app: /usr/bin/airlock-resident (the engine, the local API
# and the tray, which stay when the window closes), /usr/bin/airlock (Settings → Agents installs hooks with it, and people script it) and
# /usr/bin/airlock-hook (the agents' hook that `airlock connect` installs). `tauri build` alone
# would not find them: bundle.linux.*.files in src-tauri/tauri.linux.conf.json names the copies
# staged in src-tauri/bundle-extra. Extra arguments go to `tauri build`.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
(cd ui && npm run build)
# `--release`: fat LTO in one codegen unit (Cargo.toml), the smallest and fastest binaries, for
# what ships; scripts/setup.sh's faster-linking `setup` profile is for a newcomer's own build.
cargo build --release --locked -p airlock-cli -p airlock-resident
mkdir -p src-tauri/bundle-extra
for tool in airlock airlock-hook airlock-resident; do
  install -m 0755 "$target/release/$tool" "src-tauri/bundle-extra/$tool"
done
ui/node_modules/.bin/tauri build --bundles deb,rpm "$@"
echo "packages: $target/release/bundle/deb and $target/release/bundle/rpm (each ships /usr/bin/airlock-desktop, /usr/bin/airlock-resident, /usr/bin/airlock and /usr/bin/airlock-hook)"
