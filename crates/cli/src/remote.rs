//! `airlock remote`: the paired phone inbox, through the running engine's local API.

use crate::RemoteAction;
use crate::shown::text;
use airlock_api::ApiClient;
use airlock_protocol::commands as cmd;
use anyhow::bail;
use serde_json::{Value, json};
use std::process::ExitCode;

pub async fn run(client: &ApiClient, action: RemoteAction) -> anyhow::Result<ExitCode> {
    match action {
        RemoteAction::Enable { listen } => {
            client
                .call(&cmd::SetRemoteListen {
                    listen: Some(listen),
                })
                .await?;
            let answer = client.call_json(&cmd::Remote {}).await?;
            println!(
                "the phone inbox listens on https://{} — pair a device with `airlock remote pair`",
                text(&answer["listen"])
            );
        }
        RemoteAction::Disable => {
            client.call(&cmd::SetRemoteListen { listen: None }).await?;
            println!("the phone inbox is off");
        }
        RemoteAction::Pair { json } => {
            let pairing = client.call_json(&cmd::PairPhone {}).await?;
            if json {
                let shown = json!({
                    "url": pairing["url"], "code": pairing["code"],
                    "fingerprint": pairing["fingerprint"], "expires_at": pairing["expires_at"],
                });
                println!("{shown}");
            } else {
                println!("open      {}", text(&pairing["url"]));
                println!(
                    "code      {} (once, until {})",
                    text(&pairing["code"]),
                    text(&pairing["expires_at"])
                );
                println!(
                    "check     the certificate's SHA-256 fingerprint is {}",
                    text(&pairing["fingerprint"])
                );
                println!(
                    "          Android Chrome: Advanced → Proceed, then tap Not secure → Certificate details → SHA-256 fingerprint"
                );
                println!(
                    "          iOS Safari: Show Details → view the certificate → More Details → Fingerprints, SHA-256"
                );
            }
        }
        RemoteAction::Devices { json } => {
            let devices = client.call_json(&cmd::Devices {}).await?;
            if json {
                let listed: Vec<Value> = devices
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|d| json!({"id": d["id"], "name": d["name"], "last_used": d["last_used"], "revoked_at": d["revoked_at"]}))
                    .collect();
                println!("{}", Value::Array(listed));
            } else {
                for device in devices.as_array().into_iter().flatten() {
                    println!(
                        "{}\t{}\tlast used {}{}",
                        text(&device["id"]),
                        text(&device["name"]),
                        device["last_used"].as_str().unwrap_or("never"),
                        if device["revoked_at"].is_null() {
                            ""
                        } else {
                            "\trevoked"
                        }
                    );
                }
            }
        }
        RemoteAction::Revoke { id } => {
            let revoked = client.call(&cmd::RevokeDevice { id: id.clone() }).await?;
            if !revoked {
                bail!("no paired device {id} (or it was revoked already)");
            }
            println!("revoked {id}");
        }
        RemoteAction::Push {
            server,
            topic,
            token_env,
            off,
            json,
        } => {
            if off {
                client.call(&cmd::SetPush { push: None }).await?;
            } else if let (Some(server), Some(topic)) = (server, topic) {
                let token = match token_env {
                    Some(var) => match std::env::var(&var) {
                        Ok(token) => Some(token),
                        Err(_) => bail!("the environment variable {var} is not set"),
                    },
                    None => None,
                };
                let push = airlock_protocol::NtfyPush {
                    server,
                    topic,
                    token,
                };
                client.call(&cmd::SetPush { push: Some(push) }).await?;
            }
            let push = client.call_json(&cmd::Push {}).await?;
            if json {
                println!("{push}");
            } else if push.is_null() {
                println!("no push: set one with `airlock remote push --server URL --topic TOPIC`");
            } else {
                println!(
                    "pushing to {}/{}{}",
                    text(&push["server"]),
                    text(&push["topic"]),
                    if push["has_token"] == json!(true) {
                        " (with a token)"
                    } else {
                        ""
                    }
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
