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
        // Reaching a running engine from another process: core's and protocol's words only.
        ("airlock-client", &["airlock-core", "airlock-protocol"]),
        (
            "airlock-api",
            &[
                "airlock-core",
                "airlock-protocol",
                "airlock-client",
                "airlock-engine",
                "airlock-mcp",
                "airlock-remote",
            ],
        ),
        // The agents' hook: a client of the local API (and the engine's fallback file).
        (
            "airlock-hook",
            &["airlock-core", "airlock-protocol", "airlock-client"],
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

/// The Rust files under `dir`, recursively, by path relative to the workspace.
fn rust_files(root: &std::path::Path, dir: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut folders = vec![root.join(dir)];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                found.push((relative, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    found
}

/// The quoted paths given to `.route(` in a router's source, in order.
fn routes(source: &str) -> Vec<String> {
    source
        .split(".route(")
        .skip(1)
        .filter_map(|rest| rest.trim_start().strip_prefix('"'))
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_string)
        .collect()
}

/// Every command a person's surfaces run is in the one table (crates/protocol/src/commands.rs),
/// once; the window, the local API and the phone run them through the one dispatcher; the UI's
/// client is generated from the table; and the phone's subset is explicit.
#[test]
fn every_command_is_in_the_one_table() {
    use airlock_protocol::commands::{COMMANDS, Surface, names_for};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut names: Vec<&str> = COMMANDS.iter().map(|spec| spec.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), COMMANDS.len(), "a command is declared twice");

    // The phone's subset, by name: widening it is a decision made here.
    assert_eq!(
        names_for(Surface::Phone),
        ["inbox", "decide", "answer_elicitation"]
    );
    let phone = std::fs::read_to_string(root.join("crates/remote/src/routes.rs")).unwrap();
    assert_eq!(
        routes(&phone),
        [
            "/v1/commands/{name}",
            "/v1/inbox",
            "/v1/decisions",
            "/v1/decisions/batch",
            "/v1/elicitations/{id}/answer",
            "/v1/events",
            "/v1/{*rest}",
            "/",
            "/assets/{name}",
            "/manifest.webmanifest",
            "/sw.js",
            "/icon-256.png",
            "/icon-512.png",
            "/v1/pair",
        ],
        "the phone's routes changed: a device reaches the table's phone subset only"
    );

    // One table, one dispatcher: no other crate declares commands of its own.
    let declaration = ["macro_rules!", "commands"].join(" ");
    for (path, source) in rust_files(&root, "crates")
        .into_iter()
        .chain(rust_files(&root, "src-tauri/src"))
    {
        if path.ends_with("crates/protocol/src/commands.rs") {
            continue;
        }
        assert!(
            !source.contains(&declaration),
            "{path} declares commands of its own; add them to the one table"
        );
    }
    for (entry, calls) in [
        (
            "crates/resident/src/commands/mod.rs",
            "airlock_engine::commands::dispatch(",
        ),
        (
            "crates/api/src/commands.rs",
            "airlock_engine::commands::dispatch(",
        ),
        (
            "crates/remote/src/routes.rs",
            "airlock_engine::commands::dispatch(",
        ),
    ] {
        let source = std::fs::read_to_string(root.join(entry)).unwrap();
        assert!(
            source.contains(calls),
            "{entry} must run commands through the one dispatcher"
        );
    }
    let desktop = std::fs::read_to_string(root.join("crates/resident/src/desktop_api.rs")).unwrap();
    assert!(
        desktop.contains("commands::dispatch("),
        "the window's invoke runs the table"
    );

    // The UI's client is generated from the table, and the UI writes no request shapes.
    let client = std::fs::read_to_string(root.join("ui/src/lib/bindings/commands.ts")).unwrap();
    for name in &names {
        assert!(
            client.contains(&format!("  {name}: {{ args: ")),
            "ui/src/lib/bindings/commands.ts lacks `{name}`: regenerate it (UPDATE_BINDINGS=1 cargo test -p airlock-resident bindings)"
        );
    }
    assert_eq!(client.matches("{ args: ").count(), COMMANDS.len());
    let api_ts = std::fs::read_to_string(root.join("ui/src/lib/api.ts")).unwrap();
    assert!(
        !api_ts.contains("invoke<"),
        "ui/src/lib/api.ts calls a command around the table's client"
    );
    let remote_ts = std::fs::read_to_string(root.join("ui/src/phone/remote.ts")).unwrap();
    let hand_written: Vec<&str> = remote_ts
        .split("request<")
        .skip(1)
        .filter_map(|rest| rest.split_once(">('"))
        .filter(|(generic, _)| !generic.contains('\n'))
        .filter_map(|(_, path)| path.split('\'').next())
        .filter(|path| *path != "/v1/pair")
        .collect();
    assert!(
        hand_written.is_empty(),
        "ui/src/phone/remote.ts sends {hand_written:?} around the table's client"
    );
}
