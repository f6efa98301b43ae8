#!/usr/bin/env bash
# Desktop benchmarks for BENCHMARKS.md: cold start to first paint under Xvfb, idle memory (PSS
# and USS) of all the app's processes and of WebKitGTK's MiniBrowser as the platform's floor,
# release binary size, then 10,000 pending requests in the real app (inbox open, Approve all)
# through WebDriver. Needs a release build
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

# Memory of a process and its children (the WebKit web and network processes), in MB: PSS
# (shared pages divided among the processes mapping them) and USS (pages only they map).
tree_memory() {
  local pids pid pss=0 uss=0
  pids=$(pgrep -f "^$1" || true)
  for pid in $pids; do pids="$pids $(pgrep -P "$pid" || true)"; done
  for pid in $(echo "$pids" | tr ' ' '\n' | sort -u); do
    read -r p u < <(awk '/^Pss:/ {p=$2} /^Private_(Clean|Dirty):/ {u+=$2} END {print p+0, u+0}' \
      "/proc/$pid/smaps_rollup" 2>/dev/null || echo "0 0")
    pss=$((pss + p)); uss=$((uss + u))
  done
  echo "PSS $((pss / 1024)) MB, USS $((uss / 1024)) MB"
}

# Ends a measured program: it outlives its dbus-run-session, so it is stopped by its path, and
# the next measurement waits until it is gone (its pages would share the next one's PSS).
stop_tree() {
  pkill -f "^$1" || true
  kill $app 2>/dev/null || true
  wait $app 2>/dev/null || true
  while pgrep -f "^$1" >/dev/null; do sleep 0.1; done
}

# First paint: the navigation's colour (#1e293b) appears at a point inside the window.
start=$(date +%s%N)
dbus-run-session -- "$BIN" --data-dir "$data" >/dev/null 2>&1 &
app=$!
until import -window root -crop 1x1+20+300 txt:- 2>/dev/null | grep -q "srgb(30,41,59)"; do sleep 0.02; done
painted=$(( ($(date +%s%N) - start) / 1000000 ))
echo "cold start to first paint: ${painted} ms"

sleep 5
echo "idle memory of the app, all processes: $(tree_memory "$BIN")"
echo "release binary: $(du -m "$BIN" | cut -f1) MB ($(stat -c %s "$BIN") bytes)"
stop_tree "$BIN"

# The platform's floor: WebKitGTK's own MiniBrowser (C, no Rust, no engine) showing one line of
# text, with the same renderer switch, on the same display.
MINI=/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser
if [ -x "$MINI" ]; then
  echo '<body style="background:#1e293b;color:white">hello</body>' >"$data/floor.html"
  WEBKIT_DISABLE_DMABUF_RENDERER=1 dbus-run-session -- "$MINI" "file://$data/floor.html" >/dev/null 2>&1 &
  app=$!
  sleep 8
  echo "idle memory of WebKitGTK's MiniBrowser, all processes: $(tree_memory "$MINI")"
  stop_tree "$MINI"
fi

# 10,000 pending requests in the real app, through WebDriver (`scripts/setup.sh --deps-only`
# installs tauri-driver).
export TAURI_DRIVER="${AIRLOCK_TOOLS_DIR:-$HOME/.cache/airlock-tools}/bin/tauri-driver"
dbus-run-session -- cargo bench -q -p airlock-desktop --bench inbox_10k 2>&1 | grep -v '^dbus-daemon'
