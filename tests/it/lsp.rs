//! The language server, driven in process through an in-memory connection
//! by a minimal client: diagnostics on open and change, positions in UTF-16,
//! quick fixes and suppressions that work when applied, fix-all, hover,
//! configuration reload, cross-file refresh, and half-typed files.
//! (tests/it/editor.rs drives the real binary from a real LSP client.)

use crate::common;

use common::write;
use lsp_server::{Connection, Message, Notification, Request, RequestId};
use lsp_types::notification::Notification as _;
use lsp_types::{self as lsp, Uri};
use serde_json::{Value, json};
use std::path::Path;
use std::str::FromStr;
use std::time::{Duration, Instant};

const GPU_COMPOSE: &str = "services:\n  trainer:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    command: torchrun --nproc_per_node=8 train.py\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - driver: nvidia\n              count: all\n              capabilities: [gpu]\n";

struct Client {
    connection: Connection,
    server: Option<std::thread::JoinHandle<gpulint::lsp::Ending>>,
    next_id: i32,
    /// Notifications received while waiting for something else.
    published: Vec<lsp::PublishDiagnosticsParams>,
}

impl Client {
    /// A server that has not been initialized.
    fn connect() -> Client {
        let (client, server) = Connection::memory();
        let handle = std::thread::spawn(move || gpulint::lsp::serve(server).unwrap());
        Client {
            connection: client,
            server: Some(handle),
            next_id: 0,
            published: Vec::new(),
        }
    }

    fn start() -> Client {
        let mut client = Client::connect();
        let result = client.request::<lsp::request::Initialize>(json!({
            "capabilities": {},
            "processId": null,
            "rootUri": null,
        }));
        assert_eq!(result["serverInfo"]["name"], "gpulint");
        client.notify::<lsp::notification::Initialized>(json!({}));
        client
    }

    fn notify<N: lsp::notification::Notification>(&self, params: Value) {
        self.connection
            .sender
            .send(Message::Notification(Notification::new(
                N::METHOD.to_string(),
                params,
            )))
            .unwrap();
    }

    fn request<R: lsp::request::Request>(&mut self, params: Value) -> Value {
        match self.call(R::METHOD, params) {
            Ok(value) => value,
            Err(e) => panic!("{} failed: {}", R::METHOD, e.message),
        }
    }

    /// Sends a request and waits for its answer: a result or an error.
    fn call(&mut self, method: &str, params: Value) -> Result<Value, lsp_server::ResponseError> {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        self.connection
            .sender
            .send(Message::Request(Request::new(
                id.clone(),
                method.to_string(),
                params,
            )))
            .unwrap();
        loop {
            if let Message::Response(response) = self.receive()
                && response.id == id
            {
                return response.response_result;
            }
        }
    }

    /// Sends `exit` and waits for the server to end.
    fn exit(mut self) -> gpulint::lsp::Ending {
        self.notify::<lsp::notification::Exit>(Value::Null);
        self.server.take().unwrap().join().unwrap()
    }

    fn receive(&mut self) -> Message {
        let message = self
            .connection
            .receiver
            .recv_timeout(Duration::from_secs(20))
            .expect("the server answers");
        if let Message::Notification(n) = &message
            && n.method == lsp::notification::PublishDiagnostics::METHOD
        {
            self.published
                .push(serde_json::from_value(n.params.clone()).unwrap());
        }
        message
    }

    /// The next diagnostics published for `uri`.
    fn diagnostics(&mut self, uri: &Uri) -> Vec<lsp::Diagnostic> {
        loop {
            if let Some(i) = self.published.iter().position(|p| p.uri == *uri) {
                return self.published.remove(i).diagnostics;
            }
            self.receive();
        }
    }

    /// The diagnostics published for `version` of `uri`, passing over
    /// those of earlier versions (published when a pause between edits
    /// outlasted the debounce, as on a loaded machine).
    fn diagnostics_of_version(&mut self, uri: &Uri, version: i32) -> Vec<lsp::Diagnostic> {
        loop {
            while let Some(i) = self.published.iter().position(|p| p.uri == *uri) {
                let published = self.published.remove(i);
                if published.version == Some(version) {
                    return published.diagnostics;
                }
            }
            self.receive();
        }
    }

    fn open(&self, uri: &Uri, language: &str, text: &str) {
        self.notify::<lsp::notification::DidOpenTextDocument>(json!({
            "textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}
        }));
    }

    fn change(&self, uri: &Uri, version: i32, changes: Value) {
        self.notify::<lsp::notification::DidChangeTextDocument>(json!({
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": changes,
        }));
    }

    fn code_actions(
        &mut self,
        uri: &Uri,
        range: lsp::Range,
        only: Option<&str>,
    ) -> Vec<lsp::CodeAction> {
        let mut context = json!({"diagnostics": []});
        if let Some(only) = only {
            context["only"] = json!([only]);
        }
        let result = self.request::<lsp::request::CodeActionRequest>(json!({
            "textDocument": {"uri": uri},
            "range": range,
            "context": context,
        }));
        serde_json::from_value(result).unwrap()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            let _ = self.request::<lsp::request::Shutdown>(Value::Null);
            self.notify::<lsp::notification::Exit>(Value::Null);
            assert_eq!(server.join().unwrap(), gpulint::lsp::Ending::AfterShutdown);
        }
    }
}

fn uri(path: &Path) -> Uri {
    Uri::from_str(&format!("file://{}", path.display())).unwrap()
}

/// Applies a code action's edits (for `uri`) to `text`, as an editor does.
fn apply(action: &lsp::CodeAction, uri: &Uri, text: &str) -> String {
    let changes = &action.edit.as_ref().unwrap().changes;
    let mut edits = changes
        .iter()
        .flatten()
        .find(|(target, _)| *target == uri)
        .map(|(_, edits)| edits.clone())
        .expect("edits for the document");
    edits.sort_by_key(|e| std::cmp::Reverse((e.range.start.line, e.range.start.character)));
    let mut text = text.to_string();
    for edit in edits {
        let index = gpulint::text::LineIndex::new(&text);
        let offset = |p: lsp::Position| index.offset_of_utf16(p.line, p.character, &text);
        let (start, end) = (offset(edit.range.start), offset(edit.range.end));
        text.replace_range(start..end, &edit.new_text);
    }
    text
}

fn codes(diagnostics: &[lsp::Diagnostic]) -> Vec<String> {
    diagnostics
        .iter()
        .map(|d| match &d.code {
            Some(lsp::NumberOrString::String(code)) => code.clone(),
            _ => "(none)".to_string(),
        })
        .collect()
}

fn full_change(text: &str) -> Value {
    json!([{"text": text}])
}

#[test]
fn quick_fix_removes_the_shm_finding() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("docker-compose.yml");
    write(dir.path(), "docker-compose.yml", GPU_COMPOSE);
    let uri = uri(&path);
    let mut client = Client::start();
    client.open(&uri, "dockercompose", GPU_COMPOSE);
    let diagnostics = client.diagnostics(&uri);
    let shm = diagnostics
        .iter()
        .find(|d| d.code == Some(lsp::NumberOrString::String("SHM001".into())))
        .unwrap_or_else(|| panic!("{diagnostics:?}"));
    // `trainer` on line 2 (0-based 1), columns 2..9.
    assert_eq!(
        shm.range,
        lsp::Range::new(lsp::Position::new(1, 2), lsp::Position::new(1, 9))
    );
    assert_eq!(shm.severity, Some(lsp::DiagnosticSeverity::ERROR));
    assert_eq!(shm.source.as_deref(), Some("gpulint"));
    assert!(
        shm.message.contains("help: set `shm_size"),
        "{}",
        shm.message
    );
    assert!(
        shm.code_description
            .as_ref()
            .unwrap()
            .href
            .as_str()
            .ends_with("/rules/SHM001.md")
    );

    let actions = client.code_actions(&uri, shm.range, None);
    let fix = actions
        .iter()
        .find(|a| a.title.starts_with("Add `shm_size"))
        .unwrap_or_else(|| panic!("{actions:#?}"));
    assert_eq!(fix.kind, Some(lsp::CodeActionKind::QUICKFIX));
    assert_eq!(fix.is_preferred, Some(true));
    let fixed = apply(fix, &uri, GPU_COMPOSE);
    assert!(fixed.contains("    shm_size: \"8gb\"\n"), "{fixed}");
    client.change(&uri, 2, full_change(&fixed));
    let after = client.diagnostics(&uri);
    assert!(!codes(&after).contains(&"SHM001".to_string()), "{after:?}");
}

#[test]
fn incremental_edits_with_utf16_positions_are_tracked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("compose.yaml");
    // A non-ASCII comment before the service shifts UTF-16 columns.
    let text = format!("# 训练 😀\n{GPU_COMPOSE}");
    write(dir.path(), "compose.yaml", &text);
    let uri = uri(&path);
    let mut client = Client::start();
    client.open(&uri, "yaml", &text);
    assert!(codes(&client.diagnostics(&uri)).contains(&"SHM001".to_string()));
    // Type `    ipc: host` after `image: ...` one keystroke-sized change at a
    // time, as an editor sends them; the server lints once they pause.
    let line = 3; // `    image: ...` is line 3 (0-based)
    let end_of_image = "    image: nvcr.io/nvidia/pytorch:24.01-py3".len() as u32;
    let typed = "\n    ipc: host";
    for (i, c) in typed.chars().enumerate() {
        let (l, col) = if i == 0 {
            (line, end_of_image)
        } else {
            (line + 1, (i - 1) as u32)
        };
        client.change(
            &uri,
            2 + i as i32,
            json!([{"range": {"start": {"line": l, "character": col}, "end": {"line": l, "character": col}}, "text": c.to_string()}]),
        );
    }
    let after = client.diagnostics(&uri);
    assert!(!codes(&after).contains(&"SHM001".to_string()), "{after:?}");
    // The emoji line comes first: the service key is still at line 2, col 2.
    let hover = client.request::<lsp::request::HoverRequest>(json!({
        "textDocument": {"uri": uri},
        "position": {"line": 0, "character": 5},
    }));
    assert!(hover.is_null(), "no finding under the comment: {hover}");
}

#[test]
fn hover_shows_the_rule_doc_on_findings_and_suppression_codes() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "# gpulint: ignore-file[NCCL002] P2P is broken on these consumer cards\n{GPU_COMPOSE}"
    );
    write(dir.path(), "compose.yaml", &text);
    let uri = uri(&dir.path().join("compose.yaml"));
    let mut client = Client::start();
    client.open(&uri, "yaml", &text);
    client.diagnostics(&uri);
    let hover = |client: &mut Client, line: u32, character: u32| {
        client.request::<lsp::request::HoverRequest>(json!({
            "textDocument": {"uri": uri},
            "position": {"line": line, "character": character},
        }))
    };
    let on_finding = hover(&mut client, 2, 4);
    let value = on_finding["contents"]["value"].as_str().unwrap();
    assert!(
        value.starts_with("# default-shm-on-gpu-service (SHM001)"),
        "{value}"
    );
    assert_eq!(on_finding["contents"]["kind"], "markdown");
    let column = "# gpulint: ignore-file[NCC".len() as u32;
    let on_code = hover(&mut client, 0, column);
    assert!(
        on_code["contents"]["value"]
            .as_str()
            .unwrap()
            .starts_with("# nccl-p2p-disabled (NCCL002)"),
        "{on_code}"
    );
}

#[test]
fn suppress_action_inserts_a_comment_that_silences_the_finding() {
    let dir = tempfile::tempdir().unwrap();
    let text = GPU_COMPOSE.replace('\n', "\r\n");
    write(dir.path(), "compose.yaml", &text);
    let uri = uri(&dir.path().join("compose.yaml"));
    let mut client = Client::start();
    client.open(&uri, "yaml", &text);
    let diagnostics = client.diagnostics(&uri);
    let shm = diagnostics
        .iter()
        .find(|d| codes(std::slice::from_ref(d)) == ["SHM001"])
        .unwrap();
    let actions = client.code_actions(&uri, shm.range, Some("quickfix"));
    let suppress = actions
        .iter()
        .find(|a| a.title == "Suppress SHM001 on this line with a comment")
        .unwrap_or_else(|| panic!("{actions:#?}"));
    let suppressed = apply(suppress, &uri, &text);
    assert!(
        suppressed.contains(
            "\r\n  # gpulint: ignore[SHM001] TODO: say why this is intended\r\n  trainer:"
        ),
        "{suppressed}"
    );
    client.change(&uri, 2, full_change(&suppressed));
    let after = client.diagnostics(&uri);
    assert!(!codes(&after).contains(&"SHM001".to_string()), "{after:?}");
    assert!(!codes(&after).contains(&"SUP002".to_string()), "{after:?}");
}

#[test]
fn fix_all_applies_every_safe_fix_at_once() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "compose.yaml", GPU_COMPOSE);
    let uri = uri(&dir.path().join("compose.yaml"));
    let mut client = Client::start();
    client.open(&uri, "yaml", GPU_COMPOSE);
    let before = client.diagnostics(&uri);
    let everything = lsp::Range::new(lsp::Position::new(0, 0), lsp::Position::new(0, 0));
    let actions = client.code_actions(&uri, everything, Some("source.fixAll"));
    assert_eq!(actions.len(), 1, "{actions:#?}");
    assert_eq!(
        actions[0].kind.as_ref().unwrap().as_str(),
        "source.fixAll.gpulint"
    );
    let fixed = apply(&actions[0], &uri, GPU_COMPOSE);
    // The same text `gpulint check --fix` writes.
    let cli = gpulint::engine::fix::fix_text(
        GPU_COMPOSE,
        &dir.path().join("compose.yaml"),
        &Default::default(),
        gpulint::engine::fix::FixMode {
            unsafe_fixes: false,
        },
    )
    .unwrap();
    assert_eq!(fixed, cli.fixed_text);
    client.change(&uri, 2, full_change(&fixed));
    let after = client.diagnostics(&uri);
    assert!(after.len() < before.len(), "{before:?} -> {after:?}");
    assert!(
        after
            .iter()
            .all(|d| !codes(std::slice::from_ref(d)).contains(&"SHM001".to_string()))
    );
}

#[test]
fn half_typed_files_get_a_located_error_and_recover() {
    let dir = tempfile::tempdir().unwrap();
    let uri = uri(&dir.path().join("compose.yaml"));
    let mut client = Client::start();
    let mut text = String::new();
    client.open(&uri, "yaml", "");
    client.diagnostics(&uri);
    // Every prefix of the file, as if typed, including unclosed flows and
    // quotes; the server must answer for each.
    let mut last = 1;
    for (version, c) in GPU_COMPOSE
        .replace("[gpu]", "[gpu, \"x")
        .chars()
        .enumerate()
    {
        text.push(c);
        last = version as i32 + 2;
        client.change(&uri, last, full_change(&text));
        let _ = client.request::<lsp::request::HoverRequest>(json!({
            "textDocument": {"uri": uri},
            "position": {"line": 0, "character": 0},
        }));
    }
    let broken = client.diagnostics_of_version(&uri, last);
    let error = broken
        .iter()
        .find(|d| d.code.is_none())
        .unwrap_or_else(|| panic!("{broken:?}"));
    assert!(
        error.message.starts_with("invalid YAML"),
        "{}",
        error.message
    );
    // The unclosed quote on the last line (0-based 10).
    assert_eq!(error.range.start.line, 10, "{error:?}");
    client.change(&uri, 999, full_change(GPU_COMPOSE));
    let fixed = client.diagnostics_of_version(&uri, 999);
    assert!(codes(&fixed).contains(&"SHM001".to_string()));
}

#[test]
fn configuration_changes_apply_without_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "compose.yaml", GPU_COMPOSE);
    let uri = uri(&dir.path().join("compose.yaml"));
    let mut client = Client::start();
    client.open(&uri, "yaml", GPU_COMPOSE);
    assert!(codes(&client.diagnostics(&uri)).contains(&"SHM001".to_string()));
    write(dir.path(), "gpulint.toml", "ignore = [\"SHM001\"]\n");
    client.notify::<lsp::notification::DidChangeWatchedFiles>(json!({
        "changes": [{"uri": format!("file://{}/gpulint.toml", dir.path().display()), "type": 1}]
    }));
    assert!(!codes(&client.diagnostics(&uri)).contains(&"SHM001".to_string()));
}

/// A compose file's findings follow its `.env` (the variables Compose
/// interpolates), which editors watch rather than open.
#[test]
fn a_change_to_the_env_file_of_a_compose_file_applies() {
    let compose = GPU_COMPOSE.replace(
        "    command:",
        "    ipc: ${TRAINER_IPC:-private}\n    command:",
    );
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "compose.yaml", &compose);
    let compose_uri = uri(&dir.path().join("compose.yaml"));
    let mut client = Client::start();
    client.open(&compose_uri, "dockercompose", &compose);
    assert!(codes(&client.diagnostics(&compose_uri)).contains(&"SHM001".to_string()));
    write(dir.path(), ".env", "TRAINER_IPC=host\n");
    client.notify::<lsp::notification::DidChangeWatchedFiles>(json!({
        "changes": [{"uri": uri(&dir.path().join(".env")), "type": 1}]
    }));
    let with_host_ipc = client.diagnostics(&compose_uri);
    assert!(
        !codes(&with_host_ipc).contains(&"SHM001".to_string()),
        "{with_host_ipc:?}"
    );
}

/// Editors hand gpulint files it does not read: every YAML file (the
/// `yaml` language is a compose file's, a manifest's and a Helm values
/// file's), and in Helix every JSON file and systemd unit (no language
/// there is only devcontainer.json's or only Quadlet's: editors/helix).
/// gpulint reports nothing on them, not even that they are not YAML.
#[test]
fn files_an_editor_sends_that_gpulint_does_not_read_get_no_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        (
            "values.yaml",
            "yaml",
            "replicaCount: 2\nimage:\n  repository: nginx\n",
        ),
        (
            "tsconfig.json",
            "jsonc",
            "{\n  // comments and a trailing comma\n  \"compilerOptions\": {\"strict\": true,},\n}\n",
        ),
        (
            "package.json",
            "json",
            "{\"name\": \"trainer\", \"private\": true}\n",
        ),
        (
            "trainer.service",
            "systemd",
            "[Service]\nExecStart=/usr/bin/docker run --gpus all nvcr.io/nvidia/pytorch:24.01-py3 torchrun train.py\n",
        ),
    ];
    let mut client = Client::start();
    let mut reported = Vec::new();
    for (name, language, text) in files {
        write(dir.path(), name, text);
        let uri = uri(&dir.path().join(name));
        client.open(&uri, language, text);
        for diagnostic in client.diagnostics(&uri) {
            reported.push(format!("{name}: {}", diagnostic.message));
        }
    }
    assert!(reported.is_empty(), "{reported:#?}");
}

#[test]
fn an_unsaved_configuration_buffer_applies() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "compose.yaml", GPU_COMPOSE);
    write(dir.path(), "gpulint.toml", "ignore = []\n");
    let config_uri = uri(&dir.path().join("gpulint.toml"));
    let uri = uri(&dir.path().join("compose.yaml"));
    let mut client = Client::start();
    client.open(&uri, "yaml", GPU_COMPOSE);
    assert!(codes(&client.diagnostics(&uri)).contains(&"SHM001".to_string()));
    client.open(&config_uri, "toml", "ignore = []\n");
    // The buffer ignores SHM001 and is not saved.
    client.change(&config_uri, 2, full_change("ignore = [\"SHM001\"]\n"));
    let after = diagnostics_until(&mut client, &uri, |d| {
        !codes(d).contains(&"SHM001".to_string())
    });
    assert!(!codes(&after).contains(&"SHM001".to_string()), "{after:?}");
    let on_disk = std::fs::read_to_string(dir.path().join("gpulint.toml")).unwrap();
    assert_eq!(on_disk, "ignore = []\n", "nothing was saved");
    // Closed without saving: the file on disk applies again.
    client.notify::<lsp::notification::DidCloseTextDocument>(json!({
        "textDocument": {"uri": config_uri}
    }));
    let closed = diagnostics_until(&mut client, &uri, |d| {
        codes(d).contains(&"SHM001".to_string())
    });
    assert!(codes(&closed).contains(&"SHM001".to_string()), "{closed:?}");
}

#[test]
fn cross_file_findings_refresh_when_the_other_file_is_saved() {
    let dir = tempfile::tempdir().unwrap();
    let compose = "services:\n  trainer:\n    build: ./trainer\n";
    write(dir.path(), "compose.yaml", compose);
    write(dir.path(), "trainer/Dockerfile", "FROM python:3.12-slim\n");
    let compose_uri = uri(&dir.path().join("compose.yaml"));
    let dockerfile = dir.path().join("trainer/Dockerfile");
    let dockerfile_uri = uri(&dockerfile);
    let mut client = Client::start();
    client.open(&compose_uri, "dockercompose", compose);
    assert_eq!(client.diagnostics(&compose_uri), Vec::new());
    // The Dockerfile switches to a CUDA base and is saved: the service
    // that builds it is now a GPU service without /dev/shm.
    let cuda = "FROM nvcr.io/nvidia/pytorch:24.01-py3\n";
    client.open(&dockerfile_uri, "dockerfile", "FROM python:3.12-slim\n");
    client.diagnostics(&dockerfile_uri);
    client.change(&dockerfile_uri, 2, full_change(cuda));
    std::fs::write(&dockerfile, cuda).unwrap();
    client.notify::<lsp::notification::DidSaveTextDocument>(json!({
        "textDocument": {"uri": dockerfile_uri}
    }));
    let started = Instant::now();
    let after = loop {
        let diagnostics = client.diagnostics(&compose_uri);
        if !diagnostics.is_empty() || started.elapsed() > Duration::from_secs(10) {
            break diagnostics;
        }
    };
    let shm = after
        .iter()
        .find(|d| codes(std::slice::from_ref(d)) == ["SHM001"])
        .unwrap_or_else(|| panic!("{after:?}"));
    let related = shm.related_information.as_ref().unwrap();
    assert_eq!(related[0].location.uri, dockerfile_uri);
    assert_eq!(related[0].location.range.start, lsp::Position::new(0, 5));
}

/// The next diagnostics published for `uri` that `done` accepts, waiting
/// out the lints of earlier states.
fn diagnostics_until(
    client: &mut Client,
    uri: &Uri,
    done: impl Fn(&[lsp::Diagnostic]) -> bool,
) -> Vec<lsp::Diagnostic> {
    let started = Instant::now();
    loop {
        let diagnostics = client.diagnostics(uri);
        if done(&diagnostics) || started.elapsed() > Duration::from_secs(10) {
            return diagnostics;
        }
    }
}

#[test]
fn cross_file_findings_follow_an_unsaved_edit_of_the_other_file() {
    let dir = tempfile::tempdir().unwrap();
    let compose = "services:\n  trainer:\n    build: ./trainer\n";
    write(dir.path(), "compose.yaml", compose);
    write(dir.path(), "trainer/Dockerfile", "FROM python:3.12-slim\n");
    let compose_uri = uri(&dir.path().join("compose.yaml"));
    let dockerfile_uri = uri(&dir.path().join("trainer/Dockerfile"));
    let mut client = Client::start();
    client.open(&compose_uri, "dockercompose", compose);
    assert_eq!(client.diagnostics(&compose_uri), Vec::new());
    client.open(&dockerfile_uri, "dockerfile", "FROM python:3.12-slim\n");
    client.diagnostics(&dockerfile_uri);

    // The Dockerfile's buffer switches to a CUDA base and is not saved: the
    // service that builds it is a GPU service without /dev/shm.
    client.change(
        &dockerfile_uri,
        2,
        full_change("FROM nvcr.io/nvidia/pytorch:24.01-py3\n"),
    );
    let after = diagnostics_until(&mut client, &compose_uri, |d| !d.is_empty());
    assert_eq!(codes(&after), ["SHM001"], "{after:?}");
    let related = after[0].related_information.as_ref().unwrap();
    assert_eq!(related[0].location.uri, dockerfile_uri);
    let on_disk = std::fs::read_to_string(dir.path().join("trainer/Dockerfile")).unwrap();
    assert_eq!(on_disk, "FROM python:3.12-slim\n", "nothing was saved");

    // Closed without saving: the compose file builds what is on disk again.
    client.notify::<lsp::notification::DidCloseTextDocument>(json!({
        "textDocument": {"uri": dockerfile_uri}
    }));
    let closed = diagnostics_until(&mut client, &compose_uri, |d| d.is_empty());
    assert_eq!(closed, Vec::new());
}

const GPU_DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: trainer\nspec:\n  selector:\n    matchLabels: {app: trainer}\n  template:\n    metadata:\n      labels: {app: trainer}\n    spec:\n      containers:\n        - name: trainer\n          image: nvcr.io/nvidia/pytorch:24.01-py3\n          resources:\n            limits:\n              nvidia.com/gpu: 8\n";

#[test]
fn quick_fix_mounts_shm_in_a_kubernetes_manifest() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "deploy.yaml", GPU_DEPLOYMENT);
    let uri = uri(&dir.path().join("deploy.yaml"));
    let mut client = Client::start();
    client.open(&uri, "yaml", GPU_DEPLOYMENT);
    let diagnostics = client.diagnostics(&uri);
    let shm = diagnostics
        .iter()
        .find(|d| codes(std::slice::from_ref(d)) == ["K8S004"])
        .unwrap_or_else(|| panic!("{diagnostics:?}"));
    // The container's `name: trainer` value on line 12 (0-based).
    assert_eq!(shm.range.start, lsp::Position::new(12, 16));
    let actions = client.code_actions(&uri, shm.range, Some("quickfix"));
    let fix = actions
        .iter()
        .find(|a| a.is_preferred == Some(true) || a.title.contains("/dev/shm"))
        .unwrap_or_else(|| panic!("{actions:#?}"));
    let fixed = apply(fix, &uri, GPU_DEPLOYMENT);
    assert!(fixed.contains("medium: Memory"), "{fixed}");
    client.change(&uri, 2, full_change(&fixed));
    let after = client.diagnostics(&uri);
    assert!(!codes(&after).contains(&"K8S004".to_string()), "{after:?}");
}

#[test]
fn quick_fix_adds_shm_size_to_a_docker_run_in_a_shell_script() {
    let script = "#!/bin/bash\nsudo docker run --gpus all --rm \\\n  nvcr.io/nvidia/pytorch:24.01-py3 python train.py\n";
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "train.sh", script);
    let uri = uri(&dir.path().join("train.sh"));
    let mut client = Client::start();
    client.open(&uri, "shellscript", script);
    let diagnostics = client.diagnostics(&uri);
    let shm = diagnostics
        .iter()
        .find(|d| codes(std::slice::from_ref(d)) == ["SHM001"])
        .unwrap_or_else(|| panic!("{diagnostics:?}"));
    // `docker run` on line 2 (0-based 1), after `sudo `.
    assert_eq!(
        shm.range,
        lsp::Range::new(lsp::Position::new(1, 5), lsp::Position::new(1, 15))
    );
    let actions = client.code_actions(&uri, shm.range, Some("quickfix"));
    let fix = actions
        .iter()
        .find(|a| a.title == "Add `--shm-size=8gb`")
        .unwrap_or_else(|| panic!("{actions:#?}"));
    let fixed = apply(fix, &uri, script);
    assert_eq!(
        fixed,
        "#!/bin/bash\nsudo docker run --shm-size=8gb --gpus all --rm \\\n  nvcr.io/nvidia/pytorch:24.01-py3 python train.py\n"
    );
    client.change(&uri, 2, full_change(&fixed));
    assert!(client.diagnostics(&uri).is_empty());
}

/// Reads one `Content-Length` framed message from the server's stdout.
fn read_framed(out: &mut impl std::io::BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if out.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(value) = line.strip_prefix("Content-Length: ") {
            length = Some(value.parse::<usize>().unwrap());
        }
    }
    let mut body = vec![0; length?];
    out.read_exact(&mut body).ok()?;
    Some(serde_json::from_slice(&body).unwrap())
}

fn frame(body: &str) -> String {
    format!("Content-Length: {}\r\n\r\n{body}", body.len())
}

/// `gpulint server` as a process, with a reader thread and a receive
/// timeout: a server that died or hangs fails the test instead of blocking
/// it.
struct StdioServer {
    process: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    replies: crossbeam_channel::Receiver<Value>,
}

impl StdioServer {
    fn start() -> StdioServer {
        use std::process::{Command, Stdio};
        let mut process = Command::new(env!("CARGO_BIN_EXE_gpulint"))
            .arg("server")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = process.stdin.take();
        let stdout = process.stdout.take().unwrap();
        let (sender, replies) = crossbeam_channel::unbounded();
        std::thread::spawn(move || {
            let mut stdout = std::io::BufReader::new(stdout);
            while let Some(message) = read_framed(&mut stdout) {
                if sender.send(message).is_err() {
                    break;
                }
            }
        });
        StdioServer {
            process,
            stdin,
            replies,
        }
    }

    fn send(&mut self, sent: &str) {
        use std::io::Write;
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(sent.as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    /// Sends `sent` and waits for the next message from the server.
    fn next(&mut self, sent: &str) -> Value {
        self.send(sent);
        self.replies
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("no reply to {sent:?}"))
    }

    fn initialize(&mut self, id: i32) {
        let initialize = json!({
            "jsonrpc": "2.0", "id": id, "method": "initialize",
            "params": {"capabilities": {}, "processId": null, "rootUri": null},
        });
        let reply = self.next(&frame(&initialize.to_string()));
        assert_eq!(reply["id"], id, "{reply}");
        assert_eq!(reply["result"]["serverInfo"]["name"], "gpulint", "{reply}");
        self.send(&frame(
            r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#,
        ));
    }

    /// Sends `exit` and returns the exit status, waiting at most a minute.
    fn exit(mut self) -> i32 {
        self.send(&frame(r#"{"jsonrpc":"2.0","method":"exit"}"#));
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = self.process.try_wait().unwrap() {
                return status.code().unwrap();
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

#[test]
fn malformed_messages_get_json_rpc_errors_and_the_server_goes_on() {
    let mut server = StdioServer::start();
    let reply = server.next(&frame("{bad}"));
    assert_eq!(reply["error"]["code"], -32700, "{reply}");
    assert_eq!(reply["id"], Value::Null, "{reply}");
    let reply = server.next(&frame("[]"));
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert_eq!(reply["id"], Value::Null, "{reply}");
    let reply = server.next("Content-Type: application/json\r\n\r\n");
    assert_eq!(reply["error"]["code"], -32700, "{reply}");

    server.initialize(1);
    // Bad input after initialization too.
    let reply = server.next(&frame("{\"jsonrpc\": \"2.0\", \"id\": 2,"));
    assert_eq!(reply["error"]["code"], -32700, "{reply}");
    let shutdown = json!({"jsonrpc": "2.0", "id": 3, "method": "shutdown"});
    let reply = server.next(&frame(&shutdown.to_string()));
    assert_eq!(reply["id"], 3, "{reply}");
    assert_eq!(server.exit(), 0);
}

#[test]
fn a_huge_content_length_is_refused_at_once_and_the_server_goes_on() {
    let mut server = StdioServer::start();
    // A gigabyte announced, never sent: the answer cannot wait for it.
    let reply = server.next("Content-Length: 1000000000\r\n\r\n");
    assert_eq!(reply["error"]["code"], -32700, "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("over the limit"),
        "{reply}"
    );
    server.initialize(1);
    let shutdown = json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"});
    assert_eq!(server.next(&frame(&shutdown.to_string()))["id"], 2);
    assert_eq!(server.exit(), 0);
}

#[test]
fn the_server_process_follows_the_lifecycle_and_exits_one_without_shutdown() {
    let mut server = StdioServer::start();
    let hover = json!({"jsonrpc": "2.0", "id": 1, "method": "textDocument/hover",
        "params": {"textDocument": {"uri": "file:///x/compose.yaml"}, "position": {"line": 0, "character": 0}}});
    let reply = server.next(&frame(&hover.to_string()));
    assert_eq!(reply["error"]["code"], SERVER_NOT_INITIALIZED, "{reply}");
    let bad =
        json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"capabilities": 5}});
    let reply = server.next(&frame(&bad.to_string()));
    assert_eq!(reply["error"]["code"], INVALID_PARAMS, "{reply}");
    server.initialize(3);
    assert_eq!(server.exit(), 1);
}

/// The error code of a failed call, or a panic naming what came instead.
fn error_code(answer: Result<Value, lsp_server::ResponseError>) -> i32 {
    match answer {
        Err(error) => error.code,
        Ok(value) => panic!("an error was expected, got {value}"),
    }
}

const SERVER_NOT_INITIALIZED: i32 = -32002;
const INVALID_REQUEST: i32 = -32600;
const INVALID_PARAMS: i32 = -32602;

#[test]
fn before_initialize_requests_get_server_not_initialized_and_notifications_are_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let uri = uri(&dir.path().join("compose.yaml"));
    let mut client = Client::connect();
    let hover = json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}});
    assert_eq!(
        error_code(client.call("textDocument/hover", hover.clone())),
        SERVER_NOT_INITIALIZED
    );
    assert_eq!(
        error_code(client.call("shutdown", Value::Null)),
        SERVER_NOT_INITIALIZED
    );
    // Dropped: once initialized, the document is unknown.
    client.open(&uri, "yaml", GPU_COMPOSE);
    client.notify::<lsp::notification::Initialized>(json!({}));
    let result = client.request::<lsp::request::Initialize>(json!({"capabilities": {}}));
    assert_eq!(result["serverInfo"]["name"], "gpulint");
    assert_eq!(
        client.request::<lsp::request::HoverRequest>(hover),
        Value::Null
    );
    assert!(client.published.is_empty(), "{:?}", client.published);
}

#[test]
fn initialize_with_params_that_do_not_deserialize_is_invalid_params_and_the_server_waits() {
    let mut client = Client::connect();
    for params in [
        Value::Null,
        json!({"capabilities": 5}),
        json!({"capabilities": {}, "processId": "one"}),
    ] {
        assert_eq!(
            error_code(client.call("initialize", params.clone())),
            INVALID_PARAMS,
            "{params}"
        );
    }
    let result = client.request::<lsp::request::Initialize>(json!({"capabilities": {}}));
    assert_eq!(result["serverInfo"]["name"], "gpulint");
    // Only once.
    assert_eq!(
        error_code(client.call("initialize", json!({"capabilities": {}}))),
        INVALID_REQUEST
    );
    client.notify::<lsp::notification::Initialized>(json!({}));
}

#[test]
fn messages_between_the_initialize_answer_and_initialized_are_served() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "compose.yaml", GPU_COMPOSE);
    let uri = uri(&dir.path().join("compose.yaml"));
    let mut client = Client::connect();
    client.request::<lsp::request::Initialize>(json!({"capabilities": {}}));
    // No `initialized` yet.
    client.notify::<lsp::notification::Cancel>(json!({"id": 99}));
    client.open(&uri, "yaml", GPU_COMPOSE);
    assert!(codes(&client.diagnostics(&uri)).contains(&"SHM001".to_string()));
    let hover = client.request::<lsp::request::HoverRequest>(json!({
        "textDocument": {"uri": uri}, "position": {"line": 1, "character": 4},
    }));
    assert!(hover["contents"]["value"].is_string(), "{hover}");
    client.notify::<lsp::notification::Initialized>(json!({}));
    client.change(&uri, 2, full_change("services: {}\n"));
    assert!(client.diagnostics(&uri).is_empty());
}

#[test]
fn after_shutdown_every_request_is_invalid_and_only_exit_ends_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let uri = uri(&dir.path().join("compose.yaml"));
    let mut client = Client::start();
    assert_eq!(
        client.request::<lsp::request::Shutdown>(Value::Null),
        Value::Null
    );
    assert_eq!(
        error_code(client.call("shutdown", Value::Null)),
        INVALID_REQUEST
    );
    let hover = json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}});
    assert_eq!(
        error_code(client.call("textDocument/hover", hover)),
        INVALID_REQUEST
    );
    assert_eq!(
        error_code(client.call("initialize", json!({"capabilities": {}}))),
        INVALID_REQUEST
    );
    // Notifications are ignored: nothing is published.
    client.open(&uri, "yaml", GPU_COMPOSE);
    assert_eq!(
        error_code(client.call("textDocument/hover", Value::Null)),
        INVALID_REQUEST
    );
    assert!(client.published.is_empty(), "{:?}", client.published);
    assert_eq!(client.exit(), gpulint::lsp::Ending::AfterShutdown);
}

#[test]
fn exit_without_shutdown_ends_with_status_one() {
    let client = Client::start();
    let ending = client.exit();
    assert_eq!(ending, gpulint::lsp::Ending::WithoutShutdown);
    assert_eq!(ending.exit_status(), 1);
    assert_eq!(gpulint::lsp::Ending::AfterShutdown.exit_status(), 0);
    // Before `initialize` too.
    assert_eq!(
        Client::connect().exit(),
        gpulint::lsp::Ending::WithoutShutdown
    );
}

#[test]
fn lone_cr_line_endings_give_the_editors_positions() {
    let dir = tempfile::tempdir().unwrap();
    let text = GPU_COMPOSE.replace('\n', "\r");
    write(dir.path(), "compose.yaml", &text);
    let uri = uri(&dir.path().join("compose.yaml"));
    let mut client = Client::start();
    client.open(&uri, "yaml", &text);
    let diagnostics = client.diagnostics(&uri);
    let shm = diagnostics
        .iter()
        .find(|d| codes(std::slice::from_ref(d)) == ["SHM001"])
        .unwrap_or_else(|| panic!("{diagnostics:?}"));
    // `trainer` on line 2 (0-based 1), columns 2..9, as an editor counts.
    assert_eq!(
        shm.range,
        lsp::Range::new(lsp::Position::new(1, 2), lsp::Position::new(1, 9))
    );
    let actions = client.code_actions(&uri, shm.range, Some("quickfix"));
    let fix = actions
        .iter()
        .find(|a| a.title.starts_with("Add `shm_size"))
        .unwrap_or_else(|| panic!("{actions:#?}"));
    let fixed = apply(fix, &uri, &text);
    assert!(fixed.contains("\r    shm_size: \"8gb\"\r"), "{fixed:?}");
}

/// The interpolation bombs a hostile project can hold give a located
/// error, in the editor too: a `.env` whose lines double (open unsaved in
/// the editor: the buffer is read, not the disk) and `${a:-...}` nested
/// 30,000 deep in a compose value.
#[test]
fn interpolation_bombs_are_located_errors_in_the_editor() {
    let dir = tempfile::tempdir().unwrap();
    let mut env = String::from("A0=xxxxxxxx\n");
    for i in 1..40 {
        env.push_str(&format!("A{i}=${{A{p}}}${{A{p}}}\n", p = i - 1));
    }
    write(dir.path(), ".env", "");
    let compose = "services:\n  t:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n    shm_size: ${A39}\n";
    write(dir.path(), "compose.yaml", compose);
    let compose_uri = uri(&dir.path().join("compose.yaml"));
    let env_uri = uri(&dir.path().join(".env"));
    let mut client = Client::start();
    client.open(&env_uri, "dotenv", &env);
    client.open(&compose_uri, "dockercompose", compose);
    // The `.env` is no file the editor lints: the refusal is on the compose
    // file's first line, pointing at the `.env` line.
    let found = diagnostics_until(&mut client, &compose_uri, |d| !d.is_empty());
    assert_eq!(codes(&found), ["PROJ001"], "{found:?}");
    assert!(found[0].message.contains("expands past 1 MiB"), "{found:?}");
    assert_eq!(found[0].range.start, lsp::Position::new(0, 0));
    let related = found[0].related_information.as_ref().unwrap();
    assert_eq!(related[0].location.uri, env_uri);
    assert_eq!(related[0].location.range.start.line, 18, "{found:?}");

    let nested = format!(
        "services:\n  t:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n    shm_size: \"{}8gb{}\"\n",
        "${a:-".repeat(30_000),
        "}".repeat(30_000)
    );
    client.change(&compose_uri, 2, full_change(&nested));
    let found = diagnostics_until(&mut client, &compose_uri, |d| {
        d.iter()
            .any(|d| d.message.contains("nests deeper than 64 levels"))
    });
    let deep = found
        .iter()
        .find(|d| d.message.contains("nests deeper than 64 levels"))
        .unwrap_or_else(|| panic!("{found:?}"));
    assert_eq!(deep.range.start, lsp::Position::new(4, 14));
    // Reported once, as the project's refusal (not again as a bad size).
    let deep_codes: Vec<_> = found
        .iter()
        .filter(|d| d.message.contains("nests deeper"))
        .cloned()
        .collect();
    assert_eq!(codes(&deep_codes), ["PROJ001"], "{found:?}");
}

/// A code-action request over the whole of a file with a finding on every
/// line (a compose file named `Dockerfile`: 600 DF000 syntax errors) used
/// to lint the file once per finding for its suppression, which made the
/// request quadratic (the lsp fuzz target timed out). Only the first
/// findings of a request's range get verified actions now.
#[test]
fn code_actions_over_a_whole_file_verify_a_bounded_number_of_findings() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..600)
        .map(|i| format!("  key{i}: value\n"))
        .collect::<String>();
    write(dir.path(), "Dockerfile", &text);
    let uri = uri(&dir.path().join("Dockerfile"));
    let mut client = Client::start();
    client.open(&uri, "dockerfile", &text);
    let findings = client.diagnostics(&uri);
    assert!(findings.len() >= 600, "{}", findings.len());
    let everything = lsp::Range::new(lsp::Position::new(0, 0), lsp::Position::new(600, 0));
    let actions = client.code_actions(&uri, everything, Some("quickfix"));
    let limit = gpulint::lsp::MAX_VERIFIED_FINDINGS;
    assert!(
        !actions.is_empty() && actions.len() <= 2 * limit,
        "{} actions for {} findings",
        actions.len(),
        findings.len()
    );
    // The cursor's own line still gets its suppression.
    let last = lsp::Range::new(lsp::Position::new(599, 2), lsp::Position::new(599, 2));
    let actions = client.code_actions(&uri, last, Some("quickfix"));
    assert_eq!(actions.len(), 1, "{actions:#?}");
    assert!(
        actions[0].title.starts_with("Suppress DF000"),
        "{}",
        actions[0].title
    );
}

/// A kustomize patch is a partial manifest: alone, this one is a GPU
/// container with a /dev/shm volume it does not mount. The server builds
/// the overlay of the patch's directory, with the buffer as it is, and
/// reports what the build finds in the patch: its /dev/shm is too small,
/// and no longer once the unsaved edit makes it larger.
#[test]
fn a_kustomize_patch_gets_what_its_overlays_build_finds_in_it() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "base/deploy.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: trainer\nspec:\n  template:\n    spec:\n      containers:\n      - name: main\n        image: nvcr.io/nvidia/pytorch:24.01-py3\n        command: [torchrun, --nproc_per_node=8, train.py]\n        volumeMounts:\n        - {name: dshm, mountPath: /dev/shm}\n      volumes:\n      - name: dshm\n        emptyDir: {medium: Memory, sizeLimit: 16Gi}\n",
    );
    write(
        dir.path(),
        "base/kustomization.yaml",
        "resources: [deploy.yaml]\n",
    );
    write(
        dir.path(),
        "overlay/kustomization.yaml",
        "resources: [../base]\npatches:\n- path: gpu.yaml\n",
    );
    let patch = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: trainer\nspec:\n  template:\n    spec:\n      containers:\n      - name: main\n        resources:\n          limits:\n            nvidia.com/gpu: 8\n      volumes:\n      - name: dshm\n        emptyDir:\n          medium: Memory\n          sizeLimit: 64Mi\n";
    write(dir.path(), "overlay/gpu.yaml", patch);
    let patch_uri = uri(&dir.path().join("overlay/gpu.yaml"));
    let mut client = Client::start();
    client.open(&patch_uri, "yaml", patch);
    let found = client.diagnostics(&patch_uri);
    assert_eq!(codes(&found), ["SHM002"], "{found:?}");
    client.change(&patch_uri, 2, full_change(&patch.replace("64Mi", "16Gi")));
    let edited = client.diagnostics(&patch_uri);
    assert!(edited.is_empty(), "{edited:?}");
}
