#!/usr/bin/env bash
# Regenerates the app's icon set from its one source image, src-tauri/icons/icon.png (square,
# 512 px or more, transparent background), with the Tauri CLI's `tauri icon`: the PNG sizes the
# Linux packages use, icon.icns (macOS) and icon.ico (Windows; tauri-build also embeds it in
# the .exe). The mobile and Windows Store images it also makes are left out: Airlock builds
# none of those. The tray's own images (tray.png, tray-badge.png, tray-paused.png) are drawn separately.
set -euo pipefail
cd "$(dirname "$0")/.."
icons=src-tauri/icons
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
if ! ui/node_modules/.bin/tauri icon "$icons/icon.png" --output "$out/set" >"$out/log" 2>&1; then
  cat "$out/log" >&2
  exit 1
fi
for name in 32x32.png 64x64.png 128x128.png 128x128@2x.png icon.icns icon.ico; do
  install -m 0644 "$out/set/$name" "$icons/$name"
done
echo "icons: $icons/{32x32,64x64,128x128,128x128@2x}.png, icon.icns, icon.ico (from $icons/icon.png)"
