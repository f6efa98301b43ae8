# shellcheck shell=bash
# Runs a plan of steps side by side in lanes; sourced by scripts/test.sh (and by its test,
# crates/cli/tests/test_script.rs). Declare each step with `step NAME LANE NEEDS AFTER` and define
# its work as the function `step_NAME` (dashes become underscores), then call `steps_run`.
#
# - A lane is one background shell that runs its steps one after another, in the order declared:
#   steps that must not share the machine (cargo's builds and test runs, which also share a target
#   directory and its lock) go in one lane, and light ones beside them in another.
# - NEEDS (comma-separated, or -): steps that must have passed first; if one did not, this step is
#   not run and counts as not passed. AFTER: steps that only must have ended first, either way
#   (they would compete for the CPU or for files).
# - Each step may only wait for steps declared before it, so no two steps wait for each other.
# - Each step's output goes to its own log, $STEPS_DIR/NAME.log; its result to NAME.status.
#   `steps_run` prints each step as it starts and ends, then a summary with the tail of every
#   failed log, and returns 1 if any step did not pass.
#
# STEPS_DRY_RUN=1: print the plan (lanes, what each step waits for, its commands) and run nothing.
# STEPS_ONLY=a,b: run only those steps; the others count as passed without running (for trying a
# few cheap steps: what they need must then be there already).

STEPS_DIR=${STEPS_DIR:-test-output/ci}
STEPS_DRY_RUN=${STEPS_DRY_RUN:-0}
STEPS_ONLY=${STEPS_ONLY:-}

steps_order=()
declare -A steps_lane=() steps_needs=() steps_after=()

# step NAME LANE NEEDS AFTER
step() {
  local name=$1 lane=$2 needs=${3:--} after=${4:--} other
  [ "$needs" = - ] && needs=""
  [ "$after" = - ] && after=""
  if [ -n "${steps_lane[$name]:-}" ]; then
    echo "steps: $name is declared twice" >&2
    return 1
  fi
  for other in ${needs//,/ } ${after//,/ }; do
    if [ -z "${steps_lane[$other]:-}" ]; then
      echo "steps: $name waits for $other, which is not declared before it" >&2
      return 1
    fi
  done
  if ! declare -F "step_${name//-/_}" >/dev/null; then
    echo "steps: $name has no function step_${name//-/_}" >&2
    return 1
  fi
  steps_order+=("$name")
  steps_lane[$name]=$lane
  steps_needs[$name]=$needs
  steps_after[$name]=$after
}

# The result a step left: passed, failed, skipped or unselected; waits until it has one.
steps_result_of() {
  local file="$STEPS_DIR/$1.status" result
  # Steps wait only for steps declared before them, so this always ends.
  until [ -s "$file" ]; do sleep 0.5; done
  read -r result _ <"$file"
  echo "$result"
}

steps_record() {
  local name=$1 result=$2 seconds=$3
  printf '%s %s\n' "$result" "$seconds" >"$STEPS_DIR/$name.status.tmp"
  mv "$STEPS_DIR/$name.status.tmp" "$STEPS_DIR/$name.status"
}

steps_selected() {
  [ -z "$STEPS_ONLY" ] || [[ ",$STEPS_ONLY," == *",$1,"* ]]
}

steps_run_one() {
  local name=$1 log="$STEPS_DIR/$1.log" other started status
  if ! steps_selected "$name"; then
    steps_record "$name" unselected 0
    return
  fi
  for other in ${steps_needs[$name]//,/ }; do
    case $(steps_result_of "$other") in
      passed | unselected) ;;
      *)
        echo "not run: it needs $other, which did not pass" >"$log"
        echo "$(date +%T) $name not run (needs $other)"
        steps_record "$name" skipped 0
        return
        ;;
    esac
  done
  for other in ${steps_after[$name]//,/ }; do
    steps_result_of "$other" >/dev/null
  done
  echo "$(date +%T) $name started"
  started=$(date +%s)
  # A subshell of its own: `set -e` holds inside the step, and its `cd`s stay there.
  (
    set -euo pipefail
    "step_${name//-/_}"
  ) >"$log" 2>&1 </dev/null
  status=$?
  local seconds=$(($(date +%s) - started))
  if [ "$status" = 0 ]; then
    echo "$(date +%T) $name passed (${seconds} s)"
    steps_record "$name" passed "$seconds"
  else
    echo "$(date +%T) $name FAILED (exit $status, ${seconds} s): $log"
    steps_record "$name" failed "$seconds"
  fi
}

steps_print_plan() {
  local name lane member
  local -A seen=()
  for name in "${steps_order[@]}"; do
    lane=${steps_lane[$name]}
    [ -n "${seen[$lane]:-}" ] && continue
    seen[$lane]=1
    echo "lane $lane:"
    for member in "${steps_order[@]}"; do
      [ "${steps_lane[$member]}" = "$lane" ] || continue
      steps_selected "$member" || continue
      printf '  %s' "$member"
      [ -n "${steps_needs[$member]}" ] && printf ' (needs %s)' "${steps_needs[$member]}"
      [ -n "${steps_after[$member]}" ] && printf ' (after %s)' "${steps_after[$member]}"
      printf '\n'
      declare -f "step_${member//-/_}" | sed '1,2d;$d; s/^    /      /'
    done
  done
}

# Every step STEPS_ONLY names is declared.
steps_check_only() {
  local chosen
  for chosen in ${STEPS_ONLY//,/ }; do
    if [ -z "${steps_lane[$chosen]:-}" ]; then
      echo "steps: no step $chosen (the steps: ${steps_order[*]})" >&2
      return 2
    fi
  done
}

steps_lane_pids=()

# Ends every lane still running, with all it started (each lane is a process group of its own).
steps_stop() {
  local pid
  for pid in "${steps_lane_pids[@]}"; do
    kill -TERM -- "-$pid" 2>/dev/null || true
  done
}

steps_run() {
  steps_check_only || return 2
  if [ "$STEPS_DRY_RUN" = 1 ]; then
    steps_print_plan
    return 0
  fi
  rm -rf "$STEPS_DIR"
  mkdir -p "$STEPS_DIR"
  local lane name member started result seconds failed=0
  local -A started_lane=()
  started=$(date +%s)
  trap 'steps_stop; exit 130' INT TERM
  # Job control: each lane a process group of its own, which steps_stop can end whole.
  set -m
  for name in "${steps_order[@]}"; do
    lane=${steps_lane[$name]}
    [ -n "${started_lane[$lane]:-}" ] && continue
    started_lane[$lane]=1
    (
      # A failed step is recorded, not the lane's end; and no step may run where `set -e` is
      # ignored (in an `&&` list or an `if` condition), or it would be ignored inside it too.
      set +e
      for member in "${steps_order[@]}"; do
        if [ "${steps_lane[$member]}" = "$lane" ]; then
          steps_run_one "$member"
        fi
      done
    ) &
    steps_lane_pids+=($!)
  done
  set +m
  wait
  trap - INT TERM

  echo
  echo "Steps (logs in $STEPS_DIR/):"
  for name in "${steps_order[@]}"; do
    read -r result seconds <"$STEPS_DIR/$name.status"
    case $result in
      passed) printf '  passed   %-14s %5s s\n' "$name" "$seconds" ;;
      unselected) printf '  -        %-14s not selected\n' "$name" ;;
      skipped)
        printf '  NOT RUN  %-14s %s\n' "$name" "$(cat "$STEPS_DIR/$name.log")"
        failed=$((failed + 1))
        ;;
      *)
        printf '  FAILED   %-14s %5s s  %s\n' "$name" "$seconds" "$STEPS_DIR/$name.log"
        failed=$((failed + 1))
        ;;
    esac
  done
  for name in "${steps_order[@]}"; do
    read -r result _ <"$STEPS_DIR/$name.status"
    [ "$result" = failed ] || continue
    echo
    echo "== the end of $STEPS_DIR/$name.log:"
    tail -n 40 "$STEPS_DIR/$name.log"
  done
  echo
  seconds=$(($(date +%s) - started))
  if [ "$failed" = 0 ]; then
    echo "All steps passed in $((seconds / 60)) min $((seconds % 60)) s."
    return 0
  fi
  echo "$failed step(s) did not pass ($((seconds / 60)) min $((seconds % 60)) s)."
  return 1
}
