//! The shell `run_command` hands a command line to: `sh -c` on Linux and macOS, `cmd.exe` on
//! Windows. Chosen by a pure function of the platform, so the Windows choice is tested on Linux
//! too; [`ShellCommand::to_command`] builds the process for the platform Airlock runs on.

use airlock_core::platform::Os;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// A command line as the platform's shell is to receive it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ShellCommand {
    pub program: &'static str,
    pub args: Vec<String>,
    /// The arguments go on the process's command line exactly as written (Windows): cmd.exe
    /// reads its own command line, not by the quoting rules the standard library writes for
    /// other programs, which would turn each `"` of the command into `\"`.
    pub verbatim: bool,
}

/// How `os` runs `command`, a command line in that platform's shell language.
///
/// On Windows: `/D` skips the AutoRun commands the registry may hold; `/S /C "…"` makes cmd
/// strip exactly the outer pair of quotes and run the rest as typed (what Node.js does for
/// `shell: true`).
pub(crate) fn shell_for(os: Os, command: &str) -> ShellCommand {
    match os {
        Os::Linux | Os::MacOs => ShellCommand {
            program: "sh",
            args: vec!["-c".into(), command.into()],
            verbatim: false,
        },
        Os::Windows => ShellCommand {
            program: "cmd.exe",
            args: vec![
                "/D".into(),
                "/S".into(),
                "/C".into(),
                format!("\"{command}\""),
            ],
            verbatim: true,
        },
    }
}

/// The folder a command runs in, as the platform's shell can take it; `None` when it cannot.
///
/// On Windows a canonical path is verbatim (`\\?\C:\…`), and cmd.exe takes any folder that
/// starts with `\\` for a network share it cannot run in: it would warn and run the command in
/// the Windows folder instead. So `\\?\C:\…` is given as `C:\…` where that names the same
/// folder: short enough for the classic path limit, and no component the classic path rules
/// would read differently (a trailing dot or space, a device name such as `NUL` or `COM1`).
/// Anything else (a share, a volume name, a name that is not Unicode) is refused.
pub(crate) fn folder_for_shell(os: Os, folder: &Path) -> Option<PathBuf> {
    if os != Os::Windows {
        return Some(folder.to_path_buf());
    }
    let text = folder.to_str()?;
    let Some(rest) = text.strip_prefix(r"\\?\") else {
        // A share (`\\server\share`) is not a folder cmd.exe runs in; a drive path is.
        return (!text.starts_with(r"\\")).then(|| folder.to_path_buf());
    };
    let mut chars = rest.chars();
    let is_drive_root = matches!(
        (chars.next(), chars.next(), chars.next()),
        (Some(letter), Some(':'), Some('\\')) if letter.is_ascii_alphabetic()
    );
    const MAX_PATH: usize = 260;
    if !is_drive_root || rest.len() >= MAX_PATH {
        return None;
    }
    // After the three ASCII characters of the drive root.
    let read_the_same = rest[3..].split('\\').all(|name| {
        let stem = name.split('.').next().unwrap_or(name).trim_end();
        let upper = stem.to_ascii_uppercase();
        let device = matches!(
            upper.as_str(),
            "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$"
        ) || (upper.len() == 4
            && (upper.starts_with("COM") || upper.starts_with("LPT"))
            && upper.as_bytes()[3].is_ascii_digit());
        !device && !name.ends_with('.') && !name.ends_with(' ') && !name.contains('/')
    });
    read_the_same.then(|| PathBuf::from(rest))
}

/// Whether a variable of Airlock's process stays out of a command's environment: Airlock's own
/// (`AIRLOCK_…`) and those named in `hidden` (the providers' API key variables). Windows reads
/// variable names without regard to case: there `openai_api_key` is `OPENAI_API_KEY`, and
/// `Airlock_Data_Dir` is Airlock's.
pub(crate) fn kept_from_commands(os: Os, name: &str, hidden: &BTreeSet<String>) -> bool {
    const OWN: &str = "AIRLOCK_";
    match os {
        Os::Linux | Os::MacOs => name.starts_with(OWN) || hidden.contains(name),
        Os::Windows => {
            let name = name.to_uppercase();
            name.starts_with(OWN) || hidden.iter().any(|h| h.to_uppercase() == name)
        }
    }
}

impl ShellCommand {
    /// The process to start on this platform.
    pub fn to_command(&self) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(self.program);
        #[cfg(windows)]
        {
            // No console window flashes up when the desktop app (which has none) runs a command.
            const CREATE_NO_WINDOW: u32 = 0x0800_0000;
            command.creation_flags(CREATE_NO_WINDOW);
            if self.verbatim {
                for arg in &self.args {
                    command.raw_arg(arg);
                }
                return command;
            }
        }
        command.args(&self.args);
        command
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_and_macos_hand_the_line_to_sh_as_one_argument() {
        for os in [Os::Linux, Os::MacOs] {
            let shell = shell_for(os, r#"echo "a b" > 'out file'; exit 3"#);
            assert_eq!(shell.program, "sh");
            assert_eq!(shell.args, ["-c", r#"echo "a b" > 'out file'; exit 3"#]);
            assert!(!shell.verbatim);
        }
    }

    #[test]
    fn windows_hands_the_line_to_cmd_verbatim_inside_one_pair_of_quotes() {
        let shell = shell_for(Os::Windows, r#"dir "C:\Program Files" & echo done"#);
        assert_eq!(shell.program, "cmd.exe");
        assert_eq!(
            shell.args,
            ["/D", "/S", "/C", r#""dir "C:\Program Files" & echo done""#]
        );
        assert!(shell.verbatim, "std's quoting would write \\\" for cmd");
    }

    #[test]
    fn a_verbatim_drive_path_is_given_to_cmd_as_a_plain_one() {
        let folder = |text: &str| folder_for_shell(Os::Windows, Path::new(text));
        assert_eq!(
            folder(r"\\?\C:\Users\ada\Documents\Airlock\sub"),
            Some(PathBuf::from(r"C:\Users\ada\Documents\Airlock\sub"))
        );
        assert_eq!(folder(r"\\?\D:\"), Some(PathBuf::from(r"D:\")));
        assert_eq!(folder(r"C:\work"), Some(PathBuf::from(r"C:\work")));
        // What cmd.exe would not run in, or the classic rules would read as another file.
        for refused in [
            r"\\?\UNC\server\share\work",
            r"\\server\share\work",
            r"\\?\Volume{01234567-89ab-cdef-0123-456789abcdef}\work",
            r"\\?\C:\work\nul",
            r"\\?\C:\work\COM1.txt",
            r"\\?\C:\work\trailing.",
            r"\\?\C:\work\trailing ",
        ] {
            assert_eq!(folder(refused), None, "{refused}");
        }
        let long = format!(r"\\?\C:\{}", "a".repeat(300));
        assert_eq!(folder(&long), None);
    }

    #[test]
    fn on_linux_and_macos_the_folder_is_given_as_it_is() {
        for os in [Os::Linux, Os::MacOs] {
            for text in ["/home/ada/Airlock", r"\\?\C:\odd but legal"] {
                assert_eq!(
                    folder_for_shell(os, Path::new(text)),
                    Some(PathBuf::from(text))
                );
            }
        }
    }

    #[test]
    fn airlocks_variables_and_the_key_variables_stay_out_whatever_their_case_on_windows() {
        let hidden = BTreeSet::from(["OPENAI_API_KEY".to_string()]);
        for name in ["AIRLOCK_DATA_DIR", "OPENAI_API_KEY"] {
            for os in [Os::Linux, Os::MacOs, Os::Windows] {
                assert!(kept_from_commands(os, name, &hidden), "{os:?} {name}");
            }
        }
        // One variable on Windows; two different ones on Linux and macOS.
        for name in ["openai_api_key", "Airlock_Data_Dir"] {
            assert!(kept_from_commands(Os::Windows, name, &hidden), "{name}");
            assert!(!kept_from_commands(Os::Linux, name, &hidden), "{name}");
            assert!(!kept_from_commands(Os::MacOs, name, &hidden), "{name}");
        }
        for os in [Os::Linux, Os::MacOs, Os::Windows] {
            assert!(!kept_from_commands(os, "PATH", &hidden), "{os:?}");
            assert!(
                !kept_from_commands(os, "OPENAI_API_KEY_HINT", &hidden),
                "{os:?}"
            );
        }
    }

    #[test]
    fn the_native_shell_is_the_platforms() {
        let expected = if cfg!(windows) { "cmd.exe" } else { "sh" };
        assert_eq!(shell_for(Os::NATIVE, "exit 0").program, expected);
    }
}
