//! `airlock team …` and `airlock delegate`: people on a team server (members with their own
//! tokens and roles), the routes that send a tool's calls to a person or a group, and handing
//! an item to someone else. Everything goes through the command table like any other command.

use crate::shown::text;
use airlock_api::ApiClient;
use airlock_protocol::commands as cmd;
use airlock_protocol::{NewMember, TeamRole};
use anyhow::{Context, bail};
use clap::Subcommand;
use std::process::ExitCode;

#[derive(Subcommand, Debug)]
pub enum TeamAction {
    /// Make yourself the first admin of a team server that has no member yet (no token
    /// needed); prints your token, alone on the last line.
    Init { name: String },
    /// Add a member; prints their token (give it to them), alone on the last line.
    Add {
        name: String,
        /// viewer: reads only; approver: also decides what is routed to them; admin: also
        /// changes settings, routes and members.
        #[arg(long, default_value = "approver", value_parser = ["admin", "approver", "viewer"])]
        role: String,
        /// A group the member is in (repeat for more); routes can send calls to a group.
        #[arg(long = "group", value_name = "GROUP")]
        groups: Vec<String>,
    },
    /// The members, their roles and groups.
    Members {
        #[arg(long)]
        json: bool,
    },
    /// Remove a member: their token is refused from now on.
    Remove { name: String },
    /// Send the calls of SERVER/TOOL (TOOL `*`: every tool of the server), or only those whose
    /// argument at POINTER matches the glob PATTERN, to a person or a group:
    /// `--to PERSON|GROUP [--quorum N] [--escalate-after DURATION [--to PERSON|GROUP]]`.
    /// Unanswered after DURATION, the call goes to the second `--to`; after the last step it
    /// expires as denied.
    Route {
        #[arg(value_name = "SERVER/TOOL")]
        target: String,
        /// A JSON pointer into the call's arguments (e.g. /command).
        #[arg(requires = "pattern")]
        pointer: Option<String>,
        /// A glob the value at POINTER must match (e.g. "*prod*").
        pattern: Option<String>,
        /// Who decides: a member's name or a group (the second one: after --escalate-after).
        #[arg(long = "to", value_name = "PERSON|GROUP", required = true)]
        to: Vec<String>,
        /// How many different people must approve the same arguments before it runs.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        quorum: Option<u32>,
        /// How long a step waits for an answer (15m, 1h; at most 7 days).
        #[arg(long, value_name = "DURATION")]
        escalate_after: Option<String>,
    },
    /// The routes, in the order they apply (the first that matches a call).
    Routes {
        #[arg(long)]
        json: bool,
    },
    /// Remove a route (items it routed keep their routing).
    Unroute { id: String },
}

pub async fn run(client: &ApiClient, action: TeamAction) -> anyhow::Result<ExitCode> {
    match action {
        TeamAction::Init { name } => {
            let made = client.call(&cmd::TeamInit { name }).await?;
            print_new_member(&made, "You are the team's first admin", "Your token");
        }
        TeamAction::Add { name, role, groups } => {
            let role: TeamRole = role.parse().map_err(anyhow::Error::msg)?;
            let made = client.call(&cmd::TeamAdd { name, role, groups }).await?;
            print_new_member(&made, "Added", "Their token (give it to them)");
        }
        TeamAction::Members { json } => {
            let members = client.call_json(&cmd::TeamMembers {}).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&members)?);
            } else {
                for member in members.as_array().into_iter().flatten() {
                    let groups: Vec<String> = member["groups"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(text)
                        .collect();
                    println!(
                        "{}\t{}\t{}",
                        text(&member["name"]),
                        text(&member["role"]),
                        groups.join(",")
                    );
                }
            }
        }
        TeamAction::Remove { name } => {
            if client.call(&cmd::TeamRemove { name: name.clone() }).await? {
                println!("removed {name}; their token is refused from now on");
            } else {
                bail!("no member named '{name}'");
            }
        }
        TeamAction::Route {
            target,
            pointer,
            pattern,
            to,
            quorum,
            escalate_after,
        } => {
            let Some((server, tool)) = target.split_once('/') else {
                bail!("'{target}' is not SERVER/TOOL");
            };
            let escalate_after_secs = escalate_after
                .map(|text| airlock_core::duration::parse_grant_duration(&text))
                .transpose()
                .context("--escalate-after")?;
            let (first, escalate_to) = match to.as_slice() {
                [first] => (first.clone(), None),
                [first, next] if escalate_after_secs.is_some() => {
                    (first.clone(), Some(next.clone()))
                }
                [_, _] => bail!("a second --to is where it goes after --escalate-after"),
                _ => bail!(
                    "--to names who decides, and a second one who decides after --escalate-after; no more"
                ),
            };
            let route = client
                .call(&cmd::TeamRoute {
                    server: server.to_string(),
                    tool: tool.to_string(),
                    pointer,
                    pattern,
                    to: first,
                    quorum,
                    escalate_after_secs,
                    escalate_to,
                })
                .await?;
            println!(
                "route {}: {}/{} to {}{}",
                route.id,
                route.server,
                route.tool,
                route.steps.join(", then "),
                if route.quorum > 1 {
                    format!(" ({} approvals)", route.quorum)
                } else {
                    String::new()
                }
            );
        }
        TeamAction::Routes { json } => {
            let routes = client.call(&cmd::TeamRoutes {}).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&routes)?);
            } else {
                for route in routes {
                    let only = match (&route.pointer, &route.pattern) {
                        (Some(pointer), Some(pattern)) => format!(" where {pointer} ~ {pattern}"),
                        _ => String::new(),
                    };
                    println!(
                        "{}\t{}/{}{only}\t{}\tquorum {}\t{}",
                        route.id,
                        route.server,
                        route.tool,
                        route.steps.join(" → "),
                        route.quorum,
                        route
                            .escalate_after_secs
                            .map_or("no escalation".to_string(), |secs| format!(
                                "escalates after {secs} s"
                            )),
                    );
                }
            }
        }
        TeamAction::Unroute { id } => {
            if !client.call(&cmd::TeamUnroute { id: id.clone() }).await? {
                bail!("no route '{id}'");
            }
            println!("removed route {id}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `airlock delegate ID --to PERSON [--note TEXT]`.
pub async fn delegate(
    client: &ApiClient,
    approval_id: String,
    to: String,
    note: Option<String>,
) -> anyhow::Result<ExitCode> {
    client
        .call(&cmd::Delegate {
            approval_id: approval_id.clone(),
            to: to.clone(),
            note,
        })
        .await?;
    println!("{approval_id} is now {to}'s to decide");
    Ok(ExitCode::SUCCESS)
}

/// The new member, then their token alone on the last line (shown once, never again).
fn print_new_member(made: &NewMember, what: &str, whose: &str) {
    let member = &made.member;
    let groups = if member.groups.is_empty() {
        String::new()
    } else {
        format!(" in {}", member.groups.join(", "))
    };
    println!(
        "{what}: {} ({}){groups}. {whose}, shown once (AIRLOCK_TOKEN):",
        member.name,
        member.role.as_str()
    );
    println!("{}", made.token);
}
