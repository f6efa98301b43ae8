//! Which build profile each way of building uses (Cargo.toml, BENCHMARKS.md "Build time"): what
//! ships (scripts/package.sh, the release workflow) and what a newcomer's `scripts/setup.sh`
//! builds is `--release`, whole-program (fat) LTO in one codegen unit: the smallest binaries, and
//! on 2 cores also the quickest build (thin LTO with 16 units was measured at twice the time).
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
fn setup_and_what_ships_are_built_with_fat_lto() {
    let manifest: DocumentMut = read("Cargo.toml").parse().unwrap();
    let release = &manifest["profile"]["release"];
    assert_eq!(release["lto"].as_str(), Some("fat"));
    assert_eq!(release["codegen-units"].as_integer(), Some(1));

    for script in [
        "scripts/package.sh",
        ".github/workflows/release.yml",
        "scripts/setup.sh",
    ] {
        for line in cargo_builds(script) {
            assert!(
                line.contains("--release") && !line.contains("--profile"),
                "{script}: {line}"
            );
        }
    }
    assert!(
        read("scripts/setup.sh").contains(r#"built="${CARGO_TARGET_DIR:-target}/release""#),
        "scripts/setup.sh installs what it built"
    );
}
