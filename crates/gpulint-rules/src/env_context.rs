//! Environment variables as a rule reads them, whatever writes them: a
//! compose service's `environment` or `env_file`, a Kubernetes container's
//! `env` or a ConfigMap it reads through `envFrom`, a Dockerfile `ENV`, a
//! script's own assignments, and `-e` on a `docker run`, `podman run`, dev
//! container, workflow container or Quadlet unit.
//!
//! An environment rule is one function over [`EnvSetting`]
//! (`Check::env`); the engine runs it over the settings of every file. Each
//! setting knows where a finding goes and how to remove it in its own
//! file's syntax, so a rule never matches on the platform to place a finding
//! or build a fix.

use crate::DiagnosticBuilder;
use crate::diagnostic::At;
use crate::fix::Applicability;
use crate::helpers::compose_env_finding;
use crate::kube_context::Pod;
use crate::model::compose::{ComposeEnv, Service};
use crate::model::docker_run::RunOption;
use crate::model::dockerfile;
use crate::model::k8s::Container;
use crate::model::k8s_env_from::config_map_env;
use crate::model::script::RunSite;
use crate::model::workload::{EnvVar, EnvView};
use crate::{ComposeContext, DockerfileContext, KubeContext, Reporter, ScriptContext};
use foldhash::{HashSet, HashSetExt};

/// Who sets a variable, for rules whose verdict or advice depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvSource {
    /// A compose service (`environment`, or an `env_file` it names).
    Service,
    /// A Kubernetes container's `env`.
    KubeContainer,
    /// A ConfigMap of the same stream, read through `envFrom`: shared with
    /// whatever else reads it.
    ConfigMap,
    /// A Dockerfile `ENV`: baked into the image.
    Image,
    /// The script itself, for every process it starts (`export`, a
    /// command prefix): a site's batch or launch settings.
    Script,
    /// An option of a container command line (`docker run -e`), or what
    /// stands for one (a dev container's `runArgs`/`containerEnv`, a
    /// workflow container's `options`, a Quadlet `Environment=`).
    RunOption,
}

/// One variable a container (or everything a script starts) gets.
pub struct EnvSetting<'a> {
    pub name: &'a str,
    /// `None` when unset or unknown (an unset variable in it).
    pub value: Option<&'a str>,
    pub source: EnvSource,
    /// "service `train`", "the image's final stage", for messages.
    pub owner: Owner<'a>,
    site: Site<'a>,
}

/// Who a setting belongs to, written out only when a finding names it:
/// every variable of every file has one, and few are reported.
#[derive(Clone, Copy)]
pub enum Owner<'a> {
    Service(&'a str),
    Container(Pod<'a>, &'a Container),
    /// A ConfigMap a container reads through `envFrom`.
    ConfigMap(&'a str, Pod<'a>, &'a Container),
    Stage(&'a DockerfileContext<'a>, usize),
    Script,
    Run(&'a RunSite),
}

impl std::fmt::Display for Owner<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Owner::Service(name) => write!(f, "service `{name}`"),
            Owner::Container(pod, container) => f.write_str(&pod.describe_container(container)),
            Owner::ConfigMap(name, pod, container) => write!(
                f,
                "ConfigMap `{name}`, through {}'s `envFrom`,",
                pod.describe_container(container)
            ),
            Owner::Stage(cx, stage) => f.write_str(&cx.describe_stage(*stage)),
            Owner::Script => f.write_str("the script"),
            Owner::Run(site) => f.write_str(&ScriptContext::describe_run(site)),
        }
    }
}

/// Where the setting is written, and with it how a finding is placed and a
/// fix that removes it is built.
enum Site<'a> {
    Compose {
        cx: &'a ComposeContext<'a>,
        service: &'a Service,
        var: &'a ComposeEnv,
    },
    Kube {
        cx: &'a KubeContext<'a>,
        container: &'a Container,
        var: &'a EnvVar,
    },
    /// Reported where it is written, never removed: a ConfigMap other
    /// workloads may read, or a script line whose removal would shift the
    /// commands after it.
    ReportOnly(At),
    Dockerfile {
        cx: &'a DockerfileContext<'a>,
        setting: dockerfile::EnvSetting<'a>,
    },
    Run {
        cx: &'a ScriptContext<'a>,
        site: &'a RunSite,
        option: &'a RunOption,
    },
}

impl<'a> EnvSetting<'a> {
    pub fn view(&self) -> EnvView<'a> {
        EnvView {
            name: self.name,
            value: self.value,
            range: self.range(),
        }
    }

    fn range(&self) -> crate::text::TextRange {
        match &self.site {
            // Placed by `compose_env_finding`, in the file that writes it.
            Site::Compose { .. } => Default::default(),
            Site::Kube { var, .. } => var.range,
            Site::ReportOnly(at) => at.range,
            Site::Dockerfile { setting, .. } => setting.view().range,
            Site::Run { option, .. } => option.range,
        }
    }

    /// Starts a finding about this setting, placed where it is written,
    /// with the fix that removes it where gpulint can edit that place
    /// (always an unsafe fix: what the variable worked around comes back).
    pub fn report<'r>(&self, out: &'r mut Reporter, message: String) -> DiagnosticBuilder<'r> {
        match &self.site {
            Site::Compose { cx, service, var } => {
                compose_env_finding(cx, service, var, out.report(self.range(), message))
            }
            Site::Kube { cx, container, var } => out
                .report(var.range, message)
                .fix(cx.remove_env_fix(container, var)),
            Site::ReportOnly(at) => out.report(at.clone(), message),
            Site::Dockerfile { cx, setting } => out
                .report(setting.view().range, message)
                .fix(cx.remove_env_fix(setting, Applicability::Unsafe)),
            Site::Run { cx, site, option } => {
                out.report(option.range, message).fix(cx.remove_option_fix(
                    site,
                    option,
                    format!("Remove `-e {}`", self.name),
                    Applicability::Unsafe,
                ))
            }
        }
    }

    /// How a container of this setting's platform gets a large enough
    /// /dev/shm, for advice.
    pub(crate) fn shm_remedy(&self) -> &'static str {
        match self.source {
            EnvSource::Service => "`shm_size` or `ipc: host`",
            EnvSource::KubeContainer | EnvSource::ConfigMap => {
                "an `emptyDir` with `medium: Memory` mounted at /dev/shm"
            }
            EnvSource::Image => "`shm_size` or `ipc: host` at run time",
            EnvSource::Script => "`--shm-size` or `--ipc=host` for a container",
            EnvSource::RunOption => "`--shm-size` or `--ipc=host`",
        }
    }
}

/// Keeps the last of each name: the one that wins. `items` in the order
/// they apply.
fn effective<'n, T>(
    items: impl DoubleEndedIterator<Item = T>,
    name: impl Fn(&T) -> &'n str,
) -> Vec<T> {
    let mut seen = HashSet::new();
    let mut kept: Vec<T> = items.rev().filter(|item| seen.insert(name(item))).collect();
    kept.reverse();
    kept
}

/// The variables of a compose project's services, as each service gets
/// them (the value that wins for each name).
pub fn compose<'a>(cx: &'a ComposeContext<'a>, each: &mut dyn FnMut(&EnvSetting<'_>)) {
    for service in cx.services() {
        let owner = Owner::Service(&service.name);
        for var in effective(service.environment.iter(), |v| &v.name) {
            each(&EnvSetting {
                name: &var.name,
                value: var.value.as_deref(),
                source: EnvSource::Service,
                owner,
                site: Site::Compose { cx, service, var },
            });
        }
    }
}

/// The variables of each Kubernetes container: from ConfigMaps of the
/// stream through `envFrom` (where `env` does not override them), then its
/// own `env`.
pub fn kubernetes<'a>(cx: &'a KubeContext<'a>, each: &mut dyn FnMut(&EnvSetting<'_>)) {
    for (pod, container) in cx.containers() {
        let own = effective(container.env.iter(), |v| &v.name);
        let from_config_maps = config_map_env(cx.yaml(), container.map);
        let shared = effective(from_config_maps.iter(), |f| &f.var.name);
        for from in shared {
            if own.iter().any(|v| v.name == from.var.name) {
                continue;
            }
            each(&EnvSetting {
                name: &from.var.name,
                value: from.var.value.as_deref(),
                source: EnvSource::ConfigMap,
                owner: Owner::ConfigMap(&from.config_map, pod, container),
                site: Site::ReportOnly(from.var.range.into()),
            });
        }
        for var in own {
            each(&EnvSetting {
                name: &var.name,
                value: var.value.as_deref(),
                source: EnvSource::KubeContainer,
                owner: Owner::Container(pod, container),
                site: Site::Kube { cx, container, var },
            });
        }
    }
}

/// The `ENV` settings of every stage of a Dockerfile.
pub fn dockerfile<'a>(cx: &'a DockerfileContext<'a>, each: &mut dyn FnMut(&EnvSetting<'_>)) {
    for setting in cx.model.env_settings() {
        let view = setting.view();
        let (name, value) = (view.name, view.value);
        each(&EnvSetting {
            name,
            value,
            source: EnvSource::Image,
            owner: Owner::Stage(cx, setting.stage),
            site: Site::Dockerfile { cx, setting },
        });
    }
}

/// What a script sets for the processes it starts, then the `-e` options
/// of each container it runs (the value that wins for each name).
pub fn commands<'a>(cx: &'a ScriptContext<'a>, each: &mut dyn FnMut(&EnvSetting<'_>)) {
    for setting in cx.script_env() {
        each(&EnvSetting {
            name: &setting.name,
            value: setting.value.as_deref(),
            source: EnvSource::Script,
            owner: Owner::Script,
            site: Site::ReportOnly(setting.range.into()),
        });
    }
    for site in &cx.script.runs {
        let owner = Owner::Run(site);
        for (name, value, option) in effective(
            site.run.env().collect::<Vec<_>>().into_iter(),
            |(name, _, _)| name,
        ) {
            each(&EnvSetting {
                name,
                value,
                source: EnvSource::RunOption,
                owner,
                site: Site::Run { cx, site, option },
            });
        }
    }
}
