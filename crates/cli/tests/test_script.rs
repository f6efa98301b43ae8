//! `scripts/test.sh` runs its steps side by side in lanes (scripts/steps.sh): a lane's steps run
//! while another lane's do, a failed step fails the run and is named with its log, what needs it
//! does not run, and the plan still holds every suite the script ran one after another before.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// Runs `plan` (bash, after sourcing scripts/steps.sh) with its logs in `dir`.
fn run_plan(dir: &Path, plan: &str) -> Output {
    let script = format!(
        "set -euo pipefail\nSTEPS_DIR='{}'\nsource '{ROOT}/scripts/steps.sh'\n{plan}",
        dir.join("logs").display()
    );
    Command::new("bash")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Two lanes meet at a barrier (each step marks that it started, then waits up to 60 s for the
/// other's mark): run one after another, the first would give up. A failed step is named in the
/// summary with the end of its log, the step that needs it is not run, the one only ordered after
/// it runs, and the run fails.
#[test]
fn lanes_run_side_by_side_and_a_failed_step_fails_the_run_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_plan(
        dir.path(),
        r#"
meet() {
  touch "$1.started"
  for _ in $(seq 600); do [ -e "$2.started" ] && { echo "met $2"; return 0; }; sleep 0.1; done
  echo "$2 never started beside $1"; return 1
}
step_left() { meet left right; }
step_right() { meet right left; }
step_broken() { echo "the reason it broke"; false; echo "ran on after a failure"; }
step_needs_broken() { echo "ran without what it needs"; }
step_after_broken() { echo "ran after"; }
step left one
step right two
step broken two
step needs-broken one left,broken
step after-broken one - broken
steps_run
"#,
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    let logs = dir.path().join("logs");
    let log = |name: &str| std::fs::read_to_string(logs.join(format!("{name}.log"))).unwrap();
    assert_eq!(log("left").trim(), "met right", "{stdout}");
    assert_eq!(log("right").trim(), "met left", "{stdout}");
    assert_eq!(
        log("broken").trim(),
        "the reason it broke",
        "set -e holds in a step"
    );
    assert!(!log("needs-broken").contains("ran"), "{stdout}");
    assert_eq!(log("after-broken").trim(), "ran after");
    for line in [
        "passed   left",
        "passed   right",
        "FAILED   broken",
        "NOT RUN  needs-broken   not run: it needs broken, which did not pass",
        "passed   after-broken",
        "== the end of",
        "the reason it broke",
        "2 step(s) did not pass",
    ] {
        assert!(stdout.contains(line), "missing {line:?} in:\n{stdout}");
    }
}

/// A step may wait only for steps declared before it (so no two wait for each other), each
/// needs its function, and `--only` names steps that exist.
#[test]
fn a_plan_that_could_wait_forever_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let later = run_plan(
        dir.path(),
        "step_a() { :; }\nstep_b() { :; }\nstep a one b\nstep b two\nsteps_run\n",
    );
    assert!(!later.status.success());
    assert!(
        text(&later.stderr).contains("a waits for b, which is not declared before it"),
        "{}",
        text(&later.stderr)
    );
    let missing = run_plan(dir.path(), "step a one\nsteps_run\n");
    assert!(!missing.status.success());
    assert!(text(&missing.stderr).contains("a has no function step_a"));
    // A step chosen by a name no step has: nothing runs, rather than nothing passing quietly.
    let unknown = run_plan(
        dir.path(),
        "step_a() { touch ran; }\nstep a one\nSTEPS_ONLY=b steps_run\n",
    );
    assert_eq!(unknown.status.code(), Some(2));
    assert!(text(&unknown.stderr).contains("no step b"));
    assert!(!dir.path().join("ran").exists());
}

/// The plan (`--dry-run`, which runs nothing) keeps every suite; cargo's steps share one lane
/// (one target directory, one lock), and the desktop end-to-end run waits for the steps that
/// would share the CPU with it.
#[test]
fn the_plan_keeps_every_suite_and_cargo_in_one_lane() {
    let script = std::fs::read_to_string(format!("{ROOT}/scripts/test.sh")).unwrap();
    // Without it, the line below would run every suite instead of printing the plan.
    assert!(
        script.contains("--dry-run)"),
        "scripts/test.sh has no --dry-run"
    );
    let out = Command::new("bash")
        .arg(format!("{ROOT}/scripts/test.sh"))
        .arg("--dry-run")
        .output()
        .unwrap();
    let plan = text(&out.stdout);
    assert!(out.status.success(), "{plan}{}", text(&out.stderr));
    for command in [
        "bin/actionlint\" .github/workflows/*.yml",
        "shellcheck -x scripts/*.sh",
        "npm run build",
        "cargo fmt --all --check",
        "cargo fetch --locked",
        "cargo clippy --workspace --all-targets --locked -- -D warnings",
        "cargo test --workspace --locked",
        "bash scripts/sdk-clients.sh",
        "npm run check",
        "npm test",
        "npm run test:browser",
        "bash scripts/e2e.sh",
    ] {
        assert!(
            plan.contains(command),
            "{command:?} is not in the plan:\n{plan}"
        );
    }
    let cargo_lane = plan
        .split("lane ")
        .find(|lane| lane.starts_with("cargo:"))
        .expect("a cargo lane");
    for step in ["clippy", "cargo-build", "cargo-test", "e2e"] {
        assert!(
            cargo_lane.contains(&format!("\n  {step}")),
            "{step} outside the cargo lane:\n{plan}"
        );
    }
    assert!(
        plan.contains("e2e (needs cargo-build) (after sdk-clients,browser)"),
        "{plan}"
    );
}
