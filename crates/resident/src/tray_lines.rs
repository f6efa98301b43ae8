//! The tray's changing lines as the rest of the resident sets them: where there is a tray
//! (Linux: a StatusNotifierItem, [`crate::tray`]) the line changes; where there is none, nothing
//! does. The `tray_menu` command reads them back from the tray itself.

use crate::shell::Shell;

/// A change of one of the tray's lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrayLine {
    /// How many requests wait (also the tooltip and the icon's badge).
    Pending(usize),
    /// The disk refused to record a decision: said instead of the count.
    StorageFailure,
    Paused(bool),
    /// How many timed or counted grants are active.
    Grants(usize),
}

impl Shell {
    pub async fn show_in_tray(&self, line: TrayLine) {
        #[cfg(target_os = "linux")]
        if let Some(tray) = self.tray.get() {
            match line {
                TrayLine::Pending(count) => tray.show_count(count).await,
                TrayLine::StorageFailure => tray.show_storage_failure().await,
                TrayLine::Paused(paused) => tray.show_paused(paused).await,
                TrayLine::Grants(active) => tray.show_grants(active).await,
            }
        }
        let _ = line;
    }

    /// The menu's changing lines as the tray shows them now (count, pause, grants); empty
    /// without a tray.
    pub async fn tray_texts(&self) -> Vec<String> {
        #[cfg(target_os = "linux")]
        if let Some(tray) = self.tray.get() {
            return tray.menu_texts().await;
        }
        Vec::new()
    }
}
