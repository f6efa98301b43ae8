//! The WebDriver harness of the real app, shared by the end-to-end tests and the desktop
//! benchmark: tauri-driver + WebKitWebDriver, the app's local API, and the X11 view of its window.
#![allow(dead_code)]

use airlock_client::ApiClient;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub const WAIT: Duration = Duration::from_secs(30);
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A minimal W3C WebDriver client: just what this test needs.
pub struct Driver {
    pub http: reqwest::Client,
    pub base: String,
    /// Where screenshots go, including one of the screen when a wait times out.
    pub out: PathBuf,
}

impl Driver {
    pub async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}{path}", self.base);
        let mut request = self.http.request(method, &url);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request
            .send()
            .await
            .unwrap_or_else(|e| panic!("{url}: {e}"));
        let value: Value = response.json().await.unwrap();
        value["value"].clone()
    }

    pub async fn try_find(&self, css: &str) -> Option<String> {
        let found = self
            .call(
                reqwest::Method::POST,
                "/elements",
                Some(json!({"using": "css selector", "value": css})),
            )
            .await;
        found.as_array()?.first()?[ELEMENT]
            .as_str()
            .map(str::to_string)
    }

    /// Waits for an element to appear (the UI updates from engine events).
    pub async fn find(&self, css: &str) -> String {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            if let Some(id) = self.try_find(css).await {
                return id;
            }
            if tokio::time::Instant::now() >= deadline {
                self.screenshot(&self.out, "failure").await;
                panic!("no element {css} appeared (see failure.png)");
            }
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
    }

    pub async fn click(&self, css: &str) {
        let id = self.find(css).await;
        self.call(
            reqwest::Method::POST,
            &format!("/element/{id}/click"),
            Some(json!({})),
        )
        .await;
    }

    pub async fn type_into(&self, css: &str, text: &str) {
        let id = self.find(css).await;
        self.call(
            reqwest::Method::POST,
            &format!("/element/{id}/clear"),
            Some(json!({})),
        )
        .await;
        self.call(
            reqwest::Method::POST,
            &format!("/element/{id}/value"),
            Some(json!({"text": text})),
        )
        .await;
    }

    pub async fn run(&self, script: &str) -> Value {
        self.call(
            reqwest::Method::POST,
            "/execute/sync",
            Some(json!({"script": script, "args": []})),
        )
        .await
    }

    /// Runs an asynchronous script (its last argument is the callback) and returns what it passed.
    pub async fn run_async(&self, script: &str, args: Value) -> Value {
        self.call(
            reqwest::Method::POST,
            "/execute/async",
            Some(json!({"script": script, "args": args})),
        )
        .await
    }

    /// Waits until the script returns `true`.
    pub async fn until(&self, what: &str, script: &str) {
        let deadline = tokio::time::Instant::now() + WAIT;
        while self.run(script).await != Value::Bool(true) {
            if tokio::time::Instant::now() >= deadline {
                self.screenshot(&self.out, "failure").await;
                panic!("timed out waiting for {what} (see failure.png)");
            }
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
    }

    /// Moves the session to the app's window after it was closed and created again: the old
    /// window's browsing context is gone, the new one is the only handle left. Waits until its
    /// page has loaded.
    pub async fn attach_to_new_window(&self) {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let handles = self
                .call(reqwest::Method::GET, "/window/handles", None)
                .await;
            if let Some(handle) = handles.as_array().and_then(|h| h.last()).cloned() {
                self.call(
                    reqwest::Method::POST,
                    "/window",
                    Some(json!({ "handle": handle })),
                )
                .await;
                if self.run("return document.readyState").await == json!("complete") {
                    return;
                }
            }
            if tokio::time::Instant::now() >= deadline {
                self.screenshot(&self.out, "failure").await;
                panic!("no new window to attach to (handles: {handles})");
            }
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
    }

    /// The screen as the X server shows it (imagemagick's `import`). WebDriver's own screenshot
    /// never answers when WebKit's DMABUF renderer is off, which is how the app ships.
    pub async fn screenshot(&self, out: &Path, name: &str) {
        let path = out.join(format!("{name}.png"));
        let status = Command::new("import")
            .args(["-window", "root"])
            .arg(&path)
            .status();
        assert!(
            status.is_ok_and(|s| s.success()),
            "cannot take the screenshot {}",
            path.display()
        );
    }
}

/// The real app under tauri-driver, with a WebDriver session on its window and a client of the
/// local API its resident process serves. Dropped, it stops the resident too (it outlives the
/// window by design).
pub struct App {
    pub ui: Driver,
    pub api: ApiClient,
    pub session_url: String,
    /// The resident process (engine, API, tray): `/v1/status`'s pid.
    pub resident_pid: u32,
    data_dir: PathBuf,
    /// The app's own HOME and XDG_CONFIG_HOME: what it writes there (the login entry) never
    /// reaches the real ones.
    home: tempfile::TempDir,
    _tauri_driver: Process,
}

/// A WebDriver session on a window process, and its tauri-driver.
struct Session {
    ui: Driver,
    session_url: String,
    tauri_driver: Process,
}

impl App {
    /// Launches the app as a person does (`airlock-desktop`): it starts the resident and
    /// becomes the window, driven through WebDriver.
    pub async fn launch(data_dir: &Path, out: &Path) -> App {
        let workspace = data_dir.join("workspace");
        let args = json!(["--data-dir", data_dir, "--workspace", workspace]);
        let home = tempfile::tempdir().unwrap();
        let session = start_session(args, out, home.path()).await;
        // The app serves the local API, as the CLI would find it.
        let mut api = None;
        for _ in 0..100 {
            if let Ok(client) = ApiClient::discover(data_dir) {
                api = Some(client);
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let api = api.expect("the app published its local API");
        let status: Value = api.get("/v1/status").await.unwrap();
        let resident_pid = u32::try_from(status["pid"].as_u64().unwrap()).unwrap();
        App {
            ui: session.ui,
            api,
            session_url: session.session_url,
            resident_pid,
            data_dir: data_dir.to_path_buf(),
            home,
            _tauri_driver: session.tauri_driver,
        }
    }

    /// The app's XDG_CONFIG_HOME (`HOME/.config`: the login entry's crate reads HOME).
    pub fn config_home(&self) -> PathBuf {
        self.home.path().join(".config")
    }

    /// Ends the current WebDriver session and opens a new window on the running resident
    /// (`airlock-desktop --window`) under a new one: a window opened by the tray or a
    /// notification is a process WebDriver did not start, so it cannot be driven.
    pub async fn attach_new_window(&mut self, out: &Path) {
        let _ = self.ui.http.delete(&self.session_url).send().await;
        let args = json!(["--window", "--data-dir", self.data_dir]);
        let session = start_session(args, out, self.home.path()).await;
        self.ui = session.ui;
        self.session_url = session.session_url;
        self._tauri_driver = session.tauri_driver;
    }

    /// Points the app at the project's scripted model server.
    pub async fn use_model(&self, model: &airlock_testkit::ScriptedModel, stream: bool) {
        let body = json!({"base_url": model.base_url(), "model": "scripted", "stream": stream});
        let _: Value = self.api.put("/v1/provider", &body).await.unwrap();
    }

    /// Where the window is, as the resident knows it (`GET /v1/desktop/windows`).
    pub async fn windows(&self) -> Value {
        self.api.get("/v1/desktop/windows").await.unwrap()
    }

    pub async fn end(self) {
        let _ = self.ui.http.delete(&self.session_url).send().await;
    }
}

impl Drop for App {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .arg(self.resident_pid.to_string())
            .status();
    }
}

/// A WebDriver session on the app started with `args`, HOME at `home` and XDG_CONFIG_HOME at
/// `home/.config` (tauri-driver's environment reaches the app through WebKitWebDriver).
async fn start_session(args: Value, out: &Path, home: &Path) -> Session {
    let driver_bin = std::env::var("TAURI_DRIVER").unwrap_or_else(|_| "tauri-driver".into());
    let port = free_port();
    // Two calls can return the same free port; tauri-driver then cannot listen on both.
    let native_port = std::iter::repeat_with(free_port)
        .find(|&p| p != port)
        .unwrap_or(port + 1);
    let tauri_driver = Process(
        Command::new(&driver_bin)
            .args([
                "--port",
                &port.to_string(),
                "--native-port",
                &native_port.to_string(),
            ])
            .args(["--native-driver", "/usr/bin/WebKitWebDriver"])
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .stdout(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {driver_bin}: {e}")),
    );
    // A hung WebDriver request fails the test with its URL instead of hanging it.
    let http = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let capabilities = json!({"capabilities": {"alwaysMatch": {
        "browserName": "wry",
        "tauri:options": {
            "application": env!("CARGO_BIN_EXE_airlock-desktop"),
            "args": args,
        }
    }}});
    let mut session = Value::Null;
    for _ in 0..50 {
        if let Ok(response) = http
            .post(format!("http://127.0.0.1:{port}/session"))
            .json(&capabilities)
            .send()
            .await
        {
            session = response.json().await.unwrap();
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let session_id = session["value"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("no WebDriver session: {session}"));
    let session_url = format!("http://127.0.0.1:{port}/session/{session_id}");
    let ui = Driver {
        http,
        base: session_url.clone(),
        out: out.to_path_buf(),
    };
    Session {
        ui,
        session_url,
        tauri_driver,
    }
}

pub struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A port nobody listens on right now (other test runs on this machine may use the defaults).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The X11 side of the window, as a window manager sees it (Xvfb runs none).
#[cfg(target_os = "linux")]
pub mod x11 {
    use x11rb::connection::Connection;
    use x11rb::protocol::xproto::{
        AtomEnum, ClientMessageEvent, ConnectionExt, EventMask, MapState, Window,
    };
    use x11rb::rust_connection::RustConnection;

    pub struct Display {
        conn: RustConnection,
        root: Window,
    }

    impl Display {
        pub fn open() -> Self {
            let (conn, screen) = x11rb::connect(None).expect("an X display (DISPLAY)");
            let root = conn.setup().roots[screen].root;
            Display { conn, root }
        }

        fn atom(&self, name: &str) -> u32 {
            self.conn
                .intern_atom(false, name.as_bytes())
                .unwrap()
                .reply()
                .unwrap()
                .atom
        }

        fn property(&self, window: Window, name: &str, kind: impl Into<u32>) -> Vec<u8> {
            let atom = self.atom(name);
            self.conn
                .get_property(false, window, atom, kind, 0, 1024)
                .unwrap()
                .reply()
                .map(|r| r.value)
                .unwrap_or_default()
        }

        /// The process's top-level windows with this title.
        pub fn windows(&self, pid: u32, title: &str) -> Vec<Window> {
            self.titled(title)
                .into_iter()
                .filter(|&(_, owner)| owner == pid)
                .map(|(window, _)| window)
                .collect()
        }

        /// The top-level windows with this title, with the pid of the process that owns each.
        pub fn titled(&self, title: &str) -> Vec<(Window, u32)> {
            let utf8 = self.atom("UTF8_STRING");
            let children = self
                .conn
                .query_tree(self.root)
                .unwrap()
                .reply()
                .unwrap()
                .children;
            children
                .into_iter()
                .filter(|&w| self.property(w, "_NET_WM_NAME", utf8) == title.as_bytes())
                .filter_map(|w| {
                    let pid = self.property(w, "_NET_WM_PID", AtomEnum::CARDINAL);
                    let pid = u32::from_ne_bytes(pid.get(..4)?.try_into().ok()?);
                    Some((w, pid))
                })
                .collect()
        }

        pub fn viewable(&self, window: Window) -> bool {
            self.conn
                .get_window_attributes(window)
                .unwrap()
                .reply()
                .is_ok_and(|a| a.map_state == MapState::VIEWABLE)
        }

        /// What a window manager sends when the person clicks the window's close button.
        pub fn request_close(&self, window: Window) {
            let protocols = self.atom("WM_PROTOCOLS");
            let delete = self.atom("WM_DELETE_WINDOW");
            let event = ClientMessageEvent::new(32, window, protocols, [delete, 0, 0, 0, 0]);
            self.conn
                .send_event(false, window, EventMask::NO_EVENT, event)
                .unwrap();
            self.conn.flush().unwrap();
        }
    }
}

/// The tray as a desktop panel sees it: a StatusNotifierItem on the session bus, whose menu a
/// panel reads and clicks over D-Bus (`scripts/e2e.sh` runs the watcher, `airlock-sni-host`).
#[cfg(target_os = "linux")]
pub mod tray {
    use airlock_testkit::sni_host::SniClient;

    /// The resident's tray item (its bus name carries the process's pid).
    pub async fn item(client: &SniClient, resident_pid: u32) -> String {
        client
            .wait_for_item(
                &format!("org.kde.StatusNotifierItem-{resident_pid}-"),
                super::WAIT,
            )
            .await
            .expect("the resident's tray icon: is a tray host (airlock-sni-host watch) running?")
    }

    /// The menu's lines as a panel draws them (separators left out).
    pub async fn lines(client: &SniClient, item: &str) -> Vec<String> {
        client
            .menu(item)
            .await
            .unwrap()
            .into_iter()
            .filter(|entry| !entry.separator)
            .map(|entry| entry.label)
            .collect()
    }

    /// A person's click on a line of the menu.
    pub async fn click(client: &SniClient, item: &str, label: &str) {
        client.click(item, label).await.unwrap();
    }
}

/// Whether a process is still there (not yet reaped counts as gone once it is a zombie).
#[cfg(target_os = "linux")]
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let close = stat.rfind(')')?;
            stat[close + 1..]
                .split_whitespace()
                .next()
                .map(|state| state != "Z")
        })
        .unwrap_or(false)
}

/// The WebKit web processes (`WebKitWebProcess`) among a process's descendants: one lives while
/// the app's window (its web view) exists.
#[cfg(target_os = "linux")]
pub fn web_processes(pid: u32) -> Vec<u32> {
    let mut table = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...: comm may hold spaces and parentheses.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let comm = stat[open + 1..close].to_string();
        let ppid = stat[close + 1..]
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse::<u32>().ok())
            .unwrap_or(0);
        table.push((child, ppid, comm));
    }
    let mut tree = vec![pid];
    let mut found = Vec::new();
    while let Some(parent) = tree.pop() {
        for (child, ppid, comm) in &table {
            if *ppid == parent {
                tree.push(*child);
                // The kernel keeps 15 characters of the name.
                if comm.starts_with("WebKitWebProces") {
                    found.push(*child);
                }
            }
        }
    }
    found
}

/// Polls until `check` holds (the window changes state asynchronously).
pub async fn until_true(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !check() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
