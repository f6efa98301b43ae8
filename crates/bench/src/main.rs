//! `airlock-bench`: the figures in BENCHMARKS.md, measured on release builds. A dev tool outside
//! the shipped `airlock` binary: it carries the scripted model server (a test double).
//! Exit codes: 0 done, 1 failed (message on stderr), 2 usage error.

/// The same allocator as the shipped binaries, so the in-process engine is measured as it runs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod bench;
mod replicas;
mod report;

use clap::Parser;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "airlock-bench",
    version,
    about = "Airlock's benchmarks (BENCHMARKS.md)"
)]
struct Cli {
    #[command(subcommand)]
    action: bench::BenchAction,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    airlock_api::host::log_to_stderr();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("airlock-bench: cannot start: {error}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(bench::run(cli.action)) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("airlock-bench: {error:#}");
            ExitCode::from(1)
        }
    }
}
