//! The whole-run formats (JSON, SARIF, GitLab, JUnit) written file by
//! file, in the bytes they have when rendered all at once.
//!
//! Their documents open with what only the end of a run knows (the JSON
//! summary, SARIF's `executionSuccessful`, JUnit's counts), so a file's
//! part is rendered as soon as the file is checked ([`WholeRun::part`], on
//! the thread that checked it) and appended to a [`Spool`], one per array of the
//! document; [`Document::finish`] writes the document's frame around the
//! spooled arrays. A run then holds the counts and the spools (temporary
//! files for `check`), never the reports: JSON on 24,000 files held 134 MiB
//! of reports, SARIF 414 MiB.

use super::Summary;
use crate::engine::FileReport;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Seek, Write};

/// A format written as one document for the whole run (each format's
/// module implements it: [`super::json::JSON`], [`super::sarif::SARIF`],
/// [`super::gitlab::GITLAB`], [`super::junit::JUNIT`]).
pub trait WholeRun: Sync {
    /// How many arrays (sections) its document has, in the order its frame
    /// holds them.
    fn sections(&self) -> usize;

    /// `report`'s part of the document.
    fn part(&self, report: &FileReport) -> Part;

    /// The document around its sections, for a run's `summary` and the
    /// `tests` its parts counted, with [`placeholder`]s where they go.
    fn frame(&self, summary: &Summary, tests: usize) -> String;

    /// JSON arrays (items separated by commas, indented where their key
    /// is), or XML written as it is.
    fn is_json(&self) -> bool {
        true
    }
}

/// One file's part of a document: the items it adds to each section, and
/// for JUnit the test cases it counts.
#[derive(Debug, Default)]
pub struct Part {
    pub sections: Vec<Vec<String>>,
    pub tests: usize,
}

/// The items of one array of a document, in the order they came: in
/// memory, or in a temporary file for a run of any size.
pub struct Spool {
    backing: Backing,
    items: usize,
}

enum Backing {
    Memory(Vec<u8>),
    File(BufWriter<File>),
}

impl Spool {
    fn new(on_disk: bool) -> io::Result<Spool> {
        let backing = if on_disk {
            Backing::File(BufWriter::new(tempfile::tempfile()?))
        } else {
            Backing::Memory(Vec::new())
        };
        Ok(Spool { backing, items: 0 })
    }

    fn writer(&mut self) -> &mut dyn Write {
        match &mut self.backing {
            Backing::Memory(bytes) => bytes,
            Backing::File(file) => file,
        }
    }

    /// Appends an item (a JSON value rendered pretty from column 0, or XML
    /// to write as it is); JSON items are separated by commas.
    fn push(&mut self, item: &str, separator: &str) -> io::Result<()> {
        if self.items > 0 {
            self.writer().write_all(separator.as_bytes())?;
        }
        self.writer().write_all(item.as_bytes())?;
        self.items += 1;
        Ok(())
    }

    /// Each line of what was spooled, in order.
    fn lines(self, mut each: impl FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
        match self.backing {
            Backing::Memory(bytes) => bytes.split(|&b| b == b'\n').try_for_each(each),
            Backing::File(file) => {
                let mut file = file.into_inner().map_err(|e| e.into_error())?;
                file.rewind()?;
                let mut reader = BufReader::new(file);
                let mut line = Vec::new();
                loop {
                    line.clear();
                    if reader.read_until(b'\n', &mut line)? == 0 {
                        return Ok(());
                    }
                    let content = line.strip_suffix(b"\n").unwrap_or(&line);
                    each(content)?;
                }
            }
        }
    }

    /// Writes the spooled items as the JSON array a pretty printer writes
    /// where its key's line is indented by `indent` spaces.
    fn write_json_array(self, out: &mut dyn Write, indent: usize) -> io::Result<()> {
        if self.items == 0 {
            return out.write_all(b"[]");
        }
        out.write_all(b"[")?;
        let pad = " ".repeat(indent + 2);
        self.lines(|line| {
            out.write_all(b"\n")?;
            out.write_all(pad.as_bytes())?;
            out.write_all(line)
        })?;
        write!(out, "\n{}]", " ".repeat(indent))
    }

    /// Writes the spooled items as they are.
    fn write_raw(self, out: &mut dyn Write) -> io::Result<()> {
        match self.backing {
            Backing::Memory(bytes) => out.write_all(&bytes),
            Backing::File(file) => {
                let mut file = file.into_inner().map_err(|e| e.into_error())?;
                file.rewind()?;
                io::copy(&mut file, out).map(drop)
            }
        }
    }
}

/// The placeholder a format's frame holds where section `n` goes: a JSON
/// string no value of gpulint's has (it holds control characters).
pub fn placeholder(n: usize) -> String {
    format!("\u{0}section {n}\u{0}")
}

/// A document being written: its sections' spools and its counts.
pub struct Document {
    format: &'static dyn WholeRun,
    spools: Vec<Spool>,
    tests: usize,
}

impl Document {
    /// `on_disk`: spool to temporary files (a run's files), not memory.
    pub fn new(format: &'static dyn WholeRun, on_disk: bool) -> io::Result<Document> {
        let spools = (0..format.sections())
            .map(|_| Spool::new(on_disk))
            .collect::<io::Result<_>>()?;
        Ok(Document {
            format,
            spools,
            tests: 0,
        })
    }

    /// Appends a file's part.
    pub fn push(&mut self, part: &Part) -> io::Result<()> {
        let separator = if self.format.is_json() { ",\n" } else { "" };
        for (spool, items) in self.spools.iter_mut().zip(&part.sections) {
            for item in items {
                spool.push(item, separator)?;
            }
        }
        self.tests += part.tests;
        Ok(())
    }

    /// Writes the whole document: its frame, for the run's `summary`, with
    /// each section in its place.
    pub fn finish(self, summary: &Summary, out: &mut dyn Write) -> io::Result<()> {
        let json = self.format.is_json();
        let frame = self.format.frame(summary, self.tests);
        let mut rest = frame.as_str();
        for (n, spool) in self.spools.into_iter().enumerate() {
            let mark = if json {
                serde_json::to_string(&placeholder(n)).expect("a string")
            } else {
                placeholder(n)
            };
            let (before, after) = rest
                .split_once(&mark)
                .expect("every section has its place in the frame");
            out.write_all(before.as_bytes())?;
            if json {
                let line_start = before.rfind('\n').map_or(0, |i| i + 1);
                let line = &before[line_start..];
                let indent = line.len() - line.trim_start_matches(' ').len();
                spool.write_json_array(out, indent)?;
            } else {
                spool.write_raw(out)?;
            }
            rest = after;
        }
        out.write_all(rest.as_bytes())
    }
}

/// `reports` as one `format` document, rendered in memory.
pub fn render(format: &'static dyn WholeRun, reports: &[FileReport]) -> String {
    let mut document = Document::new(format, false).expect("memory spools do not fail");
    for report in reports {
        document
            .push(&format.part(report))
            .expect("memory spools do not fail");
    }
    let mut out = Vec::new();
    document
        .finish(&Summary::of(reports), &mut out)
        .expect("writing to memory does not fail");
    String::from_utf8(out).expect("the parts are text")
}

/// A JSON value as the pretty printer writes it from column 0.
pub fn pretty(value: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(value).expect("serializable")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each section written through a file spool and through memory reads
    /// the same as the pretty printer writing the whole array.
    #[test]
    fn spooled_arrays_are_what_the_pretty_printer_writes() {
        let items: Vec<serde_json::Value> = vec![
            serde_json::json!({"a": 1, "b": [1, 2], "c": {"d": "x\ny"}}),
            serde_json::json!([]),
            serde_json::json!({"e": {}}),
        ];
        for count in 0..=items.len() {
            let items = &items[..count];
            let whole = pretty(&serde_json::json!({"k": {"list": items}}));
            for on_disk in [false, true] {
                let mut spool = Spool::new(on_disk).unwrap();
                for item in items {
                    spool.push(&pretty(item), ",\n").unwrap();
                }
                let mut out = b"{\n  \"k\": {\n    \"list\": ".to_vec();
                spool.write_json_array(&mut out, 4).unwrap();
                out.extend_from_slice(b"\n  }\n}");
                assert_eq!(String::from_utf8(out).unwrap(), whole, "{count} {on_disk}");
            }
        }
    }
}
