#!/usr/bin/env bash
# The client command the MCP conformance suite runs (it appends the scenario server's URL and sets
# MCP_CONFORMANCE_SCENARIO): the real `airlock` engine with the scenario's server added over
# streamable HTTP and, when AIRLOCK_MODEL_URL is set, one chat turn with that (scripted) model,
# which proposes the scenario's tool call, and an approver that answers every inbox item
# automatically (approve tool calls, accept elicitations as offered: the form's defaults apply).
# A server behind OAuth is signed in to by `servers add --url` with curl as the browser.
#
# crates/cli/tests/conformance.rs runs the suite with this; it sets AIRLOCK_BIN and the model.
set -euo pipefail
url="${*: -1}"
airlock_bin="${AIRLOCK_BIN:?set AIRLOCK_BIN to the airlock binary}"
dir="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
# The suite kills the client on its timeout: clean up then too (the engine must not outlive it).
trap 'exit 143' TERM INT
airlock() { "$airlock_bin" --data-dir "$dir" "$@"; }
# Polls a command until it succeeds (up to 20 s of wall time, however long each try takes on a
# loaded machine: the suite's own timeout is 60 s).
until_ok() {
  local deadline=$((SECONDS + 20))
  while [ "$SECONDS" -lt "$deadline" ]; do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.05
  done
  echo "airlock-client: gave up waiting for: $*" >&2
  return 1
}

# The "browser" of a sign-in: the suite's authorization server approves at once and redirects
# to Airlock's loopback listener, which curl follows like a browser would. The engine opens it
# too (a wider sign-in the person agreed to in the inbox, auth/scope-step-up).
export AIRLOCK_BROWSER="curl -fsSL -o /dev/null"
# The binary itself in the background (not the shell function), so that its pid is the engine's.
"$airlock_bin" --data-dir "$dir" serve >"$dir/serve.log" 2>&1 &
pids+=($!)
until_ok test -f "$dir/api.json"
# A pre-registered client (auth/pre-registration) or a machine client (auth/client-credentials-*:
# its secret in an environment variable, its private key in a file) comes in the scenario's
# context.
sign_in=()
if [ -n "${MCP_CONFORMANCE_CONTEXT:-}" ]; then
  case "${MCP_CONFORMANCE_SCENARIO:-}" in
    auth/client-credentials-*)
      node -e 'const c=JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT);if(c.private_key_pem)process.stdout.write(c.private_key_pem)' >"$dir/client-key.pem"
      CONFORMANCE_CLIENT_SECRET="$(node -e 'const c=JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT);process.stdout.write(c.client_secret||"")')"
      export CONFORMANCE_CLIENT_SECRET
      sign_in+=(--client-credentials --client-id "$(node -e 'process.stdout.write(JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT).client_id)')")
      if [ -s "$dir/client-key.pem" ]; then
        sign_in+=(--private-key "$dir/client-key.pem" --signing-alg "$(node -e 'process.stdout.write(JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT).signing_algorithm||"ES256")')")
      else
        sign_in+=(--client-secret-env CONFORMANCE_CLIENT_SECRET)
      fi
      ;;
    *)
      while read -r flag value; do
        [ -n "${value:-}" ] && sign_in+=("$flag" "$value")
      done < <(node -e 'const c=JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT);if(c.client_id&&!c.private_key_pem&&!c.idp_id_token&&!c.valid_jwt){console.log("--client-id "+c.client_id);if(c.client_secret)console.log("--client-secret "+c.client_secret)}')
      ;;
  esac
fi
airlock servers add conformance --url "$url" "${sign_in[@]}"
until_ok sh -c "\"$airlock_bin\" --data-dir \"$dir\" servers | grep -q '^conformance	http	ready'"

# Without a model (initialize), connecting — handshake and tools/list — is the whole scenario.
[ -n "${AIRLOCK_MODEL_URL:-}" ] || exit 0
airlock provider set --base-url "$AIRLOCK_MODEL_URL" --model scripted >/dev/null
airlock chat --session conformance --no-wait "run the scenario" >/dev/null

# The approver: answer whatever waits until the turn is over.
while :; do
  status="$(airlock sessions --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const x=JSON.parse(s).find(s=>s.name==="conformance");console.log(x?x.status:"")})')"
  items="$(airlock inbox --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{for(const i of JSON.parse(s))console.log(i.kind+" "+i.approval_id)})')"
  while read -r kind id; do
    [ -n "${id:-}" ] || continue
    if [ "$kind" = elicitation ]; then airlock answer "$id" --accept '{}' >/dev/null || true
    else airlock approve "$id" >/dev/null || true; fi
  done <<<"$items"
  if [ -z "$items" ] && { [ "$status" = idle ] || [ "$status" = failed ]; }; then break; fi
  sleep 0.1
done
airlock transcript --session conformance
