//! Codex's hook trust (see `trust`).

use crate::Result;
use std::path::Path;

pub fn trust(_hooks_json: &Path, _agent: &str) -> Result<Vec<String>> {
    Ok(Vec::new())
}

pub fn forget(_hooks_json: &Path) -> Result<Vec<String>> {
    Ok(Vec::new())
}
