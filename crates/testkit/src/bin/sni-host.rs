//! `airlock-sni-host`: a tray host (StatusNotifierWatcher) for scripts on a session bus without
//! a desktop, and a panel's reads and clicks of the first registered tray icon.
//!
//! `watch` serves the watcher until killed; `menu`, `click` and `activate` talk to the items a
//! running `watch` (or any watcher on the bus) has registered, and exit 1 with a message when
//! there is none or the entry does not exist.

use std::process::ExitCode;

const USAGE: &str = "usage: airlock-sni-host watch | menu | click LABEL | activate

  watch         own org.kde.StatusNotifierWatcher on the session bus until killed
  menu          print the first registered item's menu labels, one per line (separators: ---)
  click LABEL   click that menu entry of the first registered item
  activate      left-click the first registered item's icon";

#[cfg(not(target_os = "linux"))]
fn main() -> ExitCode {
    eprintln!("airlock-sni-host is Linux-only: the StatusNotifierItem tray is a D-Bus protocol");
    ExitCode::FAILURE
}

#[cfg(target_os = "linux")]
#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["watch"] => linux::watch().await,
        ["menu"] => linux::menu().await,
        ["click", label] => linux::click(label).await,
        ["activate"] => linux::activate().await,
        ["-h" | "--help"] => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("airlock-sni-host: {message}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use airlock_testkit::sni_host::{SniClient, SniError, SniHost, WATCHER_NAME};
    use std::io::Write;

    /// Says what to do when the watcher is missing, not only that a name is unknown.
    fn explain(error: SniError) -> String {
        match error {
            SniError::Bus(error) => match zbus::fdo::Error::from(error) {
                zbus::fdo::Error::ServiceUnknown(detail) => format!(
                    "no {WATCHER_NAME} on the session bus (run `airlock-sni-host watch` first): {detail}"
                ),
                other => format!("D-Bus: {other}"),
            },
            SniError::NoItem => "no tray icon is registered with the watcher".to_owned(),
            other => other.to_string(),
        }
    }

    pub async fn watch() -> Result<(), String> {
        let _host = SniHost::start().await.map_err(|error| error.to_string())?;
        println!("airlock-sni-host: watching as {WATCHER_NAME}");
        let _ = std::io::stdout().flush();
        tokio::signal::ctrl_c()
            .await
            .map_err(|error| error.to_string())
    }

    async fn first_item() -> Result<(SniClient, String), String> {
        let client = SniClient::connect().await.map_err(explain)?;
        let item = client.first_item().await.map_err(explain)?;
        Ok((client, item))
    }

    pub async fn menu() -> Result<(), String> {
        let (client, item) = first_item().await?;
        for entry in client
            .menu(&item)
            .await
            .map_err(|error| error.to_string())?
        {
            if entry.separator {
                println!("---");
            } else {
                println!("{}", entry.label);
            }
        }
        Ok(())
    }

    pub async fn click(label: &str) -> Result<(), String> {
        let (client, item) = first_item().await?;
        client
            .click(&item, label)
            .await
            .map_err(|error| error.to_string())
    }

    pub async fn activate() -> Result<(), String> {
        let (client, item) = first_item().await?;
        client
            .activate(&item)
            .await
            .map_err(|error| error.to_string())
    }
}
