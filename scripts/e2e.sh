#!/usr/bin/env bash
# The real desktop app end to end: a private X display (Xvfb) and a private D-Bus session with
# a notification daemon, tauri-driver + WebKitWebDriver, the scripted model server. Screenshots of every screen go to
# test-output/e2e (or $AIRLOCK_E2E_OUT). Needs `scripts/setup.sh --deps-only` first.
set -euo pipefail
cd "$(dirname "$0")/.."
TOOLS="${AIRLOCK_TOOLS_DIR:-$HOME/.cache/airlock-tools}"
export TAURI_DRIVER="$TOOLS/bin/tauri-driver"
export AIRLOCK_E2E_OUT="${AIRLOCK_E2E_OUT:-$PWD/test-output/e2e}"
mkdir -p "$AIRLOCK_E2E_OUT"

display_file=$(mktemp)
Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$display_file" 2>/dev/null &
xvfb_pid=$!
trap 'kill $xvfb_pid 2>/dev/null || true; rm -f "$display_file"' EXIT
for _ in $(seq 50); do [ -s "$display_file" ] && break; sleep 0.1; done
DISPLAY=":$(head -n1 "$display_file")"
export DISPLAY

export AIRLOCK_DBUS_LOG="$AIRLOCK_E2E_OUT/dbus-notifications.log"
# dunst's menu of actions runs scripts/e2e-dmenu.sh, which picks the action a test names in this
# file: the tests choose "Allow once" or "Deny" through the daemon as a person would.
export AIRLOCK_DMENU_CHOICE="$AIRLOCK_E2E_OUT/dmenu-choice"
dunstrc="$AIRLOCK_E2E_OUT/dunstrc"
# Notifications never expire here: dunst's default (10 s) closed one before a slow machine
# chose its action, and the test then saw a closed notification instead of a decision.
printf '[global]\n    dmenu = %s\n[urgency_low]\n    timeout = 0\n[urgency_normal]\n    timeout = 0\n[urgency_critical]\n    timeout = 0\n' \
  "$PWD/scripts/e2e-dmenu.sh" >"$dunstrc"
# The app's two processes (airlock-desktop, airlock-resident) and the test doubles (the tray host,
# the test MCP server).
cargo build --workspace --locked --bins
export AIRLOCK_SNI_HOST="${CARGO_TARGET_DIR:-target}/debug/airlock-sni-host"
# A private session bus with a notification daemon (dunst), a StatusNotifierItem watcher (the
# tray host a desktop panel provides) and a monitor that records every Notify call; the ignored
# tests of the app (WebDriver run, tray, notification actions) run in it.
# shellcheck disable=SC2016 # the inner script expands its own variables
dbus-run-session -- bash -c '
  dunst -config "$AIRLOCK_E2E_OUT/dunstrc" >/dev/null 2>&1 &
  "$AIRLOCK_SNI_HOST" watch >/dev/null 2>&1 &
  dbus-monitor --session "interface=org.freedesktop.Notifications" >"$AIRLOCK_DBUS_LOG" 2>&1 &
  # Nothing is tested before each helper is ready: dunst and the tray host once they own their
  # names on the bus, the monitor once it wrote its first line (its own NameAcquired).
  owned() {
    dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
      org.freedesktop.DBus.NameHasOwner "string:$1" 2>/dev/null | grep -q "boolean true"
  }
  ready() {
    owned org.freedesktop.Notifications && owned org.kde.StatusNotifierWatcher \
      && [ -s "$AIRLOCK_DBUS_LOG" ]
  }
  for _ in $(seq 300); do ready && break; sleep 0.1; done
  ready || { echo "dunst, the tray host or dbus-monitor never started on the bus" >&2; exit 1; }
  cargo test --workspace --locked -- --ignored --nocapture --test-threads 1
'
echo "Screenshots: $AIRLOCK_E2E_OUT"
