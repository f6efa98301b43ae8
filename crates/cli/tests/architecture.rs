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
        // The agents, one module each, and the one list of them: no engine, no store.
        ("airlock-agents", &["airlock-core", "airlock-protocol"]),
        (
            "airlock-engine",
            &[
                "airlock-core",
                "airlock-protocol",
                "airlock-agents",
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
                "airlock-agents",
                "airlock-engine",
                "airlock-api",
            ],
        ),
        (
            "airlock-cli",
            &[
                "airlock-core",
                "airlock-protocol",
                "airlock-engine",
                "airlock-api",
                "airlock-mcp",
                "airlock-agents",
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
                "airlock-agents",
                "airlock-remote",
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

/// The scripted model and the test MCP server are test doubles: no shipped crate depends on
/// them but as a dev-dependency or through an optional feature the release leaves out.
#[test]
fn no_shipped_crate_carries_the_test_doubles() {
    for (name, (normal, _)) in airlock_dependencies() {
        assert!(
            !normal.contains("airlock-testkit"),
            "{name} depends on airlock-testkit; make it a dev-dependency or an optional feature"
        );
    }
}

/// The hook starts for every tool call and the engine needs only the agents' list: both use
/// crates/agents without its config writers (the `connect` feature: TOML, file backups), and
/// the agents' crate keeps those optional.
#[test]
fn the_hook_and_the_engine_use_the_agents_without_their_config_writers() {
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
    let packages = metadata["packages"].as_array().unwrap();
    let package = |name: &str| {
        packages
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("{name} is not in the workspace"))
    };
    for user in ["airlock-hook", "airlock-engine"] {
        let agents = package(user)["dependencies"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["name"] == "airlock-agents" && d["kind"].is_null())
            .unwrap_or_else(|| panic!("{user} does not use airlock-agents"));
        let features: Vec<&str> = agents["features"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(
            !features.contains(&"connect"),
            "{user} must use airlock-agents without its config writers (connect)"
        );
    }
    let agents = package("airlock-agents");
    assert!(
        agents["features"]["default"]
            .as_array()
            .is_none_or(|d| d.is_empty()),
        "airlock-agents' config writers must not be a default feature"
    );
    for writer_only in ["toml_edit", "tempfile", "dirs"] {
        let dependency = agents["dependencies"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["name"] == writer_only && d["kind"].is_null())
            .unwrap_or_else(|| panic!("airlock-agents no longer uses {writer_only}"));
        assert_eq!(
            dependency["optional"], true,
            "{writer_only} is for the config writers: optional, behind `connect`"
        );
    }
}
