//! Which build profile each way of building uses (Cargo.toml, BENCHMARKS.md "Build time"): what
//! ships (scripts/package.sh, the release workflow) is `--release`, whole-program (fat) LTO in one
//! codegen unit, the smallest and fastest binaries; what a newcomer's `scripts/setup.sh` builds
//! is the `setup` profile, release's optimisation with thin LTO, which links in a fraction of the
//! time.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use toml_edit::DocumentMut;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

fn read(path: &str) -> String {
    std::fs::read_to_string(format!("{ROOT}/{path}")).unwrap()
}

/// The `cargo build` lines of a script or workflow.
fn cargo_builds(path: &str) -> Vec<String> {
    let lines: Vec<String> = read(path)
        .lines()
        .filter(|line| line.trim_start().starts_with("cargo build"))
        .map(str::to_string)
        .collect();
    assert!(!lines.is_empty(), "{path} builds nothing with cargo");
    lines
}

#[test]
fn what_ships_is_built_with_fat_lto_and_setup_with_the_fast_linking_profile() {
    let manifest: DocumentMut = read("Cargo.toml").parse().unwrap();
    let release = &manifest["profile"]["release"];
    assert_eq!(release["lto"].as_str(), Some("fat"));
    assert_eq!(release["codegen-units"].as_integer(), Some(1));
    let setup = manifest["profile"]
        .get("setup")
        .expect("Cargo.toml has a [profile.setup] for scripts/setup.sh");
    assert_eq!(setup["inherits"].as_str(), Some("release"));
    assert_eq!(setup["lto"].as_str(), Some("thin"));
    assert!(setup["codegen-units"].as_integer().unwrap() > 1);

    for shipped in ["scripts/package.sh", ".github/workflows/release.yml"] {
        for line in cargo_builds(shipped) {
            assert!(
                line.contains("--release") && !line.contains("--profile"),
                "{shipped}: {line}"
            );
        }
    }
    let setup_script = read("scripts/setup.sh");
    for line in cargo_builds("scripts/setup.sh") {
        assert!(line.contains("--profile setup"), "scripts/setup.sh: {line}");
    }
    assert!(
        setup_script.contains(r#"built="${CARGO_TARGET_DIR:-target}/setup""#),
        "scripts/setup.sh installs what it built"
    );
}
