//! Lexical path normalisation, so that `/work/../etc/passwd` is judged as `/etc/passwd` — in
//! the platform's own way of writing paths: on Windows `\` separates too, and a drive letter
//! (`C:`), a rooted path (`\x`), a UNC share (`\\server\share`) or a verbatim path (`\\?\C:\x`)
//! is never inside anything. Pure functions of the text and a [`PathStyle`], so the Windows
//! rules are tested everywhere.

/// How paths are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathStyle {
    /// `/` separates; a path starting with `/` is absolute.
    Posix,
    /// `\` and `/` separate; drive letters, rooted, UNC and verbatim (`\\?\`) prefixes.
    Windows,
}

impl PathStyle {
    /// The style of the platform Airlock was built for.
    pub const NATIVE: PathStyle = if cfg!(windows) {
        PathStyle::Windows
    } else {
        PathStyle::Posix
    };

    fn is_separator(self, c: char) -> bool {
        c == '/' || (self == PathStyle::Windows && c == '\\')
    }

    fn separator(self) -> char {
        match self {
            PathStyle::Posix => '/',
            PathStyle::Windows => '\\',
        }
    }

    /// Splits off what anchors the path (`/`; on Windows `C:`, `C:\`, `\`, `\\server\share\`,
    /// `\\?\C:\`, `\\?\UNC\server\share\`): the anchor as written (separators made the
    /// style's own), whether it is absolute (then `..` cannot climb above it), and the rest.
    fn split_anchor(self, path: &str) -> (String, bool, &str) {
        match self {
            PathStyle::Posix => match path.strip_prefix('/') {
                Some(rest) => ("/".into(), true, rest),
                None => (String::new(), false, path),
            },
            PathStyle::Windows => windows_anchor(path),
        }
    }
}

fn windows_anchor(path: &str) -> (String, bool, &str) {
    let is_sep = |c: char| c == '\\' || c == '/';
    let chars: Vec<char> = path.chars().take(4).collect();
    let drive = |s: &str| {
        let mut it = s.chars();
        matches!((it.next(), it.next()), (Some(letter), Some(':')) if letter.is_ascii_alphabetic())
    };
    // `\\?\…` and `\\.\…`: verbatim and device paths, taken as written.
    if chars.len() >= 4
        && is_sep(chars[0])
        && is_sep(chars[1])
        && (chars[2] == '?' || chars[2] == '.')
        && is_sep(chars[3])
    {
        let rest = &path[4..];
        let prefix = format!("\\\\{}\\", chars[2]);
        if drive(rest) {
            let after = rest[2..].trim_start_matches(is_sep);
            return (format!("{prefix}{}\\", &rest[..2]), true, after);
        }
        // `\\?\UNC\server\share\…`, else a volume or device (`\\.\pipe\…`).
        let unc = rest.len() >= 4
            && rest[..3].eq_ignore_ascii_case("UNC")
            && rest[3..].starts_with(is_sep);
        let (anchor, after) = leading_components(rest, if unc { 3 } else { 1 }, is_sep);
        return (format!("{prefix}{anchor}\\"), true, after);
    }
    // `\\server\share\…`
    if chars.len() >= 2 && is_sep(chars[0]) && is_sep(chars[1]) {
        let (anchor, after) = leading_components(&path[2..], 2, is_sep);
        return (format!("\\\\{anchor}\\"), true, after);
    }
    if drive(path) {
        let after = &path[2..];
        return match after.strip_prefix(is_sep) {
            // `C:\…`: absolute.
            Some(rest) => (format!("{}\\", &path[..2]), true, rest),
            // `C:…`: relative to that drive's current folder — still not below any base.
            None => (path[..2].to_string(), false, after),
        };
    }
    // `\…`: rooted on the current drive.
    match path.strip_prefix(is_sep) {
        Some(rest) => ("\\".into(), true, rest),
        None => (String::new(), false, path),
    }
}

/// The first `count` components of `path` joined with `\`, and what follows them.
fn leading_components(path: &str, count: usize, is_sep: impl Fn(char) -> bool) -> (String, &str) {
    let mut parts = Vec::new();
    let mut rest = path;
    for _ in 0..count {
        rest = rest.trim_start_matches(&is_sep);
        if rest.is_empty() {
            break;
        }
        let end = rest.find(&is_sep).unwrap_or(rest.len());
        parts.push(&rest[..end]);
        rest = &rest[end..];
    }
    (parts.join("\\"), rest.trim_start_matches(&is_sep))
}

/// Resolves `.` and `..` segments and repeated separators without touching the file system,
/// in the platform's style. A `..` that would climb above the start of a relative path is
/// kept, so the result still says that it escapes.
pub fn normalize_lexically(path: &str) -> String {
    normalize_lexically_as(path, PathStyle::NATIVE)
}

/// [`normalize_lexically`] for paths written in `style`.
pub fn normalize_lexically_as(path: &str, style: PathStyle) -> String {
    let (anchor, absolute, rest) = style.split_anchor(path);
    let mut parts: Vec<&str> = Vec::new();
    for segment in rest.split(|c| style.is_separator(c)) {
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
    let joined = parts.join(&style.separator().to_string());
    if !anchor.is_empty() {
        format!("{anchor}{joined}")
    } else if joined.is_empty() {
        ".".to_string()
    } else {
        joined
    }
}

/// Whether a path's text may need [`normalize_lexically`] (cheap, for the policy's hot path).
pub fn may_need_normalizing(path: &str) -> bool {
    path.contains("..")
        || path.contains("//")
        || path.contains("/.")
        || (PathStyle::NATIVE == PathStyle::Windows && path.contains('\\'))
}

/// Whether a path written in `style` is anchored (`/…`; on Windows a drive root, `\…`, a share
/// or a verbatim prefix) rather than relative to a current folder.
pub fn is_absolute_as(path: &str, style: PathStyle) -> bool {
    style.split_anchor(path).1
}

/// True when a relative path, once normalised, stays below its base.
pub fn stays_inside(relative: &str) -> bool {
    stays_inside_as(relative, PathStyle::NATIVE)
}

/// [`stays_inside`] for paths written in `style`.
pub fn stays_inside_as(relative: &str, style: PathStyle) -> bool {
    let (anchor, _, _) = style.split_anchor(relative);
    if !anchor.is_empty() {
        return false;
    }
    let normalized = normalize_lexically_as(relative, style);
    let up = format!("..{}", style.separator());
    normalized != ".." && !normalized.starts_with(&up)
}

#[cfg(test)]
mod tests {
    use super::*;
    use PathStyle::{Posix, Windows};

    #[test]
    fn dot_dot_is_resolved() {
        assert_eq!(
            normalize_lexically_as("/work/../etc/passwd", Posix),
            "/etc/passwd"
        );
        assert_eq!(normalize_lexically_as("/work/./a//b/", Posix), "/work/a/b");
        assert_eq!(normalize_lexically_as("/..", Posix), "/");
        assert_eq!(normalize_lexically_as("a/../../b", Posix), "../b");
        assert_eq!(normalize_lexically_as("a/..", Posix), ".");
        // A backslash is a file name's character on Linux and macOS.
        assert_eq!(normalize_lexically_as("a\\..\\b", Posix), "a\\..\\b");
    }

    #[test]
    fn escape_is_detected() {
        assert!(stays_inside_as("a/b.txt", Posix));
        assert!(stays_inside_as("a/../b.txt", Posix));
        assert!(!stays_inside_as("../b.txt", Posix));
        assert!(!stays_inside_as("a/../../b.txt", Posix));
        assert!(!stays_inside_as("/etc/passwd", Posix));
        assert!(!stays_inside_as("..", Posix));
    }

    #[test]
    fn windows_paths_are_normalised_with_either_separator_and_their_prefixes_kept() {
        let cases = [
            (r"C:\work\..\Windows\System32", r"C:\Windows\System32"),
            ("C:/work/./a//b/", r"C:\work\a\b"),
            (r"C:\..\..", r"C:\"),
            (r"c:\Work\x", r"c:\Work\x"),
            (r"\\?\C:\work\..\secret", r"\\?\C:\secret"),
            (r"\\?\UNC\server\share\a\..\..\b", r"\\?\UNC\server\share\b"),
            (r"\\server\share\a\..\..\..\b", r"\\server\share\b"),
            (r"\\.\pipe\x", r"\\.\pipe\x"),
            (r"\work\..\x", r"\x"),
            (r"a\..\..\b", r"..\b"),
            (r"a/b\..\c", r"a\c"),
            ("C:rel\\..\\..\\x", r"C:..\x"),
        ];
        for (path, normalized) in cases {
            assert_eq!(normalize_lexically_as(path, Windows), normalized, "{path}");
        }
    }

    #[test]
    fn on_windows_nothing_with_a_drive_root_or_share_is_inside_and_backslash_climbs() {
        for outside in [
            r"..\secret",
            r"a\..\..\secret",
            r"a/..\..\secret",
            r"C:\Windows\win.ini",
            "C:secret",
            "c:/x",
            r"\Windows",
            "/Windows",
            r"\\server\share\x",
            r"\\?\C:\x",
            r"\\?\UNC\server\share",
            r"\\.\PhysicalDrive0",
            "..",
        ] {
            assert!(
                !stays_inside_as(outside, Windows),
                "{outside} counted as inside"
            );
        }
        for inside in [r"a\b.txt", r"a\..\b.txt", "a/b", ".", r"src\main.rs"] {
            assert!(
                stays_inside_as(inside, Windows),
                "{inside} counted as outside"
            );
        }
    }

    #[test]
    fn absolute_paths_are_told_apart_in_either_style() {
        assert!(is_absolute_as("/home/ada", Posix));
        assert!(!is_absolute_as("home/ada", Posix));
        assert!(!is_absolute_as(r"C:\Users\ada", Posix));
        for absolute in [
            r"C:\Users\ada",
            "C:/Users",
            r"\\server\share\x",
            r"\\?\C:\x",
        ] {
            assert!(is_absolute_as(absolute, Windows), "{absolute}");
        }
        for relative in ["Users", "C:Users", r"..\x"] {
            assert!(!is_absolute_as(relative, Windows), "{relative}");
        }
    }

    #[test]
    fn the_native_style_is_the_platforms() {
        assert_eq!(PathStyle::NATIVE == Windows, cfg!(windows));
        assert!(stays_inside("a/b"));
        assert!(!stays_inside("../b"));
    }
}
