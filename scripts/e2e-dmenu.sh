#!/bin/sh
# dunst's menu program in the end-to-end tests (scripts/e2e.sh): dunst lists the actions of
# its notifications on stdin ("#Allow once (summary) [ID,allow_once]") and invokes the line
# printed. A test names the line it wants in the file $AIRLOCK_DMENU_CHOICE ("[ID,ACTION]").
menu=$(cat)
[ -n "${AIRLOCK_DMENU_CHOICE:-}" ] && [ -f "$AIRLOCK_DMENU_CHOICE" ] || exit 1
printf '%s\n' "$menu" | grep -F -m1 -- "$(cat "$AIRLOCK_DMENU_CHOICE")"
