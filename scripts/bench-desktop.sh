#!/usr/bin/env bash
# Desktop benchmarks for BENCHMARKS.md: cold start to first paint under Xvfb, idle memory (PSS
# and USS) of all the app's processes (the resident, the window, WebKit's) with the window open
# and with it closed to the tray, the time from the tray's "Open inbox" to the first paint of
# the window process started again, WebKitGTK's MiniBrowser as the platform's floor, release
# binary sizes, then 10,000 pending requests in the real app (inbox open, Approve all) through
# WebDriver. Needs a release build (`scripts/package.sh`, or
# `cargo build --release -p airlock-desktop -p airlock-resident`) and the tray host double
# (`cargo build -p airlock-testkit --bin airlock-sni-host`).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${AIRLOCK_BENCH_BIN:-${CARGO_TARGET_DIR:-target}/release/airlock-desktop}"
[ -x "$BIN" ] || { echo "no release build at $BIN" >&2; exit 1; }
BIN=$(realpath "$BIN")
RESIDENT="$(dirname "$BIN")/airlock-resident"
[ -x "$RESIDENT" ] || { echo "no release build at $RESIDENT" >&2; exit 1; }
SNI="${AIRLOCK_SNI_HOST:-${CARGO_TARGET_DIR:-target}/debug/airlock-sni-host}"
[ -x "$SNI" ] || { echo "no tray host double at $SNI" >&2; exit 1; }
SNI=$(realpath "$SNI")
data=$(mktemp -d)
display_file=$(mktemp)
Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$display_file" 2>/dev/null &
xvfb=$!
app=""
trap 'pkill -f "^$RESIDENT" 2>/dev/null; pkill -f "^$SNI watch" 2>/dev/null; kill $app $xvfb 2>/dev/null || true; rm -rf "$data" "$display_file"' EXIT
for _ in $(seq 50); do [ -s "$display_file" ] && break; sleep 0.1; done
DISPLAY=":$(head -n1 "$display_file")"
export DISPLAY

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

# The screen and the window, through libX11 (a 1x1 read per 5 ms; see the script).
PROBE="$PWD/scripts/x11-probe.py"
# First paint: the navigation's colour (#1e293b) appears at a point inside the window.
painted() { python3 "$PROBE" wait-pixel 20 300 1e293b "$@"; }

# Every process of Airlock: the resident, the window, and (through tree_memory) WebKit's.
AIRLOCK="$(dirname "$BIN")/airlock-"

# The session bus (with a tray host, as a desktop panel provides) outlives the window process,
# which ends when the window closes: the resident keeps its tray on it.
start=$(date +%s%N)
bus_file="$data/bus"
# shellcheck disable=SC2016 # the inner script expands its own variables
dbus-run-session -- bash -c 'echo "$DBUS_SESSION_BUS_ADDRESS" >"$3"; "$0" watch & "$1" --data-dir "$2"; wait' \
  "$SNI" "$BIN" "$data/app" "$bus_file" >/dev/null 2>&1 &
app=$!
painted
first_paint=$(( ($(date +%s%N) - start) / 1000000 ))
echo "cold start to first paint: ${first_paint} ms"

sleep 5
echo "idle memory of the app, all processes: $(tree_memory "$AIRLOCK")"
echo "release binaries: airlock-desktop $(du -m "$BIN" | cut -f1) MB ($(stat -c %s "$BIN") bytes), airlock-resident $(du -m "$RESIDENT" | cut -f1) MB ($(stat -c %s "$RESIDENT") bytes)"

# Closed to the tray: the window is closed the way a window manager does (WM_DELETE_WINDOW;
# Xvfb runs none), its process ends with its web view; then the memory of all the app's
# processes, and the time from the tray's "Open inbox" (clicked over D-Bus, as a panel does) to
# the first paint of the window process started again.
close_window() {
  local window
  window=$(xdotool search --all --onlyvisible --pid "$1" --name '^Airlock$' | head -n1)
  [ -n "$window" ] || { echo "no window of $1 to close" >&2; exit 1; }
  python3 "$PROBE" close "$window"
}
# The window's process: the one that owns the window titled Airlock.
window_process() { xdotool getwindowpid "$(xdotool search --all --onlyvisible --name '^Airlock$' | head -n1)"; }
close_and_wait() {
  local pid
  pid=$(window_process)
  close_window "$pid"
  while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
}
# The tray's clicks go over the app's session bus.
DBUS_SESSION_BUS_ADDRESS=$(cat "$bus_file")
export DBUS_SESSION_BUS_ADDRESS
close_and_wait
sleep 5
echo "idle memory with the window closed (in the tray), all processes: $(tree_memory "$AIRLOCK")"
echo "  processes: $(for p in $(pgrep -f "^$AIRLOCK"); do printf '%s ' "$(cat /proc/"$p"/comm)"; done)"
REOPENS=${AIRLOCK_BENCH_REOPENS:-10}
reopened=()
for run in $(seq "$REOPENS"); do
  start=$(date +%s%N)
  "$SNI" click "Open inbox" >/dev/null
  painted
  reopened+=($(( ($(date +%s%N) - start) / 1000000 )))
  echo "Open inbox (tray) to first paint of the new window, run $run: ${reopened[-1]} ms"
  sleep 3
  if [ "$run" = 1 ]; then
    echo "idle memory with the window open again, all processes: $(tree_memory "$AIRLOCK")"
  fi
  close_and_wait
  painted --gone
  sleep 1
done
echo "Open inbox to first paint, $REOPENS runs (ms): min/median/max $(printf '%s\n' "${reopened[@]}" | sort -n | awk '{a[NR]=$1} END {print a[1] "/" a[int((NR+1)/2)] "/" a[NR]}')"
sleep 4
echo "idle memory with the window closed after $REOPENS reopenings, all processes: $(tree_memory "$AIRLOCK")"
"$SNI" click "Quit Airlock" >/dev/null || true
stop_tree "$AIRLOCK"

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
