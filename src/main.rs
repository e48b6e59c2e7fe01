//! The `hullward` binary: everything lives in the library; this only hands over and exits.

fn main() -> std::process::ExitCode {
    hullward::cli::main()
}
