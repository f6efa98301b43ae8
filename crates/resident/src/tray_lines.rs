//! The tray as the rest of the resident sees it: where there is one (Linux: a
//! StatusNotifierItem, [`crate::tray`]) its lines change, and the shell keeps their texts for
//! the `tray_menu` command; where there is none, only the texts are kept.

use crate::shell::Shell;
use std::sync::Arc;

pub struct TrayLines {
    shell: Arc<Shell>,
    #[cfg(target_os = "linux")]
    tray: Option<crate::tray::Tray>,
}

impl TrayLines {
    #[cfg(target_os = "linux")]
    pub fn new(shell: Arc<Shell>, tray: Option<crate::tray::Tray>) -> Self {
        Self { shell, tray }
    }

    #[cfg(not(target_os = "linux"))]
    pub fn new(shell: Arc<Shell>) -> Self {
        Self { shell }
    }

    pub async fn show_count(&self, pending: usize) {
        #[cfg(target_os = "linux")]
        if let Some(tray) = &self.tray {
            tray.show_count(pending).await;
        }
        let _ = pending;
        self.remember().await;
    }

    pub async fn show_storage_failure(&self) {
        #[cfg(target_os = "linux")]
        if let Some(tray) = &self.tray {
            tray.show_storage_failure().await;
        }
        self.remember().await;
    }

    pub async fn show_paused(&self, paused: bool) {
        #[cfg(target_os = "linux")]
        if let Some(tray) = &self.tray {
            tray.show_paused(paused).await;
        }
        let _ = paused;
        self.remember().await;
    }

    pub async fn show_grants(&self, active: usize) {
        #[cfg(target_os = "linux")]
        if let Some(tray) = &self.tray {
            tray.show_grants(active).await;
        }
        let _ = active;
        self.remember().await;
    }

    async fn remember(&self) {
        #[cfg(target_os = "linux")]
        if let Some(tray) = &self.tray {
            self.shell.set_tray_texts(tray.menu_texts().await);
        }
        let _ = &self.shell;
    }
}
