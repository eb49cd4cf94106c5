//! Where `check` writes its report as files are checked: the terminal and
//! each `--output-file`, every one in its own format.
//!
//! A file's part of each report is rendered on the thread that checked it
//! ([`Render::file`]); the thread that emits files in path order only
//! writes it ([`Sink::file`]). Text, concise and github output is written
//! as it comes; a whole-run format (JSON, SARIF, GitLab, JUnit) spools its
//! parts to temporary files and writes its document at the end
//! ([`crate::output::document`]), so no report is kept for it.

use super::report::{Outcome, Streamed};
use crate::engine::FileReport;
use crate::output::document::{Document, Part, WholeRun};
use crate::output::{OutputFormat, gitlab, json, junit, sarif, text};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// How a destination renders each file.
#[derive(Clone, Copy)]
pub(super) enum Render {
    Streamed(Streamed),
    Whole(&'static dyn WholeRun),
    /// `--statistics` in text: a table at the end, nothing per file.
    Statistics,
}

impl Render {
    pub fn of(format: OutputFormat, style: text::Style, quiet: bool, statistics: bool) -> Render {
        match (
            Streamed::of(format, style, quiet, statistics),
            whole_run(format),
        ) {
            (Some(streamed), _) => Render::Streamed(streamed),
            (None, Some(whole)) => Render::Whole(whole),
            (None, None) => Render::Statistics,
        }
    }

    /// `report`'s part of the output.
    pub fn file(self, report: &FileReport) -> Rendered {
        match self {
            Render::Streamed(streamed) => Rendered::Text(streamed.render(report)),
            Render::Whole(format) => Rendered::Part(format.part(report)),
            Render::Statistics => Rendered::Nothing,
        }
    }
}

/// The format written as one document for the whole run, if `format` is.
fn whole_run(format: OutputFormat) -> Option<&'static dyn WholeRun> {
    match format {
        OutputFormat::Json => Some(&json::JSON),
        OutputFormat::Sarif => Some(&sarif::SARIF),
        OutputFormat::Gitlab => Some(&gitlab::GITLAB),
        OutputFormat::Junit => Some(&junit::JUNIT),
        OutputFormat::Text | OutputFormat::Concise | OutputFormat::Github => None,
    }
}

/// A file's part of one destination's output.
pub(super) enum Rendered {
    Text(String),
    Part(Part),
    Nothing,
}

enum Dest {
    /// Written by the caller, which interleaves it with stderr (see
    /// [`Sink::take_pending`]).
    Stdout(Vec<u8>),
    /// A report file; no writer when it could not be created.
    File {
        path: PathBuf,
        writer: Option<BufWriter<File>>,
    },
}

/// One destination of the report.
pub(super) struct Sink {
    format: OutputFormat,
    style: text::Style,
    render: Render,
    dest: Dest,
    document: Option<Document>,
    /// The first thing that failed, said at the end.
    error: Option<io::Error>,
}

impl Sink {
    pub fn stdout(format: OutputFormat, style: text::Style, quiet: bool, statistics: bool) -> Sink {
        Sink::to(Dest::Stdout(Vec::new()), format, style, quiet, statistics)
    }

    /// A report file, created (with its directory) now; an error is said
    /// at the end, as one in writing it would be.
    pub fn file(path: &Path, format: OutputFormat, quiet: bool, statistics: bool) -> Sink {
        let opened = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| File::create(path));
        let (writer, error) = match opened {
            Ok(file) => (Some(BufWriter::new(file)), None),
            Err(e) => (None, Some(e)),
        };
        let dest = Dest::File {
            path: path.to_path_buf(),
            writer,
        };
        let mut sink = Sink::to(
            dest,
            format,
            text::Style { color: false },
            quiet,
            statistics,
        );
        sink.error = sink.error.or(error);
        sink
    }

    fn to(
        dest: Dest,
        format: OutputFormat,
        style: text::Style,
        quiet: bool,
        statistics: bool,
    ) -> Sink {
        let render = Render::of(format, style, quiet, statistics);
        let mut error = None;
        let document = match render {
            Render::Whole(whole) => match Document::new(whole, true) {
                Ok(document) => Some(document),
                Err(e) => {
                    error = Some(e);
                    None
                }
            },
            Render::Streamed(_) | Render::Statistics => None,
        };
        Sink {
            format,
            style,
            render,
            dest,
            document,
            error,
        }
    }

    pub fn render(&self) -> Render {
        self.render
    }

    /// Writes a file's part, rendered by [`Render::file`].
    pub(crate) fn file_part(&mut self, rendered: Rendered) {
        if self.error.is_some() {
            return;
        }
        let written = match rendered {
            Rendered::Text(text) => self.write(text.as_bytes()),
            Rendered::Part(part) => match &mut self.document {
                Some(document) => document.push(&part),
                None => Ok(()),
            },
            Rendered::Nothing => Ok(()),
        };
        if let Err(e) = written {
            self.error = Some(e);
        }
    }

    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        match &mut self.dest {
            Dest::Stdout(pending) => {
                pending.extend_from_slice(bytes);
                Ok(())
            }
            Dest::File { writer, .. } => writer.as_mut().map_or(Ok(()), |w| w.write_all(bytes)),
        }
    }

    /// What is to be written to stdout so far.
    pub(crate) fn take_pending(&mut self) -> Vec<u8> {
        match &mut self.dest {
            Dest::Stdout(pending) => std::mem::take(pending),
            Dest::File { .. } => Vec::new(),
        }
    }

    /// Writes the end of the report (the text footer, `--statistics`, a
    /// whole-run document) and closes a report file. Returns what is left
    /// to write to stdout, or the error to say, as `gpulint` says it.
    pub fn finish(mut self, outcome: &Outcome) -> Result<Vec<u8>, String> {
        if self.error.is_none() {
            let ended = match self.document.take() {
                Some(document) => {
                    let summary = &outcome.totals.summary;
                    match &mut self.dest {
                        // Straight to stdout, not through memory: a document
                        // can be as large as the tree (what is pending was
                        // written before, see `Emitter::finish`).
                        Dest::Stdout(pending) => {
                            debug_assert!(pending.is_empty());
                            let mut stdout = BufWriter::new(io::stdout().lock());
                            document
                                .finish(summary, &mut stdout)
                                .and_then(|()| stdout.flush())
                        }
                        Dest::File { writer, .. } => writer
                            .as_mut()
                            .map_or(Ok(()), |w| document.finish(summary, w)),
                    }
                }
                None => {
                    let tail = outcome.tail(self.format, self.style);
                    self.write(tail.as_bytes())
                }
            };
            let flushed = match &mut self.dest {
                Dest::File { writer, .. } => writer.as_mut().map_or(Ok(()), Write::flush),
                Dest::Stdout(_) => Ok(()),
            };
            if let Err(e) = ended.and(flushed) {
                self.error = Some(e);
            }
        }
        match (self.error, self.dest) {
            (Some(e), Dest::File { path, .. }) => Err(format!(
                "gpulint: error: cannot write the {} report to {}: {e}",
                self.format.name(),
                crate::output::escape::human_path(&path)
            )),
            // A reader that stopped reading (`| head`) is no error.
            (Some(e), Dest::Stdout(_)) if e.kind() == io::ErrorKind::BrokenPipe => Ok(Vec::new()),
            (Some(e), Dest::Stdout(_)) => Err(format!("gpulint: error: cannot write output: {e}")),
            (None, Dest::Stdout(pending)) => Ok(pending),
            (None, Dest::File { .. }) => Ok(Vec::new()),
        }
    }
}
