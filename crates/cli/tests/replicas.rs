//! Several `airlock serve --database-url` replicas on one PostgreSQL database (a throwaway
//! cluster: testkit). A replica killed with SIGKILL while agents' hooks wait through it: the
//! hooks come back through another replica (as through a load balancer), their request keys find
//! the same items, the surviving replica takes over the dead one's lease and keeps the items its
//! hooks now wait on, and each item is decided once. A replica stopped with SIGSTOP while its
//! call runs, past its lease: the other takes its turn over and finishes it; the stopped one,
//! continued, neither runs the call again nor overwrites what the other recorded.
//! People with their own tokens deciding the
//! same agents' items at once through four replicas, over HTTP: each item decided once, by one
//! person; a quorum of two counts two distinct people; a viewer cannot decide, an agent's token
//! cannot read the inbox.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![cfg(unix)]

mod common;

use airlock_api::{ApiClient, ClientError};
use airlock_protocol::commands as cmd;
use airlock_protocol::{DecisionOutcome, DecisionRequest, ErrorCode};
use airlock_testkit::{Reply, ScriptedCall, ScriptedModel};
use common::{Engine, eventually, ok, token_of, use_model};
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const HOOK: &str = env!("CARGO_BIN_EXE_airlock-hook");

/// `airlock serve` on `data_dir`, one replica on the database at `url`.
fn replica(data_dir: &Path, url: &str) -> Engine {
    Engine::start_with_env(data_dir, &[("AIRLOCK_DATABASE_URL", url)])
}

/// Where the hooks' data directory sends them: the replica of `data_dir` (the hooks' folder is
/// a link to it, replaced at once, as a load balancer moves to a live replica).
fn route_hooks(hooks: &Path, data_dir: &Path) {
    let staged = hooks.with_extension("new");
    let _ = std::fs::remove_file(&staged);
    std::os::unix::fs::symlink(data_dir, &staged).unwrap();
    std::fs::rename(&staged, hooks).unwrap();
}

/// Claude Code's hook for one Bash call, waiting up to two minutes.
fn start_hook(hooks: &Path, command: &str, id: &str) -> Child {
    let mut child = Command::new(HOOK)
        .arg("--data-dir")
        .arg(hooks)
        .args(["claude-code", "--timeout", "120"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let event = json!({
        "session_id": "s1", "cwd": "/work", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": id,
    });
    child
        .stdin
        .take()
        .unwrap()
        .write_all(event.to_string().as_bytes())
        .unwrap();
    child
}

/// The hook's PreToolUse answer once it exits.
fn answer(mut hook: Child) -> Value {
    let started = Instant::now();
    while hook.try_wait().unwrap().is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(150),
            "the hook did not answer"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut out = String::new();
    hook.stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let answer: Value = serde_json::from_str(out.trim()).unwrap();
    answer["hookSpecificOutput"].clone()
}

fn pending(data_dir: &Path) -> Vec<String> {
    let items: Vec<Value> = serde_json::from_str(&ok(data_dir, &["inbox", "--json"])).unwrap();
    let mut ids: Vec<String> = items
        .iter()
        .map(|item| item["approval_id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

fn audit(data_dir: &Path) -> Vec<Value> {
    ok(data_dir, &["audit", "--json", "--limit", "100000"])
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn hooks_waiting_through_a_killed_replica_come_back_through_another_and_are_decided_once() {
    let url = airlock_testkit::postgres::cluster().database();
    let (a_dir, b_dir, links) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let hooks = links.path().join("hooks");
    let a = replica(a_dir.path(), &url);
    let _b = replica(b_dir.path(), &url);
    route_hooks(&hooks, a_dir.path());
    let mut waiting: Vec<Child> = (0..3)
        .map(|n| start_hook(&hooks, &format!("touch K{n}"), &format!("toolu_{n}")))
        .collect();
    // B reads them from the shared database.
    let items = eventually("the three calls in B's inbox", || {
        if let Some(done) = waiting
            .iter_mut()
            .position(|hook| hook.try_wait().unwrap().is_some())
        {
            let answer = answer(waiting.remove(done));
            panic!("a hook answered before any decision: {answer}");
        }
        let ids = pending(b_dir.path());
        (ids.len() == 3).then_some(ids)
    });

    a.kill9();
    route_hooks(&hooks, b_dir.path());
    // A's lease runs out; B takes over what A held and keeps the items whose hooks now wait
    // through it.
    let taken = eventually("B took over A's agents' items", || {
        audit(b_dir.path())
            .into_iter()
            .find(|row| row["action"] == "taken_over" && row["detail"]["work"] == "agent_item")
    });
    let mut kept: Vec<String> = taken["detail"]["kept"]
        .as_array()
        .unwrap()
        .iter()
        .map(|id| id.as_str().unwrap().to_string())
        .collect();
    kept.sort();
    assert_eq!(kept, items, "{taken}");
    assert_eq!(
        pending(b_dir.path()),
        items,
        "the same items, none withdrawn"
    );

    for id in &items {
        ok(b_dir.path(), &["approve", id]);
    }
    for hook in waiting {
        let answer = answer(hook);
        assert_eq!(answer["permissionDecision"], "allow", "{answer}");
    }
    let rows = audit(b_dir.path());
    for id in &items {
        let decisions: Vec<&Value> = rows
            .iter()
            .filter(|row| row["approval_id"] == id.as_str())
            .filter(|row| {
                ["approved", "denied", "withdrawn"].contains(&row["action"].as_str().unwrap())
            })
            .collect();
        assert_eq!(decisions.len(), 1, "{id}: {decisions:?}");
        assert_eq!(decisions[0]["action"], "approved");
    }
}

/// Sends `signal` (`STOP`, `CONT`) to the process `pid`.
fn signal(pid: u32, signal: &str) {
    let sent = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(sent.success(), "kill -{signal} {pid}");
}

/// The session's only tool call as `airlock transcript --json` shows it.
fn only_call(data_dir: &Path, session: &str) -> Value {
    let messages: Value = serde_json::from_str(&ok(
        data_dir,
        &["transcript", "--session", session, "--json"],
    ))
    .unwrap();
    let calls: Vec<Value> = messages
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|message| message["calls"].as_array().cloned().unwrap_or_default())
        .collect();
    assert_eq!(calls.len(), 1, "{messages}");
    calls[0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_stopped_past_its_lease_neither_reruns_nor_overwrites_the_turn_taken_over() {
    let url = airlock_testkit::postgres::cluster().database();
    let (a_dir, b_dir, gate) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let (runs, go) = (gate.path().join("runs"), gate.path().join("go"));
    // The call runs until the test lets it end: A is stopped in the middle of it.
    let command = format!(
        "echo ran >> '{}'; while [ ! -e '{}' ]; do sleep 0.02; done",
        runs.display(),
        go.display()
    );
    let model = ScriptedModel::start(vec![
        Reply::ToolCalls(vec![ScriptedCall::new(
            "c1",
            "builtin__run_command",
            json!({ "command": command }),
        )]),
        Reply::Text("done".into()),
    ])
    .await
    .unwrap();
    let a = replica(a_dir.path(), &url);
    let _b = replica(b_dir.path(), &url);
    use_model(a_dir.path(), &model);

    ok(
        a_dir.path(),
        &["chat", "--session", "s", "--no-wait", "run it"],
    );
    let item = eventually("the call in B's inbox", || {
        pending(b_dir.path()).into_iter().next()
    });
    ok(b_dir.path(), &["approve", &item]);
    eventually("the call running on A", || runs.exists().then_some(()));

    signal(a.pid(), "STOP");
    // A's lease runs out; B takes the turn over: the call A invoked is reported interrupted
    // (not run again) and the turn goes on to its answer.
    eventually("B took over A's turn", || {
        audit(b_dir.path())
            .into_iter()
            .find(|row| row["action"] == "taken_over" && row["detail"]["work"] == "turn")
    });
    let finished_by_b = eventually("B finished the turn", || {
        let sessions: Vec<Value> =
            serde_json::from_str(&ok(b_dir.path(), &["sessions", "--json"])).unwrap();
        let idle = sessions
            .iter()
            .any(|session| session["name"] == "s" && session["status"] == "idle");
        let call = only_call(b_dir.path(), "s");
        (idle && call["state"] == "failed").then_some(call)
    });

    // The command ends while A is stopped; A continues and finds the call's result.
    std::fs::write(&go, "").unwrap();
    signal(a.pid(), "CONT");
    // A's turn ends there (dropped, or on today's code, driven on from what it held).
    ok(a_dir.path(), &["wait", "--session", "s"]);
    assert_eq!(
        only_call(b_dir.path(), "s"),
        finished_by_b,
        "A overwrote what B recorded of the call"
    );
    assert_eq!(
        std::fs::read_to_string(&runs).unwrap().lines().count(),
        1,
        "the call ran again"
    );
    assert_eq!(
        model.requests().len(),
        2,
        "the model was asked from stale state"
    );
    // A found its lease gone and said so.
    eventually("A noticed its lease ran out", || {
        audit(b_dir.path())
            .into_iter()
            .find(|row| row["action"] == "lease_lost")
    });
}

/// How many agents' items the people race on, and how many need two people.
const RACED: usize = 50;
const QUORUM: usize = 10;

/// The people of the race, each deciding through their own replica.
const PEOPLE: [&str; 4] = ["ana", "bo", "cy", "dee"];

/// A member's (or an agent's) client of one replica, over HTTP with their own token.
fn client(url: &str, token: &str) -> ApiClient {
    ApiClient::remote(url, token, None).unwrap()
}

/// `cmd::Decide` of one decision; the outcome for its item.
async fn decide_one(client: &ApiClient, decision: DecisionRequest) -> DecisionOutcome {
    let mut outcomes = client
        .call(&cmd::Decide {
            decisions: vec![decision],
            channel: None,
        })
        .await
        .unwrap();
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    outcomes.remove(0)
}

/// What `person` decides on the race's item `n`: half of them approve it, half deny it with a
/// reason that names them (so the hook's answer tells whose decision it carries).
fn verdict(person: usize, n: usize, id: &str) -> DecisionRequest {
    if (person + n).is_multiple_of(2) {
        DecisionRequest::approve(id)
    } else {
        DecisionRequest::deny(id, Some(format!("{} says no to race {n}", PEOPLE[person])))
    }
}

/// `tasks` released at once by a barrier: everything they send is in flight together.
async fn all_at_once<F>(tasks: Vec<F>) -> Vec<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let barrier = Arc::new(tokio::sync::Barrier::new(tasks.len()));
    let handles: Vec<_> = tasks
        .into_iter()
        .map(|task| {
            let barrier = barrier.clone();
            tokio::spawn(async move {
                barrier.wait().await;
                task.await
            })
        })
        .collect();
    let mut done = Vec::new();
    for handle in handles {
        done.push(handle.await.unwrap());
    }
    done
}

/// Of the outcomes for one item, the one that decided it: exactly one, the others refused as
/// already decided.
fn the_one_that_decided(item: &str, outcomes: &[(usize, DecisionOutcome)]) -> usize {
    let decided: Vec<usize> = outcomes
        .iter()
        .filter(|(_, outcome)| outcome.error.is_none())
        .map(|(person, _)| *person)
        .collect();
    assert_eq!(
        decided.len(),
        1,
        "{item}: decided by {decided:?}: {outcomes:?}"
    );
    for (_, outcome) in outcomes.iter().filter(|(_, o)| o.error.is_some()) {
        let error = outcome.error.as_ref().unwrap();
        assert_eq!(error.code, ErrorCode::AlreadyDecided, "{item}: {error:?}");
    }
    decided[0]
}

/// The rows of `rows` that decided `id` (an approval, a denial, a withdrawal).
fn decisions_of<'a>(rows: &'a [Value], id: &str) -> Vec<&'a Value> {
    rows.iter()
        .filter(|row| row["approval_id"] == id)
        .filter(|row| {
            ["approved", "denied", "withdrawn", "expired"]
                .contains(&row["action"].as_str().unwrap_or_default())
        })
        .collect()
}

/// The issue's race over HTTP: four `airlock serve --database-url` replicas on one database, an
/// agent's 60 calls posted by its HTTP hook with its own token through all four (as a load
/// balancer spreads them), and four approvers (`team add`, each with their own token), each
/// deciding through a different replica. The 50 unrouted items are approved and denied by all
/// four at the same moment (a barrier releases 200 requests): each is decided once, by one
/// person, whose decision the hook answers. The 10 routed to a quorum of two: one person's
/// approval, even twice through two replicas, does not run them; three people racing for the
/// second approval decide each once, counted with exactly two people. A viewer's token cannot
/// decide and the agent's token cannot read the inbox, through any replica (403).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn people_deciding_the_same_items_through_four_replicas_decide_each_once() {
    let url = airlock_testkit::postgres::cluster().database();
    let dirs: Vec<tempfile::TempDir> = (0..4).map(|_| tempfile::tempdir().unwrap()).collect();
    let replicas: Vec<Engine> = dirs.iter().map(|dir| replica(dir.path(), &url)).collect();
    let urls: Vec<String> = replicas
        .iter()
        .map(|replica| format!("http://{}", replica.addr()))
        .collect();
    // The people's own machine: no engine, every command goes to --engine.
    let machine = tempfile::tempdir().unwrap();
    let m = machine.path();

    let root = token_of(&ok(m, &["--engine", &urls[0], "team", "init", "root"]));
    let as_root = |replica: usize, args: &[&str]| {
        let mut all = vec!["--engine", urls[replica].as_str(), "--token", root.as_str()];
        all.extend(args);
        ok(m, &all)
    };
    // Each added through another replica: the members are the database's.
    let tokens: Vec<String> = PEOPLE
        .iter()
        .enumerate()
        .map(|(n, name)| {
            let added = as_root(
                n,
                &[
                    "team", "add", name, "--role", "approver", "--group", "release",
                ],
            );
            token_of(&added)
        })
        .collect();
    let viewer = token_of(&as_root(1, &["team", "add", "vi", "--role", "viewer"]));
    as_root(
        2,
        &[
            "team",
            "route",
            "claude-code/Bash",
            "/command",
            "quorum *",
            "--to",
            "release",
            "--quorum",
            "2",
        ],
    );
    let admin = client(&urls[3], &root);
    let agent_token = admin
        .call(&cmd::IssueAgentToken {
            agent: "claude-code".into(),
        })
        .await
        .unwrap()
        .token;

    // The agent's calls, as Claude Code's HTTP hook posts them, spread over the replicas.
    let http = reqwest::Client::new();
    let commands: Vec<String> = (0..RACED)
        .map(|n| format!("touch race-{n}"))
        .chain((0..QUORUM).map(|n| format!("quorum deploy-{n}")))
        .collect();
    let mut hooks: Vec<tokio::task::JoinHandle<Value>> = commands
        .iter()
        .enumerate()
        .map(|(n, command)| {
            let event = json!({
                "session_id": "team-race", "cwd": "/srv", "hook_event_name": "PreToolUse",
                "tool_name": "Bash", "tool_input": {"command": command},
                "tool_use_id": format!("toolu_{n}"),
            });
            let request = http
                .post(format!(
                    "{}/v1/agent-calls/hook/claude-code?timeout=120",
                    urls[n % 4]
                ))
                .bearer_auth(&agent_token)
                .json(&event)
                .send();
            tokio::spawn(async move {
                let response = request.await.unwrap();
                assert_eq!(response.status(), reqwest::StatusCode::OK);
                let answer: Value = response.json().await.unwrap();
                answer["hookSpecificOutput"].clone()
            })
        })
        .collect();
    let mut ids: HashMap<String, String> = HashMap::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while ids.len() < commands.len() {
        assert!(
            Instant::now() < deadline,
            "only {} of the agent's calls reached the inbox",
            ids.len()
        );
        if let Some(answered) = hooks.iter().position(|hook| hook.is_finished()) {
            let answer = hooks.swap_remove(answered).await;
            panic!("hook {answered} was answered before anyone decided: {answer:?}");
        }
        ids = admin
            .call(&cmd::Inbox {})
            .await
            .unwrap()
            .into_iter()
            .map(|item| {
                (
                    item.args["command"].as_str().unwrap().to_string(),
                    item.approval_id,
                )
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let id_of = |command: &str| ids[command].clone();
    let raced: Vec<String> = commands[..RACED].iter().map(|c| id_of(c)).collect();
    let quorum: Vec<String> = commands[RACED..].iter().map(|c| id_of(c)).collect();

    // A viewer cannot decide and the agent's token cannot read the inbox, through any replica.
    for (replica, url) in urls.iter().enumerate() {
        let refused = client(url, &viewer)
            .call(&cmd::Decide {
                decisions: vec![DecisionRequest::approve(raced[replica].clone())],
                channel: None,
            })
            .await
            .unwrap_err();
        assert!(
            matches!(&refused, ClientError::Refused { status: 403, code, .. } if code == "not_allowed"),
            "a viewer's decision through replica {replica}: {refused}"
        );
        let refused = client(url, &agent_token)
            .call(&cmd::Inbox {})
            .await
            .unwrap_err();
        assert!(
            matches!(&refused, ClientError::Refused { status: 403, .. }),
            "the agent's inbox through replica {replica}: {refused}"
        );
    }

    // The race: every person decides every item through their own replica, all at once.
    let people: Vec<ApiClient> = (0..4).map(|p| client(&urls[p], &tokens[p])).collect();
    let mut race = Vec::new();
    for (n, id) in raced.iter().enumerate() {
        for (person, their) in people.iter().enumerate() {
            let (their, decision) = (their.clone(), verdict(person, n, id));
            race.push(async move { (n, person, decide_one(&their, decision).await) });
        }
    }
    let mut by_item: Vec<Vec<(usize, DecisionOutcome)>> = vec![Vec::new(); RACED];
    for (n, person, outcome) in all_at_once(race).await {
        by_item[n].push((person, outcome));
    }
    let winners: Vec<usize> = by_item
        .iter()
        .zip(&raced)
        .map(|(outcomes, id)| the_one_that_decided(id, outcomes))
        .collect();

    // Quorum of two: one person's approval, twice through two replicas, runs nothing.
    for replica in [0, 1] {
        let ana = client(&urls[replica], &tokens[0]);
        for id in &quorum {
            let outcome = decide_one(&ana, DecisionRequest::approve(id.clone())).await;
            assert_eq!(outcome.error, None, "ana's approval of {id}");
        }
        let pending: HashSet<String> = client(&urls[3 - replica], &root)
            .call(&cmd::Inbox {})
            .await
            .unwrap()
            .into_iter()
            .map(|item| item.approval_id)
            .collect();
        for id in &quorum {
            assert!(pending.contains(id), "ana's approval alone decided {id}");
        }
    }
    assert!(
        hooks[RACED..].iter().all(|hook| !hook.is_finished()),
        "a call that needs two people was answered after one"
    );
    // The second approval: the other three race for it, through three replicas.
    let mut second = Vec::new();
    for (n, id) in quorum.iter().enumerate() {
        for (person, their) in people.iter().enumerate().skip(1) {
            let (their, id) = (their.clone(), id.clone());
            second.push(async move {
                let outcome = decide_one(&their, DecisionRequest::approve(id)).await;
                (n, person, outcome)
            });
        }
    }
    let mut by_quorum_item: Vec<Vec<(usize, DecisionOutcome)>> = vec![Vec::new(); QUORUM];
    for (n, person, outcome) in all_at_once(second).await {
        by_quorum_item[n].push((person, outcome));
    }
    let seconds: Vec<usize> = by_quorum_item
        .iter()
        .zip(&quorum)
        .map(|(outcomes, id)| the_one_that_decided(id, outcomes))
        .collect();

    // Each hook has its one answer: the decision of the one person who decided its item.
    let mut answers = Vec::new();
    for hook in hooks {
        answers.push(
            tokio::time::timeout(Duration::from_secs(60), hook)
                .await
                .expect("a hook was not answered within 60 s after its item was decided")
                .unwrap(),
        );
    }
    for (n, winner) in winners.iter().enumerate() {
        let answer = &answers[n];
        if (winner + n).is_multiple_of(2) {
            assert_eq!(answer["permissionDecision"], "allow", "race {n}: {answer}");
        } else {
            assert_eq!(answer["permissionDecision"], "deny", "race {n}: {answer}");
            let reason = answer["permissionDecisionReason"].as_str().unwrap();
            let said = format!("{} says no to race {n}", PEOPLE[*winner]);
            assert!(reason.contains(&said), "race {n}: {reason}");
        }
    }
    for (n, answer) in answers[RACED..].iter().enumerate() {
        assert_eq!(
            answer["permissionDecision"], "allow",
            "quorum {n}: {answer}"
        );
    }

    // The audit trail, read through another replica: one decision per item, by that person.
    let rows = tokio::task::spawn_blocking({
        let dir = dirs[2].path().to_path_buf();
        move || audit(&dir)
    })
    .await
    .unwrap();
    for (id, winner) in raced.iter().zip(&winners) {
        let decided = decisions_of(&rows, id);
        assert_eq!(decided.len(), 1, "{id}: {decided:?}");
        assert_eq!(
            decided[0]["detail"]["person"], PEOPLE[*winner],
            "{id}: {decided:?}"
        );
    }
    for (id, second) in quorum.iter().zip(&seconds) {
        let decided = decisions_of(&rows, id);
        assert_eq!(decided.len(), 1, "{id}: {decided:?}");
        assert_eq!(decided[0]["action"], "approved", "{id}: {decided:?}");
        assert_eq!(
            decided[0]["detail"]["person"], PEOPLE[*second],
            "{id}: {decided:?}"
        );
        // Two people's approvals were counted before it ran: ana's and the decider's, each
        // once. (A third person's may be counted while the second's decision commits; theirs
        // then finds the item decided.)
        let approved_at = decided[0]["id"].as_i64().unwrap();
        let counted: Vec<&str> = rows
            .iter()
            .filter(|row| row["action"] == "approval_counted")
            .filter(|row| row["approval_id"] == id.as_str())
            .filter(|row| row["id"].as_i64().unwrap() < approved_at)
            .map(|row| row["actor"].as_str().unwrap())
            .collect();
        let people: HashSet<&str> = counted.iter().copied().collect();
        assert_eq!(
            people.len(),
            counted.len(),
            "{id}: counted twice: {counted:?}"
        );
        assert!(
            people.contains("ana") && people.contains(PEOPLE[*second]),
            "{id}: decided by {} with {counted:?} counted",
            PEOPLE[*second]
        );
    }
    drop(replicas);
}
