//! The server's loop and its documents: what each message does, when a
//! document is linted, and what a lint of it gives.

use super::{actions, convert, transport};

use crate::engine::config::Config;
use crate::engine::discover::ConfigResolver;
use crate::engine::{self, FileKind, FileReport, Overlay, Session};
use crossbeam_channel::RecvTimeoutError;
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::Notification as _;
use lsp_types::request::Request as _;
use lsp_types::{self as lsp, Uri};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long edits must pause before a document is linted again.
pub const DEBOUNCE: Duration = Duration::from_millis(50);

/// The files whose changes on disk can change an open document's findings,
/// as the globs the server asks a client to watch: the configuration, the
/// compose files, Dockerfiles and manifests a file refers to, a compose
/// project's `.env` and `env_file`s, and the dev containers and Quadlet
/// units that build or name them. Any change re-lints every open document.
const WATCHED_FILES: &[&str] = &[
    "**/gpulint.toml",
    "**/*.{yml,yaml}",
    "**/*{Dockerfile,Containerfile,dockerfile,containerfile}*",
    "**/.env",
    "**/*.env",
    "**/{devcontainer.json,.devcontainer.json}",
    "**/*.container",
];

/// Serves one client on stdin/stdout until it exits; the exit status is
/// the one the protocol asks for (0 after `shutdown`, 1 without).
pub(crate) fn run_stdio() -> anyhow::Result<Ending> {
    // Our own transport: lsp-server's stops at the first malformed message.
    let (connection, io_threads) = transport::stdio();
    let ending = serve(connection)?;
    // The reader stops at `exit` or the end of input; the writer once the
    // connection's sender is dropped, with `serve`'s return.
    io_threads.join()?;
    Ok(ending)
}

/// How a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// `exit` (or the end of input) after a `shutdown` request.
    AfterShutdown,
    /// `exit` (or the end of input) with no `shutdown` before it.
    WithoutShutdown,
}

impl Ending {
    /// The process's exit status, as the LSP specification asks: 0 when
    /// `shutdown` came first, 1 otherwise.
    pub fn exit_status(self) -> u8 {
        match self {
            Ending::AfterShutdown => 0,
            Ending::WithoutShutdown => 1,
        }
    }
}

/// JSON-RPC error codes the lifecycle answers with (LSP 3.17, "Lifecycle
/// Messages"): a request before `initialize`, and one the current state
/// forbids (a second `initialize`, anything after `shutdown`).
const SERVER_NOT_INITIALIZED: i32 = -32002;
const INVALID_REQUEST: i32 = -32600;

/// Serves one client on `connection` (stdio, or an in-memory pair in
/// tests) until `exit` or the end of input, following the protocol's
/// lifecycle in every state: before `initialize`, requests are answered
/// with ServerNotInitialized and notifications dropped; an `initialize`
/// whose params do not deserialize gets InvalidParams and the server waits
/// for a good one; after the answer to `initialize` every message is
/// served, whether or not `initialized` came yet; after `shutdown` every
/// request gets InvalidRequest. Only `exit` (or the client going away) ends
/// it.
pub fn serve(connection: Connection) -> anyhow::Result<Ending> {
    let Some(params) = await_initialize(&connection)? else {
        return Ok(Ending::WithoutShutdown);
    };
    let mut server = Server {
        connection: &connection,
        documents: HashMap::new(),
        due: BTreeMap::new(),
        next_request: 0,
        watch_files_when_initialized: watches_files_dynamically(&params),
        session: None,
        session_is_stale: true,
    };
    if !server.run() {
        return Ok(Ending::WithoutShutdown);
    }
    await_exit(&connection);
    Ok(Ending::AfterShutdown)
}

fn capabilities() -> lsp::ServerCapabilities {
    lsp::ServerCapabilities {
        text_document_sync: Some(lsp::TextDocumentSyncCapability::Options(
            lsp::TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(lsp::TextDocumentSyncKind::INCREMENTAL),
                save: Some(lsp::TextDocumentSyncSaveOptions::Supported(true)),
                ..Default::default()
            },
        )),
        code_action_provider: Some(lsp::CodeActionProviderCapability::Options(
            lsp::CodeActionOptions {
                code_action_kinds: Some(vec![
                    lsp::CodeActionKind::QUICKFIX,
                    actions::FIX_ALL.clone(),
                ]),
                ..Default::default()
            },
        )),
        hover_provider: Some(lsp::HoverProviderCapability::Simple(true)),
        ..Default::default()
    }
}

/// Waits for an `initialize` request that can be served and answers it;
/// `None` when the client exits or goes away first.
fn await_initialize(connection: &Connection) -> anyhow::Result<Option<lsp::InitializeParams>> {
    let send = |message: Message| {
        // The client going away ends the loop on the next receive.
        let _ = connection.sender.send(message);
    };
    for message in &connection.receiver {
        match message {
            Message::Request(request) if request.method == lsp::request::Initialize::METHOD => {
                match parse::<lsp::InitializeParams>(request.params) {
                    Ok(params) => {
                        let result = lsp::InitializeResult {
                            capabilities: capabilities(),
                            server_info: Some(lsp::ServerInfo {
                                name: "gpulint".to_string(),
                                version: Some(env!("CARGO_PKG_VERSION").to_string()),
                            }),
                        };
                        send(Response::new_ok(request.id, serde_json::to_value(result)?).into());
                        return Ok(Some(params));
                    }
                    Err((code, reason)) => send(
                        Response::new_err(
                            request.id,
                            code as i32,
                            format!("initialize: invalid params: {reason}"),
                        )
                        .into(),
                    ),
                }
            }
            Message::Request(request) => send(
                Response::new_err(
                    request.id,
                    SERVER_NOT_INITIALIZED,
                    format!(
                        "`{}` before `initialize`: the server is not initialized",
                        request.method
                    ),
                )
                .into(),
            ),
            Message::Notification(n) if n.method == lsp::notification::Exit::METHOD => {
                return Ok(None);
            }
            // Other notifications before `initialize` are dropped, as the
            // specification asks; responses answer nothing we sent.
            Message::Notification(_) | Message::Response(_) => {}
        }
    }
    Ok(None)
}

/// After `shutdown`: every request is an InvalidRequest until `exit`.
fn await_exit(connection: &Connection) {
    for message in &connection.receiver {
        match message {
            Message::Request(request) => {
                let reply = Response::new_err(
                    request.id,
                    INVALID_REQUEST,
                    format!(
                        "`{}` after `shutdown`: the server only waits for `exit`",
                        request.method
                    ),
                );
                let _ = connection.sender.send(reply.into());
            }
            Message::Notification(n) if n.method == lsp::notification::Exit::METHOD => return,
            Message::Notification(_) | Message::Response(_) => {}
        }
    }
}

fn watches_files_dynamically(params: &lsp::InitializeParams) -> bool {
    params
        .capabilities
        .workspace
        .as_ref()
        .and_then(|w| w.did_change_watched_files.as_ref())
        .and_then(|w| w.dynamic_registration)
        .unwrap_or(false)
}

/// An open document.
pub(super) struct Document {
    pub(super) uri: Uri,
    pub(super) version: i32,
    pub(super) text: String,
    /// The file it is linted as: its path, or a name for an unsaved buffer.
    pub(super) path: PathBuf,
    /// The language the editor gave it (`yaml`, `dockerfile`, `dockercompose`...).
    pub(super) language: String,
    /// The findings of the last lint of this version.
    pub(super) report: Option<Arc<FileReport>>,
}

struct Server<'a> {
    connection: &'a Connection,
    /// Keyed by URI text.
    documents: HashMap<String, Document>,
    /// Documents to lint, and when.
    due: BTreeMap<String, Instant>,
    next_request: i32,
    /// Whether to register file watchers once the client says
    /// `initialized` (the client supports dynamic registration).
    watch_files_when_initialized: bool,
    /// The files read and parsed so far, kept between lints: renewed (see
    /// [`Session::renewed`]) when a document or file changes, so a tick
    /// after a keystroke reads and parses only what changed.
    session: Option<Arc<Session>>,
    /// Whether a document or file changed since `session` was made.
    session_is_stale: bool,
}

impl Server<'_> {
    /// Serves messages until `shutdown` (true) or `exit` or the end of
    /// input (false).
    fn run(&mut self) -> bool {
        loop {
            let now = Instant::now();
            let wait = self
                .due
                .values()
                .min()
                .map_or(Duration::from_secs(3600), |&at| {
                    at.saturating_duration_since(now)
                });
            match self.connection.receiver.recv_timeout(wait) {
                Ok(Message::Request(request)) => match request.method.as_str() {
                    lsp::request::Shutdown::METHOD => {
                        self.send(Response::new_ok(request.id, ()));
                        return true;
                    }
                    lsp::request::Initialize::METHOD => self.send(Response::new_err(
                        request.id,
                        INVALID_REQUEST,
                        "`initialize` may only be sent once".to_string(),
                    )),
                    _ => self.handle_request(request),
                },
                Ok(Message::Notification(notification)) => {
                    if notification.method == lsp::notification::Exit::METHOD {
                        return false;
                    }
                    self.handle_notification(notification);
                }
                Ok(Message::Response(_)) => {} // to our registration request
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return false,
            }
            self.lint_due();
        }
    }

    fn send(&self, message: impl Into<Message>) {
        // The client going away ends the loop on the next receive.
        let _ = self.connection.sender.send(message.into());
    }

    fn notify<N: lsp::notification::Notification>(&self, params: N::Params) {
        self.send(Notification::new(N::METHOD.to_string(), params));
    }

    /// Asks the client to tell us when files that findings depend on
    /// change, once, if it can register watchers dynamically.
    fn watch_files(&mut self) {
        if !std::mem::take(&mut self.watch_files_when_initialized) {
            return;
        }
        let watchers = WATCHED_FILES
            .iter()
            .map(|glob| lsp::FileSystemWatcher {
                glob_pattern: lsp::GlobPattern::String(glob.to_string()),
                kind: None,
            })
            .collect();
        let registration = lsp::Registration {
            id: "gpulint-watched-files".to_string(),
            method: lsp::notification::DidChangeWatchedFiles::METHOD.to_string(),
            register_options: serde_json::to_value(lsp::DidChangeWatchedFilesRegistrationOptions {
                watchers,
            })
            .ok(),
        };
        self.next_request += 1;
        self.send(Request::new(
            RequestId::from(format!("gpulint-{}", self.next_request)),
            lsp::request::RegisterCapability::METHOD.to_string(),
            lsp::RegistrationParams {
                registrations: vec![registration],
            },
        ));
    }

    fn handle_notification(&mut self, notification: Notification) {
        use lsp::notification as n;
        match notification.method.as_str() {
            // The time to register capabilities dynamically.
            n::Initialized::METHOD => self.watch_files(),
            n::DidOpenTextDocument::METHOD => {
                let Ok(params) = parse::<lsp::DidOpenTextDocumentParams>(notification.params)
                else {
                    return;
                };
                let item = params.text_document;
                let key = item.uri.as_str().to_string();
                let path = document_path(&item.uri);
                self.documents.insert(
                    key.clone(),
                    Document {
                        uri: item.uri,
                        version: item.version,
                        text: item.text,
                        path,
                        language: item.language_id,
                        report: None,
                    },
                );
                self.due.insert(key, Instant::now());
                self.session_is_stale = true;
            }
            n::DidChangeTextDocument::METHOD => {
                let Ok(params) = parse::<lsp::DidChangeTextDocumentParams>(notification.params)
                else {
                    return;
                };
                let key = params.text_document.uri.as_str().to_string();
                let Some(document) = self.documents.get_mut(&key) else {
                    return;
                };
                for change in params.content_changes {
                    convert::apply_change(&mut document.text, change);
                }
                document.version = params.text_document.version;
                self.session_is_stale = true;
                // Every open document may read this one (a compose file
                // building an edited Dockerfile): all are linted again.
                let at = Instant::now() + DEBOUNCE;
                for (key, document) in &mut self.documents {
                    document.report = None;
                    self.due.insert(key.clone(), at);
                }
            }
            n::DidCloseTextDocument::METHOD => {
                let Ok(params) = parse::<lsp::DidCloseTextDocumentParams>(notification.params)
                else {
                    return;
                };
                let key = params.text_document.uri.as_str().to_string();
                self.documents.remove(&key);
                self.due.remove(&key);
                self.notify::<n::PublishDiagnostics>(lsp::PublishDiagnosticsParams {
                    uri: params.text_document.uri,
                    diagnostics: Vec::new(),
                    version: None,
                });
                // Its buffer no longer stands in for the file: the others
                // read the disk again.
                self.relint_all();
            }
            // Another file's contents or the configuration may have changed:
            // every open document's findings may depend on them.
            n::DidSaveTextDocument::METHOD
            | n::DidChangeWatchedFiles::METHOD
            | n::DidChangeConfiguration::METHOD => self.relint_all(),
            _ => {}
        }
    }

    /// A session that reads the open documents' buffers over the disk. Only
    /// documents of files are in it: an untitled buffer is no file another
    /// one can refer to.
    fn session(&mut self) -> Arc<Session> {
        if let Some(session) = self.session.as_ref().filter(|_| !self.session_is_stale) {
            return session.clone();
        }
        let buffers = self
            .documents
            .values()
            .filter(|d| d.path.is_absolute())
            .map(|d| (d.path.clone(), d.text.clone()));
        let overlay = Overlay::new(buffers);
        let session = Arc::new(match &self.session {
            Some(previous) => previous.renewed(overlay),
            None => Session::revalidating(overlay),
        });
        self.session = Some(session.clone());
        self.session_is_stale = false;
        session
    }

    fn relint_all(&mut self) {
        self.session_is_stale = true;
        let now = Instant::now();
        for key in self.documents.keys() {
            self.due.entry(key.clone()).or_insert(now);
        }
    }

    fn lint_due(&mut self) {
        let now = Instant::now();
        let ready: Vec<String> = self
            .due
            .iter()
            .filter(|&(_, &at)| at <= now)
            .map(|(key, _)| key.clone())
            .collect();
        if ready.is_empty() {
            return;
        }
        let session = self.session();
        for key in ready {
            self.due.remove(&key);
            let Some(document) = self.documents.get_mut(&key) else {
                continue;
            };
            let report = Arc::new(lint(&session, document));
            let diagnostics = convert::diagnostics(&report, lints_as_gpulint_file(document));
            document.report = Some(report);
            let params = lsp::PublishDiagnosticsParams {
                uri: document.uri.clone(),
                diagnostics,
                version: Some(document.version),
            };
            self.notify::<lsp::notification::PublishDiagnostics>(params);
        }
    }

    /// The findings of the document's current text, linting it now if an
    /// edit is still waiting out the debounce.
    fn report(&mut self, uri: &Uri) -> Option<(Arc<FileReport>, &Document)> {
        let key = uri.as_str();
        if self.documents.get(key)?.report.is_none() {
            let session = self.session();
            let document = self.documents.get_mut(key)?;
            document.report = Some(Arc::new(lint(&session, document)));
        }
        let document = &self.documents[key];
        Some((document.report.clone()?, document))
    }

    fn handle_request(&mut self, request: Request) {
        use lsp::request as r;
        let id = request.id.clone();
        // A bug in a handler must not take the editor's linting down.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let result: Result<serde_json::Value, (ErrorCode, String)> =
                match request.method.as_str() {
                    r::CodeActionRequest::METHOD => {
                        let params: lsp::CodeActionParams = parse(request.params)?;
                        let Some((report, _)) = self.report(&params.text_document.uri) else {
                            return Ok(serde_json::Value::Null);
                        };
                        let session = self.session();
                        let Some(document) = self.documents.get(params.text_document.uri.as_str())
                        else {
                            return Ok(serde_json::Value::Null);
                        };
                        let actions = actions::code_actions(&session, document, &report, &params);
                        Ok(serde_json::to_value(actions).expect("serializable"))
                    }
                    r::HoverRequest::METHOD => {
                        let params: lsp::HoverParams = parse(request.params)?;
                        let position = params.text_document_position_params;
                        let Some((report, document)) = self.report(&position.text_document.uri)
                        else {
                            return Ok(serde_json::Value::Null);
                        };
                        let hover = actions::hover(document, &report, position.position);
                        Ok(serde_json::to_value(hover).expect("serializable"))
                    }
                    method => Err((
                        ErrorCode::MethodNotFound,
                        format!("gpulint does not handle `{method}`"),
                    )),
                };
            result
        }));
        let response = match result {
            Ok(Ok(value)) => Response::new_ok(id, value),
            Ok(Err((code, message))) => Response::new_err(id, code as i32, message),
            Err(_) => Response::new_err(
                id,
                ErrorCode::InternalError as i32,
                "gpulint failed on this request; please report it".to_string(),
            ),
        };
        self.send(response);
    }
}

fn parse<T: serde::de::DeserializeOwned>(
    params: serde_json::Value,
) -> Result<T, (ErrorCode, String)> {
    serde_json::from_value(params).map_err(|e| (ErrorCode::InvalidParams, e.to_string()))
}

/// The path a document is linted as: its file, or for an unsaved buffer a
/// name that keeps its kind (`untitled:Dockerfile` is still a Dockerfile).
fn document_path(uri: &Uri) -> PathBuf {
    crate::output::file_uri_path(uri.as_str()).unwrap_or_else(|| {
        let name = uri.as_str().rsplit(['/', ':']).next().unwrap_or("untitled");
        PathBuf::from(name)
    })
}

/// Whether the document is one gpulint owns, so that even a syntax error in
/// it is worth reporting: a Dockerfile, a compose file, a Kubernetes
/// manifest. Other YAML (CI workflows, Helm values) only gets findings.
fn lints_as_gpulint_file(document: &Document) -> bool {
    let name = crate::vfs::file_name_text(&document.path);
    FileKind::of_text(&document.path, &document.text) == FileKind::Dockerfile
        || matches!(document.language.as_str(), "dockerfile" | "dockercompose")
        || crate::engine::discover::is_compose_file_name(&name)
        || (document.text.contains("apiVersion") && document.text.contains("kind"))
}

/// Lints a document with the configuration that applies to its path, read
/// now through the session (so edits to `gpulint.toml` apply, saved or not).
fn lint(session: &Session, document: &Document) -> FileReport {
    match config_for(session, document) {
        Ok(config) => lint_with(session, document, &config),
        Err(message) => {
            let error = engine::FileError::new(message);
            FileReport::failed(document.path.clone(), document.text.clone(), error)
        }
    }
}

/// The configuration for the document's path: the nearest `gpulint.toml`
/// above it, read now (its open buffer, if the editor has one).
pub(super) fn config_for(session: &Session, document: &Document) -> Result<Arc<Config>, String> {
    ConfigResolver::new(None, None, Vec::new())
        .for_file_through(session.system(), &document.path)
        .map_err(|e| format!("invalid gpulint configuration: {e}"))
}

pub(super) fn lint_with(session: &Session, document: &Document, config: &Config) -> FileReport {
    let own = session.check_text(document.path.clone(), document.text.clone(), config);
    with_overlays(session, document, config, own)
}

/// How many directories above a document are looked at for a
/// kustomization that builds it.
const KUSTOMIZATIONS_ABOVE: usize = 8;

/// A document a kustomization in its directory or above builds (its
/// buffer as the editor has it): what the builds find in it. A patch or
/// the kustomization itself, partial manifests alone, gets only that, as
/// `gpulint check` reports them; another file gets it beside its own
/// findings (same rule, same place: one finding).
fn with_overlays(
    session: &Session,
    document: &Document,
    config: &Config,
    own: FileReport,
) -> FileReport {
    use crate::project::kustomize::{is_kustomization_name, kustomization_in};
    use crate::vfs::normalize;
    if !crate::engine::discover::is_yaml_file_name(&document.path)
        && !is_kustomization_name(&document.path)
    {
        return own;
    }
    let key = normalize(&document.path);
    let mut source = None;
    let mut found = crate::engine::FindingsElsewhere::default();
    let mut partial = is_kustomization_name(&document.path);
    let dirs = document.path.ancestors().skip(1).take(KUSTOMIZATIONS_ABOVE);
    for dir in dirs {
        let dir = if dir.as_os_str().is_empty() {
            std::path::Path::new(".")
        } else {
            dir
        };
        let Some(kustomization) = kustomization_in(&session.workspace().files, dir) else {
            continue;
        };
        let Ok(lint) = session.lint_overlay(&kustomization, config) else {
            continue;
        };
        let Some(read) = lint.files.iter().find(|f| normalize(&f.path) == key) else {
            continue;
        };
        source.get_or_insert_with(|| read.clone());
        partial |= engine::kustomize::overlay_files(session.system(), dir)
            .is_some_and(|(_, patches)| patches.iter().any(|p| normalize(p) == key));
        for (file, diagnostics) in lint.findings {
            if normalize(&file.path) == key {
                for d in diagnostics {
                    found.add(&file, d);
                }
            }
        }
    }
    let Some(source) = source else {
        return own;
    };
    if own.error.is_some() && !partial {
        return own;
    }
    let mut diagnostics = if partial { Vec::new() } else { own.diagnostics };
    let beyond = match found.get(&document.path) {
        Some((_, found)) => crate::engine::beyond_own(&diagnostics, found),
        None => Vec::new(),
    };
    diagnostics.extend(session.finish_elsewhere(&source, beyond, config));
    diagnostics.sort_by_key(|d| (d.range.start, d.range.end));
    FileReport::new(document.path.clone(), document.text.clone(), diagnostics)
}
