fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(gpulint::cli::run())
}
