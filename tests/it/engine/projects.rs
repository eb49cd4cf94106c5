//! Generated multi-file Compose projects for tests/it/engine.rs (issue 34):
//! which files make a project, how they merge, IPC donors across files,
//! `include:`, what Compose refuses, and overlays, each judged by Compose
//! and the engine, never by an answer written here.
//!
//! Every case comes from a product of small tables (an earlier value, a
//! later one, the way one is layered over the other; a set of file names;
//! where a variable is defined), so the cases are the same on every run
//! and none is picked for its answer. A case is one of:
//!
//! - [`Shape::Packed`]: services that share one Compose project with the
//!   other cases of their group (its `compose.yaml`, `compose.override.yaml`,
//!   `base.yaml` that services extend, included directories, `.env`), named
//!   with the case's prefix (`p12`, written `@` in the tables) so that they
//!   stay apart; a project Compose refuses is judged again in halves;
//! - [`Shape::Alone`]: a directory of its own, for what decides a whole
//!   project (its file names, its `.env`, `COMPOSE_FILE`, an overlay run
//!   with `-f base -f overlay`, a refusal).

use super::oracle::Case;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The classes of issue 34.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// Which files make the project, and which `.env` interpolates it.
    Discovery,
    /// How a value in one file merges with one in another.
    Merge,
    /// IPC donors and their joiners across the project's files.
    Ipc,
    /// `include:` and the variables that interpolate what it brings in.
    Include,
    /// What Compose refuses (and the same settings where it does not).
    Refusal,
    /// A file of services without image or build, run over its base.
    Overlay,
    /// A named volume mounted at /dev/shm, whose driver may make a tmpfs.
    Volume,
}

impl Class {
    pub const ALL: [Class; 7] = [
        Class::Discovery,
        Class::Merge,
        Class::Ipc,
        Class::Include,
        Class::Refusal,
        Class::Overlay,
        Class::Volume,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Class::Discovery => "discovery",
            Class::Merge => "merge",
            Class::Ipc => "ipc",
            Class::Include => "include",
            Class::Refusal => "refusal",
            Class::Overlay => "overlay",
            Class::Volume => "volume",
        }
    }
}

pub struct ProjectCase {
    pub class: Class,
    /// What the case is, for a disagreement's report.
    pub label: String,
    pub shape: Shape,
}

pub enum Shape {
    Packed(Parts),
    Alone(Alone),
}

/// What a packed case adds to each file of its group's project. `@` in
/// any text is the case's prefix.
#[derive(Default, Clone)]
pub struct Parts {
    /// Packed with the cases of the same group only; a group's projects
    /// are started (and `/dev/shm` read inside) when `run`.
    pub group: &'static str,
    pub run: bool,
    /// Service entries of `compose.yaml` (`  @s:` and its body).
    pub compose: String,
    /// Service entries of `compose.override.yaml`.
    pub overrides: String,
    /// Service entries of `base.yaml`, which `extends: {file: base.yaml}`
    /// names.
    pub base: String,
    /// Items of `compose.yaml`'s `include:` (`  - ...`).
    pub include: String,
    /// Lines of the project's `.env`.
    pub env: String,
    /// Top-level named volumes of `compose.yaml`.
    pub volumes: Vec<String>,
    /// Other files (included projects, their `.env`s), by relative path.
    pub files: Vec<(String, String)>,
}

/// A project of its own.
pub struct Alone {
    pub files: Vec<(String, String)>,
    /// The `-f` files, in order; empty: Compose's own discovery.
    pub compose_files: Vec<String>,
    /// What gpulint is pointed at; empty: the files Compose loads.
    pub targets: Vec<String>,
    pub run: bool,
}

/// A service entry (`  name:` then its body), each line of `lines`
/// (which may hold several, separated by newlines) indented under it.
fn service(name: &str, lines: &[&str]) -> String {
    let mut out = format!("  {name}:\n");
    for line in lines.iter().flat_map(|l| l.lines()) {
        if !line.trim().is_empty() {
            let _ = writeln!(out, "    {line}");
        }
    }
    out
}

/// A whole compose file of `services`.
fn services_file(services: &[String]) -> String {
    format!("services:\n{}", services.concat())
}

/// One line for a label.
fn flat(text: &str) -> String {
    let text = text.trim();
    if text.is_empty() {
        "(nothing)".to_string()
    } else {
        text.replace('\n', "; ")
    }
}

const IMAGE: &str = "image: gpulint-generated";

// ---------------------------------------------------------------------
// Class 2: merges. A value `earlier` and a value `later` of one setting,
// layered by each mechanism.

/// How a later definition is layered over an earlier one.
#[derive(Clone, Copy, Debug)]
enum Layering {
    /// `compose.override.yaml` over `compose.yaml`.
    Override,
    /// `extends: @b` in the same file.
    ExtendsSameFile,
    /// `extends: {file: base.yaml, service: @b}`.
    ExtendsOtherFile,
    /// A chain across files: `@s` extends `base.yaml`'s `@m`, which
    /// extends `@b` there.
    ExtendsChain,
    /// An included service, changed by `compose.override.yaml`.
    IncludedThenOverride,
    /// A service that extends `base.yaml`, changed by the override.
    ExtendedThenOverride,
    /// The override's service extends `compose.yaml`'s (`file:`).
    OverrideExtendsCompose,
}

const LAYERINGS: [Layering; 7] = [
    Layering::Override,
    Layering::ExtendsSameFile,
    Layering::ExtendsOtherFile,
    Layering::ExtendsChain,
    Layering::IncludedThenOverride,
    Layering::ExtendedThenOverride,
    Layering::OverrideExtendsCompose,
];

impl Layering {
    fn name(self) -> &'static str {
        match self {
            Layering::Override => "override file",
            Layering::ExtendsSameFile => "extends in the same file",
            Layering::ExtendsOtherFile => "extends another file",
            Layering::ExtendsChain => "extends chain across files",
            Layering::IncludedThenOverride => "included, then override file",
            Layering::ExtendedThenOverride => "extended, then override file",
            Layering::OverrideExtendsCompose => "override extends compose.yaml",
        }
    }

    /// The parts that give service `@s` the `earlier` value, then the
    /// `later` one.
    fn parts(self, earlier: &str, later: &str) -> Parts {
        let mut parts = Parts::default();
        match self {
            Layering::Override => {
                parts.compose = service("@s", &[IMAGE, earlier]);
                parts.overrides = service("@s", &[later]);
            }
            Layering::ExtendsSameFile => {
                parts.compose =
                    service("@b", &[IMAGE, earlier]) + &service("@s", &["extends: @b", later]);
            }
            Layering::ExtendsOtherFile => {
                parts.base = service("@b", &[IMAGE, earlier]);
                parts.compose = service("@s", &["extends: {file: base.yaml, service: @b}", later]);
            }
            Layering::ExtendsChain => {
                parts.base = service("@b", &[IMAGE, earlier]) + &service("@m", &["extends: @b"]);
                parts.compose = service("@s", &["extends: {file: base.yaml, service: @m}", later]);
            }
            Layering::IncludedThenOverride => {
                parts.include = "  - @i/stack.yaml\n".to_string();
                parts.files.push((
                    "@i/stack.yaml".to_string(),
                    services_file(&[service("@s", &[IMAGE, earlier])]),
                ));
                parts.overrides = service("@s", &[later]);
            }
            Layering::ExtendedThenOverride => {
                parts.base = service("@b", &[IMAGE, earlier]);
                parts.compose = service("@s", &["extends: {file: base.yaml, service: @b}"]);
                parts.overrides = service("@s", &[later]);
            }
            Layering::OverrideExtendsCompose => {
                parts.compose = service("@b", &[IMAGE, earlier]);
                parts.overrides =
                    service("@s", &["extends: {file: compose.yaml, service: @b}", later]);
            }
        }
        parts
    }
}

/// A setting's earlier and later values, and whether its projects run.
struct Family {
    name: &'static str,
    run: bool,
    earlier: &'static [&'static str],
    later: &'static [&'static str],
}

const FAMILIES: &[Family] = &[
    Family {
        name: "shm",
        run: true,
        earlier: &[
            "shm_size: 1g",
            "ipc: host",
            "tmpfs: /dev/shm:size=2g",
            "volumes: [\"/dev/shm:/dev/shm\"]",
            "ipc: shareable\nshm_size: 3g",
            "",
        ],
        later: &[
            "shm_size: 4g",
            "shm_size: !reset null",
            "ipc: !reset null",
            "ipc: private",
            "tmpfs: !override [\"/dev/shm:size=5g\"]",
            "tmpfs: [\"/dev/shm:size=6g\"]",
            "tmpfs: !reset []",
            "volumes: !override [\"./data:/data\"]",
            "volumes: !reset []",
            "volumes: [\"/tmp:/dev/shm\"]",
            "shm_size: \"${SHM_@:-7g}\"",
        ],
    },
    Family {
        name: "gpu",
        run: false,
        earlier: &[
            "deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]}}}",
            "deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 2, capabilities: [gpu]}]}}}",
            "deploy: {resources: {reservations: {devices: [{driver: nvidia, device_ids: [\"0\", \"1\"], capabilities: [gpu]}]}}}",
            "deploy: {resources: {reservations: {devices: [{driver: nvidia, count: all, capabilities: [gpu]}]}}}",
            "gpus: all",
            "gpus: [{driver: nvidia, count: 2}]",
            "",
        ],
        later: &[
            "deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 3, capabilities: [gpu]}]}}}",
            "deploy: {resources: {reservations: {devices: [{driver: nvidia, device_ids: [\"2\", \"3\", \"4\"], capabilities: [gpu]}]}}}",
            "gpus: [{driver: nvidia, count: 1}]",
            "gpus: all",
            "deploy: {resources: {reservations: {devices: !reset []}}}",
            "deploy: {resources: {reservations: {devices: !override [{driver: nvidia, count: 1, capabilities: [gpu]}]}}}",
            "deploy: !reset {}",
            "gpus: !reset []",
            "shm_size: 1g",
        ],
    },
    Family {
        name: "ulimits",
        run: false,
        earlier: &[
            "ulimits: {memlock: -1}",
            "ulimits: {memlock: {soft: -1, hard: -1}, stack: 67108864}",
            "ulimits: {nofile: {soft: 1024, hard: 4096}}",
            "",
        ],
        later: &[
            "ulimits: {memlock: 1048576}",
            "ulimits: {nofile: 2048}",
            "ulimits: !reset {}",
            "ulimits: !override {stack: 1048576}",
            "ulimits: {memlock: !reset null}",
            "ulimits: {nofile: {soft: 512, hard: 1024}}",
        ],
    },
    Family {
        name: "environment",
        run: false,
        earlier: &[
            "runtime: nvidia\nenvironment: [\"NVIDIA_VISIBLE_DEVICES=0,1\", \"NCCL_DEBUG=INFO\"]",
            "runtime: nvidia\nenvironment: {NVIDIA_VISIBLE_DEVICES: all, NCCL_P2P_DISABLE: \"1\"}",
            "environment: {NCCL_DEBUG: INFO}",
            "",
        ],
        later: &[
            "environment: {NVIDIA_VISIBLE_DEVICES: !reset null}",
            "environment: [\"NCCL_DEBUG=WARN\"]",
            "environment: {NCCL_DEBUG: TRACE}",
            "environment: !override {CUDA_VISIBLE_DEVICES: \"0\"}",
            "environment: !reset []",
            "environment: [\"NVIDIA_VISIBLE_DEVICES=3\"]",
            "environment: {NCCL_DEBUG: !reset null}",
        ],
    },
    Family {
        name: "cap_add",
        run: false,
        earlier: &["cap_add: [IPC_LOCK]", "cap_add: [SYS_PTRACE, IPC_LOCK]", ""],
        later: &[
            "cap_add: [IPC_LOCK]",
            "cap_add: [SYS_NICE]",
            "cap_add: !reset []",
            "cap_add: !override [NET_ADMIN]",
            "cap_add: [CAP_IPC_LOCK]",
        ],
    },
];

fn merge_cases(out: &mut Vec<ProjectCase>) {
    for family in FAMILIES {
        for earlier in family.earlier {
            for later in family.later {
                for layering in LAYERINGS {
                    let mut parts = layering.parts(earlier, later);
                    parts.group = family.name;
                    parts.run = family.run;
                    out.push(ProjectCase {
                        class: Class::Merge,
                        label: format!(
                            "{} by {}: {} then {}",
                            family.name,
                            layering.name(),
                            flat(earlier),
                            flat(later)
                        ),
                        shape: Shape::Packed(parts),
                    });
                }
            }
        }
    }
}

// ---------------------------------------------------------------------
// Class 3: IPC donors. A donor `@a` in some file of the project, joined by
// `@b` (written in some file), and by chains `@c` -> `@b` -> `@a`.

const DONOR_MODES: &[&str] = &[
    "ipc: shareable",
    "ipc: shareable\nshm_size: 2g",
    "ipc: shareable\ntmpfs: /dev/shm:size=700m",
    "ipc: shareable\nvolumes: [\"/dev/shm:/dev/shm\"]",
    "ipc: host",
    "ipc: private",
    "shm_size: 1g",
];

#[derive(Clone, Copy)]
enum DonorAt {
    Compose,
    /// Defined only in the override file.
    OverrideOnly,
    /// Extends a service of `base.yaml` that sets the mode.
    Extended,
    /// In an included file.
    Included,
    /// In an included file as `ipc: private`, the override sets the mode.
    IncludedChangedByOverride,
}

#[derive(Clone, Copy)]
enum JoinerAt {
    Compose,
    /// `compose.yaml` defines it, the override sets its `ipc`.
    Override,
    /// Inherits `ipc: service:@a` from the `base.yaml` service it extends.
    Extended,
}

fn ipc_case(mode: &str, donor: DonorAt, joiner: JoinerAt, hops: usize) -> ProjectCase {
    let mut parts = Parts {
        group: "ipc",
        run: true,
        ..Parts::default()
    };
    let donor_name = match donor {
        DonorAt::Compose => {
            parts.compose += &service("@a", &[IMAGE, mode]);
            "in compose.yaml"
        }
        DonorAt::OverrideOnly => {
            parts.overrides += &service("@a", &[IMAGE, mode]);
            "only in the override file"
        }
        DonorAt::Extended => {
            parts.base += &service("@ad", &[IMAGE, mode]);
            parts.compose += &service("@a", &["extends: {file: base.yaml, service: @ad}"]);
            "extending base.yaml"
        }
        DonorAt::Included => {
            parts.include += "  - @i/stack.yaml\n";
            parts.files.push((
                "@i/stack.yaml".to_string(),
                services_file(&[service("@a", &[IMAGE, mode])]),
            ));
            "in an included file"
        }
        DonorAt::IncludedChangedByOverride => {
            parts.include += "  - @i/stack.yaml\n";
            parts.files.push((
                "@i/stack.yaml".to_string(),
                services_file(&[service("@a", &[IMAGE, "ipc: private"])]),
            ));
            parts.overrides += &service("@a", &[mode]);
            "included as private, changed by the override file"
        }
    };
    let joiner_name = match joiner {
        JoinerAt::Compose => {
            parts.compose += &service("@b", &[IMAGE, "ipc: service:@a"]);
            "in compose.yaml"
        }
        JoinerAt::Override => {
            parts.compose += &service("@b", &[IMAGE]);
            parts.overrides += &service("@b", &["ipc: service:@a"]);
            "by the override file"
        }
        JoinerAt::Extended => {
            parts.base += &service("@bd", &[IMAGE, "ipc: service:@a"]);
            parts.compose += &service("@b", &["extends: {file: base.yaml, service: @bd}"]);
            "inherited from base.yaml"
        }
    };
    let mut previous = "@b".to_string();
    for hop in 1..hops {
        let name = format!("@j{hop}");
        parts.compose += &service(&name, &[IMAGE, &format!("ipc: service:{previous}")]);
        previous = name;
    }
    ProjectCase {
        class: Class::Ipc,
        label: format!(
            "donor `{}` {donor_name}, joined {joiner_name}, a chain of {hops} joiner(s)",
            flat(mode)
        ),
        shape: Shape::Packed(parts),
    }
}

fn ipc_cases(out: &mut Vec<ProjectCase>) {
    let donors = [
        DonorAt::Compose,
        DonorAt::OverrideOnly,
        DonorAt::Extended,
        DonorAt::Included,
        DonorAt::IncludedChangedByOverride,
    ];
    let joiners = [JoinerAt::Compose, JoinerAt::Override, JoinerAt::Extended];
    for mode in DONOR_MODES {
        for donor in donors {
            for joiner in joiners {
                out.push(ipc_case(mode, donor, joiner, 1));
            }
            for hops in [2, 3] {
                out.push(ipc_case(mode, donor, JoinerAt::Compose, hops));
            }
        }
    }
}

// ---------------------------------------------------------------------
// Class 4: include. One include entry per case, in its own directory
// `@i/`; the included service's `shm_size` is `${V_@:-1g}` and its nofile
// limit `${W_@:-1000}`, each defined (or not) in the project's `.env`,
// the included directory's `.env`, or the include's `env_file`s.

#[derive(Clone, Copy)]
enum IncludeForm {
    Plain,
    Path,
    PathList,
    EnvFile,
    EnvFiles,
    ProjectDirectory,
    InterpolatedPath,
    Nested,
}

const INCLUDE_FORMS: [IncludeForm; 8] = [
    IncludeForm::Plain,
    IncludeForm::Path,
    IncludeForm::PathList,
    IncludeForm::EnvFile,
    IncludeForm::EnvFiles,
    IncludeForm::ProjectDirectory,
    IncludeForm::InterpolatedPath,
    IncludeForm::Nested,
];

/// Where a variable is defined: the project's `.env`, the included side
/// (its `.env`, or its `env_file`s when the entry names some).
const PLACEMENTS: [(bool, bool); 4] = [(true, false), (false, true), (true, true), (false, false)];

fn include_case(form: IncludeForm, v: (bool, bool), w: (bool, bool)) -> ProjectCase {
    let mut parts = Parts {
        group: "include",
        run: true,
        ..Parts::default()
    };
    let body = service(
        "@s",
        &[
            IMAGE,
            "shm_size: \"${V_@:-1g}\"",
            "ulimits: {nofile: \"${W_@:-1000}\"}",
        ],
    );
    let stack = services_file(std::slice::from_ref(&body));
    // The values each place gives, distinct so that the one used shows.
    let mut root_env = String::new();
    let mut inc_env = String::new();
    if v.0 {
        root_env += "V_@=2g\n";
    }
    if v.1 {
        inc_env += "V_@=3g\n";
    }
    if w.0 {
        root_env += "W_@=2000\n";
    }
    if w.1 {
        inc_env += "W_@=3000\n";
    }
    // A decoy: what a place Compose does not read would give.
    let decoy = "V_@=9g\nW_@=9000\n";
    let form_name = match form {
        IncludeForm::Plain => {
            parts.include = "  - @i/stack.yaml\n".into();
            parts.files.push(("@i/stack.yaml".into(), stack));
            parts.files.push(("@i/.env".into(), inc_env));
            "`- @i/stack.yaml`"
        }
        IncludeForm::Path => {
            parts.include = "  - path: @i/stack.yaml\n".into();
            parts.files.push(("@i/stack.yaml".into(), stack));
            parts.files.push(("@i/.env".into(), inc_env));
            "`path:`"
        }
        IncludeForm::PathList => {
            parts.include = "  - path: [@i/stack.yaml, @i/over.yaml]\n".into();
            parts.files.push(("@i/stack.yaml".into(), stack));
            parts.files.push((
                "@i/over.yaml".into(),
                services_file(&[service("@s", &["cap_add: [SYS_NICE]"])]),
            ));
            parts.files.push(("@i/.env".into(), inc_env));
            "a `path:` list (the second file overrides the first)"
        }
        IncludeForm::EnvFile => {
            parts.include = "  - path: @i/stack.yaml\n    env_file: @i/x.env\n".into();
            parts.files.push(("@i/stack.yaml".into(), stack));
            parts.files.push(("@i/x.env".into(), inc_env));
            parts.files.push(("@i/.env".into(), decoy.into()));
            "`env_file:` (the directory's .env is not read)"
        }
        IncludeForm::EnvFiles => {
            parts.include = "  - path: @i/stack.yaml\n    env_file: [@i/x.env, @i/y.env]\n".into();
            parts.files.push(("@i/stack.yaml".into(), stack));
            // The later env file wins: the first one's values are decoys
            // where the second sets the variable.
            let first: String = decoy
                .lines()
                .filter(|l| inc_env.contains(&l[..3]))
                .map(|l| format!("{l}\n"))
                .collect();
            parts.files.push(("@i/x.env".into(), first));
            parts.files.push(("@i/y.env".into(), inc_env));
            "two `env_file:`s (the later wins)"
        }
        IncludeForm::ProjectDirectory => {
            parts.include = "  - path: @i/sub/stack.yaml\n    project_directory: @i\n".into();
            parts.files.push(("@i/sub/stack.yaml".into(), stack));
            parts.files.push(("@i/.env".into(), inc_env));
            parts.files.push(("@i/sub/.env".into(), decoy.into()));
            "`project_directory:` (its .env, not the file's directory's)"
        }
        IncludeForm::InterpolatedPath => {
            parts.include = "  - \"@i/${STACK_@:-stack}.yaml\"\n".into();
            root_env += "STACK_@=alt\n";
            parts.files.push(("@i/alt.yaml".into(), stack));
            parts.files.push((
                "@i/stack.yaml".into(),
                services_file(&[service("@s", &[IMAGE, "shm_size: 9g"])]),
            ));
            parts.files.push(("@i/.env".into(), inc_env));
            "an interpolated path (`${STACK_@}` from the project's .env)"
        }
        IncludeForm::Nested => {
            parts.include = "  - @i/stack.yaml\n".into();
            parts.files.push((
                "@i/stack.yaml".into(),
                "include:\n  - nested/stack.yaml\n".into(),
            ));
            parts.files.push(("@i/nested/stack.yaml".into(), stack));
            parts.files.push(("@i/.env".into(), inc_env));
            parts.files.push(("@i/nested/.env".into(), decoy.into()));
            "a nested include (the outer included project's .env wins)"
        }
    };
    parts.env = root_env;
    let place = |p: (bool, bool)| match p {
        (true, false) => "the project's .env",
        (false, true) => "the included side",
        (true, true) => "both",
        (false, false) => "nowhere",
    };
    ProjectCase {
        class: Class::Include,
        label: format!(
            "include by {form_name}; V (shm_size) set in {}, W (nofile) set in {}",
            place(v),
            place(w)
        ),
        shape: Shape::Packed(parts),
    }
}

fn include_cases(out: &mut Vec<ProjectCase>) {
    for form in INCLUDE_FORMS {
        for v in PLACEMENTS {
            for w in PLACEMENTS {
                out.push(include_case(form, v, w));
            }
        }
    }
}

// ---------------------------------------------------------------------
// Class 5: refusals, each a project of its own: a setting Compose may
// refuse, written in the project file, the override, an extended file or
// an included one; and project-wide ones (.env, profiles, include).

/// Settings of service `s`, with what the project's `compose.yaml`
/// declares beside them (top-level sections) and the `.env`.
const SERVICE_SETTINGS: &[(&str, &str, &str)] = &[
    ("volumes: [\"models/asr:/x\"]", "", ""),
    (
        "volumes: [{type: volume, source: cache, target: /x}]",
        "",
        "",
    ),
    ("volumes: [\"cache:/x\"]", "volumes: {cache: {}}", ""),
    ("volumes: [\"./models/asr:/x\"]", "", ""),
    ("networks: [backend]", "", ""),
    ("networks: [backend]", "networks: {backend: {}}", ""),
    ("secrets: [token]", "", ""),
    (
        "secrets: [token]",
        "secrets: {token: {file: ./token.txt}}",
        "",
    ),
    ("configs: [settings]", "", ""),
    ("depends_on: [nope]", "", ""),
    ("environment: {X: \"${REQ_@?set it}\"}", "", ""),
    ("environment: {X: \"${REQ_@?set it}\"}", "", "REQ_@=1\n"),
    ("environment: {X: \"${REQ_@:?set it}\"}", "", "REQ_@=\n"),
    ("environment: {X: \"${REQ_@?}\"}", "", "REQ_@=\n"),
    ("shm_size: \"${SHM_@}\"", "", ""),
    ("shm_size: \"${SHM_@}\"", "", "SHM_@=2g\n"),
    ("shm_size: \"${SHM_@:-2g}\"", "", ""),
    ("shm_size: \"${SHM_@:-}\"", "", ""),
    ("tmpfs: /dev/shm\nvolumes: [\"/dev/shm:/dev/shm\"]", "", ""),
    (
        "volumes: [\"/dev/shm:/dev/shm\", \"/tmp:/dev/shm\"]",
        "",
        "",
    ),
    (
        "tmpfs: [\"/dev/shm:size=1g\", \"/dev/shm:size=2g\"]",
        "",
        "",
    ),
    (
        "deploy: {resources: {reservations: {devices: [{driver: nvidia, count: \"two\", capabilities: [gpu]}]}}}",
        "",
        "",
    ),
    (
        "deploy: {resources: {reservations: {devices: [{driver: nvidia, count: \"2\", capabilities: [gpu]}]}}}",
        "",
        "",
    ),
    (
        "deploy: {resources: {reservations: {devices: [{driver: nvidia, count: ALL, capabilities: [gpu]}]}}}",
        "",
        "",
    ),
    (
        "deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1.5, capabilities: [gpu]}]}}}",
        "",
        "",
    ),
    (
        "deploy: {resources: {reservations: {devices: [{driver: nvidia, count: \"${NGPU_@}\", capabilities: [gpu]}]}}}",
        "",
        "NGPU_@=two\n",
    ),
    (
        "deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1, device_ids: [\"0\"], capabilities: [gpu]}]}}}",
        "",
        "",
    ),
    (
        "deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1}]}}}",
        "",
        "",
    ),
    ("ipc: service:nope", "", ""),
    ("ulimits: {nofile: {soft: 512}}", "", ""),
    ("shm_size: 1.5", "", ""),
];

#[derive(Clone, Copy)]
enum SettingAt {
    Compose,
    Override,
    Extended,
    Included,
}

fn alone(files: Vec<(String, String)>) -> Alone {
    Alone {
        files,
        compose_files: Vec::new(),
        targets: Vec::new(),
        run: false,
    }
}

fn refusal_at(setting: &str, top: &str, env: &str, at: SettingAt) -> ProjectCase {
    let mut compose = String::new();
    let mut files = Vec::new();
    let name = match at {
        SettingAt::Compose => {
            compose += &services_file(&[service("s", &[IMAGE, setting])]);
            "in compose.yaml"
        }
        SettingAt::Override => {
            compose += &services_file(&[service("s", &[IMAGE])]);
            files.push((
                "compose.override.yaml".to_string(),
                services_file(&[service("s", &[setting])]),
            ));
            "in the override file"
        }
        SettingAt::Extended => {
            compose += &services_file(&[service("s", &["extends: {file: base.yaml, service: b}"])]);
            files.push((
                "base.yaml".to_string(),
                services_file(&[service("b", &[IMAGE, setting])]),
            ));
            "in the extended base.yaml"
        }
        SettingAt::Included => {
            compose = format!(
                "include:\n  - inc/stack.yaml\n{}",
                services_file(&[service("t", &[IMAGE])])
            );
            files.push((
                "inc/stack.yaml".to_string(),
                services_file(&[service("s", &[IMAGE, setting])]),
            ));
            "in an included file"
        }
    };
    if !top.is_empty() {
        compose += top;
        compose += "\n";
    }
    files.push(("compose.yaml".to_string(), compose));
    files.push(("token.txt".to_string(), "secret\n".to_string()));
    if !env.is_empty() {
        files.push((".env".to_string(), env.to_string()));
    }
    let with = [
        (!top.is_empty()).then(|| format!("compose.yaml declares `{top}`")),
        (!env.is_empty()).then(|| format!(".env `{}`", flat(env))),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>();
    ProjectCase {
        class: Class::Refusal,
        label: format!(
            "`{}` {name}{}",
            flat(setting),
            if with.is_empty() {
                String::new()
            } else {
                format!(" ({})", with.join(", "))
            }
        ),
        shape: Shape::Alone(alone(files)),
    }
}

/// Dotenv texts: each sets `SHM` (or fails to); compose.yaml reads
/// `shm_size: "${SHM:-1g}"`.
const DOTENVS: &[&str] = &[
    "SHM=3g\n",
    "SHM=\"3g\n",
    "SHM='3g\n",
    "SH@M=3g\n",
    "S HM=3g\n",
    "SHM=\"3g\"\"x\"\n",
    "SHM='3g'x\n",
    "\u{feff}SHM=3g\n",
    "export SHM=3g\n",
    "SHM=\"3g\" # the size\n",
    "SHM=3g # the size\n",
    "SHM=3g\r\n",
    "A=2\nSHM=${A}g\n",
    "SHM=${A}g\nA=2\n",
    "SHM=${A:-5}g\n",
    "SHM=${A:?need A}\n",
    "SHM: 3g\n",
    "SHM=\"3\\\ng\"\n",
    "SHM=\"3g\nA=1\n",
];

fn refusal_cases(out: &mut Vec<ProjectCase>) {
    for (setting, top, env) in SERVICE_SETTINGS {
        for at in [
            SettingAt::Compose,
            SettingAt::Override,
            SettingAt::Extended,
            SettingAt::Included,
        ] {
            let setting = setting.replace('@', "");
            let env = env.replace('@', "");
            out.push(refusal_at(&setting, top, &env, at));
        }
    }
    // `services:` with nothing under it, and a service with nothing.
    for (files, label) in [
        (
            vec![
                ("compose.yaml", "include:\n  - inc/stack.yaml\nservices:\n"),
                (
                    "inc/stack.yaml",
                    "services:\n  s:\n    image: gpulint-generated\n",
                ),
            ],
            "`services:` with nothing under it in a file that includes its services",
        ),
        (
            vec![
                ("compose.yaml", "include:\n  - inc/stack.yaml\n"),
                (
                    "inc/stack.yaml",
                    "services:\n  s:\n    image: gpulint-generated\n",
                ),
            ],
            "no `services:` in a file that includes its services",
        ),
        (
            vec![
                (
                    "compose.yaml",
                    "services:\n  s:\n    image: gpulint-generated\n",
                ),
                ("compose.override.yaml", "services:\n"),
            ],
            "`services:` with nothing under it in the override file",
        ),
        (
            vec![(
                "compose.yaml",
                "services:\n  s:\n    image: gpulint-generated\n  t:\n",
            )],
            "a service with nothing under it",
        ),
        (
            vec![
                (
                    "compose.yaml",
                    "services:\n  s:\n    image: gpulint-generated\n",
                ),
                ("compose.override.yaml", "services:\n  s:\n"),
            ],
            "a service with nothing under it in the override file",
        ),
    ] {
        out.push(ProjectCase {
            class: Class::Refusal,
            label: label.to_string(),
            shape: Shape::Alone(alone(
                files
                    .into_iter()
                    .map(|(f, t)| (f.to_string(), t.to_string()))
                    .collect(),
            )),
        });
    }
    // A named volume that the extended file declares, and the extending
    // project does not (or does).
    for declared in [false, true] {
        let mut compose =
            services_file(&[service("s", &["extends: {file: base.yaml, service: b}"])]);
        if declared {
            compose += "volumes: {models: {}}\n";
        }
        out.push(ProjectCase {
            class: Class::Refusal,
            label: format!(
                "a named volume brought by `extends` from base.yaml, which declares it; compose.yaml {}",
                if declared { "declares it too" } else { "does not" }
            ),
            shape: Shape::Alone(alone(vec![
                ("compose.yaml".into(), compose),
                (
                    "base.yaml".into(),
                    services_file(&[service("b", &[IMAGE, "volumes: [\"models:/m\"]"])])
                        + "volumes: {models: {}}\n",
                ),
            ])),
        });
    }
    // IPC donors and dependencies in profiles, and which are enabled.
    for (dependency, what) in [
        ("ipc: service:a", "an ipc donor"),
        ("depends_on: [a]", "`depends_on`"),
        (
            "depends_on: {a: {condition: service_started, required: false}}",
            "`depends_on` not required",
        ),
    ] {
        for profiles in [
            "",
            "COMPOSE_PROFILES=gpu\n",
            "COMPOSE_PROFILES=other\n",
            "COMPOSE_PROFILES=other,gpu\n",
            "COMPOSE_PROFILES=*\n",
        ] {
            let mut files = vec![(
                "compose.yaml".to_string(),
                services_file(&[
                    service("a", &[IMAGE, "profiles: [gpu]", "ipc: shareable"]),
                    service("b", &[IMAGE, dependency]),
                ]),
            )];
            if !profiles.is_empty() {
                files.push((".env".into(), profiles.into()));
            }
            out.push(ProjectCase {
                class: Class::Refusal,
                label: format!(
                    "{what} in profile `gpu`, .env {}",
                    if profiles.is_empty() {
                        "absent".to_string()
                    } else {
                        format!("`{}`", flat(profiles))
                    }
                ),
                shape: Shape::Alone(alone(files)),
            });
        }
    }
    // Include entries whose file (or env file) is missing.
    for (entry, label) in [
        ("  - nope/compose.yaml\n", "a missing include file"),
        ("  - path: nope.yaml\n", "a missing include `path:`"),
        (
            "  - path: inc/stack.yaml\n    env_file: inc/nope.env\n",
            "an include whose `env_file` is missing",
        ),
        (
            "  - path: [inc/stack.yaml, inc/nope.yaml]\n",
            "an include `path:` list with a missing file",
        ),
        (
            "  - \"inc/${STACK_UNSET}stack.yaml\"\n",
            "an include path from an unset variable",
        ),
    ] {
        out.push(ProjectCase {
            class: Class::Refusal,
            label: label.to_string(),
            shape: Shape::Alone(alone(vec![
                (
                    "compose.yaml".into(),
                    format!(
                        "include:\n{entry}{}",
                        services_file(&[service("s", &[IMAGE])])
                    ),
                ),
                (
                    "inc/stack.yaml".into(),
                    services_file(&[service("t", &[IMAGE, "shm_size: 2g"])]),
                ),
            ])),
        });
    }
    // `.env` texts Compose reads or refuses, in the project's directory
    // and in an included one.
    for dotenv in DOTENVS {
        let shown = format!("{dotenv:?}");
        out.push(ProjectCase {
            class: Class::Refusal,
            label: format!("the project's .env {shown}"),
            shape: Shape::Alone(alone(vec![
                (
                    "compose.yaml".into(),
                    services_file(&[service("s", &[IMAGE, "shm_size: \"${SHM:-1g}\""])]),
                ),
                (".env".into(), dotenv.to_string()),
            ])),
        });
        out.push(ProjectCase {
            class: Class::Refusal,
            label: format!("an included directory's .env {shown}"),
            shape: Shape::Alone(alone(vec![
                (
                    "compose.yaml".into(),
                    format!(
                        "include:\n  - inc/stack.yaml\n{}",
                        services_file(&[service("t", &[IMAGE])])
                    ),
                ),
                (
                    "inc/stack.yaml".into(),
                    services_file(&[service("s", &[IMAGE, "shm_size: \"${SHM:-1g}\""])]),
                ),
                ("inc/.env".into(), dotenv.to_string()),
            ])),
        });
    }
}

// ---------------------------------------------------------------------
// Class 1: discovery. Every set of default file names (each base sets its
// own `shm_size`, each override its own capability), `COMPOSE_FILE`
// spellings, and the `.env` that interpolates.

/// The default base names and the size each gives.
const BASES: [(&str, &str); 4] = [
    ("compose.yaml", "1g"),
    ("compose.yml", "2g"),
    ("docker-compose.yml", "3g"),
    ("docker-compose.yaml", "4g"),
];
const OVERRIDES: [(&str, &str); 4] = [
    ("compose.override.yml", "SYS_NICE"),
    ("compose.override.yaml", "NET_ADMIN"),
    ("docker-compose.override.yml", "SYS_PTRACE"),
    ("docker-compose.override.yaml", "IPC_LOCK"),
];

/// Which base and override files a directory holds, as bit sets of
/// [`BASES`] and [`OVERRIDES`]: every set of bases alone, every set of
/// overrides beside `compose.yaml` and beside `docker-compose.yml`, and
/// each base with each single override.
fn discovery_sets() -> Vec<(usize, usize)> {
    let mut sets: Vec<(usize, usize)> = (1..16).map(|bases| (bases, 0)).collect();
    for base in [0b0001, 0b0100] {
        sets.extend((1..16).map(|overrides| (base, overrides)));
    }
    for base in 0..4 {
        sets.extend((0..4).map(|o| (1 << base, 1 << o)));
    }
    sets.sort_unstable();
    sets.dedup();
    sets
}

fn discovery_cases(out: &mut Vec<ProjectCase>) {
    for (bases, overrides) in discovery_sets() {
        let mut files = Vec::new();
        let mut names = Vec::new();
        for (i, (name, size)) in BASES.iter().enumerate() {
            if bases & (1 << i) != 0 {
                files.push((
                    name.to_string(),
                    services_file(&[service("s", &[IMAGE, &format!("shm_size: {size}")])]),
                ));
                names.push(*name);
            }
        }
        for (j, (name, cap)) in OVERRIDES.iter().enumerate() {
            if overrides & (1 << j) == 0 {
                continue;
            }
            files.push((
                name.to_string(),
                services_file(&[service("s", &[&format!("cap_add: [{cap}]")])]),
            ));
            names.push(name);
        }
        out.push(ProjectCase {
            class: Class::Discovery,
            label: format!("a directory of {}", names.join(", ")),
            shape: Shape::Alone(alone(files)),
        });
    }
    // COMPOSE_FILE in the `.env`, in a directory where every file gives
    // something of its own; `sub/` has its own `.env`.
    let tree = |env: &str| -> Vec<(String, String)> {
        vec![
            (
                "compose.yaml".into(),
                services_file(&[service(
                    "s",
                    &[
                        IMAGE,
                        "shm_size: \"${SHM:-1g}\"",
                        "deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 2, capabilities: [gpu]}]}}}",
                        "cap_add: [SYS_NICE]",
                    ],
                )]),
            ),
            (
                "compose.override.yaml".into(),
                services_file(&[service("s", &["ulimits: {nofile: 1111}"])]),
            ),
            (
                "base.yaml".into(),
                services_file(&[service("s", &[IMAGE, "shm_size: \"${SHM:-2g}\""])]),
            ),
            (
                "gpu.yaml".into(),
                services_file(&[service(
                    "s",
                    &[
                        "gpus: [{driver: nvidia, count: 1}]",
                        "ulimits: {nofile: \"${NOFILE:-2222}\"}",
                    ],
                )]),
            ),
            (
                "sub/compose.yaml".into(),
                services_file(&[service(
                    "s",
                    &[
                        IMAGE,
                        "shm_size: \"${SHM:-3g}\"",
                        "ulimits: {nofile: \"${NOFILE:-3333}\"}",
                    ],
                )]),
            ),
            ("sub/.env".into(), "SHM=6g\nNOFILE=6666\n".into()),
            (".env".into(), env.to_string()),
        ]
    };
    for list in [
        "COMPOSE_FILE=compose.yaml",
        "COMPOSE_FILE=base.yaml",
        "COMPOSE_FILE=base.yaml:gpu.yaml",
        "COMPOSE_FILE=gpu.yaml:base.yaml",
        "COMPOSE_FILE=compose.yaml:compose.override.yaml",
        "COMPOSE_FILE=sub/compose.yaml",
        "COMPOSE_FILE=sub/compose.yaml:gpu.yaml",
        "COMPOSE_FILE=compose.yaml:compose.yaml",
        "COMPOSE_FILE=compose.yaml:gpu.yaml:gpu.yaml",
        "COMPOSE_FILE=\"base.yaml:gpu.yaml\"",
        "COMPOSE_PATH_SEPARATOR=;\nCOMPOSE_FILE=base.yaml;gpu.yaml",
        "COMPOSE_FILE=./base.yaml",
        "export COMPOSE_FILE=base.yaml",
        "COMPOSE_FILE=base.yaml\nCOMPOSE_FILE=compose.yaml",
        "COMPOSE_FILE=",
        "COMPOSE_FILE=missing.yaml",
        "COMPOSE_FILE=base.yaml:missing.yaml",
    ] {
        for vars in ["", "SHM=5g\nNOFILE=5555\n"] {
            let env = format!("{list}\n{vars}");
            out.push(ProjectCase {
                class: Class::Discovery,
                label: format!("COMPOSE_FILE: .env `{}`", flat(&env)),
                shape: Shape::Alone(alone(tree(&env))),
            });
        }
    }
    // Which `.env` interpolates a project Compose discovers: the one where
    // it runs (a `.env` in a subdirectory is not read).
    for (env, sub_env) in [
        (None, None),
        (Some("SHM=3g\n"), None),
        (None, Some("SHM=4g\n")),
        (Some("SHM=3g\n"), Some("SHM=4g\n")),
        (Some("OTHER=1\n"), Some("SHM=4g\n")),
    ] {
        let mut files = vec![(
            "compose.yaml".to_string(),
            services_file(&[service("s", &[IMAGE, "shm_size: \"${SHM:-1g}\""])]),
        )];
        files.push((
            "sub/other.yaml".into(),
            services_file(&[service("t", &[IMAGE])]),
        ));
        if let Some(env) = env {
            files.push((".env".into(), env.into()));
        }
        if let Some(env) = sub_env {
            files.push(("sub/.env".into(), env.into()));
        }
        out.push(ProjectCase {
            class: Class::Discovery,
            label: format!(
                "which .env: the project's {:?}, a subdirectory's {:?}",
                env, sub_env
            ),
            shape: Shape::Alone(alone(files)),
        });
    }
}

// ---------------------------------------------------------------------
// Class 6: overlays, run with `-f base -f overlay`.

fn overlay_cases(out: &mut Vec<ProjectCase>) {
    // An overlay of the directory's default file, and one named after
    // another compose file of the directory (no default file there).
    let pairs = [
        "docker-compose.gpu.yml",
        "compose.cuda.yaml",
        "gpu.yaml",
        "docker-compose-gpu.yml",
    ]
    .into_iter()
    .flat_map(|overlay| ["compose.yaml", "docker-compose.yml"].map(|base| (overlay, base)))
    .chain([
        ("compose.x.ollama.gpu.yml", "compose.ollama.yml"),
        (
            "docker-compose.ollama.nvidia.yml",
            "docker-compose.ollama.yml",
        ),
    ]);
    for (overlay, base) in pairs {
        for base_body in ["ipc: host", "shm_size: 8g", ""] {
            for overlay_body in [
                "deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]}}}",
                "shm_size: 2g",
                "ipc: private",
            ] {
                out.push(ProjectCase {
                    class: Class::Overlay,
                    label: format!(
                        "overlay {overlay} (`{}`) over {base} (`{}`)",
                        flat(overlay_body),
                        flat(base_body)
                    ),
                    shape: Shape::Alone(Alone {
                        files: vec![
                            (
                                base.to_string(),
                                services_file(&[
                                    service("s", &[IMAGE, base_body]),
                                    service("db", &[IMAGE]),
                                ]),
                            ),
                            (
                                overlay.to_string(),
                                services_file(&[service("s", &[overlay_body])]),
                            ),
                        ],
                        compose_files: vec![base.to_string(), overlay.to_string()],
                        targets: Vec::new(),
                        run: false,
                    }),
                });
            }
        }
    }
}

// ---------------------------------------------------------------------
// Class 7: a named volume at /dev/shm. Docker's local driver mounts a
// tmpfs for `driver_opts: {type: tmpfs, device: tmpfs, o: size=...}`.

fn volume_cases(out: &mut Vec<ProjectCase>) {
    for declared in [
        "{driver_opts: {type: tmpfs, device: tmpfs, o: size=512m}}",
        "{driver: local, driver_opts: {type: tmpfs, device: tmpfs, o: \"uid=1000,size=300m\"}}",
        "{driver_opts: {type: tmpfs, device: tmpfs, o: \"size=1g,mode=1777\"}}",
        "{driver_opts: {type: tmpfs, device: tmpfs}}",
        "{driver_opts: {type: tmpfs, device: tmpfs, o: size=2g}, labels: {a: b}}",
        "{}",
    ] {
        for mount in [
            "volumes: [\"shm:/dev/shm\"]",
            "volumes: [\"shm:/dev/shm:rw\"]",
            "volumes: [{type: volume, source: shm, target: /dev/shm}]",
        ] {
            for other in ["", "shm_size: 2g", "ipc: shareable"] {
                let body = format!("{mount}\n{other}");
                out.push(ProjectCase {
                    class: Class::Volume,
                    label: format!("volume `shm: {declared}` by `{}`", flat(&body)),
                    shape: Shape::Alone(Alone {
                        files: vec![(
                            "compose.yaml".to_string(),
                            services_file(&[service("s", &[IMAGE, &body])])
                                + &format!("volumes:\n  shm: {declared}\n"),
                        )],
                        compose_files: Vec::new(),
                        targets: Vec::new(),
                        run: true,
                    }),
                });
            }
        }
    }
}

/// Every generated project case, deterministic.
pub fn cases() -> Vec<ProjectCase> {
    let mut out = Vec::new();
    discovery_cases(&mut out);
    merge_cases(&mut out);
    ipc_cases(&mut out);
    include_cases(&mut out);
    refusal_cases(&mut out);
    overlay_cases(&mut out);
    volume_cases(&mut out);
    out
}

/// How many cases each class has.
pub fn counts(cases: &[ProjectCase]) -> BTreeMap<Class, usize> {
    let mut counts = BTreeMap::new();
    for case in cases {
        *counts.entry(case.class).or_default() += 1;
    }
    counts
}

fn write_files(dir: &Path, files: &[(String, String)]) {
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// The prefix of case `i` (`@` in its texts).
fn prefix(i: usize) -> String {
    format!("p{i}")
}

/// Writes the packed cases `members` as one project in `dir`.
fn write_packed(dir: &Path, cases: &[ProjectCase], members: &[usize]) {
    let mut compose = String::new();
    let mut overrides = String::new();
    let mut base = String::new();
    let mut include = String::new();
    let mut env = String::new();
    let mut volumes = Vec::new();
    let mut files = Vec::new();
    for &i in members {
        let Shape::Packed(parts) = &cases[i].shape else {
            unreachable!("only packed cases are packed");
        };
        let p = prefix(i);
        let own = |text: &str| text.replace('@', &p);
        compose += &own(&parts.compose);
        overrides += &own(&parts.overrides);
        base += &own(&parts.base);
        include += &own(&parts.include);
        env += &own(&parts.env);
        volumes.extend(parts.volumes.iter().map(|v| own(v)));
        files.extend(parts.files.iter().map(|(f, t)| (own(f), own(t))));
    }
    let mut text = String::new();
    if !include.is_empty() {
        text += "include:\n";
        text += &include;
    }
    // `services:` with nothing under it is refused: left out when every
    // service comes from the includes.
    if !compose.is_empty() {
        text += "services:\n";
        text += &compose;
    }
    if !volumes.is_empty() {
        text += "volumes:\n";
        for v in &volumes {
            let _ = writeln!(text, "  {v}: {{}}");
        }
    }
    files.push(("compose.yaml".into(), text));
    if !overrides.is_empty() {
        files.push((
            "compose.override.yaml".into(),
            format!("services:\n{overrides}"),
        ));
    }
    if !base.is_empty() {
        files.push(("base.yaml".into(), format!("services:\n{base}")));
    }
    if !env.is_empty() {
        files.push((".env".into(), env));
    }
    write_files(dir, &files);
}

/// The oracle's case for `members` (packed cases of one group, or one
/// alone case) written under `root`.
pub fn batch(root: &Path, cases: &[ProjectCase], members: &[usize]) -> Case {
    let first = members[0];
    let name = format!("g{first}-{}", members[members.len() - 1]);
    let dir = root.join(&name);
    let _ = std::fs::remove_dir_all(&dir);
    let mut case = match &cases[first].shape {
        Shape::Packed(parts) => {
            write_packed(&dir, cases, members);
            let label = match members {
                [i] => format!(
                    "{} {}: {}",
                    cases[*i].class.name(),
                    prefix(*i),
                    cases[*i].label
                ),
                _ => format!(
                    "{} {} cases #{first}..#{}",
                    cases[first].class.name(),
                    parts.group,
                    members[members.len() - 1]
                ),
            };
            let mut case = Case::project(&label, &dir);
            case.run = parts.run;
            case
        }
        Shape::Alone(alone) => {
            write_files(&dir, &alone.files);
            let mut case = Case::project(
                &format!(
                    "{} #{first}: {}",
                    cases[first].class.name(),
                    cases[first].label
                ),
                &dir,
            );
            case.files = alone.compose_files.clone();
            case.run = alone.run;
            case
        }
    };
    case.targets = targets(&dir, &cases[first]);
    case.members = members.to_vec();
    case.batch = members.len() > 1;
    case
}

/// What gpulint is pointed at: the directory where Compose runs, as a
/// user lints the repository they run `docker compose` in (the oracle
/// compares the claims of the project Compose loads), or the case's own
/// targets.
fn targets(dir: &Path, case: &ProjectCase) -> Vec<PathBuf> {
    match &case.shape {
        Shape::Alone(alone) if !alone.targets.is_empty() => {
            alone.targets.iter().map(|t| dir.join(t)).collect()
        }
        _ => vec![dir.to_path_buf()],
    }
}

/// The oracle's cases, each with its class: packed ones `per` to a
/// project (by group; twice as many where the containers are not
/// started), alone ones each on its own; the largest projects first, so
/// that the threads judging them finish together.
pub fn projects(root: &Path, cases: &[ProjectCase], per: usize) -> Vec<(Class, Case)> {
    let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    let mut out = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        match &case.shape {
            Shape::Packed(parts) => groups.entry(parts.group).or_default().push(i),
            Shape::Alone(_) => out.push((case.class, batch(root, cases, &[i]))),
        }
    }
    for members in groups.values() {
        let per = match &cases[members[0]].shape {
            Shape::Packed(parts) if !parts.run => per * 2,
            _ => per,
        };
        for chunk in members.chunks(per) {
            out.push((cases[chunk[0]].class, batch(root, cases, chunk)));
        }
    }
    out.sort_by_key(|(_, case)| std::cmp::Reverse(case.members.len()));
    out
}

/// A refused batch in two halves.
pub fn halves(root: &Path, cases: &[ProjectCase], refused: &Case) -> Vec<Case> {
    refused.halves(|members| batch(root, cases, members))
}

/// The label of every packed case a disagreement names (by its services,
/// `p123s`), for the report.
pub fn explain(cases: &[ProjectCase], text: &str) -> String {
    let mut out = String::new();
    let mut seen = std::collections::BTreeSet::new();
    for word in text.split(|c: char| !c.is_ascii_alphanumeric()) {
        let Some(digits) = word.strip_prefix('p') else {
            continue;
        };
        let number: String = digits.chars().take_while(char::is_ascii_digit).collect();
        let Ok(i) = number.parse::<usize>() else {
            continue;
        };
        let Some(case) = cases.get(i) else { continue };
        if matches!(case.shape, Shape::Packed(_)) && seen.insert(i) {
            let _ = writeln!(out, "  p{i} ({}): {}", case.class.name(), case.label);
        }
    }
    out
}
