//! `airlock-hook [--data-dir DIR] claude-code|codex [--timeout SECS]`: the coding agents' hook
//! as its own small binary, which `airlock connect` installs. It links only the hook (no
//! command-line parser, no engine to run, no TLS), so it starts in a fraction of the time the
//! whole `airlock` binary takes; an agent starts it for every tool call.

fn main() {
    airlock_hook::main_with_args(std::env::args_os().skip(1));
}
