//! Applying fixes in passes, each batch verified before it is kept, then a
//! unified diff (the write is `super::write`).
//!
//! A pass applies every fix whose edits and declared paths overlap no
//! other's, as ruff does, and verifies the batch once: the fixed text parses
//! into as many documents as before, the resolved tree changed only where
//! the batch's fixes said it would (`Fix::changes`, `Fix::may_change`) and
//! at every path each of them declared, and one re-lint shows every fixed
//! finding gone and nothing new (except a finding this run also fixes). A
//! batch that fails is split in halves until the fix that fails is found,
//! so a run costs a few lints of the file, not one per fix. Fixes left
//! overlapping go to the next pass, which sees the earlier ones' results.

use super::config::Config;
use super::session::Session;
use super::{FileError, FileKind};
use crate::diagnostic::Diagnostic;
use crate::model::resolved::{DocumentLeaves, Resolved, changed_paths};
use crate::model::script::ScriptKind;
use crate::rules::RuleCode;
use crate::syntax::yaml::Yaml;
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use gpulint_base::fix::{
    Applicability, Edit, Fix, OffsetMap, PathOverlap, apply_edits, edits_are_well_formed,
};
use std::collections::BTreeMap;
use std::path::Path;

/// Bounds the passes. Each pass applies at least one fix or ends the loop,
/// and only fixes that touch the same text or settings wait for a later
/// one, so real files settle in a few; a file that has not settled by
/// then says how many fixes were left (`FixOutcome::unsettled`).
pub const MAX_PASSES: usize = 100;

/// Which fixes to apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixMode {
    pub unsafe_fixes: bool,
}

impl FixMode {
    pub fn applies(self, fix: &Fix) -> bool {
        match fix.applicability {
            Applicability::Safe => true,
            Applicability::Unsafe => self.unsafe_fixes,
            Applicability::DisplayOnly => false,
        }
    }
}

/// A fix that was verified and kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppliedFix {
    pub code: crate::rules::RuleCode,
    pub title: String,
}

/// A fix that failed verification and was not applied (a bug in gpulint's
/// fix; the finding is left for the user).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedFix {
    pub code: crate::rules::RuleCode,
    pub title: String,
    pub reason: String,
    /// Where the finding was, in the original text.
    pub offset: usize,
}

/// A text's documents and resolved trees, read as its kind of file.
fn resolve(text: &str, kind: FileKind) -> Resolved {
    match kind {
        FileKind::Dockerfile => Resolved::of_dockerfile(text),
        FileKind::Script(ScriptKind::DevContainer) => Resolved::of_jsonc(text),
        FileKind::Script(kind) if kind != ScriptKind::Workflow => Resolved::of_script(text, kind),
        _ => Resolved::of_yaml_text(text),
    }
}

#[derive(Debug, Clone)]
pub struct FixOutcome {
    /// The findings in the original text, before any fix.
    pub found: Vec<Diagnostic>,
    pub fixed_text: String,
    pub applied: Vec<AppliedFix>,
    pub failed: Vec<FailedFix>,
    /// The findings left in `fixed_text`. A fix that failed is taken off its
    /// finding; one left when the passes ran out stays.
    pub remaining: Vec<Diagnostic>,
    /// Fixes `mode` allows that were still to apply when the loop stopped
    /// after [`MAX_PASSES`] passes (run it again to apply them).
    pub unsettled: usize,
    /// How many passes the loop made.
    pub passes: usize,
}

impl FixOutcome {
    pub fn changed(&self, original: &str) -> bool {
        self.fixed_text != original
    }
}

/// Lints `text` and applies every fix `mode` allows, in passes that each
/// re-lint once so later fixes see the earlier ones. The files it refers to
/// are read from disk, by a session of its own.
pub fn fix_text(
    text: &str,
    path: &Path,
    config: &Config,
    mode: FixMode,
) -> Result<FixOutcome, FileError> {
    fix_text_in(&Session::on_disk(), text, path, config, mode)
}

/// [`fix_text`], reading other files through `session`.
pub fn fix_text_in(
    session: &Session,
    text: &str,
    path: &Path,
    config: &Config,
    mode: FixMode,
) -> Result<FixOutcome, FileError> {
    fix_in_passes(session, text, path, config, mode, MAX_PASSES)
}

/// A text, what it resolves to and its findings: where a pass starts.
struct State {
    text: String,
    resolved: Resolved,
    diagnostics: Vec<Diagnostic>,
}

/// What verification is asked about: the text a pass starts from, and the
/// lint that judges a fixed one (the one place the fix loop lints, so it
/// can be pointed at another loader of the file and its project).
struct Verifier<'a> {
    session: &'a Session,
    path: &'a Path,
    config: &'a Config,
    mode: FixMode,
    kind: FileKind,
    /// How many times it linted: what a fix run costs.
    lints: std::cell::Cell<usize>,
}

impl<'a> Verifier<'a> {
    fn new(
        session: &'a Session,
        path: &'a Path,
        config: &'a Config,
        mode: FixMode,
        text: &str,
    ) -> Self {
        Verifier {
            session,
            path,
            config,
            mode,
            kind: FileKind::of_text(path, text),
            lints: std::cell::Cell::new(0),
        }
    }

    fn lint(&self, text: &str) -> Result<Vec<Diagnostic>, FileError> {
        self.lints.set(self.lints.get() + 1);
        self.session.lint_text(text, self.path, self.config)
    }
}

/// A finding as the fix loop tells findings apart across passes: its code
/// and where it starts.
type FindingKey = (RuleCode, u32);

fn key(d: &Diagnostic) -> FindingKey {
    (d.code, d.range.start)
}

fn fix_in_passes(
    session: &Session,
    text: &str,
    path: &Path,
    config: &Config,
    mode: FixMode,
    max_passes: usize,
) -> Result<FixOutcome, FileError> {
    let verifier = Verifier::new(session, path, config, mode, text);
    let diagnostics = verifier.lint(text)?;
    let found = diagnostics.clone();
    let mut state = State {
        text: text.to_string(),
        resolved: resolve(text, verifier.kind),
        diagnostics,
    };
    let mut ledger = Ledger::default();
    let mut passes = 0;
    loop {
        let candidates = ledger.pending(&state, mode);
        if candidates.is_empty() || passes == max_passes {
            break;
        }
        passes += 1;
        if let Some(verified) = ledger.pass(&verifier, &state, candidates) {
            state = verified;
        }
    }
    let unsettled = ledger.pending(&state, mode).len();
    let mut remaining = state.diagnostics;
    // A fix that failed verification is not a fix: what is left must not
    // count it as fixable.
    for d in &mut remaining {
        if ledger.rejected.contains(&key(d)) {
            d.fix = None;
        }
    }
    Ok(FixOutcome {
        found,
        fixed_text: state.text,
        applied: ledger.applied,
        failed: ledger.failed,
        remaining,
        unsettled,
        passes,
    })
}

/// What the passes of one fix run have applied and refused so far.
#[derive(Default)]
struct Ledger {
    applied: Vec<AppliedFix>,
    failed: Vec<FailedFix>,
    /// Fixes that failed, by their finding in the current text.
    rejected: HashSet<FindingKey>,
    /// The edits of each pass, in order, to map offsets back to the original.
    history: Vec<Vec<Edit>>,
}

impl Ledger {
    /// The findings of `state` whose fix `mode` applies and that have not
    /// failed.
    fn pending(&self, state: &State, mode: FixMode) -> Vec<usize> {
        (0..state.diagnostics.len())
            .filter(|&i| {
                let d = &state.diagnostics[i];
                d.fix.as_ref().is_some_and(|f| mode.applies(f)) && !self.rejected.contains(&key(d))
            })
            .collect()
    }

    /// Refuses `d`'s fix for `reason`, at its offset in the original text.
    fn reject(&mut self, d: &Diagnostic, reason: String) {
        self.rejected.insert(key(d));
        self.failed.push(FailedFix {
            code: d.code,
            title: d.fix.as_ref().expect("a fix").title.clone(),
            reason,
            offset: original_offset(&self.history, d.range.start),
        });
    }

    /// One pass over `candidates`: a batch of disjoint fixes is verified
    /// together (halved down to the one that fails). Returns the text with
    /// the verified fixes applied, or `None` when none was.
    fn pass(
        &mut self,
        verifier: &Verifier,
        state: &State,
        candidates: Vec<usize>,
    ) -> Option<State> {
        // A fix that cannot apply to any text is refused before batching.
        let mut sound = Vec::new();
        for i in candidates {
            let d = &state.diagnostics[i];
            match malformed(&state.text, d.fix.as_ref().expect("a fix")) {
                Some(reason) => self.reject(d, reason),
                None => sound.push(i),
            }
        }
        let batch = disjoint_batch(&state.diagnostics, &sound);
        if batch.is_empty() {
            return None;
        }
        let mut settled = Settled::default();
        let fixes: Vec<&Diagnostic> = batch.iter().map(|&i| &state.diagnostics[i]).collect();
        if state.resolved.leaves.is_none() {
            // Nothing can be compared: every fix fails alike, no halving.
            for d in fixes {
                self.reject(d, "the file is too large to verify the fix".into());
            }
            return None;
        }
        settle(verifier, state, &fixes, &mut settled);
        for (d, reason) in settled.failed {
            self.reject(d, reason);
        }
        let verified = settled.verified?;
        let edits = batch_edits(&settled.accepted);
        let moved = OffsetMap::new(&edits);
        self.rejected = std::mem::take(&mut self.rejected)
            .into_iter()
            .map(|(code, offset)| (code, moved.map(offset)))
            .collect();
        for d in &settled.accepted {
            self.applied.push(AppliedFix {
                code: d.code,
                title: d.fix.as_ref().expect("a fix").title.clone(),
            });
        }
        self.history.push(edits);
        Some(verified)
    }
}

/// Why a fix cannot apply to `text` at all, whatever else is applied.
fn malformed(text: &str, fix: &Fix) -> Option<String> {
    if fix.edits.is_empty() {
        return Some("the fix has no edits".into());
    }
    if !edits_are_well_formed(text, &fix.edits) {
        return Some("its edits overlap or fall outside the file".into());
    }
    None
}

/// The fixes of `candidates` (indexes into `diagnostics`, in order) to
/// apply together: each taken unless one of its edits touches or overlaps
/// an edit already taken (two insertions at one offset would depend on
/// their order), or one of its declared paths overlaps a taken fix's in the
/// same document. The rest wait for the next pass.
fn disjoint_batch(diagnostics: &[Diagnostic], candidates: &[usize]) -> Vec<usize> {
    // Taken edits by start: disjoint and not touching, so their ends are
    // in the same order.
    let mut taken: BTreeMap<u32, u32> = BTreeMap::new();
    let mut paths: HashMap<usize, PathOverlap> = HashMap::new();
    // The fixes of many services reaching one anchor share `may_change`.
    let mut shared: HashSet<usize> = HashSet::new();
    let mut batch = Vec::new();
    for &i in candidates {
        let fix = diagnostics[i].fix.as_ref().expect("a fix");
        let touches = fix.edits.iter().any(|e| {
            taken
                .range(..=e.range.end)
                .next_back()
                .is_some_and(|(_, &end)| end >= e.range.start)
        });
        if touches {
            continue;
        }
        let shares =
            !fix.may_change.is_empty() && shared.contains(&(fix.may_change.as_ptr() as usize));
        let declared = || fix.changes.iter().chain(fix.may_change.iter());
        if shares
            || paths
                .get(&fix.document)
                .is_some_and(|set| declared().any(|p| set.overlaps(p)))
        {
            continue;
        }
        for e in &fix.edits {
            taken.insert(e.range.start, e.range.end);
        }
        paths.entry(fix.document).or_default().extend(declared());
        if !fix.may_change.is_empty() {
            shared.insert(fix.may_change.as_ptr() as usize);
        }
        batch.push(i);
    }
    batch
}

/// Every edit of `fixes`, sorted: they are disjoint (see `disjoint_batch`).
fn batch_edits(fixes: &[&Diagnostic]) -> Vec<Edit> {
    let mut edits: Vec<Edit> = fixes
        .iter()
        .flat_map(|d| d.fix.as_ref().expect("a fix").edits.iter().cloned())
        .collect();
    edits.sort_by_key(|e| (e.range.start, e.range.end));
    edits
}

/// What a pass kept and refused.
#[derive(Default)]
struct Settled<'d> {
    accepted: Vec<&'d Diagnostic>,
    /// The text with `accepted` applied, once any was.
    verified: Option<State>,
    failed: Vec<(&'d Diagnostic, String)>,
    /// Fixes that failed only on top of others accepted in this pass, and
    /// verify alone: not applied now, and found again, recomputed against
    /// the fixed text, in the next pass.
    deferred: Vec<&'d Diagnostic>,
}

/// Verifies `group` together with what `settled` accepted so far; when that
/// fails, splits the group in halves and tries each, down to the single fix
/// that fails and why. A batch that verifies costs one lint.
fn settle<'d>(
    verifier: &Verifier,
    base: &State,
    group: &[&'d Diagnostic],
    settled: &mut Settled<'d>,
) {
    let trial: Vec<&Diagnostic> = settled.accepted.iter().chain(group).copied().collect();
    match verify(verifier, base, &trial) {
        Ok(state) => {
            settled.accepted.extend(group);
            settled.verified = Some(state);
        }
        Err(reason) if group.len() == 1 => {
            // On top of other fixes it may fail only because of them (one
            // adds a GPU reservation, so another's size no longer covers
            // the need): alone on the pass's text it may still be right.
            if !settled.accepted.is_empty() && verify(verifier, base, group).is_ok() {
                settled.deferred.push(group[0]);
            } else {
                settled.failed.push((group[0], reason));
            }
        }
        Err(_) => {
            let (first, second) = group.split_at(group.len() / 2);
            settle(verifier, base, first, settled);
            settle(verifier, base, second, settled);
        }
    }
}

/// Maps an offset in the fixed text back to the original, approximately
/// (good enough to point at the finding).
fn original_offset(history: &[Vec<Edit>], mut offset: u32) -> usize {
    for edits in history.iter().rev() {
        let mut delta: i64 = 0;
        for edit in edits {
            let new_start = (i64::from(edit.range.start) + delta) as u32;
            let new_end = new_start + edit.content.len() as u32;
            if new_end <= offset {
                delta += edit.content.len() as i64 - i64::from(edit.range.end - edit.range.start);
            } else if new_start < offset {
                offset = edit.range.start;
                delta = 0;
                break;
            } else {
                break;
            }
        }
        offset = (i64::from(offset) - delta) as u32;
    }
    offset as usize
}

/// Checks the fix of `target`, one of `diagnostics` (the findings of
/// `text`), as `--fix --unsafe-fixes` would before writing it, and returns
/// the fixed text: how the language server decides which quick fixes to offer.
pub fn verify_fix(
    session: &Session,
    text: &str,
    path: &Path,
    config: &Config,
    diagnostics: &[Diagnostic],
    target: &Diagnostic,
) -> Result<String, String> {
    let mode = FixMode { unsafe_fixes: true };
    verify_alone(session, text, path, config, diagnostics, target, mode)
}

/// Checks that the fix of `target` applies on its own as its finding
/// advertises it: a safe fix with `--fix` alone (what it brings about must
/// be safe to fix too), an unsafe one with `--fix --unsafe-fixes`. A fix
/// that only verifies together with another is not what it claims to be.
pub fn verify_as_advertised(
    session: &Session,
    text: &str,
    path: &Path,
    config: &Config,
    diagnostics: &[Diagnostic],
    target: &Diagnostic,
) -> Result<String, String> {
    let mode = match target.fix.as_ref().map(|f| f.applicability) {
        Some(Applicability::Safe) => FixMode {
            unsafe_fixes: false,
        },
        Some(Applicability::Unsafe) => FixMode { unsafe_fixes: true },
        Some(Applicability::DisplayOnly) => return Err("the fix is only shown".into()),
        None => return Err("the finding has no fix".into()),
    };
    verify_alone(session, text, path, config, diagnostics, target, mode)
}

fn verify_alone(
    session: &Session,
    text: &str,
    path: &Path,
    config: &Config,
    diagnostics: &[Diagnostic],
    target: &Diagnostic,
    mode: FixMode,
) -> Result<String, String> {
    let Some(fix) = &target.fix else {
        return Err("the finding has no fix".into());
    };
    if let Some(reason) = malformed(text, fix) {
        return Err(reason);
    }
    let verifier = Verifier::new(session, path, config, mode, text);
    let base = State {
        text: text.to_string(),
        resolved: resolve(text, verifier.kind),
        diagnostics: diagnostics.to_vec(),
    };
    verify(&verifier, &base, &[target]).map(|v| v.text)
}

/// Applies `fixes` (disjoint, each well formed) to `base` together and
/// checks the result; the fixed state, or why it is refused.
fn verify(verifier: &Verifier, base: &State, fixes: &[&Diagnostic]) -> Result<State, String> {
    let edits = batch_edits(fixes);
    if !edits_are_well_formed(&base.text, &edits) {
        return Err("its edits overlap or fall outside the file".into());
    }
    let fixed = apply_edits(&base.text, &edits);
    let new_resolved = if verifier.kind.is_yaml() {
        let new_yaml = Yaml::parse(&fixed)
            .map_err(|e| format!("the fixed text is not valid YAML ({})", e.message))?;
        Resolved::of(&new_yaml)
    } else {
        resolve(&fixed, verifier.kind)
    };
    if new_resolved.documents != base.resolved.documents {
        return Err(format!(
            "the fixed text has {} YAML documents instead of {}",
            new_resolved.documents, base.resolved.documents
        ));
    }
    let (Some(old), Some(new)) = (&base.resolved.leaves, &new_resolved.leaves) else {
        return Err("the file is too large to verify the fix".into());
    };
    only_declared_paths_change(fixes, old, new)?;

    let new_diagnostics = verifier
        .lint(&fixed)
        .map_err(|e| format!("the fixed text does not lint: {}", e.message))?;
    let moved = OffsetMap::new(&edits);
    let moved_key = |d: &Diagnostic| (d.code, moved.map(d.range.start));
    // Still reported: the same rule where it was, unless that finding is
    // another one that moved there. Removing the first of `ENV A=1 B=2`
    // moves B's finding to where A's was: told apart by the text it is on.
    let mut now: HashMap<FindingKey, Vec<&str>> = HashMap::new();
    for d in &new_diagnostics {
        let written = fixed.get(d.range.as_range()).unwrap_or_default();
        now.entry(key(d)).or_default().push(written);
    }
    let still_reported = |d: &&Diagnostic| {
        let Some(there) = now.get(&moved_key(d)) else {
            return false;
        };
        there.iter().any(|written| {
            // Another finding: not `d` itself, which has `d`'s range.
            !base.diagnostics.iter().any(|other| {
                other.range != d.range
                    && moved_key(other) == moved_key(d)
                    && base.text.get(other.range.as_range()) == Some(*written)
            })
        })
    };
    if fixes.iter().any(still_reported) {
        return Err("the finding is still reported after the fix".into());
    }
    // A finding the fixes bring about is accepted only when this run fixes
    // it too (reserving GPUs for a launcher makes memlock advice apply, and
    // its fix follows); anything else would leave the file worse than before.
    let before: HashSet<FindingKey> = base.diagnostics.iter().map(moved_key).collect();
    if let Some(new) = new_diagnostics.iter().find(|d| {
        !before.contains(&key(d)) && !d.fix.as_ref().is_some_and(|f| verifier.mode.applies(f))
    }) {
        return Err(format!(
            "the fixed text has a new {} finding: {}",
            new.code, new.message
        ));
    }
    Ok(State {
        text: fixed,
        resolved: new_resolved,
        diagnostics: new_diagnostics,
    })
}

/// Checks that `fixes` change what they declare and nothing else: each
/// leaf that differs between `old` and `new` is one a fix may change, and
/// each path a fix means to change did change.
fn only_declared_paths_change(
    fixes: &[&Diagnostic],
    old: &[DocumentLeaves],
    new: &[DocumentLeaves],
) -> Result<(), String> {
    let fixes_of = || fixes.iter().map(|d| d.fix.as_ref().expect("a fix"));
    // What the fixes declare, per document.
    let mut declared: HashMap<usize, PathOverlap> = HashMap::new();
    for fix in fixes_of() {
        declared
            .entry(fix.document)
            .or_default()
            .extend(fix.changes.iter().chain(fix.may_change.iter()));
    }
    let mut changed = Vec::with_capacity(old.len());
    for (document, (a, b)) in old.iter().zip(new).enumerate() {
        let paths = changed_paths(a, b);
        match declared.get(&document) {
            None => {
                if let Some(stray) = paths.first() {
                    return Err(format!(
                        "it also changes `{stray}` in YAML document {}, which it did not mean to",
                        document + 1
                    ));
                }
            }
            Some(set) => {
                if let Some(stray) = paths.iter().find(|c| !set.overlaps(c)) {
                    return Err(format!(
                        "it also changes `{stray}`, which it did not mean to"
                    ));
                }
            }
        }
        changed.push(paths);
    }
    let changed: Vec<PathOverlap> = changed.iter().map(PathOverlap::new).collect();
    for fix in fixes_of() {
        let here = changed.get(fix.document);
        if let Some(missed) = fix
            .changes
            .iter()
            .find(|d| !here.is_some_and(|set| set.overlaps(d)))
        {
            return Err(format!("it does not change `{missed}` as intended"));
        }
    }
    Ok(())
}

/// A unified diff of one file (`a/` and `b/` prefixes, three lines of
/// context), which `git apply` and `patch -p1` accept. Empty when unchanged.
pub fn unified_diff(display_path: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    // Lines as git and patch read them: ended by `\n` only. A lone CR
    // (a CR-only file, or one mixed in) is part of its line; split there,
    // the hunk would run lines together, and both refuse it as corrupt.
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let diff = similar::TextDiff::configure().diff_slices(&old_lines, &new_lines);
    let mut out = String::new();
    // An absolute path (a file outside the working directory) is written as
    // `git diff --no-index` writes it, without its leading `/`: `a//tmp/x`
    // is refused by `git apply`.
    let path = display_path.trim_start_matches('/');
    out.push_str(&format!(
        "--- {}\n+++ {}\n",
        git_quoted(&format!("a/{path}")),
        git_quoted(&format!("b/{path}"))
    ));
    for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
        out.push_str(&format!("{}\n", hunk.header()));
        for change in hunk.iter_changes() {
            out.push_str(match change.tag() {
                similar::ChangeTag::Equal => " ",
                similar::ChangeTag::Delete => "-",
                similar::ChangeTag::Insert => "+",
            });
            let line = change.value();
            out.push_str(line);
            if !line.ends_with('\n') {
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
    out
}

/// A diff header's path as git writes it: in double quotes with C-style
/// escapes when it holds a quote, a backslash or a control character (a
/// newline would otherwise split the header), else as it is.
fn git_quoted(path: &str) -> String {
    if !path
        .chars()
        .any(|c| c == '"' || c == '\\' || c.is_ascii_control())
    {
        return path.to_string();
    }
    let mut out = String::from("\"");
    for c in path.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0b' => out.push_str("\\v"),
            '\x0c' => out.push_str("\\f"),
            c if c.is_ascii_control() => out.push_str(&format!("\\{:03o}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint_text;
    use gpulint_base::fix::ModelPath;

    #[test]
    fn diff_lines_end_at_line_feeds_only() {
        // CR-only: one line to git, with no newline at its end.
        let diff = unified_diff("c.yml", "a: 1\rb: 2\r", "a: 1\rc: 3\rb: 2\r");
        assert_eq!(
            diff,
            "--- a/c.yml\n+++ b/c.yml\n@@ -1 +1 @@\n-a: 1\rb: 2\r\n\\ No newline at end of file\n+a: 1\rc: 3\rb: 2\r\n\\ No newline at end of file\n"
        );
        // A lone CR inside a line-feed file stays inside its line.
        let diff = unified_diff(
            "c.yml",
            "a: 1\nb: 2\rx\nd: 4\n",
            "a: 1\nb: 2\rx\nd: 4\ne: 5\n",
        );
        assert_eq!(
            diff,
            "--- a/c.yml\n+++ b/c.yml\n@@ -1,3 +1,4 @@\n a: 1\n b: 2\rx\n d: 4\n+e: 5\n"
        );
    }

    #[test]
    fn diff_has_git_headers_and_keeps_crlf() {
        let diff = unified_diff("dir/c.yml", "a: 1\r\nb: 2\r\n", "a: 1\r\nc: 3\r\nb: 2\r\n");
        assert_eq!(
            diff,
            "--- a/dir/c.yml\n+++ b/dir/c.yml\n@@ -1,2 +1,3 @@\n a: 1\r\n+c: 3\r\n b: 2\r\n"
        );
        assert_eq!(unified_diff("x", "same", "same"), "");
        // Quoted as git quotes them; absolute paths lose their leading `/`.
        let header = |p: &str| {
            unified_diff(p, "a\n", "b\n")
                .lines()
                .next()
                .unwrap()
                .to_string()
        };
        assert_eq!(header("d\nx/c\"\\.yml"), r#"--- "a/d\nx/c\"\\.yml""#);
        assert_eq!(header("d\x01/c.yml"), r#"--- "a/d\001/c.yml""#);
        assert_eq!(header("/tmp/é c.yml"), "--- a/tmp/é c.yml");
    }

    /// Verifies `fixes` together on `text`, as one pass of `--fix` would.
    fn verify_on(
        text: &str,
        path: &str,
        fixes: &[&Diagnostic],
        mode: FixMode,
    ) -> Result<State, String> {
        let path = Path::new(path);
        let config = Config::default();
        let session = Session::on_disk();
        let verifier = Verifier::new(&session, path, &config, mode, text);
        let base = State {
            text: text.to_string(),
            resolved: resolve(text, verifier.kind),
            diagnostics: lint_text(text, path, &config).unwrap(),
        };
        verify(&verifier, &base, fixes)
    }

    /// Lints a GPU service without shm, then swaps the SHM001 fix for `bad`.
    fn verify_with(edits: Vec<gpulint_base::fix::Edit>, changes: &[&str]) -> Result<State, String> {
        let text = "services:\n  t:\n    gpus: all\n";
        let diagnostics = lint_text(text, Path::new("compose.yaml"), &Config::default()).unwrap();
        let mut target = diagnostics
            .iter()
            .find(|d| d.code == RuleCode::SHM001)
            .unwrap()
            .clone();
        let changes = changes
            .iter()
            .map(|c| ModelPath::new(c.split('.')))
            .collect();
        target.fix = Some(Box::new(Fix::new(
            "bad",
            Applicability::Safe,
            edits,
            changes,
        )));
        verify_on(
            text,
            "compose.yaml",
            &[&target],
            FixMode {
                unsafe_fixes: false,
            },
        )
    }

    #[test]
    fn verification_rejects_broken_fixes() {
        use gpulint_base::fix::Edit;
        let at_end = 29;
        let good = Edit::insert(at_end, "    shm_size: 8gb\n");
        assert!(verify_with(vec![good.clone()], &["services.t.shm_size"]).is_ok());
        let reason = |r: Result<State, String>| r.err().expect("rejected");
        // Not YAML any more.
        assert!(
            reason(verify_with(
                vec![Edit::insert(at_end, "  - [\n")],
                &["services.t"]
            ))
            .contains("not valid YAML")
        );
        // Changes something it did not declare.
        let stray = Edit::insert(at_end, "    shm_size: 8gb\n    ipc: host\n");
        assert!(
            reason(verify_with(vec![stray], &["services.t.shm_size"])).contains("services.t.ipc")
        );
        // Declares a change it does not make.
        assert!(
            reason(verify_with(
                vec![good.clone()],
                &["services.t.shm_size", "services.t.ulimits"]
            ))
            .contains("does not change")
        );
        // Leaves the finding in place.
        let useless = Edit::insert(at_end, "    labels: [a]\n");
        assert!(
            reason(verify_with(vec![useless], &["services.t.labels"])).contains("still reported")
        );
        // Brings in a finding this run would not fix.
        let worse = Edit::insert(
            at_end,
            "    shm_size: 8gb\n    environment: [NCCL_SHM_DISABLE=1]\n",
        );
        assert!(reason(verify_with(vec![worse], &["services.t"])).contains("new NCCL001"));
        // Overlapping edits.
        assert!(
            reason(verify_with(
                vec![
                    Edit::insert(5, "x"),
                    Edit::delete(crate::text::TextRange::new(2, 9))
                ],
                &["services"]
            ))
            .contains("overlap")
        );
    }

    #[test]
    fn verification_rejects_a_change_in_another_document() {
        use gpulint_base::fix::Edit;
        // The same pod twice: a fix for the second must not touch the first,
        // even at the same document path.
        let pod = "apiVersion: v1\nkind: Pod\nspec:\n  hostIPC: true\n  containers:\n  - name: t\n    resources: {limits: {nvidia.com/gpu: 1}}\n";
        let text = format!("{pod}---\n{pod}");
        let path = Path::new("pods.yaml");
        let config = Config::default();
        let diagnostics = lint_text(&text, path, &config).unwrap();
        let second = diagnostics
            .iter()
            .filter(|d| d.code == RuleCode::K8S009)
            .nth(1)
            .unwrap();
        let line = "  hostIPC: true\n";
        let at = text.find(line).unwrap();
        let in_first = Edit::delete(crate::text::TextRange::new(at, at + line.len()));
        let mut target = second.clone();
        target.fix = Some(Box::new(
            Fix::new(
                "bad",
                Applicability::Safe,
                vec![in_first],
                vec![ModelPath::new(["spec", "hostIPC"])],
            )
            .in_document(1),
        ));
        let reason = verify_on(
            &text,
            "pods.yaml",
            &[&target],
            FixMode { unsafe_fixes: true },
        )
        .err()
        .expect("rejected");
        assert!(reason.contains("in YAML document 1"), "{reason}");
    }

    const SAFE: FixMode = FixMode {
        unsafe_fixes: false,
    };

    /// `n` services that each launch 8 ranks on all GPUs with nothing set:
    /// SHM001 and ULIM001, both safe, inserted where the service ends.
    fn training_services(n: usize) -> String {
        let mut text = String::from("services:\n");
        for i in 0..n {
            text.push_str(&format!(
                "  s{i}:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    command: torchrun --nproc_per_node 8 train.py\n    gpus: all\n"
            ));
        }
        text
    }

    fn fix_with_passes(text: &str, max_passes: usize) -> FixOutcome {
        let path = Path::new("compose.yaml");
        let session = Session::on_disk();
        fix_in_passes(&session, text, path, &Config::default(), SAFE, max_passes).unwrap()
    }

    #[test]
    fn every_fix_of_a_big_file_is_applied_in_a_few_passes() {
        // 600 fixes: the loop that verified one fix per lint stopped at 500
        // without a word.
        let text = training_services(300);
        let outcome = fix_with_passes(&text, MAX_PASSES);
        assert_eq!(outcome.applied.len(), 600);
        assert!(outcome.failed.is_empty(), "{:?}", outcome.failed);
        assert_eq!(outcome.unsettled, 0);
        assert!(outcome.remaining.is_empty(), "{:?}", outcome.remaining);
        // The two fixes of a service insert at the same place: one pass
        // for each, and a last one that finds nothing left.
        assert_eq!(outcome.passes, 2);
        assert_eq!(
            outcome
                .fixed_text
                .matches("    shm_size: \"8gb\"\n    ulimits:\n      memlock: -1\n")
                .count(),
            300
        );
    }

    #[test]
    fn a_file_that_does_not_settle_says_how_many_fixes_were_left() {
        let outcome = fix_with_passes(&training_services(3), 1);
        assert_eq!(outcome.passes, 1);
        assert_eq!(outcome.applied.len(), 3);
        assert_eq!(outcome.unsettled, 3);
        // Still fixable: they are left for the next run, not failed.
        assert!(outcome.failed.is_empty());
        assert_eq!(
            outcome.remaining.iter().filter(|d| d.fix.is_some()).count(),
            3
        );
        let again = fix_with_passes(&outcome.fixed_text, 1);
        assert_eq!((again.applied.len(), again.unsettled), (3, 0));
    }

    #[test]
    fn a_batch_costs_one_lint_and_halving_finds_the_fix_that_fails() {
        let text = training_services(16);
        let path = Path::new("compose.yaml");
        let config = Config::default();
        let session = Session::on_disk();
        let verifier = Verifier::new(&session, path, &config, SAFE, &text);
        let base = State {
            text: text.clone(),
            resolved: resolve(&text, verifier.kind),
            diagnostics: lint_text(&text, path, &config).unwrap(),
        };
        let mut shm: Vec<Diagnostic> = base
            .diagnostics
            .iter()
            .filter(|d| d.code == RuleCode::SHM001)
            .cloned()
            .collect();
        assert_eq!(shm.len(), 16);

        let all: Vec<&Diagnostic> = shm.iter().collect();
        let mut settled = Settled::default();
        settle(&verifier, &base, &all, &mut settled);
        assert_eq!((settled.accepted.len(), settled.failed.len()), (16, 0));
        assert_eq!(verifier.lints.get(), 1);

        // One fix that leaves its finding in place, among sixteen.
        let fix = shm[5].fix.as_mut().unwrap();
        let edit = &mut fix.edits[0];
        edit.content = edit.content.replace("shm_size: \"8gb\"", "labels: [a]");
        fix.changes = vec![gpulint_base::fix::ModelPath::new([
            "services", "s5", "labels",
        ])];
        let all: Vec<&Diagnostic> = shm.iter().collect();
        verifier.lints.set(0);
        let mut settled = Settled::default();
        settle(&verifier, &base, &all, &mut settled);
        assert_eq!(settled.accepted.len(), 15);
        assert_eq!(settled.failed.len(), 1);
        assert!(std::ptr::eq(settled.failed[0].0, &shm[5]));
        assert!(
            settled.failed[0].1.contains("still reported"),
            "{}",
            settled.failed[0].1
        );
        // The batch, then each half down to the fix: two lints per level,
        // and one to try the fix alone (it fails alone too).
        assert!(
            verifier.lints.get() <= 1 + 2 * 4 + 1,
            "{}",
            verifier.lints.get()
        );
        let kept = settled.verified.unwrap();
        assert_eq!(kept.text.matches("shm_size").count(), 15);
    }

    /// GPU005's fix reserves all GPUs, which raises what SHM002's size must
    /// be for the training it runs: on top of it SHM002's fix (to the one-GPU need) leaves its finding,
    /// but it is no broken fix: it is found again, recomputed, next pass.
    #[test]
    fn a_fix_that_fails_only_beside_another_is_recomputed_next_pass() {
        let text = "services:\n  svc0:\n    image: 'my/app:1'\n    command: torchrun train.py\n    runtime: nvidia\n    shm_size: 64m\n";
        let path = Path::new("compose.yaml");
        let config = Config::default();
        let session = Session::on_disk();
        let verifier = Verifier::new(
            &session,
            path,
            &config,
            FixMode { unsafe_fixes: true },
            text,
        );
        let base = State {
            text: text.to_string(),
            resolved: resolve(text, verifier.kind),
            diagnostics: lint_text(text, path, &config).unwrap(),
        };
        let fixes: Vec<&Diagnostic> = base
            .diagnostics
            .iter()
            .filter(|d| d.fix.is_some())
            .collect();
        let codes: Vec<RuleCode> = fixes.iter().map(|d| d.code).collect();
        assert_eq!(codes, [RuleCode::GPU005, RuleCode::SHM002]);
        let mut settled = Settled::default();
        settle(&verifier, &base, &fixes, &mut settled);
        assert_eq!(settled.accepted.len(), 1);
        assert!(settled.failed.is_empty(), "{:?}", settled.failed);
        assert_eq!(settled.deferred.len(), 1);
        assert_eq!(settled.deferred[0].code, RuleCode::SHM002);

        let outcome = fix_text(text, path, &config, FixMode { unsafe_fixes: true }).unwrap();
        assert!(outcome.failed.is_empty(), "{:?}", outcome.failed);
        // Raised to what all GPUs need, in the second pass.
        assert!(
            !outcome.fixed_text.contains("64m"),
            "{}",
            outcome.fixed_text
        );
        assert!(
            outcome.remaining.iter().all(|d| d.code != RuleCode::SHM002),
            "{}",
            outcome.fixed_text
        );
        // A third pass: training on all GPUs is also ULIM001's (memlock).
        assert_eq!(outcome.passes, 3);
    }

    #[test]
    fn fixes_that_touch_the_same_text_or_settings_wait_for_the_next_pass() {
        use crate::text::TextRange;
        use gpulint_base::fix::ModelPath;
        let text = "services:\n  t:\n    gpus: all\n";
        let template =
            lint_text(text, Path::new("compose.yaml"), &Config::default()).unwrap()[0].clone();
        let finding = |edits: Vec<Edit>, path: &str, document: usize| {
            let mut d = template.clone();
            let changes = vec![ModelPath::new(path.split('.'))];
            d.fix = Some(Box::new(
                Fix::new("f", Applicability::Safe, edits, changes).in_document(document),
            ));
            d
        };
        let diagnostics = vec![
            finding(vec![Edit::insert(10, "a")], "services.a.x", 0),
            // Inserts at the same offset: their order would matter.
            finding(vec![Edit::insert(10, "b")], "services.b", 0),
            // Replaces text ending where the first inserts.
            finding(
                vec![Edit {
                    range: TextRange::new(5, 10),
                    content: "c".into(),
                }],
                "services.c",
                0,
            ),
            // A setting the first one changes too.
            finding(vec![Edit::insert(20, "d")], "services.a", 0),
            // The same setting in another document.
            finding(vec![Edit::insert(30, "e")], "services.a.x", 1),
            finding(vec![Edit::insert(40, "f")], "services.f", 0),
        ];
        let all: Vec<usize> = (0..diagnostics.len()).collect();
        assert_eq!(disjoint_batch(&diagnostics, &all), vec![0, 4, 5]);
    }

    #[test]
    fn original_offsets_undo_earlier_edits() {
        let history = vec![vec![gpulint_base::fix::Edit::insert(2, "abc")]];
        assert_eq!(original_offset(&history, 1), 1);
        assert_eq!(original_offset(&history, 10), 7);
        assert_eq!(original_offset(&history, 3), 2);
    }
}
