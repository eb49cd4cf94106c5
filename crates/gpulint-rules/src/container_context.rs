//! A container as a rule sees it, whatever platform starts it: the
//! container model (`ContainerRuntime`, what `gpulint inspect` prints)
//! plus a [`ContainerSite`] that knows where the container's settings are
//! written and how to change them in that file's syntax: a compose
//! service, a Kubernetes pod's container, or a container command line
//! (`docker run`, `podman run`, a dev container, a workflow container, a
//! Quadlet unit).
//!
//! A container rule is one function over a `ContainerSite`
//! (`Check::containers`): it judges the model and asks the site for spans
//! and edits, so adding a platform means one more site, not an adapter in
//! every rule.

use crate::diagnostic::At;
use crate::fix::{Applicability, Edit, Fix, ModelPath};
use crate::helpers::{
    add_shm_help, gpu_reason, service_shm_need, set_shm_size_fix, set_ulimit_edits,
};
use crate::kube_context::{Pod, container_path};
use crate::model::compose::Service;
use crate::model::compose::ShmMount;
use crate::model::container::ContainerRuntime;
use crate::model::container::Gpus;
use crate::model::container::ShmSetting;
use crate::model::container::{DEFAULT_SHM_BYTES, ShmKind};
use crate::model::docker_run::RunOption;
use crate::model::k8s::{Container, ShmSource, VolumeSource};
use crate::model::parallel::SizeSetting;
use crate::model::quantity::{QuantityValue, bytes_to_quantity};
use crate::model::script::RunSite;
use crate::model::shm_need::{ShmNeed, shm_need};
use crate::model::size::{
    MIB, SizeValue, parse_compose_size, tmpfs_size_spelling, with_tmpfs_size,
};
use crate::syntax::yaml_edit::NewNode;
use crate::text::TextRange;
use crate::{ComposeContext, DiagnosticBuilder, KubeContext, RuleSettings, ScriptContext};

mod tmpfs_raise;
mod ulimits;
use tmpfs_raise::*;

/// One container and where it is configured.
pub struct ContainerSite<'a> {
    /// What it gets at run time.
    pub model: &'a ContainerRuntime,
    place: Place<'a>,
}

enum Place<'a> {
    Service {
        cx: &'a ComposeContext<'a>,
        service: &'a Service,
    },
    Run {
        cx: &'a ScriptContext<'a>,
        site: &'a RunSite,
    },
    /// A Kubernetes pod's container. Its /dev/shm is a volume of the pod,
    /// which several containers may mount; a KServe runtime's container
    /// gets its GPUs from the InferenceService merged into it (`model`
    /// holds them).
    Pod {
        cx: &'a KubeContext<'a>,
        pod: Pod<'a>,
        container: &'a Container,
    },
}

/// The setting that sizes a container's `/dev/shm` (a size or a tmpfs
/// mount), as a rule that would raise it sees it.
pub(crate) struct SizedShm {
    pub at: At,
    /// The size it writes (a `sizeLimit` even where the pod's memory limit
    /// caps the emptyDir lower: raising it is still needed).
    pub bytes: u64,
    /// The raised size as this syntax writes it, for help texts:
    /// `"8gb"`, `` `8gb` ``, `` `size=8g` ``.
    pub suggested: String,
    /// What the setting is, for the finding's label.
    pub label: String,
    /// The setting rewritten to the raised size, where a plain edit can.
    pub raise: Option<Fix>,
}

/// Where a command-line setting of the container's workload is written
/// (`--tensor-parallel-size 4`, or `-e TP_SIZE=4`), and how a display-only
/// fix that rewrites its value is built in this syntax.
pub(crate) struct WrittenSetting<'a> {
    /// The option (or variable) and its value.
    pub whole: At,
    /// Its value, in the same file.
    pub value: TextRange,
    place: &'a Place<'a>,
    /// What a compose fix changes.
    path: Option<ModelPath>,
}

impl WrittenSetting<'_> {
    /// A fix to show (not apply) that writes `content` as the value.
    pub(crate) fn display_fix(&self, title: String, content: String) -> Fix {
        let edit = Edit {
            range: self.value,
            content,
        };
        match (self.place, &self.path) {
            (Place::Run { cx, site }, _) => {
                cx.run_fix(site, title, Applicability::DisplayOnly, vec![edit])
            }
            (Place::Service { .. }, path) => Fix::new(
                title,
                Applicability::DisplayOnly,
                vec![edit],
                path.iter().cloned().collect(),
            ),
            (Place::Pod { cx, .. }, path) => Fix::new(
                title,
                Applicability::DisplayOnly,
                vec![edit],
                path.iter().cloned().collect(),
            )
            .in_document(cx.document),
        }
    }
}

/// The last place in `text` (which starts at byte `base` of the file)
/// where `setting` is written as `NAME VALUE`, `NAME=VALUE` or, in a YAML
/// list, `"NAME", "VALUE"`: the whole and the value.
pub(crate) fn locate_setting(
    text: &str,
    base: usize,
    setting: &SizeSetting,
) -> Option<(TextRange, TextRange)> {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    let mut found = None;
    let mut from = 0;
    while let Some(i) = text[from..].find(&setting.name) {
        let start = from + i;
        let after = start + setting.name.len();
        from = after;
        if text[..start].chars().next_back().is_some_and(is_word) {
            continue;
        }
        let rest = &text[after..];
        let gap = rest.len()
            - rest
                .trim_start_matches([' ', '\t', '\n', '\r', '=', ':', '"', '\'', ',', '\\', '-'])
                .len();
        // `-` only as part of a continued list item (`- "4"`), never the
        // value's own sign: a value starts right after the gap.
        let value_start = after + gap;
        if gap == 0 || !text[value_start..].starts_with(&setting.written) {
            continue;
        }
        let value_end = value_start + setting.written.len();
        if text[value_end..].chars().next().is_some_and(is_word) {
            continue;
        }
        found = Some((
            TextRange::new(base + start, base + value_end),
            TextRange::new(base + value_start, base + value_end),
        ));
    }
    found
}

/// A `/dev/shm` size written as 0, which gives the runtime's default:
/// `shm_size: 0`, `--shm-size=0`.
pub(crate) struct ZeroShmSize {
    pub at: At,
    /// How it is written, for messages: "`shm_size: 0`".
    pub written: String,
}

/// A ulimit as the container's config writes it.
pub struct UlimitSetting {
    /// The setting (`memlock: 8192`, `--ulimit memlock=8192`).
    pub at: At,
    /// Unlimited (`-1`, soft and hard).
    pub unlimited: bool,
    /// The soft limit, the one a process starts with, is unlimited.
    pub soft_unlimited: bool,
    /// Only known at run time (`--ulimit "$LIMIT"`): not judged.
    pub dynamic: bool,
}

impl<'a> ContainerSite<'a> {
    /// "service `train`", "the container started by `docker run`".
    pub fn describe(&self) -> String {
        match &self.place {
            Place::Service { service, .. } => format!("service `{}`", service.name),
            Place::Run { site, .. } => ScriptContext::describe_run(site),
            Place::Pod { pod, container, .. } => pod.describe_container(container),
        }
    }

    /// Where a finding about the container as a whole goes: the service's
    /// key, the run's program word, a pod container's name.
    pub fn at(&self) -> At {
        match &self.place {
            Place::Service { cx, service } => cx.range(service.key),
            Place::Run { site, .. } => site.run.program_range.into(),
            Place::Pod { cx, container, .. } => cx
                .yaml()
                .get(container.map, "name")
                .map_or_else(|| cx.range(container.map), |name| cx.range(name.value))
                .into(),
        }
    }

    /// The other containers of the file (or compose project) this one is
    /// in.
    fn neighbours(&self) -> impl Iterator<Item = &ContainerRuntime> {
        let all = match &self.place {
            Place::Service { cx, .. } => &cx.containers,
            Place::Run { cx, .. } => &cx.containers,
            Place::Pod { cx, .. } => &cx.containers,
        };
        all.iter().filter(|c| c.id != self.model.id)
    }

    /// What shows that the container puts more than the default in
    /// `/dev/shm`: its own config ([`ContainerRuntime::shm_evidence`]), else
    /// another container of the same file that runs its image with more
    /// (jetson-inference's `docker/run.sh` gives the image `--shm-size=8g`
    /// on x86 and nothing on a Jetson): its author knows the image needs it.
    pub fn shm_evidence(&self) -> Option<String> {
        if let Some(own) = self.model.shm_evidence() {
            return Some(own);
        }
        let image = self.model.image.as_deref().filter(|i| !i.contains('$'))?;
        self.neighbours()
            .find(|other| {
                other.image.as_deref() == Some(image)
                    && (matches!(other.shm.kind, ShmKind::Host)
                        || (other.shm.kind == ShmKind::Sized
                            && other.shm.bytes.is_some_and(|b| b > DEFAULT_SHM_BYTES)))
            })
            .map(|other| {
                format!(
                    "another container of this file runs the same image with {}",
                    other.shm.from
                )
            })
    }

    /// "the service", "the container": the subject of a label.
    pub(crate) fn noun(&self) -> &'static str {
        match &self.place {
            Place::Service { .. } => "the service",
            Place::Run { .. } | Place::Pod { .. } => "the container",
        }
    }

    /// "GPU service `train`", "GPU container started by `docker run`".
    pub(crate) fn describe_gpu(&self) -> String {
        match &self.place {
            Place::Service { service, .. } => format!("GPU service `{}`", service.name),
            Place::Run { site, .. } => {
                format!("GPU container started by `{}`", site.run.invocation())
            }
            Place::Pod { pod, container, .. } => {
                format!("GPU {}", pod.describe_container(container))
            }
        }
    }

    /// "Docker's default", "the default": the runtime whose default
    /// /dev/shm a container gets.
    pub(crate) fn default_shm_owner(&self) -> &'static str {
        match &self.place {
            Place::Service { .. } => "Docker's default",
            Place::Run { .. } => "the default",
            Place::Pod { .. } => "the container runtime's",
        }
    }

    /// Why the container counts as a GPU workload, for labels ("reserves
    /// all GPUs", "asks for GPUs with `--gpus all`"; a pod's container has
    /// a GPU resource, or a KServe runtime's the InferenceService's).
    pub(crate) fn gpu_reason(&self) -> String {
        match &self.place {
            Place::Service { service, .. } => gpu_reason(service),
            Place::Run { site, .. } => site.run.gpu_request().unwrap_or_default(),
            Place::Pod { container, .. } => match container.gpu() {
                Some(gpu) => format!("asks for `{}`", gpu.resource.name),
                None => "gets GPUs from the InferenceService KServe merges into it".to_string(),
            },
        }
    }

    /// The rule settings of the file's configuration.
    pub fn settings(&self) -> &'a RuleSettings {
        match &self.place {
            Place::Service { cx, .. } => cx.settings,
            Place::Run { cx, .. } => cx.settings,
            Place::Pod { cx, .. } => cx.settings,
        }
    }

    /// Adds what shows the container uses GPUs when it is written in
    /// another place (the compose file that reserves them, the Dockerfile
    /// whose base image is a GPU image, the InferenceService whose GPU
    /// limit KServe merges into a runtime's container).
    pub(crate) fn gpu_evidence<'r>(&self, finding: DiagnosticBuilder<'r>) -> DiagnosticBuilder<'r> {
        match &self.place {
            Place::Service { cx, service } => finding.gpu_evidence(cx, service),
            Place::Run { .. } => finding,
            Place::Pod { cx, pod, container } => match cx.gpu_predictor(pod, container) {
                Some((service, Some(limit))) if container.gpu().is_none() => finding.related(
                    limit,
                    format!("the GPU limit of {service}, which KServe merges into this runtime"),
                ),
                _ => finding,
            },
        }
    }

    /// Other definitions merged into this container (compose files of the
    /// project defining the same service), with what they do not set.
    pub(crate) fn merged_definitions(&self) -> Vec<At> {
        match &self.place {
            Place::Service { cx, service } => service
                .definitions
                .iter()
                .filter(|d| d.key != service.key)
                .map(|d| cx.range(d.key))
                .collect(),
            Place::Run { .. } | Place::Pod { .. } => Vec::new(),
        }
    }

    /// The settings that decide /dev/shm, by name, for messages: "`shm_size`,
    /// `ipc` or /dev/shm mount".
    pub(crate) fn shm_settings(&self) -> &'static str {
        match &self.place {
            Place::Service { .. } => "`shm_size`, `ipc` or /dev/shm mount",
            Place::Run { .. } => "`--shm-size`, `--ipc` or /dev/shm mount",
            Place::Pod { .. } => "/dev/shm mount or `hostIPC`",
        }
    }

    /// How to give the container a /dev/shm of the configured fix size.
    pub(crate) fn add_shm_help(&self) -> String {
        match &self.place {
            Place::Service { cx, .. } => add_shm_help(cx.settings),
            Place::Run { cx, .. } => format!(
                "add `--shm-size={}` (or `--ipc=host`); `fix-size` in gpulint.toml's [shm] sets the size the fix adds",
                cx.settings.fix_shm_size
            ),
            Place::Pod { cx, .. } => format!(
                "add a volume `{{name: dshm, emptyDir: {{medium: Memory, sizeLimit: {}}}}}` to the pod and mount it at /dev/shm in this container",
                cx.settings.fix_shm_quantity()
            ),
        }
    }

    /// Where the setting that decided the container's /dev/shm is written
    /// (`ipc: none`, `--ipc none`, a size, a mount); `None` for the
    /// runtime's default.
    pub fn shm_decided_at(&self) -> Option<At> {
        let shm = &self.model.shm;
        match &self.place {
            Place::Service { cx, .. } => cx.decided_at(shm),
            // The linted file itself.
            Place::Run { .. } | Place::Pod { .. } => shm.at.map(At::from),
        }
    }

    /// A size of 0 written for /dev/shm, which leaves the default.
    pub(crate) fn zero_shm_size(&self) -> Option<ZeroShmSize> {
        match &self.place {
            Place::Service { cx, service } => zero_shm_size_node(service).map(|node| ZeroShmSize {
                at: cx.range(node),
                written: "`shm_size: 0`".to_string(),
            }),
            // Not reported on a command line: adding another option is no
            // fix, and rewriting a shell word is left to its author. A pod
            // writes no size.
            Place::Run { .. } | Place::Pod { .. } => None,
        }
    }

    /// Writes /dev/shm's size where none is: `shm_size` on the service,
    /// `--shm-size` on the command line, at the configured fix size; a
    /// written size of 0 is set to what the workload needs.
    pub(crate) fn add_shm_fix(&self) -> Option<Fix> {
        match &self.place {
            Place::Service { cx, service } => {
                let size = &cx.settings.fix_shm_size;
                match zero_shm_size_node(service) {
                    Some(node) => set_shm_size_fix(
                        cx,
                        service,
                        node,
                        &cx.settings
                            .shm_size_for(service_shm_need(cx, service).bytes),
                        "Set",
                        Applicability::Safe,
                    ),
                    None => cx.insert_fix(
                        service,
                        &["shm_size"],
                        NewNode::scalar(cx.editor(service.map.file).quoted(size)),
                        format!("Add `shm_size: \"{size}\"`"),
                        Applicability::Safe,
                    ),
                }
            }
            Place::Run { cx, site } => {
                let option = format!("--shm-size={}", cx.settings.fix_shm_size);
                cx.insert_option(site, &option).map(|edit| {
                    cx.run_fix(
                        site,
                        format!("Add `{option}`"),
                        Applicability::Safe,
                        vec![edit],
                    )
                })
            }
            // One volume serves the pod: K8S004's fix adds it, and a mount
            // in each container that needs it, at once.
            Place::Pod { .. } => None,
        }
    }

    /// A /dev/shm size written as a bare number under a mebibyte
    /// (`shm_size: 512`, `--shm-size 512`): a unit mistake SHM003 reports.
    pub(crate) fn shm_size_is_bare_bytes(&self) -> bool {
        let written = match &self.place {
            Place::Service { service, .. } => service.shm_size.as_ref().map(|s| s.value.clone()),
            Place::Run { site, .. } => site
                .run
                .option("--shm-size")
                .map(|(_, o)| parse_compose_size(o.value.as_deref().unwrap_or(""))),
            // A quantity always has its unit read (K8S008 reports `512m`).
            Place::Pod { .. } => None,
        };
        matches!(
            written,
            Some(SizeValue::Bytes {
                bare_number: true,
                bytes,
            }) if bytes < MIB
        )
    }

    /// The setting that sized this container's /dev/shm (its `decided_by`
    /// is a size or a mount), with its raise to what the workload needs in
    /// this syntax. `None` when gpulint cannot point at it, and for a pod
    /// volume, in every container but the one whose need decides.
    pub(crate) fn sized_shm(&self, need: &ShmNeed) -> Option<SizedShm> {
        let shm = &self.model.shm;
        let size = &need.size();
        let bytes = shm.bytes?;
        match &self.place {
            Place::Service { cx, service } => {
                let at = cx.decided_at(shm)?;
                // A plain `shm_size` or tmpfs size is rewritten; an
                // interpolated one (its default) is left to the user.
                let raise = match service.shm_size.as_ref().filter(|s| cx.range(s.node) == at) {
                    Some(s) if cx.source(s.node).contains('$') => None,
                    Some(s) if cx.is_extended_from_base(service, s.node) => cx.insert_fix(
                        service,
                        &["shm_size"],
                        NewNode::scalar(cx.editor(service.map.file).quoted(size)),
                        format!(
                            "Set `shm_size` to \"{size}\", over the value `{}` extends",
                            service.name
                        ),
                        Applicability::Unsafe,
                    ),
                    Some(s) => {
                        set_shm_size_fix(cx, service, s.node, size, "Raise", Applicability::Unsafe)
                    }
                    None => compose_tmpfs_raise(cx, service, &at, size),
                };
                Some(SizedShm {
                    at,
                    bytes,
                    suggested: format!("\"{size}\""),
                    label: format!("the service {}", gpu_reason(service)),
                    raise,
                })
            }
            Place::Run { cx, site } => match shm.decided_by {
                ShmSetting::Size => {
                    let (_, option) = site.run.option("--shm-size")?;
                    option.value_range?;
                    Some(SizedShm {
                        at: option.range.into(),
                        bytes,
                        suggested: format!("`{size}`"),
                        label: "`--shm-size` caps /dev/shm".to_string(),
                        raise: cx.set_option_value(
                            site,
                            option,
                            size,
                            format!("Raise `--shm-size` to {size}"),
                            Applicability::Unsafe,
                        ),
                    })
                }
                ShmSetting::Mount => run_tmpfs_raise(cx, site, size, bytes),
                _ => None,
            },
            Place::Pod { cx, pod, container } => pod_size_limit_raise(cx, pod, container, need),
        }
    }

    /// The GPUs the container is given, when gpulint knows them: `Some(Some(n))`
    /// for `n` of them, `Some(None)` for all the host has; `None` when
    /// unknown (no request, an id or device list from a variable).
    pub(crate) fn given_gpus(&self) -> Option<Option<u64>> {
        match &self.place {
            Place::Service { service, .. } => {
                let given = match service.gpu.count {
                    Some(Gpus::Count(n)) => Some(n),
                    Some(Gpus::All) => None,
                    _ => return None,
                };
                // An id from an unset variable: another request's count is
                // then only part of what the service gets.
                let unknown_ids = service.device_requests.iter().any(|r| {
                    r.device_ids
                        .as_ref()
                        .is_some_and(|ids| ids.value.iter().any(|id| id.contains('$')))
                });
                (!unknown_ids).then_some(given)
            }
            Place::Run { site, .. } => {
                let run = &site.run;
                let given = match run.gpus() {
                    Gpus::Count(n) => Some(n),
                    Gpus::All => None,
                    Gpus::Unknown => return None,
                };
                // `--gpus '"device='$GPU'"'`: only known at run time.
                let dynamic = run.option("--gpus").is_some_and(|(_, o)| o.dynamic);
                (!dynamic).then_some(given)
            }
            // A whole number of GPUs (a limit, or a KServe runtime's from
            // its InferenceService).
            Place::Pod { .. } => match self.model.gpus {
                Some(Gpus::Count(n)) => Some(Some(n)),
                _ => None,
            },
        }
    }

    /// The container runs in each pod of a group that may pool the GPUs of
    /// several pods (a LeaderWorkerSet, a Ray cluster, a PyTorchJob).
    pub(crate) fn in_distributed_group(&self) -> bool {
        match &self.place {
            Place::Pod { pod, .. } => pod.spec.distributed,
            Place::Service { .. } | Place::Run { .. } => false,
        }
    }

    /// The value the container's environment gives `name` (the last
    /// setting wins), when it is known.
    pub(crate) fn env_value(&self, name: &str) -> Option<String> {
        match &self.place {
            Place::Service { service, .. } => service.env(name).and_then(|v| v.value.clone()),
            Place::Run { site, .. } => site
                .run
                .last_env(name)
                .and_then(|(_, v, _)| v.map(str::to_string)),
            Place::Pod { container, .. } => container.env(name).and_then(|v| v.value.clone()),
        }
    }

    /// The command the container runs, as one line.
    pub fn command_line(&self) -> &'a str {
        match &self.place {
            Place::Service { service, .. } => &service.command_line,
            Place::Run { site, .. } => &site.run.command,
            Place::Pod { container, .. } => &container.command_line,
        }
    }

    /// The image it runs, as written.
    pub fn image(&self) -> Option<&'a str> {
        match &self.place {
            Place::Service { service, .. } => service.image.as_ref().map(|i| i.value.as_str()),
            Place::Run { site, .. } => site.run.image.as_ref().map(|w| w.text.as_str()),
            Place::Pod { container, .. } => container.image.as_deref(),
        }
    }

    /// Where the workload setting `setting` is written: in the command
    /// (`command:`/`entrypoint:`, a container's `args`/`command`, the
    /// words after a run's image), or, for one read from a variable, at the
    /// variable (an `environment` entry, an `env` item's `value`, a `-e`;
    /// not one an `env_file` sets, which gpulint does not edit).
    pub(crate) fn written_setting(&self, setting: &SizeSetting) -> Option<WrittenSetting<'_>> {
        match &self.place {
            Place::Service { cx, service } => {
                if setting.from_env {
                    let var = service
                        .env(&setting.name)
                        .filter(|v| v.from_file.is_none())?;
                    let whole = cx.env_range(var);
                    let text = &whole.file.as_ref()?.text[whole.range.as_range()];
                    let at = text.rfind(&setting.written)?;
                    let start = whole.range.start as usize + at;
                    Some(WrittenSetting {
                        value: TextRange::new(start, start + setting.written.len()),
                        whole,
                        place: &self.place,
                        path: Some(cx.service_path(service, &["environment"])),
                    })
                } else {
                    service.command_parts.iter().find_map(|(key, node)| {
                        let range = cx.range(*node);
                        let (whole, value) =
                            locate_setting(cx.source(*node), range.range.start as usize, setting)?;
                        Some(WrittenSetting {
                            whole: At {
                                range: whole,
                                file: range.file,
                            },
                            value,
                            place: &self.place,
                            path: Some(cx.service_path(service, &[key.as_str()])),
                        })
                    })
                }
            }
            Place::Run { cx, site } => {
                let run = &site.run;
                let (whole, value) = if setting.from_env {
                    let (_, _, option) = run.last_env(&setting.name)?;
                    // A range past the text (a command cut off at the end)
                    // is skipped.
                    let text = cx.text.get(option.range.as_range())?;
                    let at = text.rfind(&setting.written)?;
                    let start = option.range.start as usize + at;
                    (
                        option.range,
                        TextRange::new(start, start + setting.written.len()),
                    )
                } else {
                    // The engine's options come before the image.
                    let after_image = run.image.as_ref().map_or(run.range.start, |w| w.range.end);
                    let span = TextRange::new(after_image as usize, run.range.end as usize);
                    let text = cx.text.get(span.as_range())?;
                    locate_setting(text, span.start as usize, setting)?
                };
                Some(WrittenSetting {
                    whole: whole.into(),
                    value,
                    place: &self.place,
                    path: None,
                })
            }
            Place::Pod { cx, container, .. } => {
                if setting.from_env {
                    let var = container.env(&setting.name)?;
                    let value = cx.yaml().get(cx.yaml().resolve(var.node), "value")?;
                    Some(WrittenSetting {
                        whole: var.range.into(),
                        value: cx.range(value.value),
                        place: &self.place,
                        path: Some(container_path(container).child("env")),
                    })
                } else {
                    ["args", "command"].iter().find_map(|key| {
                        let node = cx.yaml().get(container.map, key)?.value;
                        let range = cx.range(node);
                        let (whole, value) =
                            locate_setting(cx.source(node), range.start as usize, setting)?;
                        Some(WrittenSetting {
                            whole: whole.into(),
                            value,
                            place: &self.place,
                            path: Some(container_path(container).child(*key)),
                        })
                    })
                }
            }
        }
    }

    /// A command line that writes a /dev/shm size which leaves the
    /// default (`--shm-size=0`): a rule that would add a size has no fix to
    /// offer there. (A compose `shm_size: 0` is [`Self::zero_shm_size`].)
    pub(crate) fn leaves_default_shm_as_written(&self) -> bool {
        match &self.place {
            Place::Service { .. } | Place::Pod { .. } => false,
            Place::Run { .. } => self.model.shm.at.is_some(),
        }
    }

    /// A compose service with only `build.shm_size`, which the user may
    /// think applies at run time (SHM009 reports it).
    pub(crate) fn build_shm_size_only(&self) -> bool {
        match &self.place {
            Place::Service { service, .. } => {
                service.build_shm_size.is_some() && service.shm_size.is_none()
            }
            Place::Run { .. } | Place::Pod { .. } => false,
        }
    }

    /// Whether gpulint reads all of the container's settings: a command
    /// line with options only known at run time (`docker run $OPTS`) is
    /// not judged on what it lacks.
    pub(crate) fn fully_known(&self) -> bool {
        match &self.place {
            Place::Service { .. } | Place::Pod { .. } => true,
            Place::Run { site, .. } => site.run.uncertain.is_none(),
        }
    }

    /// Where a later compose file removes the setting at `path`
    /// (`ulimits: !reset`), which a fix adding it would not survive.
    pub fn reset_of(&self, path: &str) -> Option<At> {
        match &self.place {
            Place::Service { cx, service } => service.reset_of(path).map(|at| cx.range(at)),
            Place::Run { .. } | Place::Pod { .. } => None,
        }
    }
}

/// The containers of a compose project's services.
pub fn compose<'a>(cx: &'a ComposeContext<'a>, each: &mut dyn FnMut(&ContainerSite<'_>)) {
    for service in cx.services() {
        each(&ContainerSite {
            model: cx.container(service),
            place: Place::Service { cx, service },
        });
    }
}

/// The containers of a Kubernetes document's pods (the model leaves init
/// containers out).
pub fn kubernetes<'a>(cx: &'a KubeContext<'a>, each: &mut dyn FnMut(&ContainerSite<'_>)) {
    for pod in cx.pods() {
        for container in pod.spec.app_containers() {
            if let Some(model) = cx.container(container) {
                each(&ContainerSite {
                    model,
                    place: Place::Pod { cx, pod, container },
                });
            }
        }
    }
}

/// The containers a file's command lines start.
pub fn commands<'a>(cx: &'a ScriptContext<'a>, each: &mut dyn FnMut(&ContainerSite<'_>)) {
    for site in &cx.script.runs {
        each(&ContainerSite {
            model: cx.container(site),
            place: Place::Run { cx, site },
        });
    }
}
