//! What the engine tests (`engine`, the model's judge) and the runtime
//! proof (`runtime`) both need to drive the Docker CLI and Compose.

use std::process::{Command, Output};

/// The files Compose looks for in a project directory, in its order.
pub const DEFAULT_FILES: [&str; 4] = [
    "compose.yaml",
    "compose.yml",
    "docker-compose.yml",
    "docker-compose.yaml",
];
/// The override Compose adds to the first default file, in its order.
pub const DEFAULT_OVERRIDES: [&str; 4] = [
    "compose.override.yml",
    "compose.override.yaml",
    "docker-compose.override.yml",
    "docker-compose.override.yaml",
];

/// Runs `command` to its end; a command that cannot start is a panic
/// naming it (the tier's tools are there, or the test should not run).
pub fn run(command: &mut Command) -> Output {
    command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"))
}

/// stdout then stderr, as one text for messages.
pub fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// `docker ARGS`, run to its end.
pub fn docker(args: &[&str]) -> Output {
    run(Command::new("docker").args(args))
}
