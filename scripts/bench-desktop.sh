#!/usr/bin/env bash
# Desktop benchmarks for BENCHMARKS.md: cold start to first paint under Xvfb, idle memory (PSS
# and USS) of all the app's processes with the window open and with it closed to the tray, the
# time from the tray's "Open inbox" to the first paint of the window created again, WebKitGTK's
# MiniBrowser as the platform's floor, release binary size, then 10,000 pending requests in the real app (inbox open, Approve all)
# through WebDriver. Needs a release build
# (`ui/node_modules/.bin/tauri build --bundles deb,rpm`, or `cargo build --release -p airlock-desktop`).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${AIRLOCK_BENCH_BIN:-${CARGO_TARGET_DIR:-target}/release/airlock-desktop}"
[ -x "$BIN" ] || { echo "no release build at $BIN" >&2; exit 1; }
BIN=$(realpath "$BIN")
data=$(mktemp -d)
display_file=$(mktemp)
Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$display_file" 2>/dev/null &
xvfb=$!
app=""
trayer=""
trap 'kill $app $trayer $xvfb 2>/dev/null || true; rm -rf "$data" "$display_file"' EXIT
for _ in $(seq 50); do [ -s "$display_file" ] && break; sleep 0.1; done
export DISPLAY=":$(head -n1 "$display_file")"
# A tray host, for the tray's "Open inbox" (libayatana-appindicator shows its icon by XEmbed).
trayer --edge bottom --align right --widthtype request --height 32 >/dev/null 2>&1 &
trayer=$!

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

# Closed to the tray: the window is closed the way a window manager does (WM_DELETE_WINDOW;
# Xvfb runs none), its web view is destroyed and its WebKitWebProcess exits; then the memory of
# all the app's processes, and the time from the tray's "Open inbox" to the first paint of the
# window created again.
close_window() {
  local window
  window=$(xdotool search --all --onlyvisible --pid "$1" --name '^Airlock$' | head -n1)
  [ -n "$window" ] || { echo "no window of $1 to close" >&2; exit 1; }
  python3 - "$window" <<'PY'
import ctypes, sys
x = ctypes.CDLL("libX11.so.6")
x.XOpenDisplay.restype = ctypes.c_void_p
x.XOpenDisplay.argtypes = [ctypes.c_char_p]
x.XInternAtom.restype = ctypes.c_ulong
x.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
x.XSendEvent.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_long, ctypes.c_void_p]
x.XFlush.argtypes = [ctypes.c_void_p]
class ClientMessage(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("serial", ctypes.c_ulong), ("send_event", ctypes.c_int),
                ("display", ctypes.c_void_p), ("window", ctypes.c_ulong),
                ("message_type", ctypes.c_ulong), ("format", ctypes.c_int),
                ("data", ctypes.c_long * 5), ("pad", ctypes.c_long * 12)]
d = x.XOpenDisplay(None)
w = int(sys.argv[1])
event = ClientMessage(type=33, window=w, message_type=x.XInternAtom(d, b"WM_PROTOCOLS", 0), format=32)
event.data[0] = x.XInternAtom(d, b"WM_DELETE_WINDOW", 0)
x.XSendEvent(d, w, 0, 0, ctypes.byref(event))
x.XFlush(d)
PY
}
# The app's WebKitWebProcess children (the kernel keeps 15 characters of the name).
web_processes() { pgrep -P "$1" -x WebKitWebProces || true; }
app_pid=$(pgrep -f "^$BIN" | head -n1)
close_window "$app_pid"
while [ -n "$(web_processes "$app_pid")" ]; do sleep 0.1; done
sleep 5
echo "idle memory with the window closed (in the tray), all processes: $(tree_memory "$BIN")"
echo "  processes: $(for p in $app_pid $(pgrep -P "$app_pid"); do printf '%s ' "$(cat /proc/"$p"/comm)"; done)"
tray_icon=$(xdotool search --class "tray-icon tray app" | head -n1)
if [ -n "$tray_icon" ]; then
  for run in 1 2 3; do
    xdotool mousemove --window "$tray_icon" 16 15 click 1
    sleep 0.7
    xdotool key Down
    start=$(date +%s%N)
    xdotool key Return
    until import -window root -crop 1x1+20+300 txt:- 2>/dev/null | grep -q "srgb(30,41,59)"; do sleep 0.02; done
    echo "Open inbox (tray) to first paint of the new window, run $run: $(( ($(date +%s%N) - start) / 1000000 )) ms"
    sleep 3
    close_window "$app_pid"
    while [ -n "$(web_processes "$app_pid")" ]; do sleep 0.1; done
    while import -window root -crop 1x1+20+300 txt:- 2>/dev/null | grep -q "srgb(30,41,59)"; do sleep 0.05; done
    sleep 1
  done
  echo "idle memory with the window closed after 3 reopenings, all processes: $(tree_memory "$BIN")"
else
  echo "no tray icon (is trayer running?): reopen time not measured"
fi
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
