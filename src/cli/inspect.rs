//! `gpulint inspect`: the run-time settings gpulint derives, as a table or JSON.

use super::{
    EXIT_CLEAN, EXIT_ERROR, InspectArgs, InspectFormat, load_fixed_config, paths_or_current,
    read_target, usage_error,
};
use crate::engine::discover::{ConfigResolver, discover};
use crate::engine::{self, FileError, Session};
use crate::output::escape::{human, human_path};
use crate::project::kustomize::is_kustomization_name;
use rayon::prelude::*;
use std::io::Write;

pub(super) fn inspect(args: InspectArgs) -> u8 {
    use crate::output::inspect::{Inspected, render_json, render_text};
    let fixed = match load_fixed_config(args.config.as_deref()) {
        Ok(c) => c,
        Err(e) => return usage_error(e),
    };
    let resolver = ConfigResolver::new(fixed, None, Vec::new());
    let session = Session::on_disk();
    let (targets, errors) = discover(&paths_or_current(args.paths), &resolver);
    for e in &errors {
        eprintln!("{}: error: {}", human_path(&e.path), human(&e.message));
    }
    let files: Vec<Inspected> = targets
        .par_iter()
        .filter(|t| t.skip.is_none() || is_kustomization_name(&t.path))
        .filter_map(|t| {
            if is_kustomization_name(&t.path) {
                return inspect_overlay(&session, &resolver, t);
            }
            let read = read_target(&session, t)?.map(|(text, _)| text);
            let outcome = match (resolver.for_file(&t.path), read) {
                (_, Ok(text))
                    if t.manifest_only
                        && !engine::is_manifest_candidate(&text)
                        && !session.is_read_as_compose(&t.path) =>
                {
                    return None;
                }
                (Err(e), _) => Err(FileError::new(e.to_string())),
                (Ok(_), Err((error, _))) => Err(error.into()),
                (Ok(config), Ok(text)) => session.inspect_text(&text, &t.path, &config),
            };
            Some(Inspected {
                path: t.path.clone(),
                outcome,
            })
        })
        .collect();
    let mut files = files;
    show_each_container_once(&mut files);
    let failed = !errors.is_empty()
        || files
            .iter()
            .any(|f| f.outcome.as_ref().is_err_and(|e| e.skip.is_none()));
    let rendered = match args.format {
        InspectFormat::Json => render_json(&files),
        InspectFormat::Text => render_text(&files),
    };
    let mut stdout = std::io::stdout().lock();
    if stdout.write_all(rendered.as_bytes()).is_err() {
        return EXIT_ERROR;
    }
    if failed { EXIT_ERROR } else { EXIT_CLEAN }
}

/// A kustomization: the containers of its build, or why it cannot be
/// built (`None` for one that builds nothing gpulint reads).
fn inspect_overlay(
    session: &Session,
    resolver: &ConfigResolver,
    t: &crate::engine::discover::Target,
) -> Option<crate::output::inspect::Inspected> {
    let outcome = match resolver.for_file(&t.path) {
        Ok(config) => session.inspect_overlay(&t.path, &config),
        Err(e) => Err(FileError::new(e.to_string())),
    };
    if outcome.as_ref().is_ok_and(|i| i.containers.is_empty()) {
        return None;
    }
    Some(crate::output::inspect::Inspected {
        path: t.path.clone(),
        outcome,
    })
}

/// A compose project inspected through several of its files is shown
/// once: its containers under the first file that reaches them. A
/// container two projects give alike (a base and its overlay, for the
/// services the overlay does not touch) is shown once too, with every
/// project it is in.
fn show_each_container_once(files: &mut [crate::output::inspect::Inspected]) {
    let mut seen = foldhash::HashSet::default();
    let mut alike: foldhash::HashMap<String, (usize, usize)> = foldhash::HashMap::default();
    for f in 0..files.len() {
        let Ok(inspection) = &mut files[f].outcome else {
            continue;
        };
        let mut kept = crate::engine::Inspection {
            files: std::mem::take(&mut inspection.files),
            ..Default::default()
        };
        let mut also: Vec<((usize, usize), Vec<crate::engine::ProjectOf>)> = Vec::new();
        for ((container, key), projects) in inspection
            .containers
            .drain(..)
            .zip(inspection.keys.drain(..))
            .zip(inspection.projects.drain(..))
        {
            if !seen.insert(key.clone()) {
                continue;
            }
            let same = format!(
                "{}#{}",
                kept.files
                    .get(container.file as usize)
                    .map(|f| f.path.display().to_string())
                    .unwrap_or_default(),
                serde_json::to_string(&container).unwrap_or_default()
            );
            match alike.get(&same) {
                Some(&at) => also.push((at, projects)),
                None => {
                    alike.insert(same, (f, kept.containers.len()));
                    kept.containers.push(container);
                    kept.keys.push(key);
                    kept.projects.push(projects);
                }
            }
        }
        *inspection = kept;
        for ((file, index), projects) in also {
            if let Ok(earlier) = &mut files[file].outcome {
                for project in projects {
                    if !earlier.projects[index].contains(&project) {
                        earlier.projects[index].push(project);
                    }
                }
            }
        }
    }
}
