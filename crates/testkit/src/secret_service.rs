//! A real OS keyring for the keyring tests: gnome-keyring's Secret Service on a private D-Bus
//! session, its login keyring made and unlocked with a known password; both end with the value.
//! A test runs the program under test with [`SecretService::address`] as its
//! `DBUS_SESSION_BUS_ADDRESS` and `home` as its `HOME`. Linux only: macOS and Windows use the
//! platform's own keyring. Fails (panics) with the install command when a part is missing: a
//! keyring test never passes without a keyring.
#![allow(clippy::expect_used, clippy::panic)]

use std::io::{BufRead, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The command that installs what is missing, named by every failure.
pub const INSTALL: &str =
    "sudo apt-get install -y dbus gnome-keyring (bash scripts/setup.sh --deps-only installs it)";

/// The Secret Service's well-known name and object.
const SECRETS: &str = "org.freedesktop.secrets";
const SERVICE_PATH: &str = "/org/freedesktop/secrets";
/// The login keyring `--unlock` makes: where the keyring crate's items go.
const LOGIN: &str = "/org/freedesktop/secrets/collection/login";

/// A private D-Bus session with gnome-keyring's Secret Service on it.
#[derive(Debug)]
pub struct SecretService {
    bus: Child,
    keyring: Child,
    address: String,
}

impl Drop for SecretService {
    fn drop(&mut self) {
        for child in [&mut self.keyring, &mut self.bus] {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn on_path(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

impl SecretService {
    /// Starts the bus and the keyring for a person whose home is `home` (the keyring's files
    /// go under it), and waits until the Secret Service answers.
    pub fn start(home: &Path) -> Self {
        for program in ["dbus-daemon", "dbus-send", "gnome-keyring-daemon"] {
            assert!(
                on_path(program),
                "{program} is missing: the keyring test needs a real Secret Service; install it: {INSTALL}"
            );
        }
        let mut bus = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("dbus-daemon starts");
        let mut address = String::new();
        std::io::BufReader::new(bus.stdout.take().expect("dbus-daemon's output"))
            .read_line(&mut address)
            .expect("dbus-daemon prints its address");
        let address = address.trim().to_string();
        assert!(!address.is_empty(), "dbus-daemon printed no address");
        let runtime = home.join(".runtime");
        std::fs::create_dir_all(&runtime).expect("the keyring's runtime folder");
        let mut keyring = Command::new("gnome-keyring-daemon")
            .args(["--unlock", "--foreground", "--components=secrets"])
            .env("DBUS_SESSION_BUS_ADDRESS", &address)
            .env("HOME", home)
            .env("XDG_RUNTIME_DIR", &runtime)
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("gnome-keyring-daemon starts");
        // The login keyring's password, on stdin (--unlock): it is made and unlocked with it.
        let mut stdin = keyring.stdin.take().expect("gnome-keyring-daemon's input");
        stdin
            .write_all(b"airlock-test")
            .expect("the keyring's password");
        drop(stdin);
        let service = Self {
            bus,
            keyring,
            address,
        };
        service.wait_for_name(SECRETS);
        service
    }

    /// The bus's address: the `DBUS_SESSION_BUS_ADDRESS` of the program under test.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Waits until `name` is on the bus (a deadline, not a sleep).
    pub fn wait_for_name(&self, name: &str) {
        let started = Instant::now();
        loop {
            let reply = self.send(
                "org.freedesktop.DBus",
                "/org/freedesktop/DBus",
                "org.freedesktop.DBus.NameHasOwner",
                &[&format!("string:{name}")],
            );
            if reply.contains("boolean true") {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "{name} never appeared on the test's D-Bus session"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// How many items of the keyring (locked or not) carry every one of `attributes`: what a
    /// program put there, seen from outside it.
    pub fn items(&self, attributes: &[(&str, &str)]) -> usize {
        let pairs: Vec<String> = attributes
            .iter()
            .flat_map(|(name, value)| {
                assert!(
                    !name.contains(',') && !value.contains(','),
                    "dbus-send cannot pass a comma in {name}={value}"
                );
                [name.to_string(), value.to_string()]
            })
            .collect();
        let reply = self.send(
            SECRETS,
            SERVICE_PATH,
            "org.freedesktop.Secret.Service.SearchItems",
            &[&format!("dict:string:string:{}", pairs.join(","))],
        );
        reply
            .matches("object path \"/org/freedesktop/secrets/collection/")
            .count()
    }

    /// Locks the login keyring, as a screen lock does: reading or writing a secret then needs
    /// the person to unlock it, and nobody is there to.
    pub fn lock(&self) {
        self.send(
            SECRETS,
            SERVICE_PATH,
            "org.freedesktop.Secret.Service.Lock",
            &[&format!("array:objpath:{LOGIN}")],
        );
    }

    /// One method call on the bus; its printed reply.
    fn send(&self, destination: &str, path: &str, method: &str, args: &[&str]) -> String {
        let out = Command::new("dbus-send")
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .args([
                "--session",
                "--print-reply",
                &format!("--dest={destination}"),
                path,
                method,
            ])
            .args(args)
            .output()
            .expect("dbus-send runs");
        assert!(
            out.status.success(),
            "dbus-send {method}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}
