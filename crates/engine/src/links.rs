//! Where an agent's path arguments really lead. The policy matches paths as text, so a rule
//! `src/**` would allow a Write to `src/link/x` where `src/link` leads out of the folder. Before
//! an agent's or a proxied tool's call is decided, each path argument is followed link by link
//! (below the agent's folder, which is taken as the agent gave it; anywhere for a path outside
//! it), and when a link changed where it leads the call is decided again on where it leads: the
//! stricter of the two verdicts stands.

use airlock_core::policy::{PolicyDecision, Step, Verdict};
use airlock_core::suggest::path_fields;
use serde_json::Value;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// More links than this on one path is a loop (Linux's own limit is 40).
const MAX_LINKS: usize = 40;

/// The policy's decision on `args`, and — when a path argument goes through a link — on where
/// it leads: the stricter verdict. A path whose links cannot be followed (a loop, a folder that
/// cannot be read) is not let through by an argument rule.
pub(crate) fn decide_where_paths_lead(
    tool: &str,
    args: &Value,
    folder: Option<&str>,
    decide: impl Fn(&Value) -> PolicyDecision,
) -> PolicyDecision {
    let as_written = decide(args);
    match where_paths_lead(tool, args, folder) {
        Ok(None) => as_written,
        Ok(Some((led_to, how))) => {
            let mut there = decide(&led_to);
            if strictness(there.verdict) > strictness(as_written.verdict) {
                there.why = format!("{} ({how})", there.why);
                there
            } else {
                as_written
            }
        }
        Err(why) if as_written.verdict == Verdict::Run && as_written.step == Step::ArgRule => {
            PolicyDecision::new(
                Verdict::Ask,
                Step::ArgRule,
                format!("{}, but {why}", as_written.why),
            )
        }
        Err(_) => as_written,
    }
}

fn strictness(verdict: Verdict) -> u8 {
    match verdict {
        Verdict::Run => 0,
        Verdict::Ask => 1,
        Verdict::Deny => 2,
    }
}

/// `args` with each path argument that goes through a link replaced by where it leads, and a
/// line saying so (`/file_path leads to /elsewhere/x`); `None` when no link is on any path.
fn where_paths_lead(
    tool: &str,
    args: &Value,
    folder: Option<&str>,
) -> Result<Option<(Value, String)>, String> {
    let folder = folder.map(Path::new).filter(|f| f.is_absolute());
    let mut led_to = args.clone();
    let mut how = Vec::new();
    for (pointer, written) in path_fields(tool, args) {
        let Some(leads) = lead_of(&written, folder)
            .map_err(|e| format!("where {pointer} leads cannot be told ({e})"))?
        else {
            continue;
        };
        if let Some(slot) = led_to.pointer_mut(&pointer) {
            how.push(format!("{pointer} leads to {leads}"));
            *slot = Value::String(leads);
        }
    }
    Ok((!how.is_empty()).then(|| (led_to, how.join("; "))))
}

/// Where `written` leads when a link is on its way, written as the agent would: below `folder`
/// in the folder's own terms (relative when `written` was), elsewhere as an absolute path.
/// `None` when no link is on the way, or a relative path has no folder to start from.
fn lead_of(written: &str, folder: Option<&Path>) -> std::io::Result<Option<String>> {
    if written.starts_with('~') || written.contains('\0') {
        return Ok(None);
    }
    // Not normalised first: `..` after a link climbs from where the link leads.
    let relative = !Path::new(written).is_absolute();
    let absolute = match folder {
        _ if !relative => PathBuf::from(written),
        Some(folder) => folder.join(written),
        None => return Ok(None),
    };
    // Below the folder, only the links under it count: the folder is where the agent works.
    let (start_written, start_real, rest) = match folder {
        Some(folder) if absolute.starts_with(folder) => {
            let rest = absolute.strip_prefix(folder).unwrap_or(Path::new(""));
            (
                folder.to_path_buf(),
                std::fs::canonicalize(folder)?,
                rest.to_path_buf(),
            )
        }
        _ => {
            let anchor = absolute.ancestors().last().unwrap_or(Path::new("/"));
            let rest = absolute.strip_prefix(anchor).unwrap_or(&absolute);
            (
                anchor.to_path_buf(),
                anchor.to_path_buf(),
                rest.to_path_buf(),
            )
        }
    };
    let Some(real) = follow(start_real.clone(), &rest)? else {
        return Ok(None);
    };
    let leads = match real.strip_prefix(&start_real) {
        Ok(below) => start_written.join(below),
        Err(_) => real,
    };
    let leads = match (folder, relative) {
        (Some(folder), true) => match leads.strip_prefix(folder) {
            Ok(below) if below.as_os_str().is_empty() => PathBuf::from("."),
            Ok(below) => below.to_path_buf(),
            Err(_) => leads,
        },
        _ => leads,
    };
    Ok(Some(leads.to_string_lossy().into_owned()))
}

/// One step of a path still to walk.
enum Part {
    /// Start again from an anchor (`/`, `C:\`): an absolute link target.
    Anchor(PathBuf),
    Up,
    Name(OsString),
}

/// `start` (a real folder, no links in it) followed by `rest`, each link on the way replaced by
/// its target — a link whose target does not exist yet too (writing through it creates the
/// target). Names that do not exist are kept as written. `None` when no link was on the way.
fn follow(start: PathBuf, rest: &Path) -> std::io::Result<Option<PathBuf>> {
    fn parts(path: &Path) -> Vec<Part> {
        use std::path::Component;
        let mut parts = Vec::new();
        if path.has_root() {
            let anchor = path.ancestors().last().unwrap_or(Path::new("/"));
            parts.push(Part::Anchor(anchor.to_path_buf()));
        }
        for component in path.components() {
            match component {
                Component::Normal(name) => parts.push(Part::Name(name.to_os_string())),
                Component::ParentDir => parts.push(Part::Up),
                Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
            }
        }
        parts
    }
    let mut real = start;
    let mut to_walk: Vec<Part> = parts(rest);
    to_walk.reverse();
    let mut links = 0;
    while let Some(part) = to_walk.pop() {
        match part {
            Part::Anchor(anchor) => real = anchor,
            Part::Up => {
                real.pop();
            }
            Part::Name(name) => {
                let next = real.join(&name);
                match std::fs::symlink_metadata(&next) {
                    Ok(meta) if meta.file_type().is_symlink() => {
                        links += 1;
                        if links > MAX_LINKS {
                            return Err(std::io::Error::other("too many links: a loop?"));
                        }
                        let mut target = parts(&std::fs::read_link(&next)?);
                        target.reverse();
                        to_walk.extend(target);
                    }
                    Ok(_) => real = next,
                    Err(e)
                        if matches!(
                            e.kind(),
                            std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                        ) =>
                    {
                        real = next
                    }
                    Err(e) => return Err(e),
                }
            }
        }
    }
    Ok((links > 0).then_some(real))
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::tests::empty_engine;
    use airlock_core::{ArgRule, MCP_CLIENT, RuleEffect, RulePattern};
    use airlock_protocol::{AgentCall, AgentEvent, AgentVerdict};
    use serde_json::json;
    use std::os::unix::fs::symlink;

    /// A project with `src/a.rs`, `src/link -> <outside>`, `src/new -> <outside>/new.txt` (not
    /// there yet) and `src/loop -> loop`, and the folder outside it.
    fn project() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let project = root.join("project");
        let outside = root.join("outside");
        std::fs::create_dir_all(project.join("src")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(project.join("src/a.rs"), "").unwrap();
        symlink(&outside, project.join("src/link")).unwrap();
        symlink(outside.join("new.txt"), project.join("src/new")).unwrap();
        symlink("loop", project.join("src/loop")).unwrap();
        (dir, project, outside)
    }

    fn write(agent: &str, source: Option<&str>, project: &Path, input: Value) -> AgentCall {
        AgentCall {
            agent: agent.into(),
            source: source.map(str::to_string),
            client: None,
            agent_session: "s1".into(),
            cwd: Some(project.display().to_string()),
            tool: "Write".into(),
            input,
            tool_use_id: None,
            event: if source.is_some() {
                AgentEvent::McpCall
            } else {
                AgentEvent::PreToolUse
            },
            editable: false,
            wait_ms: Some(50),
            defer: false,
            takes_reason: None,
            definition: None,
            prompt: None,
        }
    }

    fn rule(server: &str, pointer: &str, glob: String, effect: RuleEffect) -> ArgRule {
        ArgRule {
            id: crate::Engine::new_rule_id(),
            server: server.into(),
            tool: "Write".into(),
            pointer: pointer.into(),
            pattern: RulePattern::Glob(glob),
            effect,
        }
    }

    #[test]
    fn a_path_through_a_link_leads_where_the_link_points() {
        let (_dir, project, outside) = project();
        let lead = |written: &str| lead_of(written, Some(&project)).unwrap();
        assert_eq!(lead("src/a.rs"), None);
        assert_eq!(lead(&project.join("src/a.rs").display().to_string()), None);
        assert_eq!(
            lead("src/link/x"),
            Some(outside.join("x").display().to_string())
        );
        assert_eq!(
            lead("./src/new"),
            Some(outside.join("new.txt").display().to_string())
        );
        // `..` after a link climbs from where it leads, not back up the path as written.
        assert_eq!(
            lead("src/link/../y"),
            Some(outside.parent().unwrap().join("y").display().to_string())
        );
        assert!(lead_of("src/loop/x", Some(&project)).is_err());
        // A link that stays in the folder is written in the folder's terms.
        symlink(project.join("src"), project.join("code")).unwrap();
        assert_eq!(lead("code/a.rs"), Some("src/a.rs".into()));
        // No folder: a relative path cannot be followed, an absolute one is.
        assert_eq!(lead_of("src/link/x", None).unwrap(), None);
        assert_eq!(
            lead_of(&project.join("src/link/x").display().to_string(), None).unwrap(),
            Some(outside.join("x").display().to_string())
        );
    }

    /// `src/**` must not allow a Write through `src/link -> <outside>`, by an agent (absolute
    /// paths, as Claude Code sends them) or a proxied tool (relative to its folder); a deny
    /// rule on the outside folder catches a path through the link.
    #[tokio::test]
    async fn a_folder_rule_does_not_allow_a_write_through_a_link_out_of_it() {
        let (_dir, project, outside) = project();
        let (_data, engine) = empty_engine();
        let folder = format!("{}/**", project.join("src").display());
        engine
            .add_rule(rule("claude-code", "/file_path", folder, RuleEffect::Allow))
            .unwrap();
        engine
            .add_rule(rule("notes", "/path", "src/**".into(), RuleEffect::Allow))
            .unwrap();
        engine
            .add_rule(rule(
                "claude-code",
                "/file_path",
                format!("{}/secret*", outside.display()),
                RuleEffect::Deny,
            ))
            .unwrap();
        let claude = |path: PathBuf| {
            write(
                "claude-code",
                None,
                &project,
                json!({"file_path": path.display().to_string(), "content": "x"}),
            )
        };
        let proxied =
            |path: &str| write(MCP_CLIENT, Some("notes"), &project, json!({"path": path}));
        let verdict = |call: AgentCall| {
            let engine = engine.clone();
            async move { engine.agent_call(call).await.unwrap().verdict }
        };
        assert_eq!(
            verdict(claude(project.join("src/a.rs"))).await,
            AgentVerdict::Allow
        );
        assert_eq!(verdict(proxied("src/b.rs")).await, AgentVerdict::Allow);
        for (call, what) in [
            (claude(project.join("src/link/x")), "through src/link"),
            (
                claude(project.join("src/new")),
                "through a link to a new file",
            ),
            (claude(project.join("src/loop/x")), "through a loop"),
            (proxied("src/link/x"), "a proxied write through src/link"),
        ] {
            assert_eq!(verdict(call).await, AgentVerdict::Undecided, "{what} ran");
        }
        assert_eq!(
            verdict(claude(project.join("src/link/secret.txt"))).await,
            AgentVerdict::Deny,
            "a deny rule on where the link leads was dodged"
        );
        // What was asked says where the path leads.
        let answer = engine
            .agent_call(claude(project.join("src/link/x")))
            .await
            .unwrap();
        let asked = engine
            .approval(answer.approval_id.as_deref().unwrap())
            .unwrap()
            .unwrap();
        assert!(
            asked
                .why
                .contains(&format!("leads to {}", outside.join("x").display())),
            "{}",
            asked.why
        );
    }
}
