//! What may use what (docs/ARCHITECTURE.md), read from `cargo metadata`: a dependency that
//! breaks a rule fails here instead of slipping in.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Each workspace crate's Airlock dependencies: (normal, non-optional) and (optional).
fn airlock_dependencies() -> BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)> {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.toml");
    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .args(["--manifest-path", manifest])
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let metadata: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut crates = BTreeMap::new();
    for package in metadata["packages"].as_array().unwrap() {
        let name = package["name"].as_str().unwrap().to_string();
        let (mut normal, mut optional) = (BTreeSet::new(), BTreeSet::new());
        for dependency in package["dependencies"].as_array().unwrap() {
            let dep = dependency["name"].as_str().unwrap();
            if !dep.starts_with("airlock-") || !dependency["kind"].is_null() {
                continue; // not ours, or a dev/build dependency
            }
            if dependency["optional"].as_bool() == Some(true) {
                optional.insert(dep.to_string());
            } else {
                normal.insert(dep.to_string());
            }
        }
        crates.insert(name, (normal, optional));
    }
    crates
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|n| n.to_string()).collect()
}

#[test]
fn each_part_uses_only_what_it_may() {
    let crates = airlock_dependencies();
    let allowed: &[(&str, &[&str])] = &[
        ("airlock-core", &[]),
        ("airlock-protocol", &["airlock-core"]),
        ("airlock-store", &["airlock-core", "airlock-protocol"]),
        ("airlock-llm", &[]),
        (
            "airlock-engine",
            &[
                "airlock-core",
                "airlock-protocol",
                "airlock-store",
                "airlock-llm",
            ],
        ),
        // The adapters see the engine's views (the protocol), never the store.
        (
            "airlock-mcp",
            &["airlock-core", "airlock-protocol", "airlock-engine"],
        ),
        // The phone inbox: the engine's views over HTTPS (core's words only in its tests).
        ("airlock-remote", &["airlock-protocol", "airlock-engine"]),
        (
            "airlock-api",
            &[
                "airlock-core",
                "airlock-protocol",
                "airlock-engine",
                "airlock-mcp",
                "airlock-remote",
            ],
        ),
        // The agents' hook: a client of the local API (and the engine's fallback file).
        (
            "airlock-hook",
            &[
                "airlock-core",
                "airlock-protocol",
                "airlock-engine",
                "airlock-api",
            ],
        ),
        // Other agents' config files: no engine, no store.
        ("airlock-connect", &["airlock-core", "airlock-protocol"]),
        (
            "airlock-cli",
            &[
                "airlock-core",
                "airlock-protocol",
                "airlock-engine",
                "airlock-api",
                "airlock-mcp",
                "airlock-connect",
                "airlock-hook",
            ],
        ),
        (
            "airlock-resident",
            &[
                "airlock-core",
                "airlock-protocol",
                "airlock-engine",
                "airlock-api",
                "airlock-connect",
                "airlock-remote",
            ],
        ),
        // Dev tooling (never shipped: see below): the benchmarks run the engine in process.
        (
            "airlock-bench",
            &[
                "airlock-core",
                "airlock-engine",
                "airlock-api",
                "airlock-testkit",
            ],
        ),
        // The window: its commands run in the resident, reached through the local API.
        ("airlock-desktop", &["airlock-protocol", "airlock-api"]),
    ];
    for (name, may) in allowed {
        let (normal, _) = &crates[*name];
        let may = set(may);
        let extra: Vec<&String> = normal.difference(&may).collect();
        assert!(extra.is_empty(), "{name} must not depend on {extra:?}");
    }
}

/// The crates the packages ship: what scripts/package.sh and the release workflow build with
/// `cargo build -p NAME`, and the window (src-tauri, built by `tauri build`).
fn shipped_crates() -> BTreeSet<String> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let mut shipped = set(&["airlock-desktop"]);
    for script in ["scripts/package.sh", ".github/workflows/release.yml"] {
        let text = std::fs::read_to_string(format!("{root}/{script}")).unwrap();
        for line in text.lines().filter(|line| line.contains("cargo build")) {
            let words: Vec<&str> = line.split_whitespace().collect();
            for pair in words.windows(2).filter(|pair| pair[0] == "-p") {
                shipped.insert(pair[1].to_string());
            }
        }
    }
    assert!(shipped.contains("airlock-cli") && shipped.contains("airlock-resident"));
    shipped
}

/// The dev code (the test doubles in airlock-testkit, the benchmarks in airlock-bench) is in no
/// shipped crate and nothing a shipped crate uses, not even behind an optional feature: only
/// dev-dependencies may name it.
#[test]
fn no_shipped_crate_carries_dev_code() {
    let crates = airlock_dependencies();
    let dev_only = set(&["airlock-testkit", "airlock-bench"]);
    let mut reached = shipped_crates();
    let mut todo: Vec<String> = reached.iter().cloned().collect();
    while let Some(name) = todo.pop() {
        let (normal, optional) = &crates[&name];
        for dep in normal.union(optional) {
            assert!(
                !dev_only.contains(dep),
                "{name}, which ships, depends on {dep}; only a dev-dependency may"
            );
            if reached.insert(dep.clone()) {
                todo.push(dep.clone());
            }
        }
    }
    for name in &dev_only {
        assert!(crates.contains_key(name), "{name} is not in the workspace");
        assert!(!reached.contains(name), "{name} ships");
    }
}
