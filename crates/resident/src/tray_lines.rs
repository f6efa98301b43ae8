//! The tray's lines and clicks, the same on every platform: what the rest of the resident sets
//! ([`TrayLine`]), the texts and icons every tray shows, and what a click asks
//! ([`TrayAction`]). Where there is a tray ([`crate::tray`]: a StatusNotifierItem on Linux, the
//! platform's own tray elsewhere) the line changes; where there is none, nothing does. The
//! `tray_menu` command reads them back from the tray itself.

pub const ICON: &[u8] = include_bytes!("../../../src-tauri/icons/tray.png");
pub const ICON_BADGED: &[u8] = include_bytes!("../../../src-tauri/icons/tray-badge.png");
/// Shown while agents are paused, whatever waits: a grey lock with a pause badge.
pub const ICON_PAUSED: &[u8] = include_bytes!("../../../src-tauri/icons/tray-paused.png");
const STORAGE_FAILURE: &str = "Cannot record decisions — restart Airlock";

/// What a click in the tray asks the app to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrayAction {
    /// "Open inbox", or a left click on the icon.
    OpenInbox,
    /// The pause line: pause all agents, or resume them.
    TogglePause,
    Quit,
}

/// The tray menu's first line.
pub fn pending_label(count: usize) -> String {
    match count {
        0 => "Nothing pending".to_string(),
        n => format!("{n} pending"),
    }
}

/// The grants line: how many timed or counted grants let calls run without asking now.
pub fn grants_label(active: usize) -> String {
    match active {
        0 => "No grants active".into(),
        1 => "1 grant active".into(),
        n => format!("{n} grants active"),
    }
}

/// The pause line's text: it says what clicking it does.
pub fn pause_label(paused: bool) -> &'static str {
    if paused {
        "Resume agents"
    } else {
        "Pause all agents"
    }
}

/// A PNG's pixels as RGBA8 with its width and height, whatever its colour type.
pub fn decode_png(png_bytes: &[u8]) -> Result<(Vec<u8>, u32, u32), png::DecodingError> {
    let mut decoder = png::Decoder::new(png_bytes);
    decoder.set_transformations(
        png::Transformations::normalize_to_color8() | png::Transformations::ALPHA,
    );
    let mut reader = decoder.read_info()?;
    let mut buffer = vec![0; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut buffer)?;
    let pixels = buffer.get(..frame.buffer_size()).unwrap_or_default();
    let rgba = match frame.color_type {
        png::ColorType::Rgba => pixels.to_vec(),
        png::ColorType::Rgb => pixels
            .chunks_exact(3)
            .flat_map(|p| [p[0], p[1], p[2], 0xff])
            .collect(),
        png::ColorType::GrayscaleAlpha => pixels
            .chunks_exact(2)
            .flat_map(|p| [p[0], p[0], p[0], p[1]])
            .collect(),
        // EXPAND turns palettes into RGB(A), so only grey is left.
        png::ColorType::Grayscale | png::ColorType::Indexed => pixels
            .iter()
            .flat_map(|&grey| [grey, grey, grey, 0xff])
            .collect(),
    };
    Ok((rgba, frame.width, frame.height))
}

/// Which of the tray's images it shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrayIconKind {
    Plain,
    /// Something waits.
    Badged,
    /// Agents are paused: said first, since nothing runs until they are resumed.
    Paused,
}

/// The sign-in line: the remote servers whose sign-in expired or was refused, which stop
/// working until the person signs in again; `None` when there are none.
pub fn sign_in_label(servers: &[String]) -> Option<String> {
    (!servers.is_empty()).then(|| format!("Sign in again: {}", servers.join(", ")))
}

/// A change of one of the tray's lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrayLine {
    /// How many requests wait (also the tooltip and the icon's badge).
    Pending(usize),
    /// The disk refused to record a decision: said instead of the count.
    StorageFailure,
    Paused(bool),
    /// How many timed or counted grants are active.
    Grants(usize),
    /// The remote servers that need a sign-in again (by name, sorted).
    SignInNeeded(Vec<String>),
}

/// What a tray shows now. Every tray keeps one, changes it by [`TrayLine`]s and draws it its own
/// way (a StatusNotifierItem's properties, the platform's menu items).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrayView {
    /// The count, or the storage failure said instead of it.
    pub count_line: String,
    /// The icon carries the badge: something waits.
    pub badged: bool,
    pub paused: bool,
    pub grants: usize,
    /// The remote servers that need a sign-in again.
    pub sign_in: Vec<String>,
}

impl TrayView {
    pub fn new(paused: bool) -> Self {
        TrayView {
            count_line: pending_label(0),
            badged: false,
            paused,
            grants: 0,
            sign_in: Vec::new(),
        }
    }

    pub fn apply(&mut self, line: TrayLine) {
        match line {
            TrayLine::Pending(count) => {
                self.count_line = pending_label(count);
                self.badged = count > 0;
            }
            TrayLine::StorageFailure => self.count_line = STORAGE_FAILURE.to_owned(),
            TrayLine::Paused(paused) => self.paused = paused,
            TrayLine::Grants(active) => self.grants = active,
            TrayLine::SignInNeeded(servers) => self.sign_in = servers,
        }
    }

    /// The menu's changing lines: count, pause, grants, and the sign-in line while a server
    /// needs one.
    pub fn texts(&self) -> Vec<String> {
        let mut texts = vec![
            self.count_line.clone(),
            pause_label(self.paused).to_owned(),
            grants_label(self.grants),
        ];
        texts.extend(self.sign_in_line());
        texts
    }

    pub fn sign_in_line(&self) -> Option<String> {
        sign_in_label(&self.sign_in)
    }

    /// The image for this view: paused before pending.
    pub fn icon(&self) -> TrayIconKind {
        if self.paused {
            TrayIconKind::Paused
        } else if self.badged {
            TrayIconKind::Badged
        } else {
            TrayIconKind::Plain
        }
    }

    pub fn tooltip(&self) -> String {
        match self.sign_in_line() {
            Some(sign_in) => format!("Airlock — {} · {sign_in}", self.count_line),
            None => format!("Airlock — {}", self.count_line),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{
        TrayIconKind, TrayLine, TrayView, grants_label, pause_label, pending_label, sign_in_label,
    };

    /// Issue 30: a remote server whose refresh was refused said "sign in again" only in the
    /// window and the CLI; the tray, which stays when the window is closed, said nothing.
    #[test]
    fn a_server_that_needs_a_sign_in_is_said_in_the_menu_and_tooltip_until_it_is_signed_in() {
        let mut view = TrayView::new(false);
        view.apply(TrayLine::Pending(1));
        view.apply(TrayLine::SignInNeeded(vec![
            "github".into(),
            "linear".into(),
        ]));
        assert_eq!(
            view.texts(),
            [
                "1 pending",
                "Pause all agents",
                "No grants active",
                "Sign in again: github, linear"
            ]
        );
        assert_eq!(
            view.tooltip(),
            "Airlock — 1 pending · Sign in again: github, linear"
        );
        view.apply(TrayLine::SignInNeeded(Vec::new()));
        assert_eq!(
            view.texts(),
            ["1 pending", "Pause all agents", "No grants active"]
        );
        assert_eq!(view.tooltip(), "Airlock — 1 pending");
        assert_eq!(sign_in_label(&[]), None);
    }

    /// Finding (issue 27): a paused Airlock looked the same in the tray as a running one.
    #[test]
    fn the_icon_says_paused_before_pending() {
        let mut view = TrayView::new(false);
        assert_eq!(view.icon(), TrayIconKind::Plain);
        view.apply(TrayLine::Pending(1));
        assert_eq!(view.icon(), TrayIconKind::Badged);
        view.apply(TrayLine::Paused(true));
        assert_eq!(view.icon(), TrayIconKind::Paused);
        view.apply(TrayLine::Pending(0));
        assert_eq!(view.icon(), TrayIconKind::Paused);
        view.apply(TrayLine::Paused(false));
        assert_eq!(view.icon(), TrayIconKind::Plain);
        assert_eq!(TrayView::new(true).icon(), TrayIconKind::Paused);
    }

    #[test]
    fn a_view_changes_line_by_line_and_the_badge_follows_the_count() {
        let mut view = TrayView::new(false);
        assert_eq!(
            view.texts(),
            ["Nothing pending", "Pause all agents", "No grants active"]
        );
        view.apply(TrayLine::Pending(2));
        view.apply(TrayLine::Paused(true));
        view.apply(TrayLine::Grants(1));
        assert!(view.badged);
        assert_eq!(
            view.texts(),
            ["2 pending", "Resume agents", "1 grant active"]
        );
        view.apply(TrayLine::StorageFailure);
        assert_eq!(
            view.tooltip(),
            "Airlock — Cannot record decisions — restart Airlock"
        );
        view.apply(TrayLine::Pending(0));
        assert!(!view.badged);
        assert_eq!(view.count_line, "Nothing pending");
    }

    #[test]
    fn the_count_line_says_how_many_are_pending() {
        assert_eq!(pending_label(0), "Nothing pending");
        assert_eq!(pending_label(1), "1 pending");
        assert_eq!(pending_label(3), "3 pending");
    }

    #[test]
    fn the_grants_line_counts_active_grants() {
        assert_eq!(grants_label(0), "No grants active");
        assert_eq!(grants_label(1), "1 grant active");
        assert_eq!(grants_label(2), "2 grants active");
    }

    #[test]
    fn the_pause_line_says_what_a_click_does() {
        assert_eq!(pause_label(false), "Pause all agents");
        assert_eq!(pause_label(true), "Resume agents");
    }
}
