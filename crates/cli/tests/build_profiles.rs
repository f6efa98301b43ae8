//! Which build profile each way of building uses (Cargo.toml, BENCHMARKS.md "Build time"): what
//! ships (scripts/package.sh, the release workflow) is `--release`, whole-program (fat) LTO in one
//! codegen unit, the smallest binaries; what a newcomer's `scripts/setup.sh` builds is the
//! `setup` profile, the same optimisation without cross-crate LTO, which builds faster on 2 cores.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use toml_edit::DocumentMut;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

fn read(path: &str) -> String {
    std::fs::read_to_string(format!("{ROOT}/{path}")).unwrap()
}

/// The `cargo build` lines of a script or workflow.
fn cargo_builds(path: &str) -> Vec<String> {
    let lines: Vec<String> = read(path)
        .lines()
        .filter(|line| !line.trim_start().starts_with('#') && line.contains("cargo build"))
        .map(str::to_string)
        .collect();
    assert!(!lines.is_empty(), "{path} builds nothing with cargo");
    lines
}

#[test]
fn what_ships_is_built_with_fat_lto_and_setup_with_the_quick_profile() {
    let manifest: DocumentMut = read("Cargo.toml").parse().unwrap();
    let release = &manifest["profile"]["release"];
    assert_eq!(release["lto"].as_str(), Some("fat"));
    assert_eq!(release["codegen-units"].as_integer(), Some(1));
    let setup = &manifest["profile"]["setup"];
    assert_eq!(setup["inherits"].as_str(), Some("release"));
    assert_eq!(setup["lto"].as_bool(), Some(false), "no cross-crate LTO");
    assert!(
        setup.get("opt-level").is_none() && setup["package"].get("*").is_none(),
        "every dependency optimised as for a release, build scripts and proc macros not at all"
    );

    for script in ["scripts/package.sh", ".github/workflows/release.yml"] {
        for line in cargo_builds(script) {
            assert!(
                line.contains("--release") && !line.contains("--profile"),
                "{script}: {line}"
            );
        }
    }
    for line in cargo_builds("scripts/setup.sh") {
        assert!(line.contains("--profile setup"), "scripts/setup.sh: {line}");
    }
    let setup_script = read("scripts/setup.sh");
    assert!(
        setup_script.contains(r#"target_dir="${CARGO_TARGET_DIR:-target}""#)
            && setup_script.contains(r#"built="$target_dir/setup""#),
        "scripts/setup.sh installs what it built"
    );
}

/// A newcomer's `scripts/setup.sh` installs what the app needs and none of the tests' parts
/// (browsers, PostgreSQL, the coding agents…): on a fresh machine those were minutes before the
/// build could start. Run against stand-ins for `dpkg-query` (nothing installed) and `apt-get`
/// (records what it is asked to install, then stops the script).
/// Runs `scripts/setup.sh ARGS` with stand-ins for some commands (name and shell body) first on
/// PATH and the tools kept in `tools`; returns its exit code and what it wrote to stderr. The stand-ins stop the script where
/// it would download, so nothing is installed.
fn setup_with_stand_ins(
    args: &[&str],
    stand_ins: &[(&str, String)],
    tools: &Path,
) -> (Option<i32>, String) {
    let stubs = tempfile::tempdir().unwrap();
    for (name, body) in stand_ins {
        let path = stubs.path().join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!(
        "{}:{}",
        stubs.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = std::process::Command::new("bash")
        .arg(format!("{ROOT}/scripts/setup.sh"))
        .args(args)
        .env("PATH", path)
        .env("AIRLOCK_TOOLS_DIR", tools)
        .env_remove("npm_config_registry")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_newcomers_setup_installs_only_what_the_app_needs() {
    let asked = |args: &[&str]| -> String {
        let tools = tempfile::tempdir().unwrap();
        let log = tools.path().join("apt.log");
        let apt_get = format!(
            "[ \"$1\" = update ] && exit 0\necho \"$@\" >> '{}'\nexit 3",
            log.display()
        );
        let stand_ins = [
            ("dpkg-query", "exit 1".to_string()),
            ("apt-get", apt_get),
            ("sudo", "exec \"$@\"".to_string()),
        ];
        let (code, _) = setup_with_stand_ins(args, &stand_ins, tools.path());
        assert_eq!(code, Some(3), "setup.sh stops where apt-get fails");
        std::fs::read_to_string(log).unwrap()
    };
    let packages = |line: &str| -> Vec<String> {
        line.split_whitespace()
            .filter(|word| !word.starts_with('-') && *word != "install")
            .map(str::to_string)
            .collect()
    };

    const TEST_ONLY: [&str; 5] = [
        "chromium",
        "postgresql",
        "xvfb",
        "dunst",
        "webkit2gtk-driver",
    ];
    let app = packages(&asked(&[]));
    let tests = packages(&asked(&["--deps-only"]));
    let has = |list: &[String], package: &str| list.iter().any(|p| p == package);
    for needed in ["build-essential", "libwebkit2gtk-4.1-dev", "gnome-keyring"] {
        assert!(has(&app, needed), "{needed} missing from {app:?}");
    }
    for test_only in TEST_ONLY {
        assert!(
            !has(&app, test_only),
            "{test_only} in a newcomer's setup: {app:?}"
        );
        assert!(has(&tests, test_only), "{test_only} missing from {tests:?}");
    }
}

/// Debian 12 and Ubuntu 24.04 ship Node 18, older than the UI's build needs: on such a machine
/// setup fetches the pinned Node 22 and npm 10 as the npm registry's tarballs (scripts/node.sh),
/// and unpacks nothing that is not the pinned tarball. Run with a stand-in `node` that is 18 and a
/// `curl` that records what it is asked and hands back something else.
#[test]
fn a_fresh_machines_old_node_is_replaced_by_the_pinned_one_and_nothing_else() {
    let tools = tempfile::tempdir().unwrap();
    let log = tools.path().join("curl.log");
    let curl = format!(
        "echo \"$@\" >> '{}'\nwhile [ \"$1\" != -o ]; do shift; done\necho planted > \"$2\"",
        log.display()
    );
    let stand_ins = [
        ("dpkg-query", "echo 'install ok installed'".to_string()),
        ("node", "echo v18.19.0".to_string()),
        ("curl", curl),
    ];
    let (code, stderr) = setup_with_stand_ins(&[], &stand_ins, tools.path());
    assert_ne!(code, Some(0), "{stderr}");
    assert!(stderr.contains("is not the pinned tarball"), "{stderr}");
    let asked = std::fs::read_to_string(&log).unwrap();
    let pinned = read("tests/mcp-servers/package.json");
    let pinned: serde_json::Value = serde_json::from_str(&pinned).unwrap();
    let node = pinned["dependencies"]["node"].as_str().unwrap();
    let arch = match std::env::consts::ARCH {
        "aarch64" => "arm64",
        _ => "x64",
    };
    assert!(
        asked.contains(&format!(
            "https://registry.npmjs.org/node-linux-{arch}/-/node-linux-{arch}-{node}.tgz"
        )),
        "{asked}"
    );
    let installed: Vec<_> = std::fs::read_dir(tools.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .filter(|name| name.to_string_lossy().starts_with("node-"))
        .collect();
    assert!(installed.is_empty(), "unpacked: {installed:?}");
}
