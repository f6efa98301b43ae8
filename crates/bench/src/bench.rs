//! The benchmarks: measured figures for BENCHMARKS.md (never timed assertions in tests).

use crate::report::report;
use airlock_api::ApiClient;
use airlock_api::discovery;
use airlock_api::host::LocalApi;
use airlock_core::policy::{
    ArgRule, CallFacts, PolicyConfig, PolicyInputs, Remembered, RuleEffect, RulePattern,
    ServerPolicy, SessionPolicy, decide,
};
use airlock_core::{DecidedBy, ServerDefault, ToolSetting, args_hash};
use airlock_engine::{
    DecisionRequest, Engine, EngineConfig, EngineEvent, InboxItem, ProviderSettings,
};
use airlock_testkit::{Fallback, Reply, ScriptedCall, ScriptedModel};
use anyhow::{Context, bail};
use clap::Subcommand;
use serde_json::json;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(Subcommand, Debug)]
pub enum BenchAction {
    /// User message → model calls write_file → inbox → approved through the local API → tool
    /// runs → model answers. Every state change durable as in production.
    Roundtrip {
        #[arg(long, default_value_t = 200)]
        rounds: usize,
        /// An OpenAI-compatible server that answers this way; default: the scripted one.
        #[arg(long)]
        base_url: Option<String>,
        #[arg(long, default_value = "bench")]
        model: String,
        /// Ask the model for streamed answers (SSE).
        #[arg(long)]
        stream: bool,
        /// Rounds run first and not counted.
        #[arg(long, default_value_t = 20)]
        warmup: usize,
        /// The built-in tools' folder (default: inside the temporary data directory).
        #[arg(long)]
        workspace: Option<std::path::PathBuf>,
    },
    /// Many pending `write_file` calls (sessions × calls per step, seeded through the real loop),
    /// then one "Approve all" through the batch path the desktop's `decide` command uses.
    ApproveAll {
        #[arg(long, default_value_t = 100)]
        sessions: usize,
        #[arg(long, default_value_t = 100)]
        calls: usize,
    },
    /// `insights()` over a History of sessions × calls decisions (seeded through the real
    /// loop, one in ten denied): the engine's side of `airlock insights --json`.
    Insights {
        #[arg(long, default_value_t = 100)]
        sessions: usize,
        #[arg(long, default_value_t = 100)]
        calls: usize,
        #[arg(long, default_value_t = 20)]
        runs: usize,
    },
    /// The whole hook process (start, read stdin, ask the engine, print) for a Bash call an
    /// argument rule allows, against an engine in this process: `airlock-hook claude-code`
    /// (what `connect` installs), and with `--subcommand` `airlock hook claude-code`.
    Hook {
        #[arg(long, default_value_t = 500)]
        runs: usize,
        #[arg(long, default_value_t = 20)]
        warmup: usize,
        /// Time `airlock hook` (the subcommand of the whole CLI) instead.
        #[arg(long)]
        subcommand: bool,
        /// Time the HTTP hook instead, as Claude Code's `"type": "http"` hook makes it: its
        /// event POSTed with Claude Code's own token on a fresh connection to the engine's
        /// hook port (`connect --http`).
        #[arg(long, conflicts_with = "subcommand")]
        http: bool,
        /// Time both, alternating one process hook and one HTTP hook per run (same run, same
        /// conditions): two lines, `process_runs=…` and `http_runs=…`.
        #[arg(long, conflicts_with_all = ["subcommand", "http"])]
        alternate: bool,
    },
    /// Several engines (replicas) on one PostgreSQL database (a throwaway cluster, as the
    /// tests start it), for each count in `--replicas`: decisions per second and the time from
    /// a decision (made through another replica than the one driving the turn) to its call
    /// having run.
    Replicas {
        #[arg(long, value_delimiter = ',', default_values_t = [1, 2, 4])]
        replicas: Vec<usize>,
        #[arg(long, default_value_t = 16)]
        sessions: usize,
        /// Calls per session on average (each approved on its own; the model's steps go to
        /// whichever turn asks first, so keep it well under the 25-step turn limit).
        #[arg(long, default_value_t = 10)]
        rounds: usize,
        /// Seconds a run may take before it fails, saying what each turn was doing.
        #[arg(long, default_value_t = 300)]
        timeout: u64,
    },
    /// One policy decision with many servers, tools and argument rules. The rules are spread
    /// over 70 tools; a decision looks its tool's rules up by name, so each timed call
    /// evaluates the ~`rules`/70 rules of its own tool (printed), not all of them.
    Policy {
        #[arg(long, default_value_t = 1000)]
        servers: usize,
        #[arg(long, default_value_t = 50)]
        tools: usize,
        #[arg(long, default_value_t = 1000)]
        rules: usize,
        #[arg(long, default_value_t = 100_000)]
        decisions: usize,
    },
}

pub async fn run(action: BenchAction) -> anyhow::Result<ExitCode> {
    match action {
        BenchAction::Roundtrip {
            rounds,
            base_url,
            model,
            stream,
            warmup,
            workspace,
        } => roundtrip(rounds, base_url, model, stream, warmup, workspace).await,
        BenchAction::ApproveAll { sessions, calls } => approve_all(sessions, calls).await,
        BenchAction::Insights {
            sessions,
            calls,
            runs,
        } => insights(sessions, calls, runs).await,
        BenchAction::Hook {
            runs,
            warmup,
            subcommand,
            http,
            alternate,
        } => {
            let how = match (subcommand, http, alternate) {
                (_, _, true) => HookPaths::Alternate,
                (_, true, _) => HookPaths::Http,
                (true, _, _) => HookPaths::Process { subcommand: true },
                _ => HookPaths::Process { subcommand: false },
            };
            hook(runs, warmup, how).await
        }
        BenchAction::Policy {
            servers,
            tools,
            rules,
            decisions,
        } => policy(servers, tools, rules, decisions),
        BenchAction::Replicas {
            replicas,
            sessions,
            rounds,
            timeout,
        } => {
            crate::replicas::replicas(replicas, sessions, rounds, Duration::from_secs(timeout))
                .await
        }
    }
}

/// Which hook `airlock-bench hook` times.
#[derive(Debug, Clone, Copy, PartialEq)]
enum HookPaths {
    /// The process an agent starts per call (`airlock-hook`, or `airlock hook`).
    Process { subcommand: bool },
    /// Claude Code's HTTP hook.
    Http,
    /// One of each per run.
    Alternate,
}

async fn hook(runs: usize, warmup: usize, how: HookPaths) -> anyhow::Result<ExitCode> {
    let dir = tempfile::tempdir().context("cannot make a temporary data directory")?;
    // The hook asks only an engine that holds its data directory's lock.
    let lock = discovery::EngineLock::acquire(dir.path())?;
    let engine = Engine::open(EngineConfig {
        data_dir: dir.path().to_path_buf(),
        workspace: Some(dir.path().join("workspace")),
    })?;
    engine.add_rule(ArgRule {
        id: Engine::new_rule_id(),
        server: "claude-code".into(),
        tool: "Bash".into(),
        pointer: "/command".into(),
        pattern: RulePattern::Glob("git status*".into()),
        effect: RuleEffect::Allow,
    })?;
    let api = LocalApi::bind(dir.path(), &lock, loopback())
        .await?
        .with_agent_hooks(&engine)
        .await;
    api.publish(dir.path())?;
    tokio::spawn(api.serve(engine.clone()));
    let agent = engine.issue_agent_token("claude-code")?;
    let hook_url = agent
        .hook_url
        .context("the engine does not listen for agents' HTTP hooks")?;
    let http = HttpHookClient::new(&hook_url, &agent.token)?;
    // The hook's command line as `connect` installs it, run from the binaries built beside this
    // one (`cargo build --release -p airlock-bench -p airlock-cli`).
    let process = match how {
        HookPaths::Http => None,
        HookPaths::Process { subcommand: true } => {
            Some((beside_this_binary("airlock")?, &["hook", "claude-code"][..]))
        }
        HookPaths::Process { subcommand: false } | HookPaths::Alternate => Some((
            beside_this_binary(airlock_core::HOOK_BINARY)?,
            &["claude-code"][..],
        )),
    };
    let event = json!({
        "session_id": "bench", "cwd": "/tmp", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "git status --short"},
    });
    let (mut by_process, mut by_http) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    for run in 0..warmup + runs {
        let mut event = event.clone();
        if let Some((program, words)) = &process {
            event["tool_use_id"] = json!(format!("toolu_p{run}"));
            let elapsed = hook_process(dir.path(), program, words, &event).await?;
            if run >= warmup {
                by_process.push(elapsed);
            }
        }
        if how == HookPaths::Http || how == HookPaths::Alternate {
            event["tool_use_id"] = json!(format!("toolu_h{run}"));
            let elapsed = http.post(&event).await?;
            if run >= warmup {
                by_http.push(elapsed);
            }
        }
    }
    match how {
        HookPaths::Process { .. } => report("runs", by_process, "ms"),
        HookPaths::Http => report("runs", by_http, "ms"),
        HookPaths::Alternate => {
            report("process_runs", by_process, "ms");
            report("http_runs", by_http, "ms");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One run of the process hook: start it, write the event, read its answer; it must allow.
async fn hook_process(
    data_dir: &std::path::Path,
    program: &std::path::Path,
    words: &'static [&'static str],
    event: &serde_json::Value,
) -> anyhow::Result<Duration> {
    let (data_dir, program, event) = (data_dir.to_path_buf(), program.to_path_buf(), event.clone());
    let (elapsed, stdout) = tokio::task::spawn_blocking(move || -> anyhow::Result<_> {
        use std::io::Write;
        let started = Instant::now();
        let mut child = std::process::Command::new(&program)
            .arg("--data-dir")
            .arg(&data_dir)
            .args(words)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(event.to_string().as_bytes())?;
        }
        let out = child.wait_with_output()?;
        Ok((
            started.elapsed(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        ))
    })
    .await??;
    if !stdout.contains("\"permissionDecision\":\"allow\"") {
        bail!("the hook did not allow the call: {stdout}");
    }
    Ok(elapsed)
}

/// Claude Code's HTTP hook as it posts: one HTTP/1.1 request on a fresh loopback connection,
/// written and read as plain bytes (no client library's own cost in the figure).
struct HttpHookClient {
    addr: std::net::SocketAddr,
    path: String,
    token: String,
}

impl HttpHookClient {
    fn new(url: &str, token: &str) -> anyhow::Result<Self> {
        let rest = url
            .strip_prefix("http://")
            .context("the hook URL is not http://")?;
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        Ok(Self {
            addr: authority.parse()?,
            path: format!("{path}?timeout=600"),
            token: token.to_string(),
        })
    }

    /// Posts `event`; the time until the whole answer was read. It must allow.
    async fn post(&self, event: &serde_json::Value) -> anyhow::Result<Duration> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let body = event.to_string();
        let request = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.path,
            self.addr,
            self.token,
            body.len()
        );
        let started = Instant::now();
        let mut stream = tokio::net::TcpStream::connect(self.addr).await?;
        stream.set_nodelay(true)?;
        stream.write_all(request.as_bytes()).await?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await?;
        let elapsed = started.elapsed();
        let answer = String::from_utf8_lossy(&answer);
        if !answer.starts_with("HTTP/1.1 200")
            || !answer.contains("\"permissionDecision\":\"allow\"")
        {
            bail!("the HTTP hook did not allow the call: {answer}");
        }
        Ok(elapsed)
    }
}

/// `name` (with the platform's executable suffix) in this binary's folder, or what to build.
fn beside_this_binary(name: &str) -> anyhow::Result<std::path::PathBuf> {
    let path =
        std::env::current_exe()?.with_file_name(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    if !path.is_file() {
        bail!(
            "{} is not built beside this binary: cargo build --release -p airlock-bench -p airlock-cli",
            path.display()
        );
    }
    Ok(path)
}

fn loopback() -> std::net::SocketAddr {
    std::net::SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, 0))
}

async fn roundtrip(
    rounds: usize,
    base_url: Option<String>,
    model: String,
    stream: bool,
    warmup: usize,
    workspace: Option<std::path::PathBuf>,
) -> anyhow::Result<ExitCode> {
    let dir = tempfile::tempdir().context("cannot make a temporary data directory")?;
    let scripted = match &base_url {
        Some(_) => None,
        None => Some(
            ScriptedModel::start_with(
                Vec::new(),
                Fallback::RoundTrip {
                    tool_name: "builtin__write_file".into(),
                    args: json!({"path": "bench.txt", "content": "hello"}),
                },
            )
            .await?,
        ),
    };
    let base_url = base_url
        .or_else(|| scripted.as_ref().map(ScriptedModel::base_url))
        .unwrap_or_default();
    let engine = Engine::open(EngineConfig {
        data_dir: dir.path().to_path_buf(),
        workspace: Some(workspace.unwrap_or_else(|| dir.path().join("workspace"))),
    })?;
    engine.set_provider(ProviderSettings {
        base_url,
        model,
        api_key_env: None,
        stream,
        ..ProviderSettings::default()
    })?;
    let lock = discovery::EngineLock::acquire(dir.path())?;
    let api = LocalApi::bind(dir.path(), &lock, loopback()).await?;
    api.publish(dir.path())?;
    tokio::spawn(api.serve(engine.clone()));
    // As the CLI reaches it.
    let client = ApiClient::discover(dir.path())?;
    let mut events = engine.subscribe();
    let mut samples = Vec::with_capacity(rounds);
    let mut counted_from = None;
    for round in 0..warmup + rounds {
        if round == warmup {
            counted_from = Some((engine.write_counters(), DiskStats::of(dir.path())));
        }
        let session = format!("bench-{round}");
        let started = Instant::now();
        client
            .send_message(&session, "write hello to bench.txt")
            .await?;
        let approval_id = loop {
            match events.recv().await? {
                EngineEvent::ApprovalRequested { item } if item.session == session => {
                    break item.approval_id;
                }
                EngineEvent::TurnEnded { outcome } if outcome.session == session => {
                    bail!("round {round}: the turn ended without asking: {outcome:?}")
                }
                _ => {}
            }
        };
        client
            .decide(&DecisionRequest::approve(approval_id))
            .await?;
        // The tool must have run: a round whose call was reported interrupted also completes.
        let mut ran = false;
        loop {
            match events.recv().await? {
                EngineEvent::ToolFinished {
                    session: of, state, ..
                } if of == session => ran = state == "succeeded",
                EngineEvent::TurnEnded { outcome } if outcome.session == session => {
                    if outcome.status != "completed" || !ran {
                        bail!(
                            "round {round}: the turn ended {} (the tool ran: {ran}): {:?}",
                            outcome.status,
                            outcome.error
                        );
                    }
                    break;
                }
                _ => {}
            }
        }
        if round >= warmup {
            samples.push(started.elapsed());
        }
    }
    if std::fs::read_to_string(engine.workspace().join("bench.txt"))
        .ok()
        .as_deref()
        != Some("hello")
    {
        bail!("the approved write_file did not write bench.txt");
    }
    let counted = samples.len().max(1) as f64;
    report("rounds", samples, "ms");
    if let Some((counters, disk)) = counted_from {
        let written = engine.write_counters().since(&counters);
        let per_round = |n: u64| n as f64 / counted;
        println!(
            "per_round commits={:.2} durable_commits={:.2} pages={:.2} checkpoints={:.3} checkpointed_pages={:.2}",
            per_round(written.commits),
            per_round(written.durable_commits),
            per_round(written.pages),
            per_round(written.checkpoints),
            per_round(written.checkpointed_pages),
        );
        match (disk, DiskStats::of(dir.path())) {
            (Some(before), Some(after)) => println!(
                "per_round disk_flushes={:.2} disk_written_kib={:.1} (device {}: every process's I/O on it)",
                per_round(after.flushes.saturating_sub(before.flushes)),
                per_round(after.written_sectors.saturating_sub(before.written_sectors)) / 2.0,
                after.device
            ),
            _ => {
                println!("per_round disk_flushes=n/a (the data directory is not on a block device)")
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The block device under a folder, as the kernel counts its requests
/// (`/sys/dev/block/MAJOR:MINOR/stat`): cache flushes — what a sync costs the disk — and
/// sectors written. Every process's I/O on that device counts, so read it on a quiet machine.
struct DiskStats {
    device: String,
    flushes: u64,
    written_sectors: u64,
}

impl DiskStats {
    #[cfg(target_os = "linux")]
    fn of(path: &std::path::Path) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let dev = std::fs::metadata(path).ok()?.dev();
        let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
        let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
        let device = format!("{major}:{minor}");
        let stat = std::fs::read_to_string(format!("/sys/dev/block/{device}/stat")).ok()?;
        let fields: Vec<u64> = stat
            .split_whitespace()
            .filter_map(|f| f.parse().ok())
            .collect();
        // Field 7 is sectors written; field 16 (kernels from 5.5 on) flush requests completed.
        Some(Self {
            device,
            written_sectors: *fields.get(6)?,
            flushes: *fields.get(15)?,
        })
    }

    #[cfg(not(target_os = "linux"))]
    fn of(_path: &std::path::Path) -> Option<Self> {
        None
    }
}

/// An engine with `sessions × calls` pending `write_file` calls (`s{s}-c{c}.txt`), seeded through
/// the real loop; the temporary folder and the model server live as long as the engine is used.
struct Seeded {
    _dir: tempfile::TempDir,
    _scripted: ScriptedModel,
    engine: Engine,
    names: Vec<String>,
    items: Vec<InboxItem>,
}

async fn seed_pending(sessions: usize, calls: usize) -> anyhow::Result<Seeded> {
    let dir = tempfile::tempdir().context("cannot make a temporary data directory")?;
    // Every session's first request gets a step of `calls` write_file calls; the requests after
    // the tools ran get the answer. The first requests all come before any follow-up, since
    // nothing runs before the approval.
    let step = |s: usize| {
        Reply::ToolCalls(
            (0..calls)
                .map(|c| {
                    ScriptedCall::new(
                        format!("c{c}"),
                        "builtin__write_file",
                        json!({"path": format!("s{s}-c{c}.txt"), "content": "ok"}),
                    )
                })
                .collect(),
        )
    };
    let replies = (0..sessions)
        .map(step)
        .chain((0..sessions).map(|_| Reply::Text("done".into())))
        .collect();
    let scripted = ScriptedModel::start(replies).await?;
    let engine = Engine::open(EngineConfig {
        data_dir: dir.path().to_path_buf(),
        workspace: Some(dir.path().join("workspace")),
    })?;
    engine.set_provider(ProviderSettings {
        base_url: scripted.base_url(),
        model: "bench".into(),
        ..ProviderSettings::default()
    })?;
    let names: Vec<String> = (0..sessions).map(|s| format!("bench-{s}")).collect();
    let total = sessions * calls;
    let seeding = Instant::now();
    for name in &names {
        engine.send_message(name, "write your files")?;
    }
    let items = loop {
        let items = engine.inbox()?;
        if items.len() >= total {
            break items;
        }
        if seeding.elapsed() > Duration::from_secs(600) {
            bail!("only {} of {total} requests arrived", items.len());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    eprintln!(
        "seeded {total} pending calls in {} sessions in {:.1} s",
        sessions,
        seeding.elapsed().as_secs_f64()
    );
    Ok(Seeded {
        _dir: dir,
        _scripted: scripted,
        engine,
        names,
        items,
    })
}

/// `airlock insights` over a History of `sessions × calls` decisions (one in ten denied).
async fn insights(sessions: usize, calls: usize, runs: usize) -> anyhow::Result<ExitCode> {
    let seeded = seed_pending(sessions, calls).await?;
    let requests = seeded
        .items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            if i % 10 == 0 {
                DecisionRequest::deny(item.approval_id.clone(), Some("not that one".into()))
            } else {
                DecisionRequest::approve(item.approval_id.clone())
            }
        })
        .collect();
    let outcomes = seeded.engine.decide_many(requests, DecidedBy::Inbox)?;
    if outcomes.iter().any(|o| o.is_err()) {
        bail!("a decision was refused while seeding");
    }
    // The approved calls run and every turn ends before anything is timed.
    for name in &seeded.names {
        seeded.engine.wait_turn(name).await?;
    }
    let mut samples = Vec::with_capacity(runs);
    let mut answered = None;
    for _ in 0..runs {
        let started = Instant::now();
        let insights = seeded.engine.insights()?;
        samples.push(started.elapsed());
        answered = Some(insights);
    }
    if let Some(insights) = answered {
        let decided: u32 = insights.tools.iter().map(|t| t.approved + t.denied).sum();
        eprintln!(
            "{} tools, {decided} decisions, {} days",
            insights.tools.len(),
            insights.days.len()
        );
    }
    report("insights", samples, "ms");
    Ok(ExitCode::SUCCESS)
}

async fn approve_all(sessions: usize, calls: usize) -> anyhow::Result<ExitCode> {
    let Seeded {
        _dir,
        _scripted,
        engine,
        names,
        items,
    } = seed_pending(sessions, calls).await?;
    let total = sessions * calls;
    let reading = Instant::now();
    let inbox_len = engine.inbox()?.len();
    let inbox_read = reading.elapsed();

    // What "Approve all" sends: each item with the hash of the arguments shown.
    let requests: Vec<DecisionRequest> = items
        .iter()
        .map(|item| {
            DecisionRequest::approve(item.approval_id.clone()).shown(item.args_hash.clone())
        })
        .collect();
    let started = Instant::now();
    let outcomes = engine.decide_many(requests, DecidedBy::Inbox)?;
    let durable = started.elapsed();
    let refused = outcomes.iter().filter(|o| o.is_err()).count();
    if refused > 0 {
        bail!("{refused} of {total} decisions were refused");
    }
    let left = engine.inbox()?.len();
    let inbox_empty = started.elapsed();
    if left != 0 {
        bail!("{left} items still pending after approving all");
    }
    for name in &names {
        let outcome = engine.wait_turn(name).await?;
        if outcome.status != "completed" {
            bail!(
                "{name}: the turn ended {}: {:?}",
                outcome.status,
                outcome.error
            );
        }
    }
    let all_ran = started.elapsed();
    let written = std::fs::read_dir(engine.workspace())?.count();
    if written != total {
        bail!("{written} of {total} files were written");
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("inbox_read items={inbox_len} ms={:.1}", ms(inbox_read));
    println!(
        "approve_all items={total} durable_ms={:.1} inbox_empty_ms={:.1} all_ran_and_turns_ended_ms={:.1}",
        ms(durable),
        ms(inbox_empty),
        ms(all_ran)
    );
    Ok(ExitCode::SUCCESS)
}

fn policy(
    servers: usize,
    tools: usize,
    rules: usize,
    decisions: usize,
) -> anyhow::Result<ExitCode> {
    let mut inputs = PolicyInputs::default();
    for s in 0..servers {
        let default = if s % 2 == 0 {
            ServerDefault::Required
        } else {
            ServerDefault::NotRequired
        };
        inputs.servers.push((
            format!("server{s}"),
            ServerPolicy {
                default,
                trust_read_only_hints: s % 3 == 0,
            },
        ));
        for t in 0..tools {
            if t % 5 == 0 {
                inputs.tool_settings.push((
                    format!("server{s}"),
                    format!("tool{t}"),
                    ToolSetting::Required,
                ));
            }
        }
    }
    // Rules spread over the tools most likely to be called, several per tool, glob and regex.
    for r in 0..rules {
        let (server, tool) = (format!("server{}", r % 10), format!("tool{}", r % 7));
        let effect = [RuleEffect::Allow, RuleEffect::Ask, RuleEffect::Deny][r % 3];
        let pattern = if r % 4 == 0 {
            RulePattern::Regex(format!("^/data/{r}/.*\\.txt$"))
        } else {
            RulePattern::Glob(format!("/work/{r}/**"))
        };
        inputs.rules.push(ArgRule {
            id: format!("r{r}"),
            server,
            tool,
            pointer: "/path".into(),
            pattern,
            effect,
        });
    }
    for m in 0..100 {
        inputs.remembered.push(Remembered {
            id: format!("m{m}"),
            server: format!("server{m}"),
            tool: "tool1".into(),
            args_hash: None,
            session_id: Some("s1".into()),
            approve: true,
            expires_at: None,
            uses_left: None,
            pattern: None,
            created_at: None,
        });
    }
    // What a timed call evaluates: the rules of its own server and tool.
    let mut rules_of_tool: std::collections::HashMap<(&str, &str), usize> =
        std::collections::HashMap::new();
    for rule in &inputs.rules {
        *rules_of_tool
            .entry((rule.server.as_str(), rule.tool.as_str()))
            .or_default() += 1;
    }
    let evaluated: Vec<usize> = rules_of_tool.values().copied().collect();
    eprintln!(
        "each decision evaluates the {}–{} rules of its tool (of {rules} rules over {} tools)",
        evaluated.iter().min().unwrap_or(&0),
        evaluated.iter().max().unwrap_or(&0),
        evaluated.len()
    );
    let compiled = Instant::now();
    let config = PolicyConfig::compile(inputs)?;
    eprintln!(
        "compiled {servers} servers × {tools} tools, {rules} rules in {:?}",
        compiled.elapsed()
    );
    let session = SessionPolicy::new(None, [("server3".to_string(), "tool3".to_string())]);
    let calls: Vec<(String, String, serde_json::Value)> = (0..1000)
        .map(|i| {
            (
                format!("server{}", i % 10),
                format!("tool{}", i % 7),
                json!({"path": format!("/work/{}/../x/{i}.txt", i % 1000)}),
            )
        })
        .collect();
    let hashes: Vec<String> = calls.iter().map(|(_, _, a)| args_hash(a)).collect();
    let mut samples = Vec::with_capacity(decisions);
    let mut runs = 0usize;
    for i in 0..decisions {
        let (server, tool, args) = &calls[i % calls.len()];
        let facts = CallFacts {
            session_id: "s1",
            server,
            tool,
            args,
            args_hash: &hashes[i % calls.len()],
            read_only_hint: i % 2 == 0,
        };
        let started = Instant::now();
        let decision = decide(&config, &session, facts, None);
        samples.push(started.elapsed());
        runs += usize::from(decision.verdict == airlock_core::Verdict::Run);
    }
    eprintln!("{runs} of {decisions} decisions ran");
    report("decisions", samples, "us");
    Ok(ExitCode::SUCCESS)
}
