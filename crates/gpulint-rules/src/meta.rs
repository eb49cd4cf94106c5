//! Rule metadata, read from the TOML front matter of `rules/<CODE>.md`.

use crate::diagnostic::Severity;
use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Target {
    Compose,
    Kubernetes,
    Dockerfile,
    /// `docker run` command lines in scripts, Makefiles, Markdown, workflows.
    Commands,
    /// SLURM batch scripts.
    Slurm,
    Suppression,
}

impl Target {
    /// As written in the docs' front matter.
    pub fn as_str(self) -> &'static str {
        match self {
            Target::Compose => "compose",
            Target::Kubernetes => "kubernetes",
            Target::Dockerfile => "dockerfile",
            Target::Commands => "commands",
            Target::Slurm => "slurm",
            Target::Suppression => "suppression",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FixKind {
    None,
    Safe,
    Unsafe,
    DisplayOnly,
}

impl FixKind {
    /// As written in the docs' front matter.
    pub fn as_str(self) -> &'static str {
        match self {
            FixKind::None => "none",
            FixKind::Safe => "safe",
            FixKind::Unsafe => "unsafe",
            FixKind::DisplayOnly => "display-only",
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleMeta {
    pub code: super::RuleCode,
    /// Kebab-case name of the flagged pattern.
    pub name: String,
    /// The kinds of file the rule checks.
    pub targets: Vec<Target>,
    /// The default severity; a finding may raise or lower it and config overrides it.
    pub severity: Severity,
    pub fix: FixKind,
    /// Off unless selected by code or prefix (`ALL` does not select it).
    #[serde(default, rename = "opt-in")]
    pub opt_in: bool,
    /// One line: what the rule flags.
    pub summary: String,
    #[serde(default)]
    pub sources: Vec<String>,
    /// The Markdown after the front matter.
    #[serde(skip)]
    pub body: String,
}

impl RuleMeta {
    pub fn applies_to(&self, target: Target) -> bool {
        self.targets.contains(&target)
    }

    pub fn parse(doc: &str) -> Result<RuleMeta, String> {
        let rest = doc
            .strip_prefix("+++\n")
            .ok_or("the doc must start with a `+++` front matter line")?;
        let end = rest
            .find("\n+++\n")
            .ok_or("the front matter has no closing `+++` line")?;
        let mut meta: RuleMeta = toml::from_str(&rest[..end]).map_err(|e| e.to_string())?;
        meta.body = rest[end + 5..].trim_start().to_string();
        Ok(meta)
    }
}
