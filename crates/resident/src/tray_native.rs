//! The tray icon on macOS and Windows: the platform's own (a menu bar item, a notification-area
//! icon) through `tray-icon`, with the same lines and clicks as Linux's StatusNotifierItem. Its
//! menu and icon belong to the main thread, which runs the platform's event loop
//! ([`run_with_tray`]); the resident's async work runs on other threads and changes the tray
//! through messages to that loop. Compiled and linted for Windows here (`scripts/windows-check.sh`);
//! never run on either platform by this project's tests.

use crate::tray_lines::{
    ICON, ICON_BADGED, ICON_PAUSED, TrayIconKind, TrayLine, TrayView, decode_png,
};
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

/// A decoded icon: RGBA8 pixels, width, height.
type Rgba = (Vec<u8>, u32, u32);

/// What the main thread is asked to do.
enum Message {
    Create {
        view: TrayView,
        plain: Rgba,
        badged: Rgba,
        paused: Rgba,
        on_action: Arc<dyn Fn(TrayAction) + Send + Sync>,
    },
    Show(TrayView),
    Exit(i32),
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
                Message::Create {
                    view,
                    plain,
                    badged,
                    paused,
                    on_action,
                } => match NativeTray::build(&view, [plain, badged, paused], on_action) {
                    Ok(tray) => shown = Some(tray),
                    Err(error) => tracing::warn!("no tray icon: {error}"),
                },
                Message::Show(view) => {
                    if let Some(tray) = &shown {
                        tray.show(&view);
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
    view: Mutex<TrayView>,
}

impl TrayStarter {
    /// Puts the icon up; `on_action` is called (on the main thread) for menu clicks and a left
    /// click on the icon (= OpenInbox), so it must hand work off, not wait.
    pub async fn spawn(
        &self,
        paused: bool,
        on_action: impl Fn(TrayAction) + Send + Sync + 'static,
    ) -> Result<Tray, TrayError> {
        // Decoded here, so that a broken icon is an error the caller sees.
        let view = TrayView::new(paused);
        self.proxy
            .send_event(Message::Create {
                view: view.clone(),
                plain: decode_png(ICON)?,
                badged: decode_png(ICON_BADGED)?,
                paused: decode_png(ICON_PAUSED)?,
                on_action: Arc::new(on_action),
            })
            .map_err(|_| TrayError::NoEventLoop)?;
        Ok(Tray {
            proxy: self.proxy.clone(),
            view: Mutex::new(view),
        })
    }
}

impl Tray {
    /// Changes one line: the count (menu, tooltip and the icon's badge), the storage failure,
    /// the pause or the grants.
    pub async fn show(&self, line: TrayLine) {
        let Ok(mut view) = self.view.lock() else {
            return;
        };
        view.apply(line);
        let _ = self.proxy.send_event(Message::Show(view.clone()));
    }

    /// The texts of the menu's changing lines as last sent to the tray (count, pause, grants).
    pub async fn menu_texts(&self) -> Vec<String> {
        self.view
            .lock()
            .map(|view| view.texts())
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
    menu: Menu,
    count: MenuItem,
    pause: MenuItem,
    grants: MenuItem,
    /// "Sign in again: SERVER", in the menu (after the grants) only while a server needs it.
    sign_in: MenuItem,
    sign_in_shown: std::cell::Cell<bool>,
    plain: Icon,
    badged: Icon,
    paused: Icon,
}

impl NativeTray {
    fn build(
        view: &TrayView,
        images: [Rgba; 3],
        on_action: Arc<dyn Fn(TrayAction) + Send + Sync>,
    ) -> Result<NativeTray, Box<dyn std::error::Error>> {
        // The same lines in the same order as Linux's menu (tray.rs).
        let count = MenuItem::new(&view.count_line, false, None);
        let grants = MenuItem::new(grants_label(view.grants), false, None);
        let sign_in = MenuItem::new("", false, None);
        let open = MenuItem::new("Open inbox", true, None);
        let pause = MenuItem::new(pause_label(view.paused), true, None);
        let quit = MenuItem::new("Quit Airlock", true, None);
        let menu = Menu::new();
        menu.append_items(&[
            &count,
            &grants,
            &PredefinedMenuItem::separator(),
            &open,
            &pause,
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
        let [plain, badged, paused] =
            images.map(|(rgba, width, height)| Icon::from_rgba(rgba, width, height));
        let tray = NativeTray {
            icon: TrayIconBuilder::new()
                .with_menu(Box::new(menu.clone()))
                .with_menu_on_left_click(cfg!(target_os = "macos"))
                .with_tooltip(view.tooltip())
                .build()?,
            menu,
            count,
            pause,
            grants,
            sign_in,
            sign_in_shown: std::cell::Cell::new(false),
            plain: plain?,
            badged: badged?,
            paused: paused?,
        };
        tray.show(view);
        Ok(tray)
    }

    /// The image for what the view says.
    fn image(&self, view: &TrayView) -> &Icon {
        match view.icon() {
            TrayIconKind::Plain => &self.plain,
            TrayIconKind::Badged => &self.badged,
            TrayIconKind::Paused => &self.paused,
        }
    }

    fn show(&self, view: &TrayView) {
        self.count.set_text(&view.count_line);
        self.pause.set_text(pause_label(view.paused));
        self.grants.set_text(grants_label(view.grants));
        match view.sign_in_line() {
            Some(line) => {
                self.sign_in.set_text(line);
                if !self.sign_in_shown.get() {
                    // After the count and grants lines, as on Linux.
                    let _ = self.menu.insert(&self.sign_in, 2);
                    self.sign_in_shown.set(true);
                }
            }
            None if self.sign_in_shown.get() => {
                let _ = self.menu.remove(&self.sign_in);
                self.sign_in_shown.set(false);
            }
            None => {}
        }
        let _ = self.icon.set_tooltip(Some(view.tooltip()));
        let _ = self.icon.set_icon(Some(self.image(view).clone()));
    }
}
