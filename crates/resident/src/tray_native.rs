//! The tray icon on macOS and Windows: the platform's own (a menu bar item, a notification-area
//! icon) through `tray-icon`, with the same lines and clicks as Linux's StatusNotifierItem. Its
//! menu and icon belong to the main thread, which runs the platform's event loop
//! ([`run_with_tray`]); the resident's async work runs on other threads and changes the tray
//! through messages to that loop. Compiled and linted for Windows here (`scripts/windows-check.sh`);
//! never run on either platform by this project's tests.

use crate::tray_lines::{ICON, ICON_BADGED, STORAGE_FAILURE, decode_png};
pub use crate::tray_lines::{TrayAction, grants_label, pause_label, pending_label};
use std::sync::{Arc, Mutex};
use tao::event::Event;
use tao::event_loop::{ControlFlow, EventLoopBuilder, EventLoopProxy};
use tray_icon::menu::{Menu, MenuEvent, MenuId, MenuItem, PredefinedMenuItem};
use tray_icon::{Icon, MouseButton, MouseButtonState, TrayIcon, TrayIconBuilder, TrayIconEvent};

#[derive(thiserror::Error, Debug)]
pub enum TrayError {
    #[error("the platform's event loop has ended")]
    NoEventLoop,
    #[error("cannot decode the tray icon: {0}")]
    Icon(#[from] png::DecodingError),
}

/// What the main thread is asked to do.
enum Message {
    Create {
        lines: Lines,
        on_action: Arc<dyn Fn(TrayAction) + Send + Sync>,
    },
    Show(Lines),
    Exit(i32),
}

/// What the tray shows now.
#[derive(Debug, Clone, PartialEq)]
struct Lines {
    count_line: String,
    badged: bool,
    paused: bool,
    grants: usize,
}

impl Lines {
    fn texts(&self) -> Vec<String> {
        vec![
            self.count_line.clone(),
            pause_label(self.paused).to_owned(),
            grants_label(self.grants),
        ]
    }
}

/// Starts the tray from any thread, once the event loop runs on the main thread.
#[derive(Clone)]
pub struct TrayStarter {
    proxy: EventLoopProxy<Message>,
}

/// Runs `body` (the resident) on a thread of its own while the main thread runs the platform's
/// event loop for the tray; the process exits with `body`'s code when it returns.
pub fn run_with_tray(body: impl FnOnce(TrayStarter) -> i32 + Send + 'static) -> ! {
    #[cfg_attr(not(target_os = "macos"), allow(unused_mut))]
    let mut event_loop = EventLoopBuilder::<Message>::with_user_event().build();
    // A menu bar item only, no Dock icon: the window's own process has that while it is open.
    #[cfg(target_os = "macos")]
    {
        use tao::platform::macos::{ActivationPolicy, EventLoopExtMacOS};
        event_loop.set_activation_policy(ActivationPolicy::Accessory);
    }
    let proxy = event_loop.create_proxy();
    let starter = TrayStarter {
        proxy: proxy.clone(),
    };
    std::thread::spawn(move || {
        let code = body(starter);
        // Without an event loop any more there is nobody left to tell.
        let _ = proxy.send_event(Message::Exit(code));
    });
    let mut shown: Option<NativeTray> = None;
    event_loop.run(move |event, _, control_flow| {
        *control_flow = ControlFlow::Wait;
        if let Event::UserEvent(message) = event {
            match message {
                Message::Create { lines, on_action } => {
                    match NativeTray::build(&lines, on_action) {
                        Ok(tray) => shown = Some(tray),
                        Err(error) => tracing::warn!("no tray icon: {error}"),
                    }
                }
                Message::Show(lines) => {
                    if let Some(tray) = &shown {
                        tray.show(&lines);
                    }
                }
                Message::Exit(code) => {
                    shown = None;
                    *control_flow = ControlFlow::ExitWithCode(code);
                }
            }
        }
    })
}

/// The tray as the resident's async side holds it: it keeps what the tray shows and sends each
/// change to the main thread.
pub struct Tray {
    proxy: EventLoopProxy<Message>,
    lines: Mutex<Lines>,
}

impl TrayStarter {
    /// Puts the icon up; `on_action` is called (on the main thread) for menu clicks and a left
    /// click on the icon (= OpenInbox), so it must hand work off, not wait.
    pub async fn spawn(
        &self,
        paused: bool,
        on_action: impl Fn(TrayAction) + Send + Sync + 'static,
    ) -> Result<Tray, TrayError> {
        // The icons are decoded here first so that a broken one is an error the caller sees.
        decode_png(ICON)?;
        decode_png(ICON_BADGED)?;
        let lines = Lines {
            count_line: pending_label(0),
            badged: false,
            paused,
            grants: 0,
        };
        self.proxy
            .send_event(Message::Create {
                lines: lines.clone(),
                on_action: Arc::new(on_action),
            })
            .map_err(|_| TrayError::NoEventLoop)?;
        Ok(Tray {
            proxy: self.proxy.clone(),
            lines: Mutex::new(lines),
        })
    }
}

impl Tray {
    fn change(&self, change: impl FnOnce(&mut Lines)) {
        let Ok(mut lines) = self.lines.lock() else {
            return;
        };
        change(&mut lines);
        let _ = self.proxy.send_event(Message::Show(lines.clone()));
    }

    /// Shows the count in the menu, the tooltip and the icon's badge.
    pub async fn show_count(&self, pending: usize) {
        self.change(|lines| {
            lines.count_line = pending_label(pending);
            lines.badged = pending > 0;
        });
    }

    /// The disk refused to record a decision: the menu and the tooltip say so instead of a count.
    pub async fn show_storage_failure(&self) {
        self.change(|lines| lines.count_line = STORAGE_FAILURE.to_owned());
    }

    pub async fn show_paused(&self, paused: bool) {
        self.change(|lines| lines.paused = paused);
    }

    pub async fn show_grants(&self, active: usize) {
        self.change(|lines| lines.grants = active);
    }

    /// The texts of the menu's changing lines as last sent to the tray (count, pause, grants).
    pub async fn menu_texts(&self) -> Vec<String> {
        self.lines
            .lock()
            .map(|lines| lines.texts())
            .unwrap_or_default()
    }
}

impl std::fmt::Debug for Tray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tray").finish_non_exhaustive()
    }
}

/// The icon and its menu, on the main thread.
struct NativeTray {
    icon: TrayIcon,
    count: MenuItem,
    pause: MenuItem,
    grants: MenuItem,
    plain: Icon,
    badged: Icon,
}

fn icon(png_bytes: &[u8]) -> Result<Icon, Box<dyn std::error::Error>> {
    let (rgba, width, height) = decode_png(png_bytes)?;
    Ok(Icon::from_rgba(rgba, width, height)?)
}

impl NativeTray {
    fn build(
        lines: &Lines,
        on_action: Arc<dyn Fn(TrayAction) + Send + Sync>,
    ) -> Result<NativeTray, Box<dyn std::error::Error>> {
        let count = MenuItem::new(&lines.count_line, false, None);
        let open = MenuItem::new("Open inbox", true, None);
        let pause = MenuItem::new(pause_label(lines.paused), true, None);
        let grants = MenuItem::new(grants_label(lines.grants), false, None);
        let quit = MenuItem::new("Quit Airlock", true, None);
        let menu = Menu::new();
        menu.append_items(&[
            &count,
            &open,
            &PredefinedMenuItem::separator(),
            &pause,
            &grants,
            &PredefinedMenuItem::separator(),
            &quit,
        ])?;
        let actions: [(MenuId, TrayAction); 3] = [
            (open.id().clone(), TrayAction::OpenInbox),
            (pause.id().clone(), TrayAction::TogglePause),
            (quit.id().clone(), TrayAction::Quit),
        ];
        let on_menu = on_action.clone();
        MenuEvent::set_event_handler(Some(move |event: MenuEvent| {
            if let Some((_, action)) = actions.iter().find(|(id, _)| *id == event.id) {
                on_menu(*action);
            }
        }));
        // A left click opens the inbox where the menu is not shown on it (Windows).
        TrayIconEvent::set_event_handler(Some(move |event: TrayIconEvent| {
            if let TrayIconEvent::Click {
                button: MouseButton::Left,
                button_state: MouseButtonState::Up,
                ..
            } = event
            {
                on_action(TrayAction::OpenInbox);
            }
        }));
        let plain = icon(ICON)?;
        let badged = icon(ICON_BADGED)?;
        let tray = TrayIconBuilder::new()
            .with_menu(Box::new(menu))
            .with_menu_on_left_click(cfg!(target_os = "macos"))
            .with_tooltip(format!("Airlock: {}", lines.count_line))
            .with_icon(if lines.badged { &badged } else { &plain }.clone())
            .build()?;
        Ok(NativeTray {
            icon: tray,
            count,
            pause,
            grants,
            plain,
            badged,
        })
    }

    fn show(&self, lines: &Lines) {
        self.count.set_text(&lines.count_line);
        self.pause.set_text(pause_label(lines.paused));
        self.grants.set_text(grants_label(lines.grants));
        let _ = self
            .icon
            .set_tooltip(Some(format!("Airlock: {}", lines.count_line)));
        let icon = if lines.badged {
            &self.badged
        } else {
            &self.plain
        };
        let _ = self.icon.set_icon(Some(icon.clone()));
    }
}
