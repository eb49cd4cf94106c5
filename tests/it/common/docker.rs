//! What the engine tests (`engine`, the model's judge) and the runtime
//! proof (`runtime`) both need to drive the Docker CLI and Compose.

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

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

/// How long one Docker or Compose command may take. The slowest the tiers
/// run (a `compose up` of a dozen services on a loaded machine) take tens
/// of seconds; Docker 20.10's daemon once deadlocked in libnetwork (one
/// container joining a network while another left one, moby/moby#42545),
/// and every later command waited on it until CI's hard limit. A command past this is killed and
/// the test fails, naming it.
const COMMAND_LIMIT: Duration = Duration::from_secs(300);

/// Runs `command` to its end; a command that cannot start is a panic
/// naming it (the tier's tools are there, or the test should not run), and
/// so is one that runs past [`COMMAND_LIMIT`].
pub fn run(command: &mut Command) -> Output {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    // Both pipes are drained while the command runs: one it fills would
    // stop it.
    fn drain(mut pipe: impl Read + Send + 'static) -> JoinHandle<std::io::Result<Vec<u8>>> {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            pipe.read_to_end(&mut bytes).map(|_| bytes)
        })
    }
    let stdout = drain(child.stdout.take().unwrap());
    let stderr = drain(child.stderr.take().unwrap());
    let started = Instant::now();
    let mut pause = Duration::from_millis(1);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > COMMAND_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{command:?} did not finish in {} s (killed): is the Docker daemon hung? \
                 Its log is target/ci-engine/dockerd.log",
                COMMAND_LIMIT.as_secs()
            );
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    };
    let read = |pipe: JoinHandle<std::io::Result<Vec<u8>>>| {
        pipe.join()
            .unwrap()
            .unwrap_or_else(|e| panic!("{command:?}: {e}"))
    };
    Output {
        status,
        stdout: read(stdout),
        stderr: read(stderr),
    }
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

/// Compose v2 as the Docker CLI runs it for `docker compose ARGS`, without
/// the CLI in between: the plugin binary the CLI would execute, run
/// standalone (it takes the same arguments, less `compose`). Through the
/// CLI, each call starts two Go programs more (the CLI, and the plugin
/// once to read its metadata): half the CPU of every Compose call, and the
/// engine tier makes thousands of them on two cores.
pub fn compose() -> Command {
    static PLUGIN: OnceLock<Option<String>> = OnceLock::new();
    let plugin = PLUGIN.get_or_init(|| {
        let found = docker(&[
            "info",
            "--format",
            r#"{{range .ClientInfo.Plugins}}{{if eq .Name "compose"}}{{.Path}}{{end}}{{end}}"#,
        ]);
        let path = String::from_utf8_lossy(&found.stdout).trim().to_string();
        (!path.is_empty()).then_some(path)
    });
    match plugin {
        Some(path) => Command::new(path),
        None => {
            let mut command = Command::new("docker");
            command.arg("compose");
            command
        }
    }
}
