//! The rule registry. Each rule is one file under `src/rules/<family>/`
//! (the family is the code's prefix: `shm/`, `gpu/`, `nccl/`, `ulim/`,
//! `k8s/`, `dockerfile/`, `slurm/`, `proj/`, `suppression/`), one doc
//! `rules/<CODE>.md` (whose front matter is the rule's metadata) and one
//! fixture folder `fixtures/<CODE>/`. A rule is registered by a plain `mod`
//! line in its family's `mod.rs` (so rustfmt reaches the file) and one line
//! in `for_each_rule!` (`src/codes.rs`); `scripts/new_rule.py` writes all
//! of it, and a test checks the two agree.

// The layers below, by the names this crate's paths use (`crate::text`).
use gpulint_base::{codes, diagnostic, fix, text};
use gpulint_model as model;
use gpulint_project as project;
use gpulint_syntax as syntax;
use gpulint_vfs as vfs;

mod compose_context;
mod container_context;
mod devcontainer;
mod dockerfile;
mod dockerfile_context;
mod env_context;
mod gpu;
mod helpers;
mod k8s;
mod kube_context;
mod meta;
mod nccl;
mod proj;
mod reporter;
mod script_context;
pub mod settings;
mod shm;
mod slurm;
mod suppression;
mod ulim;

pub use crate::diagnostic::Severity;
pub use compose_context::ComposeContext;
pub use container_context::ContainerSite;
pub use dockerfile_context::DockerfileContext;
pub use env_context::{EnvSetting, EnvSource};
pub use kube_context::KubeContext;
pub use meta::{FixKind, RuleDecl, RuleMeta, Target};
pub use reporter::{DiagnosticBuilder, Reporter};
pub use script_context::ScriptContext;
pub use settings::RuleSettings;

use std::sync::OnceLock;

/// How a rule is run: once per compose document, Kubernetes document,
/// Dockerfile or file that runs commands (its `docker run` lines, or its
/// SLURM directives and launches), or for several of them (one rule, one
/// implementation of its logic, an adapter per target); once per
/// environment variable of every platform ([`EnvSetting`]); or by the
/// engine itself (suppression comments).
#[derive(Clone, Copy)]
pub struct Check {
    pub compose: Option<fn(&ComposeContext, &mut Reporter)>,
    pub kubernetes: Option<fn(&KubeContext, &mut Reporter)>,
    pub dockerfile: Option<fn(&DockerfileContext, &mut Reporter)>,
    pub commands: Option<fn(&ScriptContext, &mut Reporter)>,
    pub slurm: Option<fn(&ScriptContext, &mut Reporter)>,
    /// Over every environment variable a container or a script's processes
    /// get, whatever file sets it.
    pub env: Option<fn(&EnvSetting, &mut Reporter)>,
    /// Over every container a compose project, a Kubernetes document or a
    /// command line starts ([`ContainerSite`]: the model, and where its
    /// settings are written).
    pub containers: Option<fn(&ContainerSite, &mut Reporter)>,
    /// The container check runs over the containers of Kubernetes pods too.
    pub in_pods: bool,
}

impl Check {
    /// Reported by the engine itself.
    pub(crate) const ENGINE: Check = Check {
        compose: None,
        kubernetes: None,
        dockerfile: None,
        commands: None,
        slurm: None,
        env: None,
        containers: None,
        in_pods: false,
    };

    /// A rule over containers: compose services, Kubernetes pods'
    /// containers and the containers of command lines (`docker run`,
    /// `podman run`, dev containers, workflow containers, Quadlet units).
    pub const fn containers(check: fn(&ContainerSite, &mut Reporter)) -> Check {
        Check {
            containers: Some(check),
            in_pods: true,
            ..Check::ENGINE
        }
    }

    /// The container check leaves Kubernetes pods alone: a pod spec cannot
    /// write the setting, or a Kubernetes rule reports it for the pod.
    pub const fn except_pods(self) -> Check {
        Check {
            in_pods: false,
            ..self
        }
    }

    /// A rule over environment variables: compose services, Kubernetes
    /// containers and the ConfigMaps they read, Dockerfile `ENV`, scripts
    /// and container command lines.
    pub const fn env(check: fn(&EnvSetting, &mut Reporter)) -> Check {
        Check {
            env: Some(check),
            ..Check::ENGINE
        }
    }

    /// Runs on a compose project.
    pub fn on_compose(&self) -> bool {
        self.compose.is_some() || self.env.is_some() || self.containers.is_some()
    }

    /// Runs on a Kubernetes document.
    pub fn on_kubernetes(&self) -> bool {
        self.kubernetes.is_some() || self.env.is_some() || self.runs_in_pods().is_some()
    }

    /// Runs on a Dockerfile.
    pub fn on_dockerfile(&self) -> bool {
        self.dockerfile.is_some() || self.env.is_some()
    }

    /// Runs on a file's commands (not counting SLURM checks).
    pub fn on_commands(&self) -> bool {
        self.commands.is_some() || self.env.is_some() || self.containers.is_some()
    }

    pub fn run_compose(&self, cx: &ComposeContext, out: &mut Reporter) {
        if let Some(check) = self.compose {
            check(cx, out);
        }
        if let Some(check) = self.env {
            env_context::compose(cx, &mut |setting| check(setting, out));
        }
        if let Some(check) = self.containers {
            container_context::compose(cx, &mut |site| check(site, out));
        }
    }

    pub fn run_kubernetes(&self, cx: &KubeContext, out: &mut Reporter) {
        if let Some(check) = self.kubernetes {
            check(cx, out);
        }
        if let Some(check) = self.env {
            env_context::kubernetes(cx, &mut |setting| check(setting, out));
        }
        if let Some(check) = self.runs_in_pods() {
            container_context::kubernetes(cx, &mut |site| check(site, out));
        }
    }

    /// The container check, when it runs over pods' containers.
    fn runs_in_pods(&self) -> Option<fn(&ContainerSite, &mut Reporter)> {
        self.containers.filter(|_| self.in_pods)
    }

    pub fn run_dockerfile(&self, cx: &DockerfileContext, out: &mut Reporter) {
        if let Some(check) = self.dockerfile {
            check(cx, out);
        }
        if let Some(check) = self.env {
            env_context::dockerfile(cx, &mut |setting| check(setting, out));
        }
    }

    /// The command-line and SLURM checks of a file that runs commands.
    pub fn run_commands(&self, cx: &ScriptContext, out: &mut Reporter) {
        if let Some(check) = self.commands {
            check(cx, out);
        }
        if let Some(check) = self.slurm {
            check(cx, out);
        }
        if let Some(check) = self.env {
            env_context::commands(cx, &mut |setting| check(setting, out));
        }
        if let Some(check) = self.containers {
            container_context::commands(cx, &mut |site| check(site, out));
        }
    }

    pub const fn compose(check: fn(&ComposeContext, &mut Reporter)) -> Check {
        Check {
            compose: Some(check),
            ..Check::ENGINE
        }
    }

    pub const fn kubernetes(check: fn(&KubeContext, &mut Reporter)) -> Check {
        Check {
            kubernetes: Some(check),
            ..Check::ENGINE
        }
    }

    pub const fn both(
        compose: fn(&ComposeContext, &mut Reporter),
        kubernetes: fn(&KubeContext, &mut Reporter),
    ) -> Check {
        Check {
            compose: Some(compose),
            kubernetes: Some(kubernetes),
            ..Check::ENGINE
        }
    }

    pub const fn dockerfile(check: fn(&DockerfileContext, &mut Reporter)) -> Check {
        Check {
            dockerfile: Some(check),
            ..Check::ENGINE
        }
    }

    pub const fn slurm(check: fn(&ScriptContext, &mut Reporter)) -> Check {
        Check {
            slurm: Some(check),
            ..Check::ENGINE
        }
    }

    /// A rule over the containers of command lines: `docker run` and
    /// `podman run` lines, dev containers, workflow containers, Quadlet units.
    pub const fn commands(check: fn(&ScriptContext, &mut Reporter)) -> Check {
        Check {
            commands: Some(check),
            ..Check::ENGINE
        }
    }

    /// The same check for `docker run` command lines too.
    pub(crate) const fn and_commands(self, check: fn(&ScriptContext, &mut Reporter)) -> Check {
        Check {
            commands: Some(check),
            ..self
        }
    }

    /// A SLURM check too.
    pub(crate) const fn and_slurm(self, check: fn(&ScriptContext, &mut Reporter)) -> Check {
        Check {
            slurm: Some(check),
            ..self
        }
    }

    /// The targets this check runs on, to compare with the doc's `targets`.
    pub fn targets(&self) -> Vec<Target> {
        let mut targets = Vec::new();
        if self.on_compose() {
            targets.push(Target::Compose);
        }
        if self.on_kubernetes() {
            targets.push(Target::Kubernetes);
        }
        if self.on_dockerfile() {
            targets.push(Target::Dockerfile);
        }
        if self.on_commands() {
            targets.push(Target::Commands);
        }
        if self.slurm.is_some() {
            targets.push(Target::Slurm);
        }
        targets
    }
}

pub struct RuleInfo {
    pub code: RuleCode,
    pub doc: &'static str,
    pub check: Check,
    pub declared: RuleDecl,
}

pub use crate::codes::{RuleCode, UnknownRuleCode};

macro_rules! declare_rules {
    ($( $target:ident { $( $code:ident => $module:ident ),* $(,)? } )*) => {
        /// Every rule, grouped by target, in code order within a group.
        pub static RULES: &[RuleInfo] = &[
            $( $( RuleInfo {
                code: RuleCode::$code,
                doc: include_str!(concat!("../rules/", stringify!($code), ".md")),
                check: $target::$module::CHECK,
                declared: $target::$module::META,
            }, )* )*
        ];
    };
}

crate::codes::for_each_rule!(declare_rules);

/// Metadata of every rule: its declaration, with the targets its check
/// runs on (a rule the engine reports itself checks suppressions) and its
/// doc, built once.
pub fn all_meta() -> &'static [RuleMeta] {
    static META: OnceLock<Vec<RuleMeta>> = OnceLock::new();
    META.get_or_init(|| {
        RULES
            .iter()
            .map(|r| {
                let mut targets = r.check.targets();
                if targets.is_empty() {
                    targets.push(Target::Suppression);
                }
                let declared = r.declared;
                RuleMeta {
                    code: r.code,
                    name: declared.name,
                    targets,
                    severity: declared.severity,
                    fix: declared.fix,
                    opt_in: declared.opt_in,
                    summary: declared.summary,
                    sources: declared.sources,
                    body: r.doc,
                }
            })
            .collect()
    })
}

pub fn rule(code: RuleCode) -> (&'static RuleInfo, &'static RuleMeta) {
    (&RULES[code.index()], &all_meta()[code.index()])
}

/// Where a rule's doc is published: `rules/<CODE>.md` in the repository.
pub fn doc_url(code: RuleCode) -> String {
    format!("{}/blob/main/rules/{code}.md", env!("CARGO_PKG_REPOSITORY"))
}

pub fn meta(code: RuleCode) -> &'static RuleMeta {
    &all_meta()[code.index()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_parse_from_user_text_case_insensitively() {
        assert_eq!("SHM001".parse(), Ok(RuleCode::SHM001));
        assert_eq!("shm001".parse(), Ok(RuleCode::SHM001));
        let unknown = "SHM999".parse::<RuleCode>().unwrap_err();
        assert_eq!(unknown.to_string(), "`SHM999` is not a gpulint rule code");
        // A prefix is a selector, not a code.
        assert!("SHM".parse::<RuleCode>().is_err());
    }

    #[test]
    fn every_code_is_its_rules_and_reads_back() {
        assert_eq!(RuleCode::ALL.len(), RULES.len());
        for (index, (info, meta)) in RULES.iter().zip(all_meta()).enumerate() {
            assert_eq!(info.code.index(), index);
            assert_eq!(
                meta.code, info.code,
                "rules/{}.md names another code",
                info.code
            );
            assert_eq!(info.code.as_str().parse(), Ok(info.code));
            assert_eq!(info.code.to_string(), info.code.as_str());
            let json = serde_json::to_string(&info.code).unwrap();
            assert_eq!(json, format!("\"{}\"", info.code));
            assert_eq!(serde_json::from_str::<RuleCode>(&json).unwrap(), info.code);
        }
    }

    #[test]
    fn codes_sort_as_their_text_not_as_declared() {
        // DF004 is declared among the compose rules, before K8S001.
        let mut codes = vec![RuleCode::K8S001, RuleCode::DF004, RuleCode::SHM001];
        codes.sort();
        assert_eq!(codes, [RuleCode::DF004, RuleCode::K8S001, RuleCode::SHM001]);
    }
}
