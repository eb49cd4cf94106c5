//! A Quadlet unit's drop-ins (`vllm.container.d/10-gpu.conf`,
//! `container.d/...`): Quadlet merges their keys into the unit before it
//! writes the `podman run`, so the unit is read with them
//! ([`crate::model::quadlet::with_dropins`]). A finding about a value a
//! drop-in writes stays in the unit (the container is the unit's), with a
//! label at the drop-in's line, and no fix: an edit there would change
//! every unit the drop-in applies to.

use crate::diagnostic::{Diagnostic, Label};
use crate::model::quadlet::{dropin_dirs, dropin_order, with_dropins};
use crate::session::Session;
use crate::text::{SourceFile, TextRange};
use std::path::Path;
use std::sync::Arc;

/// A unit's text with its drop-ins, and where each starts.
pub(crate) struct Merged {
    pub text: String,
    unit_len: usize,
    /// The unit's `[Container]` header: where findings a drop-in decides
    /// are reported.
    anchor: TextRange,
    dropins: Vec<(usize, Arc<SourceFile>)>,
}

/// The unit at `path` with the drop-ins Quadlet would merge into it, read
/// through the session; `None` when it has none.
pub(crate) fn merged(session: &Session, path: &Path, text: &str) -> Option<Merged> {
    let name = path.file_name()?.to_str()?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let found: Vec<(String, Vec<String>)> = dropin_dirs(name)
        .into_iter()
        .filter_map(|d| {
            let names = session.system().list_files(&dir.join(&d))?;
            Some((
                d,
                names
                    .into_iter()
                    .filter_map(|n| n.into_string().ok())
                    .collect(),
            ))
        })
        .collect();
    let sources: Vec<Arc<SourceFile>> = dropin_order(&found)
        .into_iter()
        .filter_map(|(d, n)| session.workspace().files.read(&dir.join(d).join(n)).ok())
        .map(|t| t.source)
        .collect();
    if sources.is_empty() {
        return None;
    }
    let texts: Vec<&str> = sources.iter().map(|s| s.text.as_str()).collect();
    let (merged, starts) = with_dropins(text, &texts);
    let anchor = text.find("[Container]").map_or(TextRange::empty(0), |at| {
        TextRange::new(at, at + "[Container]".len())
    });
    Some(Merged {
        text: merged,
        unit_len: text.len(),
        anchor,
        dropins: starts.into_iter().zip(sources).collect(),
    })
}

impl Merged {
    /// The drop-in `range` of the merged text is in, and the range there.
    fn dropin_at(&self, range: TextRange) -> Option<(Arc<SourceFile>, TextRange)> {
        let (start, source) = self
            .dropins
            .iter()
            .rev()
            .find(|(start, _)| *start <= range.start as usize)?;
        let end = (range.end as usize).clamp(*start, start + source.text.len());
        Some((
            source.clone(),
            TextRange::new(range.start as usize - start, end - start),
        ))
    }

    /// Findings on the merged text as the unit reports them.
    pub fn place(&self, diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
        let in_unit = |r: TextRange| (r.end as usize) <= self.unit_len;
        diagnostics
            .into_iter()
            .map(|mut d| {
                for label in d.related.iter_mut().filter(|l| l.file.is_none()) {
                    if !in_unit(label.range)
                        && let Some((file, range)) = self.dropin_at(label.range)
                    {
                        label.range = range;
                        label.file = Some(file);
                    }
                }
                if !in_unit(d.range)
                    && let Some((file, range)) = self.dropin_at(d.range)
                {
                    d.related.insert(
                        0,
                        Label {
                            range,
                            message: format!("set in the drop-in {}", shown(&file.path)),
                            file: Some(file),
                        },
                    );
                    d.range = self.anchor;
                }
                let fix_in_unit = d
                    .fix
                    .as_ref()
                    .is_none_or(|fix| fix.edits.iter().all(|e| in_unit(e.range)));
                if !fix_in_unit {
                    d.fix = None;
                }
                d
            })
            .collect()
    }

    /// A range of the merged text as a range of the unit (a drop-in's
    /// becomes the anchor).
    pub(crate) fn in_unit(&self, range: TextRange) -> TextRange {
        if (range.end as usize) <= self.unit_len {
            range
        } else {
            self.anchor
        }
    }
}

/// A path as a message quotes it: nothing a terminal would act on.
fn shown(path: &Path) -> String {
    path.display()
        .to_string()
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}
