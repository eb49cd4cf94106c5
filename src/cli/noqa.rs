//! `gpulint check --add-noqa`: the files' side of it (the comments
//! themselves are [`crate::engine::noqa`]'s).

use super::{plural, read_target};
use crate::engine::discover::{ConfigResolver, discover};
use crate::engine::{self, Session};
use crate::output::escape::{human, human_path};
use rayon::prelude::*;
use std::path::PathBuf;

/// `--add-noqa[=REASON]`: adds suppression comments giving `reason` to
/// every file under `paths` that has findings, verified (see [`crate::engine::noqa`]), and says how
/// many on stderr. Returns the errors, one line each.
pub(super) fn add_noqa(
    session: &Session,
    paths: &[PathBuf],
    resolver: &ConfigResolver,
    reason: &str,
) -> Vec<String> {
    let (targets, _) = discover(paths, resolver);
    let results: Vec<(PathBuf, Result<Option<crate::engine::noqa::Added>, String>)> = targets
        .par_iter()
        .filter(|t| t.skip.is_none())
        .filter_map(|t| {
            let config = match resolver.for_file(&t.path) {
                Ok(c) => c,
                // `check` reports it when it lints the file.
                Err(_) => return None,
            };
            let (text, _) = read_target(session, t)?.ok()?;
            if t.manifest_only
                && !engine::is_manifest_candidate(&text)
                && !session.is_read_as_compose(&t.path)
            {
                return None;
            }
            let added = crate::engine::noqa::add_noqa(session, &text, &t.path, &config, reason)
                .and_then(|a| {
                    if let Some(a) = &a {
                        crate::engine::write::write_fixed(&t.path, &text, &a.text)
                            .map_err(|e| format!("cannot write the comments: {e}"))?;
                    }
                    Ok(a)
                });
            Some((t.path.clone(), added))
        })
        .collect();
    let mut errors = Vec::new();
    let (mut comments, mut findings, mut files) = (0, 0, 0);
    for (path, result) in results {
        match result {
            Ok(Some(a)) => {
                comments += a.comments;
                findings += a.findings;
                files += 1;
            }
            Ok(None) => {}
            Err(e) => errors.push(format!(
                "{}: error: {}",
                human_path(&path),
                human(&e.to_string())
            )),
        }
    }
    errors.sort();
    eprintln!(
        "Added {} for {} in {}.",
        plural(comments, "suppression comment"),
        plural(findings, "finding"),
        plural(files, "file")
    );
    errors
}
