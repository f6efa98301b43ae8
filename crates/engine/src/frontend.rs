//! The window a person looks at, when the engine runs inside the desktop app. Under
//! `airlock serve` there is none. Lets a second launch of the app (or `airlock open`) bring the
//! running app's window forward instead of starting a second engine on the same data directory.

use crate::Engine;
use std::sync::Arc;

pub trait Frontend: Send + Sync {
    /// Shows and focuses the window; with an approval id, on that inbox item.
    fn show(&self, approval_id: Option<String>);
}

impl Engine {
    pub fn set_frontend(&self, frontend: Arc<dyn Frontend>) {
        *self
            .inner
            .frontend
            .write()
            .unwrap_or_else(|p| p.into_inner()) = Some(frontend);
    }

    /// Returns false when no window belongs to this engine (`airlock serve`).
    pub fn show_frontend(&self, approval_id: Option<String>) -> bool {
        let frontend = self
            .inner
            .frontend
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        match frontend {
            Some(frontend) => {
                frontend.show(approval_id);
                true
            }
            None => false,
        }
    }
}
