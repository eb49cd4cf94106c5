//! How a rule reports: a `Reporter` per rule run and the builder of one
//! finding.

use super::ComposeContext;
use crate::diagnostic::{At, Diagnostic, Label, Severity};
use crate::fix::Fix;
use crate::model::compose::{Service, Src};
use crate::text::TextRange;
use std::collections::HashSet;
use std::sync::Arc;

/// Collects the findings of one rule run.
pub struct Reporter {
    pub(crate) code: super::RuleCode,
    pub(crate) default_severity: Severity,
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// Each label, note and help text said so far, shared by the findings
    /// that say it: a rule words them alike for each container.
    texts: HashSet<Arc<str>>,
}

impl Reporter {
    pub fn new(code: super::RuleCode, default_severity: Severity) -> Self {
        Self::appending_to(Vec::new(), code, default_severity)
    }

    /// A reporter that adds its findings after `diagnostics`, which
    /// [`Reporter::into_diagnostics`] gives back: the findings of every
    /// rule run on a file collect in one vector, never copied between two.
    pub fn appending_to(
        diagnostics: Vec<Diagnostic>,
        code: super::RuleCode,
        default_severity: Severity,
    ) -> Self {
        Self {
            code,
            default_severity,
            diagnostics,
            texts: HashSet::new(),
        }
    }

    fn shared(texts: &mut HashSet<Arc<str>>, text: String) -> Arc<str> {
        if let Some(said) = texts.get(text.as_str()) {
            return said.clone();
        }
        let text: Arc<str> = text.into();
        texts.insert(text.clone());
        text
    }

    /// Reports a finding at `range` with the rule's default severity; the
    /// returned builder adds the rest.
    pub fn report(
        &mut self,
        at: impl Into<At>,
        message: impl Into<String>,
    ) -> DiagnosticBuilder<'_> {
        let at = at.into();
        self.diagnostics.push(Diagnostic {
            code: self.code,
            severity: self.default_severity,
            message: message.into(),
            range: at.range,
            file: at.file,
            label: None,
            note: None,
            help: None,
            related: Vec::new(),
            fix: None,
        });
        DiagnosticBuilder {
            diagnostic: self.diagnostics.last_mut().expect("just pushed"),
            texts: &mut self.texts,
        }
    }

    pub fn into_diagnostics(self) -> Vec<Diagnostic> {
        self.diagnostics
    }
}

pub struct DiagnosticBuilder<'r> {
    diagnostic: &'r mut Diagnostic,
    texts: &'r mut HashSet<Arc<str>>,
}

impl DiagnosticBuilder<'_> {
    /// Moves the finding to `at` (a rule that words a finding before it
    /// knows where it goes).
    pub fn at(self, at: At) -> Self {
        self.diagnostic.range = at.range;
        self.diagnostic.file = at.file;
        self
    }

    pub fn severity(self, severity: Severity) -> Self {
        self.diagnostic.severity = severity;
        self
    }

    pub fn label(self, label: impl Into<String>) -> Self {
        self.diagnostic.label = Some(Reporter::shared(self.texts, label.into()));
        self
    }

    pub fn note(self, note: impl Into<String>) -> Self {
        self.diagnostic.note = Some(Reporter::shared(self.texts, note.into()));
        self
    }

    pub fn help(self, help: impl Into<String>) -> Self {
        self.diagnostic.help = Some(Reporter::shared(self.texts, help.into()));
        self
    }

    /// A labelled span: in the finding's file, or in another one.
    pub fn related(self, at: impl Into<At>, message: impl Into<String>) -> Self {
        let at = at.into();
        let file = match (&at.file, &self.diagnostic.file) {
            (Some(file), Some(own)) if Arc::ptr_eq(file, own) || file == own => None,
            (file, _) => file.clone(),
        };
        self.diagnostic.related.push(Label {
            range: at.range,
            message: message.into(),
            file,
        });
        self
    }

    /// When the service counts as a GPU service because of the image it
    /// builds, points at the Dockerfile's `FROM` that says so; when the GPUs
    /// are asked for in another file of the compose project, points there.
    pub(crate) fn gpu_evidence(self, cx: &ComposeContext, service: &Service) -> Self {
        let elsewhere = |evidence: Src| match &self.diagnostic.file {
            Some(file) => !Arc::ptr_eq(file, cx.source_file(evidence.file)),
            None => false,
        };
        if let Some(evidence) = service.gpu.evidence
            && elsewhere(evidence)
        {
            let message = format!(
                "the service {} in this file of the compose project",
                service.gpu.describe()
            );
            return self.related(cx.range(evidence), message);
        }
        match service.gpu_build() {
            Some(built) if !service.gpu.is_reserved() => {
                let message = format!("`build:` makes an image based on `{}`", built.base.image);
                self.built_image_label(cx, service, message)
            }
            _ => self,
        }
    }

    /// A label at the base image of what the service builds: the `FROM` in
    /// its Dockerfile, or its `dockerfile_inline` value.
    pub(crate) fn built_image_label(
        self,
        cx: &ComposeContext,
        service: &Service,
        message: String,
    ) -> Self {
        let Some(built) = &service.built_image else {
            return self;
        };
        match &built.dockerfile {
            Some(file) => self.related_in(file, built.base.range, message),
            None => match service
                .build
                .as_ref()
                .and_then(|b| b.dockerfile_inline.as_ref())
            {
                Some(inline) => self.related(cx.range(inline.node), message),
                None => self,
            },
        }
    }

    /// A labelled span in another file.
    pub(crate) fn related_in(
        self,
        file: &std::sync::Arc<crate::text::SourceFile>,
        range: TextRange,
        message: impl Into<String>,
    ) -> Self {
        self.diagnostic.related.push(Label {
            range,
            message: message.into(),
            file: Some(file.clone()),
        });
        self
    }

    /// Attaches a fix; `None` (a fix that could not be built here) leaves the finding without one.
    pub fn fix(self, fix: impl Into<Option<Fix>>) -> Self {
        self.diagnostic.fix = fix.into().map(Box::new);
        self
    }
}
