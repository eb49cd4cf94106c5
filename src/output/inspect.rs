//! `gpulint inspect`: the run-time settings gpulint derives for each
//! compose service and Kubernetes container, as JSON or a table.

use super::escape::{human, human_path};
use super::json::{Span, span_in};
use super::shown_path;
use crate::engine::{FileError, Inspection};
use crate::model::container::{ContainerRuntime, Gpus};
use crate::model::size::HumanBytes;
use crate::text::LineIndex;
use serde::Serialize;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// One file's containers, or why it has none.
pub(crate) struct Inspected {
    pub path: PathBuf,
    pub outcome: Result<Inspection, FileError>,
}

/// The file a span of `inspection` is in, with its line index.
fn file_of<'i>(
    inspection: &'i Inspection,
    indexes: &'i [LineIndex],
    file: u32,
) -> (&'i crate::text::SourceFile, &'i LineIndex) {
    (&inspection.files[file as usize], &indexes[file as usize])
}

#[derive(Serialize)]
struct JsonContainer<'a> {
    path: String,
    #[serde(flatten)]
    span: Span,
    /// The service mapping or pod spec: findings inside it are about this container.
    scope: Span,
    /// Where the setting that decides `/dev/shm` is written, which may be
    /// another file of the project (absent for the runtime's default).
    #[serde(skip_serializing_if = "Option::is_none")]
    shm_decided_at: Option<DecidedAt>,
    /// For a compose service, the projects it is judged in (one, or
    /// several that give it alike).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    projects: Vec<JsonProject>,
    #[serde(flatten)]
    runtime: &'a ContainerRuntime,
}

/// A span with the file it is in.
#[derive(Serialize)]
struct DecidedAt {
    path: String,
    #[serde(flatten)]
    span: Span,
}

/// Where Compose runs for a project, and the files it loads, in order.
#[derive(Serialize)]
struct JsonProject {
    dir: String,
    files: Vec<String>,
}

#[derive(Serialize)]
struct JsonError<'a> {
    path: String,
    message: &'a str,
    offset: Option<usize>,
    skipped: bool,
}

#[derive(Serialize)]
struct JsonInspect<'a> {
    version: u32,
    containers: Vec<JsonContainer<'a>>,
    errors: Vec<JsonError<'a>>,
}

pub(crate) fn render_json(files: &[Inspected]) -> String {
    let mut containers = Vec::new();
    let mut errors = Vec::new();
    for file in files {
        match &file.outcome {
            Ok(inspection) => {
                let indexes: Vec<LineIndex> =
                    inspection.files.iter().map(|f| f.index().clone()).collect();
                for (i, runtime) in inspection.containers.iter().enumerate() {
                    let (source, index) = file_of(inspection, &indexes, runtime.file);
                    let (shm_source, shm_index) =
                        file_of(inspection, &indexes, runtime.shm.at_file);
                    containers.push(JsonContainer {
                        path: shown_path(&source.path),
                        span: span_in(index, &source.text, runtime.range),
                        scope: span_in(index, &source.text, runtime.scope),
                        shm_decided_at: runtime.shm.at.map(|at| DecidedAt {
                            path: shown_path(&shm_source.path),
                            span: span_in(shm_index, &shm_source.text, at),
                        }),
                        projects: inspection
                            .projects
                            .get(i)
                            .into_iter()
                            .flatten()
                            .map(|p| JsonProject {
                                dir: match shown_path(&p.dir) {
                                    dir if dir.is_empty() => ".".to_string(),
                                    dir => dir,
                                },
                                files: p.files.iter().map(|f| shown_path(f)).collect(),
                            })
                            .collect(),
                        runtime,
                    });
                }
            }
            Err(e) => errors.push(JsonError {
                path: shown_path(&file.path),
                message: &e.message,
                offset: e.offset,
                skipped: e.skip.is_some(),
            }),
        }
    }
    let document = JsonInspect {
        version: 1,
        containers,
        errors,
    };
    let mut out = serde_json::to_string_pretty(&document).expect("JSON");
    out.push('\n');
    out
}

/// A table for people: one row per container.
pub(crate) fn render_text(files: &[Inspected]) -> String {
    let mut rows = vec![[
        "LOCATION".to_string(),
        "CONTAINER".to_string(),
        "GPUS".to_string(),
        "/DEV/SHM".to_string(),
        "FROM".to_string(),
        "IPC".to_string(),
        "ULIMITS".to_string(),
        "ENV".to_string(),
    ]];
    let mut errors = String::new();
    for file in files {
        let inspection = match &file.outcome {
            Ok(r) => r,
            Err(e) => {
                let _ = writeln!(
                    errors,
                    "{}: {}",
                    human_path(Path::new(&shown_path(&file.path))),
                    human(&e.message)
                );
                continue;
            }
        };
        for r in &inspection.containers {
            let source = &inspection.files[r.file as usize];
            let at = source
                .index()
                .line_col(r.range.start as usize, &source.text);
            let gpus = match r.gpus {
                None if r.gpu_workload => "intended".to_string(),
                None => "-".to_string(),
                Some(Gpus::All) => "all".to_string(),
                Some(Gpus::Count(n)) => n.to_string(),
                Some(Gpus::Unknown) => "?".to_string(),
            };
            let shm = match (r.shm.bytes, r.shm.host_memory_percent) {
                (Some(b), _) => HumanBytes(b).to_string(),
                (None, Some(percent)) => format!("{percent}% of RAM"),
                (None, None) => format!("{:?}", r.shm.kind).to_lowercase(),
            };
            let ulimits = r
                .ulimits
                .iter()
                .map(|(name, l)| {
                    let show = |v: Option<i64>| match v {
                        Some(-1) => "unlimited".to_string(),
                        Some(v) => v.to_string(),
                        None => "?".to_string(),
                    };
                    format!("{}={}", human(name), show(l.soft))
                })
                .collect::<Vec<_>>()
                .join(",");
            let env = r
                .env
                .iter()
                .map(|(k, v)| format!("{}={}", human(k), human(v.as_deref().unwrap_or("?"))))
                .collect::<Vec<_>>()
                .join(" ");
            let location = human_path(Path::new(&shown_path(&source.path)));
            rows.push([
                format!("{location}:{}:{}", at.line, at.column),
                human(&r.id).into_owned(),
                gpus,
                shm,
                human(&r.shm.from).into_owned(),
                human(&r.ipc).into_owned(),
                if ulimits.is_empty() {
                    "-".into()
                } else {
                    ulimits
                },
                if env.is_empty() { "-".into() } else { env },
            ]);
        }
    }
    let mut widths = [0usize; 8];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in &rows {
        let mut line = String::new();
        for (i, (cell, w)) in row.iter().zip(widths).enumerate() {
            if i + 1 == row.len() {
                line.push_str(cell);
            } else {
                let _ = write!(line, "{cell:<w$}  ");
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push_str(&errors);
    out
}
