//! The `hamle` binary: parse the arguments, run, map the outcome to an exit code.
//! Everything else is in [`cli`] and the library.

mod cli;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // Usage errors exit with code 2 here (clap's default); --help and --version with 0.
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(err) if cli::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            let _ = writeln!(std::io::stderr().lock(), "hamle: {err:#}");
            ExitCode::from(1)
        }
    }
}
