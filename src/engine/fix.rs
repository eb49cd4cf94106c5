//! Applying fixes: one at a time, each verified before it is kept, then a
//! unified diff or an atomic write.
//!
//! A fix is kept only when the fixed text parses into as many documents as
//! before, the resolved tree changed exactly where the fix said it would
//! (`Fix::changes`), and re-linting shows the finding gone and nothing new
//! (except a finding this run also fixes).

use super::config::Config;
use super::session::Session;
use super::{FileError, FileKind};
use crate::diagnostic::Diagnostic;
use crate::fix::{Applicability, Fix, PathOverlap, apply_edits, edits_are_well_formed, map_offset};
use crate::model::resolved::{Resolved, changed_paths};
use crate::model::script::ScriptKind;
use crate::rules::RuleCode;
use crate::syntax::yaml::Yaml;
use std::io::Write;
use std::path::Path;

/// Bounds the fix loop; every kept fix removes a finding, so real files need far fewer.
const MAX_FIXES_PER_FILE: usize = 500;

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
    /// The findings left in `fixed_text`.
    pub remaining: Vec<Diagnostic>,
}

impl FixOutcome {
    pub fn changed(&self, original: &str) -> bool {
        self.fixed_text != original
    }
}

/// Lints `text` and applies every fix `mode` allows, one by one, re-linting
/// after each so later fixes see the earlier ones. The files it refers to
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
    let mut current = text.to_string();
    let mut diagnostics = session.lint_text(&current, path, config)?;
    let found = diagnostics.clone();
    let kind = FileKind::of_text(path, text);
    let mut resolved = resolve(&current, kind);
    let mut applied = Vec::new();
    let mut failed: Vec<FailedFix> = Vec::new();
    // Fixes that failed, by code and where their finding is in `current`.
    let mut rejected: Vec<(RuleCode, u32)> = Vec::new();
    // Every kept edit, in order, to map offsets back to the original for reports.
    let mut history: Vec<Vec<crate::fix::Edit>> = Vec::new();

    for _ in 0..MAX_FIXES_PER_FILE {
        let candidate = diagnostics.iter().find(|d| {
            d.fix.as_ref().is_some_and(|f| mode.applies(f))
                && !rejected.contains(&(d.code, d.range.start))
        });
        let Some(diagnostic) = candidate else { break };
        let fix = diagnostic.fix.as_ref().expect("filtered on fix");
        match verify(
            session,
            &current,
            &resolved,
            &diagnostics,
            diagnostic,
            path,
            config,
            mode,
        ) {
            Ok(Verified {
                text,
                resolved: new_resolved,
                diagnostics: new_diagnostics,
            }) => {
                for r in &mut rejected {
                    r.1 = map_offset(&fix.edits, r.1);
                }
                applied.push(AppliedFix {
                    code: diagnostic.code,
                    title: fix.title.clone(),
                });
                history.push(fix.edits.clone());
                current = text;
                resolved = new_resolved;
                diagnostics = new_diagnostics;
            }
            Err(reason) => {
                rejected.push((diagnostic.code, diagnostic.range.start));
                failed.push(FailedFix {
                    code: diagnostic.code,
                    title: fix.title.clone(),
                    reason,
                    offset: original_offset(&history, diagnostic.range.start),
                });
            }
        }
    }
    // A fix that failed verification is not a fix: what is left must not
    // count it as fixable.
    for d in &mut diagnostics {
        if rejected.contains(&(d.code, d.range.start)) {
            d.fix = None;
        }
    }
    Ok(FixOutcome {
        found,
        fixed_text: current,
        applied,
        failed,
        remaining: diagnostics,
    })
}

/// Maps an offset in the fixed text back to the original, approximately
/// (good enough to point at the finding).
fn original_offset(history: &[Vec<crate::fix::Edit>], mut offset: u32) -> usize {
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
    if target.fix.is_none() {
        return Err("the finding has no fix".into());
    }
    let resolved = resolve(text, FileKind::of_text(path, text));
    let mode = FixMode { unsafe_fixes: true };
    verify(
        session,
        text,
        &resolved,
        diagnostics,
        target,
        path,
        config,
        mode,
    )
    .map(|v| v.text)
}

struct Verified {
    text: String,
    resolved: Resolved,
    diagnostics: Vec<Diagnostic>,
}

#[allow(clippy::too_many_arguments)] // what is verified, and against what
fn verify(
    session: &Session,
    text: &str,
    resolved: &Resolved,
    diagnostics: &[Diagnostic],
    target: &Diagnostic,
    path: &Path,
    config: &Config,
    mode: FixMode,
) -> Result<Verified, String> {
    let fix = target.fix.as_ref().expect("a fix");
    if fix.edits.is_empty() {
        return Err("the fix has no edits".into());
    }
    if !edits_are_well_formed(text, &fix.edits) {
        return Err("its edits overlap or fall outside the file".into());
    }
    let fixed = apply_edits(text, &fix.edits);
    let kind = FileKind::of_text(path, text);
    let new_resolved = if kind.is_yaml() {
        let new_yaml = Yaml::parse(&fixed)
            .map_err(|e| format!("the fixed text is not valid YAML ({})", e.message))?;
        Resolved::of(&new_yaml)
    } else {
        resolve(&fixed, kind)
    };
    if new_resolved.documents != resolved.documents {
        return Err(format!(
            "the fixed text has {} YAML documents instead of {}",
            new_resolved.documents, resolved.documents
        ));
    }
    let (Some(old), Some(new)) = (&resolved.leaves, &new_resolved.leaves) else {
        return Err("the file is too large to verify the fix".into());
    };
    let mut changed = Vec::new();
    for (document, (a, b)) in old.iter().zip(new).enumerate() {
        let paths = changed_paths(a, b);
        if document != fix.document
            && let Some(stray) = paths.first()
        {
            return Err(format!(
                "it also changes `{stray}` in YAML document {}, which it did not mean to",
                document + 1
            ));
        }
        changed.extend(paths);
    }
    let declared = PathOverlap::new(fix.changes.iter().chain(fix.may_change.iter()));
    if let Some(stray) = changed.iter().find(|c| !declared.overlaps(c)) {
        return Err(format!(
            "it also changes `{stray}`, which it did not mean to"
        ));
    }
    if let Some(missed) = fix
        .changes
        .iter()
        .find(|d| !changed.iter().any(|c| d.overlaps(c)))
    {
        return Err(format!("it does not change `{missed}` as intended"));
    }

    let new_diagnostics = session
        .lint_text(&fixed, path, config)
        .map_err(|e| format!("the fixed text does not lint: {}", e.message))?;
    let moved = |d: &Diagnostic| (d.code, map_offset(&fix.edits, d.range.start));
    let target_key = moved(target);
    if new_diagnostics
        .iter()
        .any(|d| (d.code, d.range.start) == target_key)
    {
        return Err("the finding is still reported after the fix".into());
    }
    // A finding the fix brings about is accepted only when this run fixes it
    // too (reserving GPUs for a launcher makes memlock advice apply, and its
    // fix follows); anything else would leave the file worse than before.
    let before: Vec<_> = diagnostics.iter().map(moved).collect();
    if let Some(new) = new_diagnostics.iter().find(|d| {
        !before.contains(&(d.code, d.range.start))
            && !d.fix.as_ref().is_some_and(|f| mode.applies(f))
    }) {
        return Err(format!(
            "the fixed text has a new {} finding: {}",
            new.code, new.message
        ));
    }
    Ok(Verified {
        text: fixed,
        resolved: new_resolved,
        diagnostics: new_diagnostics,
    })
}

/// A unified diff of one file (`a/` and `b/` prefixes, three lines of
/// context), which `git apply` and `patch -p1` accept. Empty when unchanged.
pub fn unified_diff(display_path: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let diff = similar::TextDiff::from_lines(old, new);
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
        out.push_str(&hunk.to_string());
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

/// Writes `fixed` over the file `path` was read from, atomically: a temporary
/// file in the same directory, flushed, given the original's owner, group,
/// permissions and extended attributes (ACLs among them) and renamed over
/// it. Symlinks are followed to the real file. A file with other hard links,
/// or whose owner or attributes the new file cannot be given, is rewritten
/// in place instead, so every name sees the fix and nothing of the file is
/// lost. Nothing is written when the file no longer holds `original`.
pub fn write_fixed(path: &Path, original: &str, fixed: &str) -> Result<(), String> {
    let real = std::fs::canonicalize(path).map_err(|e| format!("cannot resolve the path: {e}"))?;
    let unchanged = |what: &str| -> Result<(), String> {
        let now =
            std::fs::read(&real).map_err(|e| format!("cannot re-read the file {what}: {e}"))?;
        if now != original.as_bytes() {
            return Err(
                "the file changed on disk since gpulint read it; not overwritten (run again)"
                    .into(),
            );
        }
        Ok(())
    };
    unchanged("before writing")?;
    let metadata = std::fs::metadata(&real).map_err(|e| format!("cannot stat the file: {e}"))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if metadata.nlink() > 1 {
            // A new file renamed over this name would split it from its
            // other names, which would keep the old text.
            return write_in_place(&real, fixed, &unchanged);
        }
    }
    let dir = real.parent().ok_or("the file has no parent directory")?;
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut temp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".gpulint-tmp")
        .tempfile_in(dir)
        .map_err(|e| format!("cannot create a temporary file next to it: {e}"))?;
    temp.write_all(fixed.as_bytes())
        .and_then(|()| temp.as_file().sync_all())
        .map_err(|e| format!("cannot write the temporary file: {e}"))?;
    #[cfg(unix)]
    if unix::copy_owner_and_attributes(&real, &metadata, temp.as_file()).is_err() {
        // Not allowed to give a new file the original's owner, group or
        // attributes (gpulint runs as another user, a security label):
        // keep the original inode, and with it all of them.
        drop(temp);
        return write_in_place(&real, fixed, &unchanged);
    }
    #[cfg(not(unix))]
    std::fs::set_permissions(temp.path(), metadata.permissions())
        .map_err(|e| format!("cannot copy permissions: {e}"))?;
    unchanged("before replacing it")?;
    temp.persist(&real)
        .map_err(|e| format!("cannot replace the file: {}", e.error))?;
    Ok(())
}

/// Writes `fixed` into the file itself (the same inode), after checking once
/// more that it still holds what was verified. Not atomic, so used only
/// where replacing the file would lose something.
#[cfg(unix)]
fn write_in_place(
    real: &Path,
    fixed: &str,
    unchanged: &dyn Fn(&str) -> Result<(), String>,
) -> Result<(), String> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open(real)
        .map_err(|e| format!("cannot open the file for writing: {e}"))?;
    unchanged("before writing it in place")?;
    file.write_all(fixed.as_bytes())
        .and_then(|()| file.set_len(fixed.len() as u64))
        .and_then(|()| file.sync_all())
        .map_err(|e| format!("cannot write the file: {e}"))
}

#[cfg(unix)]
mod unix {
    use std::fs::File;
    use std::io;
    use std::path::Path;

    /// Gives `to` the owner, group, mode and extended attributes of the file
    /// at `from` (whose metadata is `metadata`).
    pub fn copy_owner_and_attributes(
        from: &Path,
        metadata: &std::fs::Metadata,
        to: &File,
    ) -> io::Result<()> {
        use std::os::unix::fs::MetadataExt;
        // Owner first: changing it may clear set-user-ID bits the mode sets.
        std::os::unix::fs::fchown(to, Some(metadata.uid()), Some(metadata.gid()))?;
        to.set_permissions(metadata.permissions())?;
        #[cfg(any(target_os = "linux", target_os = "android"))]
        xattrs::copy(&File::open(from)?, to)?;
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        let _ = from;
        Ok(())
    }

    /// Extended attributes through the Linux `f*xattr` calls. POSIX ACLs
    /// are the `system.posix_acl_*` attributes, so they are copied too.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    mod xattrs {
        use std::ffi::{CStr, CString};
        use std::fs::File;
        use std::io;
        use std::os::fd::AsRawFd;

        /// Makes `to`'s extended attributes those of `from`: a temporary
        /// file may have inherited a directory's default ACL.
        pub fn copy(from: &File, to: &File) -> io::Result<()> {
            let wanted = names(from)?;
            for name in names(to)? {
                if !wanted.contains(&name) {
                    // SAFETY: a valid descriptor and a NUL-terminated name.
                    let done = unsafe { libc::fremovexattr(to.as_raw_fd(), name.as_ptr()) };
                    if done != 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
            }
            for name in &wanted {
                let value = value(from, name)?;
                // SAFETY: a valid descriptor, a NUL-terminated name and a
                // buffer of the length given.
                let done = unsafe {
                    libc::fsetxattr(
                        to.as_raw_fd(),
                        name.as_ptr(),
                        value.as_ptr().cast(),
                        value.len(),
                        0,
                    )
                };
                if done != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            Ok(())
        }

        /// Calls `read` with a buffer until it is large enough: `read(None)`
        /// asks for the size; the size may grow between the two calls.
        fn read_sized(mut read: impl FnMut(Option<&mut [u8]>) -> isize) -> io::Result<Vec<u8>> {
            loop {
                let size = read(None);
                if size < 0 {
                    return Err(io::Error::last_os_error());
                }
                let mut buffer = vec![0u8; size as usize];
                let got = read(Some(&mut buffer));
                if got >= 0 {
                    buffer.truncate(got as usize);
                    return Ok(buffer);
                }
                let error = io::Error::last_os_error();
                if error.raw_os_error() != Some(libc::ERANGE) {
                    return Err(error);
                }
            }
        }

        fn names(file: &File) -> io::Result<Vec<CString>> {
            let list = read_sized(|buffer| {
                let (pointer, len) = buffer.map_or((std::ptr::null_mut(), 0), |b| {
                    (b.as_mut_ptr().cast(), b.len())
                });
                // SAFETY: a valid descriptor and a buffer of the length given.
                unsafe { libc::flistxattr(file.as_raw_fd(), pointer, len) }
            });
            let list = match list {
                Ok(list) => list,
                // A file system without extended attributes has none to keep.
                Err(e) if e.raw_os_error() == Some(libc::ENOTSUP) => return Ok(Vec::new()),
                Err(e) => return Err(e),
            };
            Ok(list
                .split(|&b| b == 0)
                .filter(|name| !name.is_empty())
                .map(|name| CString::new(name).expect("split at NUL"))
                .collect())
        }

        fn value(file: &File, name: &CStr) -> io::Result<Vec<u8>> {
            read_sized(|buffer| {
                let (pointer, len) = buffer.map_or((std::ptr::null_mut(), 0), |b| {
                    (b.as_mut_ptr().cast(), b.len())
                });
                // SAFETY: a valid descriptor, a NUL-terminated name and a
                // buffer of the length given.
                unsafe { libc::fgetxattr(file.as_raw_fd(), name.as_ptr(), pointer, len) }
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::lint_text;
    use crate::fix::ModelPath;

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

    /// Lints a GPU service without shm, then swaps the SHM001 fix for `bad`.
    fn verify_with(edits: Vec<crate::fix::Edit>, changes: &[&str]) -> Result<Verified, String> {
        let text = "services:\n  t:\n    gpus: all\n";
        let path = Path::new("compose.yaml");
        let config = Config::default();
        let diagnostics = lint_text(text, path, &config).unwrap();
        let mut target = diagnostics
            .iter()
            .find(|d| d.code == RuleCode::SHM001)
            .unwrap()
            .clone();
        let changes = changes
            .iter()
            .map(|c| ModelPath::new(c.split('.')))
            .collect();
        target.fix = Some(Fix::new("bad", Applicability::Safe, edits, changes));
        verify(
            &Session::on_disk(),
            text,
            &Resolved::of_yaml_text(text),
            &diagnostics,
            &target,
            path,
            &config,
            FixMode {
                unsafe_fixes: false,
            },
        )
    }

    #[test]
    fn verification_rejects_broken_fixes() {
        use crate::fix::Edit;
        let at_end = 29;
        let good = Edit::insert(at_end, "    shm_size: 8gb\n");
        assert!(verify_with(vec![good.clone()], &["services.t.shm_size"]).is_ok());
        let reason = |r: Result<Verified, String>| r.err().expect("rejected");
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
        use crate::fix::Edit;
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
        target.fix = Some(
            Fix::new(
                "bad",
                Applicability::Safe,
                vec![in_first],
                vec![ModelPath::new(["spec", "hostIPC"])],
            )
            .in_document(1),
        );
        let reason = verify(
            &Session::on_disk(),
            &text,
            &Resolved::of_yaml_text(&text),
            &diagnostics,
            &target,
            path,
            &config,
            FixMode { unsafe_fixes: true },
        )
        .err()
        .expect("rejected");
        assert!(reason.contains("in YAML document 1"), "{reason}");
    }

    #[test]
    fn original_offsets_undo_earlier_edits() {
        let history = vec![vec![crate::fix::Edit::insert(2, "abc")]];
        assert_eq!(original_offset(&history, 1), 1);
        assert_eq!(original_offset(&history, 10), 7);
        assert_eq!(original_offset(&history, 3), 2);
    }
}
