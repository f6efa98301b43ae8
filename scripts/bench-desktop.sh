#!/usr/bin/env bash
# Desktop benchmarks for BENCHMARKS.md: cold start to first paint under Xvfb, idle memory (PSS)
# of all the app's processes, release binary size, then 10,000 pending requests in the real app
# (inbox open, Approve all) through WebDriver. Needs a release build
# (`ui/node_modules/.bin/tauri build --bundles deb,rpm`, or `cargo build --release -p airlock-desktop`).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${CARGO_TARGET_DIR:-target}/release/airlock-desktop"
[ -x "$BIN" ] || { echo "no release build at $BIN" >&2; exit 1; }
BIN=$(realpath "$BIN")
data=$(mktemp -d)
display_file=$(mktemp)
Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$display_file" 2>/dev/null &
xvfb=$!
app=""
trap 'kill $app $xvfb 2>/dev/null || true; rm -rf "$data" "$display_file"' EXIT
for _ in $(seq 50); do [ -s "$display_file" ] && break; sleep 0.1; done
export DISPLAY=":$(head -n1 "$display_file")"

# First paint: the navigation's colour (#1e293b) appears at a point inside the window.
start=$(date +%s%N)
dbus-run-session -- "$BIN" --data-dir "$data" >/dev/null 2>&1 &
app=$!
until import -window root -crop 1x1+20+300 txt:- 2>/dev/null | grep -q "srgb(30,41,59)"; do sleep 0.02; done
painted=$(( ($(date +%s%N) - start) / 1000000 ))
echo "cold start to first paint: ${painted} ms"

sleep 5
pids=$(pgrep -f "^$BIN" || true)
for pid in $pids; do pids="$pids $(pgrep -P "$pid" || true)"; done
pss=0
for pid in $(echo "$pids" | tr ' ' '\n' | sort -u); do
  kb=$(awk '/^Pss:/ {print $2}' "/proc/$pid/smaps_rollup" 2>/dev/null || echo 0)
  pss=$((pss + ${kb:-0}))
done
echo "idle memory (PSS, all processes): $((pss / 1024)) MB"
echo "release binary: $(du -m "$BIN" | cut -f1) MB ($(stat -c %s "$BIN") bytes)"
kill $app 2>/dev/null || true
wait $app 2>/dev/null || true

# 10,000 pending requests in the real app, through WebDriver (`scripts/setup.sh --deps-only`
# installs tauri-driver).
export TAURI_DRIVER="${AIRLOCK_TOOLS_DIR:-$HOME/.cache/airlock-tools}/bin/tauri-driver"
dbus-run-session -- cargo bench -q -p airlock-desktop --bench inbox_10k 2>&1 | grep -v '^dbus-daemon'
