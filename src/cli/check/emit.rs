//! Writing each checked file's report, in path order, to stdout, every
//! `--output-file` and stderr.

use super::*;

/// Reports each checked file as soon as it and every file before it (in
/// path order) are done, and keeps only counts of it after: each
/// destination's part is written then ([`Sink`]: the terminal and every
/// `--output-file`), the diff too, and stderr gets the file's problems.
pub(super) struct Emitter {
    pub(super) sinks: Vec<Sink>,
    /// `--diff` writes each file's patch to stdout as it comes.
    pub(super) streams_diff: bool,
    /// The report of standard input, when `--fix` prints its fixed text.
    pub(super) kept: Vec<FileReport>,
    pub(super) keeps: bool,
    pub(super) totals: Totals,
    pub(super) fixed: Fixed,
    pub(super) mode: FixMode,
    /// Paths that were never linted (not found, bad configuration).
    pub(super) unchecked: usize,
    /// Configuration problems said so far, each said once.
    pub(super) said: foldhash::HashSet<String>,
    pub(super) problems: usize,
    /// Why stdout could not be written, once it could not.
    pub(super) stdout_error: Option<std::io::Error>,
    /// What is still to be written to stdout: written after each chunk of
    /// files (and before anything goes to stderr), not line by line, which
    /// cost a system call per line of the report.
    pub(super) pending: Vec<u8>,
}

impl Emitter {
    pub(super) fn new(args: &CheckArgs, plan: &Plan) -> Emitter {
        let color = match args.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => crate::cli::auto_color(&std::io::stdout()),
        };
        let stdin_fix = plan.reads_stdin && plan.action == FixAction::Apply;
        // Report files without a format of their own take `--output-format`;
        // the terminal then shows text.
        let terminal_format = if args.output_file.iter().any(|f| f.format.is_none()) {
            OutputFormat::Text
        } else {
            args.output_format
        };
        let mut sinks: Vec<Sink> = args
            .output_file
            .iter()
            .map(|file| {
                let format = file.format.unwrap_or(args.output_format);
                Sink::file(&file.path, format, args.quiet, args.statistics)
            })
            .collect();
        // The diff alone goes to stdout, so it can be piped into `git
        // apply`; fixing standard input prints the fixed text.
        if plan.action != FixAction::Diff && !stdin_fix {
            sinks.push(Sink::stdout(
                terminal_format,
                text::Style { color },
                args.quiet,
                args.statistics,
            ));
        }
        Emitter {
            sinks,
            streams_diff: plan.action == FixAction::Diff,
            kept: Vec::new(),
            keeps: stdin_fix,
            totals: Totals::default(),
            fixed: Fixed::default(),
            mode: plan.mode,
            unchecked: 0,
            said: Default::default(),
            problems: 0,
            stdout_error: None,
            pending: Vec::new(),
        }
    }

    /// A configuration or `--add-noqa` problem, on stderr once.
    pub(super) fn problem(&mut self, line: String) {
        self.problems += 1;
        if self.said.insert(line.clone()) {
            self.flush_stdout();
            eprintln!("{line}");
        }
    }

    pub(super) fn write_stdout(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
    }

    /// Writes what is pending on stdout.
    pub(super) fn flush_stdout(&mut self) {
        for sink in &mut self.sinks {
            let bytes = sink.take_pending();
            self.pending.extend_from_slice(&bytes);
        }
        if self.pending.is_empty() {
            return;
        }
        if self.stdout_error.is_none() {
            let mut stdout = std::io::stdout().lock();
            if let Err(e) = stdout
                .write_all(&self.pending)
                .and_then(|()| stdout.flush())
            {
                self.stdout_error = Some(e);
            }
        }
        self.pending.clear();
    }

    /// One file, in path order.
    pub(super) fn file(&mut self, checked: Checked) {
        let renders = self.renders();
        let rendered = renders.iter().map(|r| r.file(&checked.report)).collect();
        self.rendered_file(checked, rendered);
    }

    /// One file, in path order, with each destination's part of it, which
    /// a worker thread rendered (see [`Self::renders`]).
    pub(super) fn rendered_file(&mut self, checked: Checked, rendered: Vec<Rendered>) {
        if has_file_problems(&checked) {
            // After the findings of the files before it, as a terminal
            // shows the two streams.
            self.flush_stdout();
            print_file_problems(&checked);
        }
        let Checked { report, fixing } = checked;
        if let Some(f) = fixing {
            self.fix_done(&report.path, f);
        }
        self.totals.add(&report, self.mode);
        for (sink, part) in self.sinks.iter_mut().zip(rendered) {
            sink.file_part(part);
        }
        if self.keeps {
            self.kept.push(report);
        }
    }

    /// How a worker renders a file for each destination, so that the
    /// thread writing the report in order only writes it.
    pub(super) fn renders(&self) -> Vec<Render> {
        self.sinks.iter().map(Sink::render).collect()
    }

    pub(super) fn fix_done(&mut self, path: &Path, f: Fixing) {
        let tally = &mut self.fixed.tally;
        if f.unwritten.is_some() {
            tally.unwritten_files += 1;
            tally.unwritten += f.outcome.applied.len();
            return;
        }
        let changed = f.outcome.changed(&f.original);
        tally.add_file(&f.outcome, changed, &f.outcome.remaining, self.mode);
        let patch = fix::unified_diff(
            &crate::output::shown_path(path),
            &f.original,
            &f.outcome.fixed_text,
        );
        let patch = crate::output::with_exact_diff_header(path, patch);
        if self.streams_diff {
            self.write_stdout(patch.as_bytes());
        } else {
            self.fixed.diff.push_str(&patch);
        }
    }

    /// The skip notes, the end of every report, the rest of stdout; the
    /// exit status.
    pub(super) fn finish(mut self, args: &CheckArgs, plan: &Plan, noqa_failed: bool) -> u8 {
        self.flush_stdout();
        for note in self.totals.skip_notes() {
            eprintln!("{note}");
        }
        let outcome = Outcome {
            reports: &self.kept,
            totals: &self.totals,
            action: plan.action,
            mode: plan.mode,
            fixing: &self.fixed.tally,
            unchecked: self.unchecked,
            quiet: args.quiet,
            statistics: args.statistics,
        };
        let mut stdout_end = Vec::new();
        let mut report_failed = false;
        for sink in std::mem::take(&mut self.sinks) {
            match sink.finish(&outcome) {
                Ok(bytes) => stdout_end.extend_from_slice(&bytes),
                Err(message) => {
                    eprintln!("{message}");
                    report_failed = true;
                }
            }
        }
        if report_failed {
            return EXIT_ERROR;
        }
        let printed = print_outcome(args, plan, &outcome, &self.fixed, &stdout_end);
        if let Some(e) = self.stdout_error.take().or(printed.err())
            && e.kind() != std::io::ErrorKind::BrokenPipe
        {
            eprintln!("gpulint: error: cannot write output: {e}");
            return EXIT_ERROR;
        }
        let summary = &self.totals.summary;
        // A fix that could not be applied leaves its finding, which sets the
        // status like any other; the file itself was checked.
        let status = if summary.failed_files > 0 || self.problems > 0 || noqa_failed {
            EXIT_ERROR
        } else if plan.action == FixAction::Diff {
            // The status says whether the patch is empty, as documented;
            // `--fail-on never` makes it 0 all the same.
            if self.fixed.tally.files > 0 && args.fail_on != FailOn::Never {
                EXIT_FINDINGS
            } else {
                EXIT_CLEAN
            }
        } else if args.fail_on.fails(summary) {
            EXIT_FINDINGS
        } else {
            EXIT_CLEAN
        };
        // The process ends with this run: freeing what is left one piece
        // at a time would be serial work after the run.
        std::mem::forget(self);
        status
    }
}
