//! Lexical path normalisation, so that `/work/../etc/passwd` is judged as `/etc/passwd`.

/// Resolves `.` and `..` segments and repeated separators without touching the file system.
/// A `..` that would climb above the start of a relative path is kept, so the result still
/// says that it escapes.
pub fn normalize_lexically(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&"..") | None if !absolute => parts.push(".."),
                Some(&"..") => parts.push(".."),
                Some(_) => {
                    parts.pop();
                }
                None => {} // `/..` is `/`
            },
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else if joined.is_empty() {
        ".".to_string()
    } else {
        joined
    }
}

/// True when a relative path, once normalised, stays below its base.
pub fn stays_inside(relative: &str) -> bool {
    if relative.starts_with('/') {
        return false;
    }
    let normalized = normalize_lexically(relative);
    normalized != ".." && !normalized.starts_with("../")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_dot_is_resolved() {
        assert_eq!(normalize_lexically("/work/../etc/passwd"), "/etc/passwd");
        assert_eq!(normalize_lexically("/work/./a//b/"), "/work/a/b");
        assert_eq!(normalize_lexically("/.."), "/");
        assert_eq!(normalize_lexically("a/../../b"), "../b");
        assert_eq!(normalize_lexically("a/.."), ".");
    }

    #[test]
    fn escape_is_detected() {
        assert!(stays_inside("a/b.txt"));
        assert!(stays_inside("a/../b.txt"));
        assert!(!stays_inside("../b.txt"));
        assert!(!stays_inside("a/../../b.txt"));
        assert!(!stays_inside("/etc/passwd"));
        assert!(!stays_inside(".."));
    }
}
