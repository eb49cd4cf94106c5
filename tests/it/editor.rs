//! The language server as editors see it.
//!
//! Each editor config (editors/) names the files it hands to `gpulint
//! server`; they are checked here against the kinds of file gpulint itself
//! classifies (`FileKind::of`), through samples of every kind, each matched
//! as that editor matches names: VS Code's document selector and watchers,
//! Neovim's autocmd patterns, Helix's file types, the LSP4IJ template's
//! file name patterns. The server's own watcher registration is checked
//! against the files findings depend on.
//!
//! Real clients, ignored without their tool (installed by .ci/run): pygls
//! through pytest-lsp (tests/editor/test_lsp_client.py: diagnostics, a quick
//! fix applied, hover), Neovim 0.7+ with the shipped editors/neovim/gpulint.lua
//! (tests/editor/nvim_client.lua) and Emacs with eglot and
//! editors/emacs/gpulint.el (tests/editor/eglot_client.el).

use crate::common;

use common::write;
use globset::{Glob, GlobBuilder, GlobMatcher};
use gpulint::engine::FileKind;
use gpulint::engine::discover::is_yaml_file_name;
use gpulint::model::script::ScriptKind;
use lsp_server::{Connection, Message, Request, RequestId};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The folder an editor has open, for the samples' absolute paths.
const WORKSPACE: &str = "/home/user/project";

macro_rules! samples_of_every_kind {
    ($($kind:ident $(($script:ident))? => [$($sample:literal),+ $(,)?]),+ $(,)?) => {
        /// Every kind of file gpulint classifies by name.
        const EVERY_KIND: &[FileKind] = &[$(FileKind::$kind $((ScriptKind::$script))?),+];

        /// Paths of files of `kind`, named as repositories name them. The
        /// `match` is exhaustive: a new kind does not compile until it has
        /// samples here, and so until every editor config is checked for it.
        fn samples_of(kind: FileKind) -> &'static [&'static str] {
            match kind {
                $(FileKind::$kind $((ScriptKind::$script))? => &[$($sample),+],)+
            }
        }
    };
}

samples_of_every_kind! {
    Yaml => ["compose.yaml", "docker-compose.yml", "deploy/k8s/job.yaml", "compose.override.yml"],
    Dockerfile => [
        "Dockerfile",
        "dockerfile",
        "Dockerfile.gpu",
        "gpu.Dockerfile",
        "Dockerfile_amd",
        "InternVL_Dockerfile",
        "Dockerfile-cuda12",
        "docker/app.dockerfile",
        "Containerfile",
        "Containerfile.rocm",
        "train.containerfile",
    ],
    Script(Shell) => ["run.sh", "scripts/train.bash", "launch.zsh", "job.sbatch", "slurm/job.slurm"],
    Script(Makefile) => ["Makefile", "makefile", "GNUmakefile", "build/rules.mk"],
    Script(Markdown) => ["README.md", "docs/setup.markdown"],
    Script(Workflow) => [".github/workflows/ci.yml", ".github/workflows/gpu.yaml"],
    Script(DevContainer) => [
        ".devcontainer/devcontainer.json",
        ".devcontainer/cuda/devcontainer.json",
        ".devcontainer.json",
    ],
    Script(Quadlet) => ["trainer.container", "containers/systemd/vllm.container"],
}

/// Files gpulint reads by no name of its own: a config that hands them to
/// the server anyway (a pattern such as `**/*`) fails.
const READ_BY_NO_NAME: &[&str] = &[
    "package.json",
    "tsconfig.json",
    ".vscode/settings.json",
    "src/main.rs",
    "notes.txt",
    "pyproject.toml",
    "trainer.service",
];

/// Files whose changes change the findings of an open file (a compose
/// file's of its `.env` and `env_file`s and the Dockerfile it builds, every
/// file's of gpulint.toml), though they may not be open.
const DEPENDED_ON: &[&str] = &[
    "gpulint.toml",
    "services/gpulint.toml",
    ".env",
    "deploy/.env",
    "config/vars.env",
    "compose.yaml",
    "compose.override.yml",
    "trainer/Dockerfile",
    "InternVL_Dockerfile",
    ".devcontainer/devcontainer.json",
    ".devcontainer.json",
    "trainer.container",
];

fn every_sample() -> impl Iterator<Item = (FileKind, &'static str)> {
    EVERY_KIND
        .iter()
        .flat_map(|&kind| samples_of(kind).iter().map(move |&sample| (kind, sample)))
}

fn in_workspace(sample: &str) -> PathBuf {
    Path::new(WORKSPACE).join(sample)
}

fn read(relative: &str) -> String {
    std::fs::read_to_string(common::root().join(relative))
        .unwrap_or_else(|e| panic!("{relative}: {e}"))
}

/// A glob as VS Code matches a document filter's `pattern` and a watcher's
/// glob, and as the LSP specification defines a watcher's: `*` and `?`
/// within one path segment, `**` across segments, `{a,b}` alternatives.
/// Neither nests braces, which globset would accept.
fn segment_glob(pattern: &str) -> GlobMatcher {
    let mut depth = 0;
    for c in pattern.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        assert!(depth <= 1, "`{pattern}`: braces do not nest in these globs");
    }
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .unwrap_or_else(|e| panic!("`{pattern}`: {e}"))
        .compile_matcher()
}

#[test]
fn the_samples_are_of_the_kind_they_stand_for() {
    for (kind, sample) in every_sample() {
        let path = in_workspace(sample);
        assert_eq!(FileKind::of(&path), kind, "{sample}");
        // YAML is also what a file of no known name is read as: a YAML
        // sample must be named like YAML.
        if kind == FileKind::Yaml {
            assert!(is_yaml_file_name(&path), "{sample}");
        }
    }
    for sample in READ_BY_NO_NAME {
        let path = in_workspace(sample);
        assert!(
            FileKind::of(&path) == FileKind::Yaml && !is_yaml_file_name(&path),
            "{sample} is read by its name"
        );
    }
}

fn vscode_files() -> Value {
    serde_json::from_str(&read("editors/vscode/src/files.json")).unwrap()
}

#[test]
fn the_vs_code_selector_contains_every_kind_gpulint_classifies() {
    let extension = read("editors/vscode/src/extension.ts");
    for use_of_the_list in [
        r#"import * as files from "./files.json";"#,
        "documentSelector: files.documentSelector,",
        "fileEvents: watchers,",
        "files.watch.map(",
    ] {
        assert!(
            extension.contains(use_of_the_list),
            "extension.ts no longer has `{use_of_the_list}`"
        );
    }
    let files = vscode_files();
    let selector = files["documentSelector"].as_array().unwrap();
    let patterns: Vec<(&str, GlobMatcher)> = selector
        .iter()
        .filter_map(|filter| {
            let pattern = filter.get("pattern")?.as_str().unwrap();
            assert_eq!(filter["scheme"], "file", "{filter}");
            // A filter matches what matches all its fields.
            assert!(filter.get("language").is_none(), "{filter}");
            Some((pattern, segment_glob(pattern)))
        })
        .collect();
    let selected = |path: &Path| patterns.iter().any(|(_, glob)| glob.is_match(path));
    for (kind, sample) in every_sample() {
        assert!(
            selected(&in_workspace(sample)),
            "{sample} ({kind:?}) matches no pattern of editors/vscode/src/files.json"
        );
    }
    for sample in READ_BY_NO_NAME {
        let path = in_workspace(sample);
        let by: Vec<&str> = patterns
            .iter()
            .filter(|(_, glob)| glob.is_match(&path))
            .map(|(pattern, _)| *pattern)
            .collect();
        assert!(by.is_empty(), "{sample} is selected by {by:?}");
    }

    // The extension starts for each language it selects, and for the files
    // VS Code gives none of them: `devcontainer.json` is `jsonc` (or
    // `json`), a Quadlet unit and a `*.sbatch` have no language of its own.
    let package: Value = serde_json::from_str(&read("editors/vscode/package.json")).unwrap();
    let events: Vec<&str> = package["activationEvents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    for filter in selector {
        if let Some(language) = filter.get("language").and_then(Value::as_str) {
            let event = format!("onLanguage:{language}");
            assert!(events.contains(&event.as_str()), "no {event}");
        }
    }
    for event in ["onLanguage:json", "onLanguage:jsonc"] {
        assert!(events.contains(&event), "no {event}");
    }
    let contains: Vec<GlobMatcher> = events
        .iter()
        .filter_map(|e| e.strip_prefix("workspaceContains:"))
        .map(segment_glob)
        .collect();
    let without_language = samples_of(FileKind::Script(ScriptKind::Quadlet))
        .iter()
        .chain(samples_of(FileKind::Script(ScriptKind::DevContainer)))
        .chain(&["job.sbatch", "slurm/job.slurm"]);
    for sample in without_language {
        assert!(
            contains.iter().any(|glob| glob.is_match(sample)),
            "no workspaceContains activation event matches {sample}"
        );
    }
}

#[test]
fn vs_code_watches_the_files_findings_depend_on() {
    let files = vscode_files();
    let watched: Vec<GlobMatcher> = files["watch"]
        .as_array()
        .unwrap()
        .iter()
        .map(|glob| segment_glob(glob.as_str().unwrap()))
        .collect();
    for sample in DEPENDED_ON {
        assert!(
            watched
                .iter()
                .any(|glob| glob.is_match(in_workspace(sample))),
            "VS Code does not watch {sample}"
        );
    }
}

/// The globs `gpulint server` asks a client that can register watchers
/// dynamically to watch, once it says `initialized`.
fn watchers_the_server_registers() -> Vec<String> {
    let (client, server) = Connection::memory();
    let serving = std::thread::spawn(move || gpulint::lsp::serve(server).unwrap());
    let initialize = json!({
        "processId": null,
        "rootUri": null,
        "capabilities": {
            "workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}
        },
    });
    client
        .sender
        .send(Request::new(RequestId::from(1), "initialize".into(), initialize).into())
        .unwrap();
    let receive = || {
        client
            .receiver
            .recv_timeout(Duration::from_secs(20))
            .expect("the server answers")
    };
    assert!(matches!(receive(), Message::Response(r) if r.id == RequestId::from(1)));
    client
        .sender
        .send(lsp_server::Notification::new("initialized".into(), json!({})).into())
        .unwrap();
    let registration = loop {
        if let Message::Request(request) = receive()
            && request.method == "client/registerCapability"
        {
            break request.params;
        }
    };
    client
        .sender
        .send(lsp_server::Notification::new("exit".into(), Value::Null).into())
        .unwrap();
    serving.join().unwrap();
    let registrations = registration["registrations"].as_array().unwrap();
    assert_eq!(registrations.len(), 1, "{registration}");
    assert_eq!(
        registrations[0]["method"],
        "workspace/didChangeWatchedFiles"
    );
    registrations[0]["registerOptions"]["watchers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|watcher| {
            // No `kind`: creations, changes and deletions alike.
            assert!(watcher.get("kind").is_none_or(Value::is_null), "{watcher}");
            watcher["globPattern"].as_str().unwrap().to_string()
        })
        .collect()
}

#[test]
fn the_server_asks_to_watch_the_files_findings_depend_on() {
    let watched: Vec<GlobMatcher> = watchers_the_server_registers()
        .iter()
        .map(|glob| segment_glob(glob))
        .collect();
    for sample in DEPENDED_ON {
        assert!(
            watched
                .iter()
                .any(|glob| glob.is_match(in_workspace(sample))),
            "the server does not ask to watch {sample}"
        );
    }
}

/// `M.file_patterns` of editors/neovim/gpulint.lua: one quoted pattern a
/// line, as the file writes them (a line of another shape fails, rather
/// than being left out).
fn neovim_file_patterns() -> Vec<String> {
    let lua = read("editors/neovim/gpulint.lua");
    let start = lua.find("M.file_patterns = {\n").expect("M.file_patterns");
    let table = &lua[start..];
    let table = &table[..table.find("\n}\n").expect("the end of M.file_patterns")];
    table
        .lines()
        .skip(1)
        .map(|line| {
            line.trim()
                .strip_prefix('\'')
                .and_then(|l| l.strip_suffix("',"))
                .unwrap_or_else(|| panic!("not a pattern line of M.file_patterns: {line}"))
                .to_string()
        })
        .collect()
}

/// An autocmd file pattern as Vim matches it (`:help file-pattern`): one
/// without a `/` against the file's name; `*` any characters, `?` one,
/// `{a,b}` alternatives.
fn vim_file_pattern(pattern: &str) -> GlobMatcher {
    assert!(
        !pattern.contains('/'),
        "`{pattern}` would be matched against the whole path"
    );
    Glob::new(pattern)
        .unwrap_or_else(|e| panic!("`{pattern}`: {e}"))
        .compile_matcher()
}

#[test]
fn the_neovim_patterns_name_every_kind_gpulint_classifies() {
    let patterns: Vec<(String, GlobMatcher)> = neovim_file_patterns()
        .into_iter()
        .map(|p| {
            let glob = vim_file_pattern(&p);
            (p, glob)
        })
        .collect();
    let name = |sample: &str| Path::new(sample).file_name().unwrap().to_owned();
    for (kind, sample) in every_sample() {
        assert!(
            patterns.iter().any(|(_, glob)| glob.is_match(name(sample))),
            "{sample} ({kind:?}) matches no pattern of M.file_patterns in editors/neovim/gpulint.lua"
        );
    }
    for sample in READ_BY_NO_NAME {
        let by: Vec<&String> = patterns
            .iter()
            .filter(|(_, glob)| glob.is_match(name(sample)))
            .map(|(pattern, _)| pattern)
            .collect();
        assert!(by.is_empty(), "{sample} is attached by {by:?}");
    }
}

/// The file name patterns of the LSP4IJ template
/// (editors/jetbrains/gpulint/template.json), and that it starts
/// `gpulint server`.
fn jetbrains_file_name_patterns() -> Vec<String> {
    let template: Value =
        serde_json::from_str(&read("editors/jetbrains/gpulint/template.json")).unwrap();
    assert_eq!(template["programArgs"]["default"], "gpulint server");
    template["fileTypeMappings"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|mapping| {
            // A file type or language by name would differ from IDE to IDE.
            assert!(mapping["fileType"].get("name").is_none(), "{mapping}");
            mapping["fileType"]["patterns"].as_array().unwrap().clone()
        })
        .map(|pattern| pattern.as_str().unwrap().to_string())
        .collect()
}

/// A file name pattern as IntelliJ matches one (`WildcardFileNameMatcher`):
/// against the file's name, `*` any characters, `?` one, nothing else.
fn intellij_file_name_pattern(pattern: &str) -> GlobMatcher {
    assert!(
        !pattern.contains(['{', '[', '/']),
        "`{pattern}`: IntelliJ's patterns have only `*` and `?`"
    );
    Glob::new(pattern).unwrap().compile_matcher()
}

#[test]
fn the_jetbrains_template_names_every_kind_gpulint_classifies() {
    let patterns: Vec<(String, GlobMatcher)> = jetbrains_file_name_patterns()
        .into_iter()
        .map(|p| {
            let glob = intellij_file_name_pattern(&p);
            (p, glob)
        })
        .collect();
    let name = |sample: &str| Path::new(sample).file_name().unwrap().to_owned();
    for (kind, sample) in every_sample() {
        assert!(
            patterns.iter().any(|(_, glob)| glob.is_match(name(sample))),
            "{sample} ({kind:?}) matches no pattern of editors/jetbrains/gpulint/template.json"
        );
    }
    for sample in READ_BY_NO_NAME {
        let by: Vec<&String> = patterns
            .iter()
            .filter(|(_, glob)| glob.is_match(name(sample)))
            .map(|(pattern, _)| pattern)
            .collect();
        assert!(by.is_empty(), "{sample} is mapped by {by:?}");
    }
}

/// A `file-types` entry of a Helix language: an extension
/// (`Path::extension`, exactly), or a glob matched against the absolute
/// path (with `*/` put before one that starts with neither `/` nor `*/`).
#[derive(Debug, Clone, PartialEq)]
enum HelixFileType {
    Extension(String),
    Glob(String),
}

impl HelixFileType {
    fn of(value: &toml::Value) -> HelixFileType {
        match value {
            toml::Value::String(extension) => HelixFileType::Extension(extension.clone()),
            table => HelixFileType::Glob(table["glob"].as_str().unwrap().to_string()),
        }
    }
}

/// What Helix 25.07's languages.toml (helix-editor/helix, tag 25.07.1) says
/// of a language a file of gpulint's can be, with the file types gpulint's
/// names can meet.
struct HelixDefault {
    name: &'static str,
    /// `"x"` an extension, `"glob:x"` a glob.
    file_types: &'static [&'static str],
    /// Whether `file_types` is all of Helix's list, so that a config may
    /// repeat it and add to it.
    all_file_types: bool,
    shebangs: &'static [&'static str],
    servers: &'static [&'static str],
}

const HELIX_25_07: &[HelixDefault] = &[
    HelixDefault {
        name: "yaml",
        file_types: &["yml", "yaml"],
        all_file_types: false,
        shebangs: &[],
        servers: &["yaml-language-server", "ansible-language-server"],
    },
    HelixDefault {
        name: "docker-compose",
        file_types: &[
            "glob:docker-compose.yaml",
            "glob:docker-compose.yml",
            "glob:compose.yaml",
            "glob:compose.yml",
        ],
        all_file_types: true,
        shebangs: &[],
        servers: &["docker-compose-langserver", "yaml-language-server"],
    },
    HelixDefault {
        name: "dockerfile",
        file_types: &[
            "Dockerfile",
            "glob:Dockerfile",
            "glob:Dockerfile.*",
            "dockerfile",
            "glob:dockerfile",
            "glob:dockerfile.*",
            "Containerfile",
            "glob:Containerfile",
            "glob:Containerfile.*",
            "containerfile",
            "glob:containerfile",
            "glob:containerfile.*",
        ],
        all_file_types: true,
        shebangs: &[],
        servers: &["docker-langserver"],
    },
    HelixDefault {
        name: "bash",
        file_types: &["sh", "bash", "zsh"],
        all_file_types: false,
        shebangs: &["sh", "bash", "dash", "zsh"],
        servers: &["bash-language-server"],
    },
    HelixDefault {
        name: "make",
        file_types: &[
            "glob:Makefile",
            "glob:makefile",
            "make",
            "mk",
            "mak",
            "glob:GNUmakefile",
            "glob:OCamlMakefile",
        ],
        all_file_types: true,
        shebangs: &["make", "gmake"],
        servers: &[],
    },
    HelixDefault {
        name: "markdown",
        file_types: &["md", "markdown"],
        all_file_types: false,
        shebangs: &[],
        servers: &["marksman", "markdown-oxide"],
    },
    HelixDefault {
        name: "json",
        file_types: &["json"],
        all_file_types: false,
        shebangs: &[],
        servers: &["vscode-json-language-server"],
    },
    HelixDefault {
        name: "jsonc",
        file_types: &["jsonc", "glob:{t,j}sconfig.json", "glob:bun.lock"],
        all_file_types: true,
        shebangs: &[],
        servers: &["vscode-json-language-server"],
    },
    HelixDefault {
        name: "systemd",
        file_types: &[
            "service",
            "automount",
            "device",
            "mount",
            "nspawn",
            "path",
            "scope",
            "slice",
            "socket",
            "swap",
            "target",
            "timer",
            "glob:systemd/**/*.conf",
        ],
        all_file_types: true,
        shebangs: &[],
        servers: &["systemd-lsp"],
    },
];

struct HelixLanguage {
    name: String,
    file_types: Vec<HelixFileType>,
    shebangs: Vec<String>,
    servers: Vec<String>,
}

impl HelixDefault {
    fn file_types(&self) -> Vec<HelixFileType> {
        self.file_types
            .iter()
            .map(|t| match t.strip_prefix("glob:") {
                Some(glob) => HelixFileType::Glob(glob.to_string()),
                None => HelixFileType::Extension(t.to_string()),
            })
            .collect()
    }
}

/// Helix 25.07's languages with editors/helix/languages.toml merged in as
/// Helix merges a user's (`merge_toml_values`, depth 3): a language the
/// config names has its `file-types` and `language-servers` replaced by
/// the config's, when it gives them, and moves to the end of the list.
fn helix_languages_with_the_config() -> Vec<HelixLanguage> {
    let config: toml::Table = toml::from_str(&read("editors/helix/languages.toml")).unwrap();
    assert_eq!(
        config["language-server"]["gpulint"]["command"],
        "gpulint".into()
    );
    assert_eq!(
        config["language-server"]["gpulint"]["args"],
        toml::Value::Array(vec!["server".into()])
    );
    let mut languages: Vec<HelixLanguage> = HELIX_25_07
        .iter()
        .map(|d| HelixLanguage {
            name: d.name.to_string(),
            file_types: d.file_types(),
            shebangs: d.shebangs.iter().map(|s| s.to_string()).collect(),
            servers: d.servers.iter().map(|s| s.to_string()).collect(),
        })
        .collect();
    for ours in config["language"].as_array().unwrap() {
        let name = ours["name"].as_str().unwrap();
        // A language of its own would need a scope, a grammar and queries.
        let at = languages
            .iter()
            .position(|l| l.name == name)
            .unwrap_or_else(|| panic!("{name} is no language of Helix 25.07 this test knows"));
        let mut language = languages.remove(at);
        if let Some(file_types) = ours.get("file-types") {
            language.file_types = file_types
                .as_array()
                .unwrap()
                .iter()
                .map(HelixFileType::of)
                .collect();
        }
        if let Some(servers) = ours.get("language-servers") {
            language.servers = servers
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().to_string())
                .collect();
        }
        languages.push(language);
    }
    languages
}

/// The language Helix gives a file (`Loader::language_for_filename`, then
/// `language_for_shebang`): the language of the longest glob that matches
/// the path (the last of equally long ones), else of its extension (the
/// last language to claim it), else of its `#!` line's interpreter.
fn helix_language<'a>(
    languages: &'a [HelixLanguage],
    path: &Path,
    interpreter: Option<&str>,
) -> Option<&'a HelixLanguage> {
    let mut longest: Option<(usize, &HelixLanguage)> = None;
    for language in languages {
        for file_type in &language.file_types {
            let HelixFileType::Glob(glob) = file_type else {
                continue;
            };
            let glob = if glob.starts_with('/') || glob.starts_with("*/") {
                glob.clone()
            } else {
                format!("*/{glob}")
            };
            let matcher = Glob::new(&glob).unwrap().compile_matcher();
            if matcher.is_match(path) && longest.is_none_or(|(length, _)| glob.len() >= length) {
                longest = Some((glob.len(), language));
            }
        }
    }
    if let Some((_, language)) = longest {
        return Some(language);
    }
    let by_extension = path.extension().and_then(|e| e.to_str()).and_then(|e| {
        let extension = HelixFileType::Extension(e.to_string());
        languages
            .iter()
            .rev()
            .find(|l| l.file_types.contains(&extension))
    });
    by_extension.or_else(|| {
        let interpreter = interpreter?;
        languages
            .iter()
            .rev()
            .find(|l| l.shebangs.iter().any(|s| s == interpreter))
    })
}

#[test]
fn the_helix_config_keeps_helixs_defaults_and_adds_gpulint() {
    let languages = helix_languages_with_the_config();
    let config: toml::Table = toml::from_str(&read("editors/helix/languages.toml")).unwrap();
    for ours in config["language"].as_array().unwrap() {
        let name = ours["name"].as_str().unwrap();
        let default = HELIX_25_07.iter().find(|d| d.name == name).unwrap();
        let merged = languages.iter().find(|l| l.name == name).unwrap();
        let mut expected: Vec<&str> = default.servers.to_vec();
        expected.push("gpulint");
        assert_eq!(
            merged.servers, expected,
            "{name}: Helix's servers, then gpulint"
        );
        if ours.get("file-types").is_some() {
            assert!(
                default.all_file_types,
                "{name}: this test does not hold all of Helix's file types for it"
            );
            let defaults = default.file_types();
            assert_eq!(
                merged.file_types[..defaults.len().min(merged.file_types.len())],
                defaults[..],
                "{name}: Helix's file types first, then the ones added"
            );
        }
    }
}

#[test]
fn the_helix_config_covers_every_kind_gpulint_classifies() {
    let languages = helix_languages_with_the_config();
    for (kind, sample) in every_sample() {
        // sbatch refuses a script without a `#!` line.
        let interpreter = matches!(kind, FileKind::Script(ScriptKind::Shell)).then_some("bash");
        let language = helix_language(&languages, &in_workspace(sample), interpreter)
            .unwrap_or_else(|| panic!("Helix gives {sample} ({kind:?}) no language"));
        assert!(
            language.servers.iter().any(|s| s == "gpulint"),
            "{sample} ({kind:?}) is {} in Helix, which has no gpulint",
            language.name
        );
    }
}

#[test]
#[ignore = "needs a Python with pytest-lsp (GPULINT_LSP_PYTHON): installed by .ci/run"]
fn a_real_lsp_client_gets_diagnostics_quick_fixes_and_hover() {
    let python = common::required_tool(
        "GPULINT_LSP_PYTHON",
        "pytest-lsp-python",
        "a Python with `pip install pytest-lsp`",
    );
    let out = Command::new(python)
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/editor",
        ])
        .current_dir(common::root())
        .env("GPULINT_BIN", env!("CARGO_BIN_EXE_gpulint"))
        .output()
        .unwrap();
    let printed = common::stdout(&out) + &common::stderr(&out);
    assert!(out.status.success(), "{printed}");
    assert!(printed.contains("3 passed"), "{printed}");
}

/// A dev container on GPUs with no /dev/shm setting: SHM001 on `runArgs`,
/// line 5.
const GPU_DEVCONTAINER: &str = r#"// A CUDA dev container: GPUs from runArgs, no /dev/shm setting.
{
  "name": "trainer",
  "image": "nvcr.io/nvidia/pytorch:24.01-py3",
  "runArgs": ["--gpus", "all"]
}
"#;
const GPU_DEVCONTAINER_SHM_LINE: &str = "5";

/// A Quadlet unit on every GPU through CDI with no /dev/shm setting:
/// SHM001 on `Image=`, line 3.
const GPU_QUADLET: &str = "# A trainer on every GPU, Podman's 64 MiB /dev/shm.
[Container]
Image=nvcr.io/nvidia/pytorch:24.01-py3
AddDevice=nvidia.com/gpu=all
";
const GPU_QUADLET_SHM_LINE: &str = "3";

/// A workspace with gpulint.toml and `.git` at its root (Neovim's config
/// finds the one, Emacs's project.el the other), a file of every sample (a
/// `#!` line in the scripts) and of every file read by no name under
/// `samples/`, and the GPU dev container and Quadlet unit, each in a
/// repository of its own (a `.git`), where no server runs before it opens:
/// the config must start one for it. Its path is canonical, as an editor
/// resolves it.
struct ClientWorkspace {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl ClientWorkspace {
    fn new() -> ClientWorkspace {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        write(&root, "gpulint.toml", "");
        std::fs::create_dir(root.join(".git")).unwrap();
        for (kind, sample) in every_sample() {
            let text = match kind {
                FileKind::Script(ScriptKind::Shell) => "#!/bin/bash\n",
                _ => "",
            };
            write(&root, &format!("samples/{sample}"), text);
        }
        for sample in READ_BY_NO_NAME {
            write(&root, &format!("samples/{sample}"), "");
        }
        for repository in ["devcontainer-repository", "quadlet-repository"] {
            std::fs::create_dir_all(root.join(repository).join(".git")).unwrap();
        }
        write(
            &root,
            "devcontainer-repository/.devcontainer/devcontainer.json",
            GPU_DEVCONTAINER,
        );
        write(&root, "quadlet-repository/trainer.container", GPU_QUADLET);
        ClientWorkspace { _dir: dir, root }
    }

    fn path(&self, relative: &str) -> String {
        self.root.join(relative).display().to_string()
    }

    /// The files to open: the samples of `kinds` first (the client starts
    /// on the first, and the others are not kept waiting for it), then
    /// every file read by no name.
    fn samples_then_others(&self, kinds: &[FileKind]) -> Vec<String> {
        every_sample()
            .filter(|(kind, _)| kinds.contains(kind))
            .map(|(_, sample)| sample)
            .chain(READ_BY_NO_NAME.iter().copied())
            .map(|sample| self.path(&format!("samples/{sample}")))
            .collect()
    }

    fn diagnosed(&self) -> [String; 2] {
        [
            self.path("devcontainer-repository/.devcontainer/devcontainer.json"),
            self.path("quadlet-repository/trainer.container"),
        ]
    }
}

/// A client's report (`attached`, `diagnostic`, `no-diagnostics` and
/// `error` lines, tab-separated fields) checked: every sample of `kinds`
/// attached with the workspace's root, every file read by no name not
/// attached, and SHM001 on the dev container's and the Quadlet unit's
/// lines.
fn assert_client_report(workspace: &ClientWorkspace, kinds: &[FileKind], printed: &str) {
    let lines: Vec<Vec<&str>> = printed.lines().map(|l| l.split('\t').collect()).collect();
    assert!(
        !lines.iter().any(|l| l[0] == "error"),
        "the client failed:\n{printed}"
    );
    let root = workspace.root.display().to_string();
    for (kind, sample) in every_sample().filter(|(kind, _)| kinds.contains(kind)) {
        let path = workspace.path(&format!("samples/{sample}"));
        assert!(
            lines
                .iter()
                .any(|l| l[..] == ["attached", &path, "yes", &root][..]),
            "{sample} ({kind:?}) is not attached with the root {root}:\n{printed}"
        );
    }
    for sample in READ_BY_NO_NAME {
        let path = workspace.path(&format!("samples/{sample}"));
        assert!(
            lines
                .iter()
                .any(|l| l.len() >= 3 && l[..3] == ["attached", &path, "no"][..]),
            "{sample} is attached, or not reported:\n{printed}"
        );
    }
    let [devcontainer, quadlet] = workspace.diagnosed();
    for (path, line) in [
        (devcontainer, GPU_DEVCONTAINER_SHM_LINE),
        (quadlet, GPU_QUADLET_SHM_LINE),
    ] {
        assert!(
            lines
                .iter()
                .any(|l| l.len() >= 4 && l[..4] == ["diagnostic", &path, line, "SHM001"][..]),
            "no SHM001 on line {line} of {path}:\n{printed}"
        );
    }
}

#[test]
#[ignore = "needs Neovim (GPULINT_NVIM): installed by .ci/run"]
fn neovim_with_the_shipped_config_attaches_to_every_kind_and_gets_diagnostics() {
    let nvim = common::required_tool(
        "GPULINT_NVIM",
        "nvim",
        "Neovim 0.7 or later (`apt-get install neovim`)",
    );
    let workspace = ClientWorkspace::new();
    let out = Command::new(nvim)
        .args([
            "--headless",
            "--clean",
            "-c",
            "luafile tests/editor/nvim_client.lua",
        ])
        .current_dir(common::root())
        .env("GPULINT_BIN", env!("CARGO_BIN_EXE_gpulint"))
        .env(
            "GPULINT_ATTACH",
            workspace.samples_then_others(EVERY_KIND).join("\t"),
        )
        .env("GPULINT_DIAGNOSE", workspace.diagnosed().join("\t"))
        .output()
        .unwrap();
    let printed = common::stdout(&out) + &common::stderr(&out);
    assert!(out.status.success(), "{printed}");
    assert_client_report(&workspace, EVERY_KIND, &printed);
}

/// The kinds of file a bare Emacs (no package but eglot) has a major mode
/// for that editors/emacs/gpulint.el serves: Dockerfiles, YAML and Markdown
/// need dockerfile-mode, yaml-mode and markdown-mode (MELPA) or Emacs 29's
/// tree-sitter modes and their grammars.
const KINDS_A_BARE_EMACS_SERVES: &[FileKind] = &[
    FileKind::Script(ScriptKind::Shell),
    FileKind::Script(ScriptKind::Makefile),
    FileKind::Script(ScriptKind::DevContainer),
    FileKind::Script(ScriptKind::Quadlet),
];

#[test]
#[ignore = "needs Emacs with eglot (GPULINT_EMACS): installed by .ci/run"]
fn emacs_with_eglot_and_the_shipped_config_attaches_and_gets_diagnostics() {
    let emacs = common::required_tool(
        "GPULINT_EMACS",
        "emacs",
        "Emacs 29+, or Emacs 28 with eglot (`apt-get install emacs-nox elpa-eglot`)",
    );
    let workspace = ClientWorkspace::new();
    // `--batch` reads no init file, but the site's start files, which make
    // a system-wide eglot (Debian's elpa-eglot) loadable.
    let out = Command::new(emacs)
        .args(["--batch", "-l", "tests/editor/eglot_client.el"])
        .current_dir(common::root())
        .env("GPULINT_BIN", env!("CARGO_BIN_EXE_gpulint"))
        .env(
            "GPULINT_ATTACH",
            workspace
                .samples_then_others(KINDS_A_BARE_EMACS_SERVES)
                .join("\t"),
        )
        .env("GPULINT_DIAGNOSE", workspace.diagnosed().join("\t"))
        .output()
        .unwrap();
    let printed = common::stdout(&out) + &common::stderr(&out);
    assert!(out.status.success(), "{printed}");
    assert_client_report(&workspace, KINDS_A_BARE_EMACS_SERVES, &printed);
}
