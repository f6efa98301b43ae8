//! What may use what (docs/ARCHITECTURE.md), read from `cargo metadata`: a dependency that
//! breaks a rule fails here instead of slipping in.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// `cargo metadata` of the workspace, with `extra` arguments.
fn metadata(extra: &[&str]) -> Value {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.toml");
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--offline"])
        .args(extra)
        .args(["--manifest-path", manifest])
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Each workspace crate's Airlock dependencies: (normal, non-optional) and (optional).
fn airlock_dependencies() -> BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)> {
    let metadata = metadata(&["--no-deps"]);
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
        // The store port (the operations as traits, no backend) and its two adapters.
        ("airlock-store-port", &["airlock-core", "airlock-protocol"]),
        (
            "airlock-store-sqlite",
            &["airlock-core", "airlock-protocol", "airlock-store-port"],
        ),
        (
            "airlock-store-postgres",
            &["airlock-core", "airlock-protocol", "airlock-store-port"],
        ),
        ("airlock-llm", &[]),
        // The agents, one module each, and the one list of them: no engine, no store.
        ("airlock-agents", &["airlock-core", "airlock-protocol"]),
        (
            "airlock-engine",
            &[
                "airlock-core",
                "airlock-protocol",
                "airlock-agents",
                "airlock-store-port",
                // The desktop's one SQLite file; a shared database's adapter is given to it
                // (`Database::shared`), never linked: the desktop carries no database client.
                "airlock-store-sqlite",
                "airlock-llm",
            ],
        ),
        // The adapters see the engine's views (the protocol), never the store.
        (
            "airlock-mcp",
            &["airlock-core", "airlock-protocol", "airlock-engine"],
        ),
        // The ACP host: agents that host chats, their permissions through the engine.
        (
            "airlock-acp",
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
                "airlock-acp",
                "airlock-remote",
                // Agents' HTTP hooks: their events read and answered as the process hook does.
                "airlock-agents",
                "airlock-hook",
            ],
        ),
        // The agents' hook: a client of the local API (and the agents' fallback file).
        (
            "airlock-hook",
            &[
                "airlock-core",
                "airlock-protocol",
                "airlock-agents",
                "airlock-client",
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
                "airlock-acp",
                "airlock-agents",
                "airlock-hook",
                // `serve --database-url` (behind the `postgres` feature, on by default).
                "airlock-store-postgres",
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
                "airlock-mcp",
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
                // `airlock-bench replicas`: engines on a shared PostgreSQL store.
                "airlock-store-postgres",
            ],
        ),
        // The window: its commands run in the resident, reached through the local API.
        ("airlock-desktop", &["airlock-protocol", "airlock-client"]),
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

/// Every package a workspace crate compiles with, however far down: the resolved graph's
/// normal and build dependencies (dev-dependencies are the tests').
fn compiled_with(name: &str) -> BTreeSet<String> {
    let metadata = metadata(&[]);
    let names: BTreeMap<&str, &str> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    let nodes: BTreeMap<&str, &Value> = metadata["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["id"].as_str().unwrap(), n))
        .collect();
    let start = names
        .iter()
        .find(|(_, n)| **n == name)
        .map(|(id, _)| *id)
        .unwrap_or_else(|| panic!("{name} is not in the workspace"));
    let (mut seen, mut queue) = (BTreeSet::new(), vec![start]);
    while let Some(id) = queue.pop() {
        for dep in nodes[id]["deps"].as_array().unwrap() {
            let shipped = dep["dep_kinds"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k["kind"].as_str() != Some("dev"));
            let pkg = dep["pkg"].as_str().unwrap();
            if shipped && seen.insert(pkg) {
                queue.push(pkg);
            }
        }
    }
    seen.into_iter().map(|id| names[id].to_string()).collect()
}

/// The hook starts for every tool call of an agent and the window only shows what the resident
/// serves: both reach the engine through `airlock-client`, and neither compiles the engine, the
/// store, or what hosts them, not even through another crate.
#[test]
fn the_hook_and_the_window_reach_neither_the_engine_nor_the_store() {
    let forbidden = set(&[
        "airlock-engine",
        "airlock-store-port",
        "airlock-store-sqlite",
        "airlock-store-postgres",
        "airlock-api",
        "airlock-mcp",
        "airlock-acp",
        "airlock-remote",
    ]);
    for name in ["airlock-hook", "airlock-desktop"] {
        let reached = compiled_with(name);
        assert!(
            reached.contains("airlock-client"),
            "{name} uses airlock-client"
        );
        let wrong: Vec<&String> = reached.intersection(&forbidden).collect();
        assert!(wrong.is_empty(), "{name} compiles with {wrong:?}");
    }
}

/// The desktop app is one SQLite file with no server to run: neither the window nor the resident
/// compiles a PostgreSQL client, not even through the engine. Only the CLI links it (`serve
/// --database-url`), behind its `postgres` feature. `cargo metadata` resolves the features of the
/// whole workspace at once, so a feature the CLI turned on in a crate the resident shares (as a
/// build of both in one `cargo build`, scripts/setup.sh's, would) shows here too.
#[test]
fn the_desktop_compiles_no_postgresql_client() {
    let postgres = set(&[
        "airlock-store-postgres",
        "tokio-postgres",
        "postgres-protocol",
        "deadpool-postgres",
    ]);
    let cli = compiled_with("airlock-cli");
    let missing: Vec<&String> = postgres.difference(&cli).collect();
    assert!(
        missing.is_empty(),
        "the CLI no longer compiles {missing:?} for `serve --database-url`: rename them here"
    );
    for name in ["airlock-resident", "airlock-desktop"] {
        let reached = compiled_with(name);
        let wrong: Vec<&String> = reached.intersection(&postgres).collect();
        assert!(wrong.is_empty(), "{name} compiles with {wrong:?}");
    }
    assert!(
        compiled_with("airlock-resident").contains("airlock-store-sqlite"),
        "the resident keeps the desktop's SQLite file"
    );
    // The CLI's dependency is optional, behind `postgres`, which is on by default.
    let metadata = metadata(&["--no-deps"]);
    let cli = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "airlock-cli")
        .unwrap();
    let dependency = cli["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == "airlock-store-postgres" && d["kind"].is_null())
        .expect("airlock-cli depends on airlock-store-postgres");
    assert_eq!(dependency["optional"], true, "{dependency}");
    assert_eq!(
        cli["features"]["postgres"],
        serde_json::json!(["dep:airlock-store-postgres"])
    );
    assert!(
        cli["features"]["default"]
            .as_array()
            .is_some_and(|d| d.iter().any(|f| f == "postgres")),
        "the CLI's `postgres` feature is not on by default"
    );
    // It opens the adapter for the engine and calls none of its operations.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let naming: Vec<String> = rust_files(root, "src")
        .into_iter()
        .filter(|(_, code)| code.contains("airlock_store_postgres"))
        .map(|(path, _)| path)
        .collect();
    assert_eq!(
        naming,
        ["src/serve.rs"],
        "the PostgreSQL adapter named beyond `serve`"
    );
}

/// The top-level modules of one crate (`src/NAME.rs`, `src/NAME/…`) and which of them each one
/// names through `crate::`, in its code (comments and its `#[cfg(test)]` module left out, test
/// files `tests.rs` too, and `src/bin`).
fn module_uses(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    let mut folders = vec![src.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && path.file_name() != Some("bin".as_ref()) {
                folders.push(path);
            } else if path.extension() == Some("rs".as_ref())
                && path.file_name() != Some("tests.rs".as_ref())
            {
                files.push(path);
            }
        }
    }
    // `#[path = "tray_native.rs"] pub mod tray;`: the file is the module it is mounted as.
    let mut mounted = BTreeMap::new();
    for root in ["lib.rs", "main.rs"] {
        let Ok(text) = std::fs::read_to_string(src.join(root)) else {
            continue;
        };
        let mut path = None;
        for line in text.lines().map(str::trim) {
            if let Some(rest) = line.strip_prefix("#[path = \"") {
                path = rest
                    .split('"')
                    .next()
                    .map(|p| p.trim_end_matches(".rs").to_string());
            } else if let (Some(file), Some(name)) = (&path, line.split("mod ").nth(1)) {
                mounted.insert(file.clone(), name.trim_end_matches(';').to_string());
                path = None;
            }
        }
    }
    let module_of = |file: &Path| -> Option<String> {
        let relative = file.strip_prefix(src).unwrap();
        let first = relative.components().next()?.as_os_str().to_str()?;
        let name = first.trim_end_matches(".rs");
        (!["lib", "main"].contains(&name))
            .then(|| mounted.get(name).cloned().unwrap_or(name.to_string()))
    };
    let modules: BTreeSet<String> = files.iter().filter_map(|f| module_of(f)).collect();
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let Some(module) = module_of(file) else {
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        let tests_start = text.find("#[cfg(test)]\nmod ").unwrap_or(text.len());
        let code: String = text[..tests_start]
            .lines()
            .filter(|line| !line.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let used = uses.entry(module.clone()).or_default();
        for name in crate_paths(&code) {
            if name != module && modules.contains(&name) {
                used.insert(name);
            }
        }
    }
    uses
}

/// The first segment of every `crate::…` path in `code`, `crate::{a, b::c}` included.
fn crate_paths(code: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut names = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let rest = &code[at + "crate::".len()..];
        let Some(group) = rest.strip_prefix('{') else {
            names.push(ident(rest));
            continue;
        };
        // The group's items at its own depth: `a`, `b::{c, d}` → a, b.
        let (mut depth, mut item_start) = (0, true);
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => item_start = true,
                c if item_start && !c.is_whitespace() => {
                    names.push(ident(&group[i..]));
                    item_start = false;
                }
                _ => {}
            }
        }
    }
    names
}

/// A module that uses another which uses it back (however far round) has no order to read or
/// change them in: what both need belongs in a module of its own, or where it is used.
#[test]
fn no_crates_modules_form_a_cycle() {
    let metadata = metadata(&["--no-deps"]);
    let cycles: Vec<String> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|package| {
            let manifest = Path::new(package["manifest_path"].as_str().unwrap());
            let cycle = find_cycle(&module_uses(&manifest.with_file_name("src")))?;
            Some(format!(
                "{}: {}",
                package["name"].as_str()?,
                cycle.join(" → ")
            ))
        })
        .collect();
    assert!(cycles.is_empty(), "modules that form a cycle: {cycles:#?}");
}

/// One cycle of `uses`, as the modules along it (the first again at the end).
fn find_cycle(uses: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit<'a>(
        module: &'a str,
        uses: &'a BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|m| *m == module) {
            let mut cycle: Vec<String> = path[at..].iter().map(|m| m.to_string()).collect();
            cycle.push(module.to_string());
            return Some(cycle);
        }
        if !done.insert(module) {
            return None;
        }
        path.push(module);
        for next in uses.get(module).into_iter().flatten() {
            if let Some(cycle) = visit(next, uses, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    uses.keys()
        .find_map(|module| visit(module, uses, &mut Vec::new(), &mut done))
}

#[test]
fn a_cycle_is_found_however_far_round_and_through_grouped_imports() {
    assert_eq!(
        crate_paths("use crate::{a, b::{c, d}};\nfn f() { crate::e::g(); x_crate::h; }"),
        ["a", "b", "e"]
    );
    let uses: BTreeMap<String, BTreeSet<String>> = [
        ("a", set(&["b"])),
        ("b", set(&["c"])),
        ("c", set(&["a"])),
        ("d", set(&["a"])),
    ]
    .into_iter()
    .map(|(m, u)| (m.to_string(), u))
    .collect();
    assert_eq!(find_cycle(&uses).unwrap(), ["a", "b", "c", "a"]);
    let mut acyclic = uses.clone();
    acyclic.insert("c".into(), BTreeSet::new());
    assert_eq!(find_cycle(&acyclic), None);
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
    // The local API's REST paths are aliases of table commands: a handler reaches the engine
    // only through the dispatcher. The agents' own routes (a hook's — process or HTTP — or the
    // MCP proxy's call held open, the event stream) are not a person's commands; `command` and `table` are the
    // dispatcher's entries.
    let api = std::fs::read_to_string(root.join("crates/api/src/server.rs")).unwrap();
    let not_commands = [
        "agent_call",
        "agent_hook",
        "agent_call_state",
        "agent_call_claim",
        "agent_call_events",
        "elicit",
        "events",
        "command",
        "table",
    ];
    for handler in api.split("\nasync fn ").skip(1) {
        let name: String = handler
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if not_commands.contains(&name.as_str()) {
            continue;
        }
        assert!(
            !handler.contains("s.engine"),
            "crates/api/src/server.rs: `{name}` calls the engine itself; add a command to the table and run it (`table(&s, cmd::…)`)"
        );
    }
    for (at, _) in api.match_indices("airlock_engine::commands::") {
        let rest = &api[at + "airlock_engine::commands::".len()..];
        assert!(
            rest.starts_with("dispatch(") || rest.starts_with("Caller"),
            "crates/api/src/server.rs runs an engine helper around the dispatcher: {}",
            rest.lines().next().unwrap_or_default()
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
