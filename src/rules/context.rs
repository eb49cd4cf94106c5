//! What a rule sees (the parsed file and settings) and how it reports.

use crate::diagnostic::{Diagnostic, Label, Severity};
use crate::fix::Fix;
use crate::model::compose::{ComposeFile, Service, Spanned};
use crate::model::size::{GIB, MIB};
use crate::syntax::yaml::{NodeId, Yaml};
use crate::text::TextRange;

/// The thresholds and defaults rules use; set from `gpulint.toml` `[shm]`.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleSettings {
    /// Below this, any GPU service gets a warning (DeepSpeed's `ds_report` threshold).
    pub min_shm: u64,
    /// Below this, multi-GPU or distributed services get a warning.
    pub min_shm_multi_gpu: u64,
    /// The size fixes write and messages suggest, as the user would spell it.
    pub fix_shm_size: String,
}

impl Default for RuleSettings {
    fn default() -> Self {
        Self {
            min_shm: 512 * MIB,
            min_shm_multi_gpu: 2 * GIB,
            fix_shm_size: "8gb".to_string(),
        }
    }
}

pub struct ComposeContext<'a> {
    pub file: &'a ComposeFile<'a>,
    pub text: &'a str,
    pub settings: &'a RuleSettings,
}

impl<'a> ComposeContext<'a> {
    pub fn yaml(&self) -> &'a Yaml {
        self.file.yaml
    }

    pub fn services(&self) -> &'a [Service] {
        &self.file.services
    }

    /// The span of a node, as written.
    pub fn range(&self, node: NodeId) -> TextRange {
        self.file.yaml.range(node)
    }

    /// The source text of a node.
    pub fn source(&self, node: NodeId) -> &'a str {
        &self.text[self.range(node).as_range()]
    }

    /// The span of `key: value` for an entry.
    pub fn entry_range(&self, key: NodeId, value: NodeId) -> TextRange {
        self.range(key).cover(self.range(value))
    }

    /// The span of a setting as written: `key: value`, or just the value
    /// when it has no key (a list item).
    pub fn setting_range<T>(&self, setting: &Spanned<T>) -> TextRange {
        self.entry_range(setting.key.unwrap_or(setting.node), setting.node)
    }
}

/// Collects the findings of one rule run.
pub struct Reporter {
    pub(crate) code: &'static str,
    pub(crate) default_severity: Severity,
    pub(crate) diagnostics: Vec<Diagnostic>,
}

impl Reporter {
    pub fn new(code: &'static str, default_severity: Severity) -> Self {
        Self {
            code,
            default_severity,
            diagnostics: Vec::new(),
        }
    }

    /// Reports a finding at `range` with the rule's default severity; the
    /// returned builder adds the rest.
    pub fn report(
        &mut self,
        range: TextRange,
        message: impl Into<String>,
    ) -> DiagnosticBuilder<'_> {
        self.diagnostics.push(Diagnostic {
            code: self.code,
            severity: self.default_severity,
            message: message.into(),
            range,
            label: None,
            note: None,
            help: None,
            related: Vec::new(),
            fix: None,
        });
        DiagnosticBuilder(self.diagnostics.last_mut().expect("just pushed"))
    }

    pub fn into_diagnostics(self) -> Vec<Diagnostic> {
        self.diagnostics
    }
}

pub struct DiagnosticBuilder<'r>(&'r mut Diagnostic);

impl DiagnosticBuilder<'_> {
    pub fn severity(self, severity: Severity) -> Self {
        self.0.severity = severity;
        self
    }

    pub fn label(self, label: impl Into<String>) -> Self {
        self.0.label = Some(label.into());
        self
    }

    pub fn note(self, note: impl Into<String>) -> Self {
        self.0.note = Some(note.into());
        self
    }

    pub fn help(self, help: impl Into<String>) -> Self {
        self.0.help = Some(help.into());
        self
    }

    pub fn related(self, range: TextRange, message: impl Into<String>) -> Self {
        self.0.related.push(Label {
            range,
            message: message.into(),
        });
        self
    }

    pub fn fix(self, fix: Fix) -> Self {
        self.0.fix = Some(fix);
        self
    }
}
