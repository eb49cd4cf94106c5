//! Rule metadata, declared in Rust beside each rule ([`declare_rule!`](crate::declare_rule!)):
//! the compiler refuses a misspelt or missing field. `RuleMeta` joins it
//! with what the registry and the check decide (the code, the targets) and
//! the rule's doc, `rules/<CODE>.md`.

use crate::diagnostic::Severity;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    /// As the docs and reports write it.
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixKind {
    None,
    Safe,
    Unsafe,
    DisplayOnly,
}

impl FixKind {
    /// As the docs and reports write it.
    pub fn as_str(self) -> &'static str {
        match self {
            FixKind::None => "none",
            FixKind::Safe => "safe",
            FixKind::Unsafe => "unsafe",
            FixKind::DisplayOnly => "display-only",
        }
    }
}

/// What a rule declares about itself, with [`declare_rule!`](crate::declare_rule!) in its file.
#[derive(Debug, Clone, Copy)]
pub struct RuleDecl {
    /// Kebab-case name of the flagged pattern.
    pub name: &'static str,
    /// The default severity; a finding may raise or lower it and config
    /// overrides it.
    pub severity: Severity,
    pub fix: FixKind,
    /// Off unless selected by code or prefix (`ALL` does not select it).
    pub opt_in: bool,
    /// One line: what the rule flags.
    pub summary: &'static str,
    /// Where the rule's facts come from.
    pub sources: &'static [&'static str],
}

/// Declares the rule of the file it is written in as `META`: its name,
/// default severity, fix kind, summary and sources, in that order, and
/// `opt_in: true` for a rule off by default. A field misspelt, missing or
/// out of order fails the build, as in biome's `declare_lint_rule!`:
///
/// ```
/// gpulint_rules::declare_rule! {
///     name: "an-example",
///     severity: Warning,
///     fix: Safe,
///     summary: "what it flags",
///     sources: ["where the facts come from"],
/// }
/// assert_eq!(META.name, "an-example");
/// assert!(!META.opt_in);
/// ```
///
/// ```compile_fail
/// gpulint_rules::declare_rule! {
///     name: "an-example",
///     severty: Warning, // misspelt
///     fix: Safe,
///     summary: "what it flags",
///     sources: [],
/// }
/// ```
///
/// ```compile_fail
/// gpulint_rules::declare_rule! {
///     name: "an-example",
///     severity: Warning,
///     summary: "what it flags", // no `fix`
///     sources: [],
/// }
/// ```
///
/// ```compile_fail
/// gpulint_rules::declare_rule! {
///     name: "an-example",
///     severity: Loud, // no such severity
///     fix: Safe,
///     summary: "what it flags",
///     sources: [],
/// }
/// ```
#[macro_export]
macro_rules! declare_rule {
    (
        name: $name:literal,
        severity: $severity:ident,
        fix: $fix:ident,
        $(opt_in: $opt_in:literal,)?
        summary: $summary:literal,
        sources: [$($source:literal),* $(,)?] $(,)?
    ) => {
        /// This rule's declaration (see `declare_rule!`).
        pub const META: $crate::RuleDecl = $crate::RuleDecl {
            name: $name,
            severity: $crate::Severity::$severity,
            fix: $crate::FixKind::$fix,
            opt_in: false $(|| $opt_in)?,
            summary: $summary,
            sources: &[$($source),*],
        };
    };
}

/// Everything about a rule: its declaration, code, targets and doc.
#[derive(Debug, Clone)]
pub struct RuleMeta {
    pub code: super::RuleCode,
    /// Kebab-case name of the flagged pattern.
    pub name: &'static str,
    /// The kinds of file the rule checks: what its `Check` runs on.
    pub targets: Vec<Target>,
    /// The default severity; a finding may raise or lower it and config overrides it.
    pub severity: Severity,
    pub fix: FixKind,
    /// Off unless selected by code or prefix (`ALL` does not select it).
    pub opt_in: bool,
    /// One line: what the rule flags.
    pub summary: &'static str,
    pub sources: &'static [&'static str],
    /// The rule's doc, `rules/<CODE>.md`.
    pub body: &'static str,
}

impl RuleMeta {
    pub fn applies_to(&self, target: Target) -> bool {
        self.targets.contains(&target)
    }
}
