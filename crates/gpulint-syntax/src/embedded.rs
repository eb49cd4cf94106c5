//! Shell text inside other files: Makefile recipes, Markdown code blocks and
//! GitHub Actions `run:` steps, each as a [`Snippet`] that maps back to the
//! host file.

use super::shell::Snippet;
use super::yaml::{NodeId, Style, Value, Yaml};
use super::yaml_edit::YamlEditor;
use crate::fix::Edit;
use crate::text::TextRange;

/// Lines of `text` with their byte offsets, without line terminators.
fn lines(text: &str) -> impl Iterator<Item = (&str, usize)> {
    let mut offset = 0;
    text.split_inclusive('\n').map(move |raw| {
        let start = offset;
        offset += raw.len();
        (raw.trim_end_matches('\n').trim_end_matches('\r'), start)
    })
}

/// Each recipe of a Makefile: the tab-indented lines after a rule, without
/// the tab and the `@`, `-` and `+` prefixes make reads itself.
pub fn makefile_recipes(text: &str) -> Vec<Snippet> {
    let mut snippets = Vec::new();
    let mut recipe: Vec<(&str, usize)> = Vec::new();
    let mut continued = false;
    for (line, offset) in lines(text) {
        let in_recipe = line.starts_with('\t') || (continued && !recipe.is_empty());
        if !in_recipe {
            if !recipe.is_empty() {
                snippets.push(recipe_snippet(recipe.drain(..)));
            }
            continued = false;
            continue;
        }
        // Make strips one tab from a continuation line too.
        let body = line.strip_prefix('\t').unwrap_or(line);
        let mut skip = line.len() - body.len();
        if !continued {
            let command = body.trim_start_matches(['@', '-', '+', ' ']);
            skip += body.len() - command.len();
        }
        recipe.push((&line[skip..], offset + skip));
        continued = line.ends_with('\\');
    }
    if !recipe.is_empty() {
        snippets.push(recipe_snippet(recipe));
    }
    snippets
}

fn recipe_snippet<'a>(lines: impl IntoIterator<Item = (&'a str, usize)>) -> Snippet {
    let mut snippet = Snippet::from_lines(lines);
    snippet.make_variables = true;
    snippet
}

/// Info strings of fenced blocks that may hold shell commands (an untagged
/// block may too: READMEs often leave the language out).
fn is_shell_block(info: &str) -> bool {
    let language = info
        .split([' ', '{', ','])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    matches!(
        language.as_str(),
        "" | "sh"
            | "bash"
            | "shell"
            | "zsh"
            | "console"
            | "shell-session"
            | "shellsession"
            | "terminal"
    )
}

/// Each fenced code block of a Markdown file that may hold shell commands,
/// with a leading `$ ` prompt taken off each line.
pub fn markdown_code_blocks(text: &str) -> Vec<Snippet> {
    let mut snippets = Vec::new();
    let mut open: Option<(String, usize, bool)> = None; // fence, indent, shell
    let mut block: Vec<(&str, usize)> = Vec::new();
    for (line, offset) in lines(text) {
        let trimmed = line.trim_start_matches(' ');
        let indent = line.len() - trimmed.len();
        match &open {
            None => {
                if indent > 3 {
                    continue;
                }
                let fence_char = match trimmed.chars().next() {
                    Some(c @ ('`' | '~')) => c,
                    _ => continue,
                };
                let fence_len = trimmed.chars().take_while(|&c| c == fence_char).count();
                if fence_len < 3 {
                    continue;
                }
                let info = trimmed[fence_len..].trim();
                if fence_char == '`' && info.contains('`') {
                    continue;
                }
                let fence = trimmed[..fence_len].to_string();
                open = Some((fence, indent, is_shell_block(info)));
            }
            Some((fence, fence_indent, shell)) => {
                let closes = indent <= 3
                    && trimmed.starts_with(fence.as_str())
                    && trimmed.trim_end().chars().all(|c| fence.starts_with(c));
                if closes {
                    if *shell && !block.is_empty() {
                        snippets.push(Snippet::from_lines(block.drain(..)));
                    }
                    block.clear();
                    open = None;
                    continue;
                }
                let strip = indent.min(*fence_indent);
                let mut body = &line[strip..];
                let mut skip = strip;
                if let Some(command) = body.strip_prefix("$ ") {
                    skip += 2;
                    body = command;
                }
                block.push((body, offset + skip));
            }
        }
    }
    // An unclosed fence runs to the end of the document.
    if let Some((_, _, true)) = open
        && !block.is_empty()
    {
        snippets.push(Snippet::from_lines(block));
    }
    snippets
}

/// Each `run:` of a GitHub Actions workflow's steps (`jobs.<id>.steps`),
/// from a literal, folded or plain scalar; quoted ones are passed over.
pub fn workflow_runs(yaml: &Yaml, text: &str) -> Vec<Snippet> {
    let mut snippets = Vec::new();
    for (document, job_name, job) in workflow_jobs(yaml) {
        let Some(steps) = yaml.get(job, "steps") else {
            continue;
        };
        for (index, &step) in yaml.items(steps.value).iter().enumerate() {
            let Some(run) = yaml.get(step, "run") else {
                continue;
            };
            let path = ["jobs", job_name, "steps", &index.to_string(), "run"]
                .map(String::from)
                .to_vec();
            if let Some(mut snippet) = scalar_snippet(yaml, run.value, text) {
                snippet.yaml_path = Some(path);
                snippet.yaml_document = document;
                snippets.push(snippet);
            }
        }
    }
    snippets
}

/// Each job of each document's `jobs:` mapping: its document, its name
/// and its node.
fn workflow_jobs(yaml: &Yaml) -> Vec<(usize, &str, super::yaml::NodeId)> {
    let mut jobs = Vec::new();
    for (index, document) in yaml.documents.iter().enumerate() {
        let Some(root) = document.root else { continue };
        let Some(entry) = yaml.get(root, "jobs") else {
            continue;
        };
        for job in yaml.entries(entry.value) {
            if let Some(name) = yaml.str(job.key) {
                jobs.push((index, name, job.value));
            }
        }
    }
    jobs
}

/// A job's `container:` or one of its `services:`: the runner starts each
/// with `docker create` and the `options:` string among its arguments
/// (actions/runner `DockerCommandManager.DockerCreate`).
#[derive(Debug, Clone)]
pub struct WorkflowContainer {
    /// `jobs.<id>.container` or `jobs.<id>.services.<id>`.
    pub yaml_path: Vec<String>,
    /// The YAML document it is in.
    pub yaml_document: usize,
    /// The `container` key, or the service's.
    pub key_range: TextRange,
    /// The image, as written.
    pub image: Option<(String, TextRange)>,
    /// `options:`, as shell text mapped to where it is written; `None`
    /// when there is none, or it is written in a way not mapped back.
    pub options: Option<Snippet>,
    /// Whether an `options:` key is written.
    pub has_options: bool,
    /// `env:`, which the runner passes as `-e` after `options:`.
    pub env: Vec<WorkflowEnv>,
    /// For the job's own container: the variables its steps run with
    /// (the job's `env:`, then each step's), names and values as written.
    /// The runner runs every step in that container (`docker exec -e`).
    pub step_env: Vec<(String, Option<String>)>,
}

/// One entry of a workflow container's `env:` mapping.
#[derive(Debug, Clone)]
pub struct WorkflowEnv {
    pub name: String,
    /// The value the runner passes; `None` for an empty one, which it
    /// passes as `-e NAME` alone.
    pub value: Option<String>,
    /// The `NAME: value` entry.
    pub range: TextRange,
    /// The edit that removes the entry (the whole `env:` when it is the
    /// only one); `None` in a workflow with aliases, where an edit may
    /// change other containers too.
    pub removal: Option<Edit>,
}

/// Each job container and service container of a GitHub Actions workflow.
pub fn workflow_containers(yaml: &Yaml, text: &str) -> Vec<WorkflowContainer> {
    let mut out = Vec::new();
    for (yaml_document, job_name, job) in workflow_jobs(yaml) {
        let mut found = Vec::new();
        if let Some(container) = yaml.get(job, "container") {
            found.push((vec!["container".to_string()], container));
        }
        if let Some(services) = yaml.get(job, "services") {
            for service in yaml.entries(services.value) {
                if let Some(name) = yaml.str(service.key) {
                    found.push((vec!["services".to_string(), name.to_string()], service));
                }
            }
        }
        for (tail, entry) in found {
            let mut yaml_path = vec!["jobs".to_string(), job_name.to_string()];
            yaml_path.extend(tail);
            let key_range = yaml.node(entry.key).range;
            // `container: image` is the image alone.
            let image_node = match yaml.value(entry.value) {
                Value::Scalar { .. } => Some(entry.value),
                _ => yaml.get(entry.value, "image").map(|e| e.value),
            };
            let image = image_node.and_then(|node| {
                let value = yaml.str(node)?;
                (!value.is_empty()).then(|| (value.to_string(), yaml.node(node).range))
            });
            let options_entry = yaml.get(entry.value, "options");
            let options = options_entry.and_then(|e| exact_scalar_snippet(yaml, e.value, text));
            let step_env = if tail_is_job_container(&yaml_path) {
                steps_env(yaml, job)
            } else {
                Vec::new()
            };
            out.push(WorkflowContainer {
                yaml_path,
                yaml_document,
                key_range,
                image,
                options,
                has_options: options_entry.is_some(),
                env: workflow_env(yaml, text, entry.value),
                step_env,
            });
        }
    }
    out
}

/// `jobs.<id>.container`, not one of its services.
fn tail_is_job_container(yaml_path: &[String]) -> bool {
    yaml_path.last().is_some_and(|k| k == "container") && yaml_path.len() == 3
}

/// The variables a job's steps run with: the job's `env:`, then each
/// step's, scalar values as written.
fn steps_env(yaml: &Yaml, job: NodeId) -> Vec<(String, Option<String>)> {
    let scalars = |map: NodeId| -> Vec<(String, Option<String>)> {
        yaml.entries(map)
            .into_iter()
            .filter_map(|entry| {
                let name = yaml.str(entry.key)?;
                let value = yaml.str(entry.value).map(str::to_string);
                Some((name.to_string(), value))
            })
            .collect()
    };
    let mut out = yaml
        .get(job, "env")
        .map(|e| scalars(e.value))
        .unwrap_or_default();
    if let Some(steps) = yaml.get(job, "steps") {
        for &step in yaml.items(steps.value).iter() {
            if let Some(env) = yaml.get(step, "env") {
                out.extend(scalars(env.value));
            }
        }
    }
    out
}

/// The `env:` entries of a container's mapping, in order, with scalar
/// values (a number or a boolean is passed as written).
fn workflow_env(yaml: &Yaml, text: &str, container: NodeId) -> Vec<WorkflowEnv> {
    let Some(env) = yaml.get(container, "env") else {
        return Vec::new();
    };
    // As Kubernetes fixes are: none where an alias may share what is edited.
    let shared = yaml.has_alias_in(TextRange::new(0, text.len()));
    let editor = (!shared).then(|| YamlEditor::new(yaml, text));
    yaml.entries(env.value)
        .into_iter()
        .filter_map(|entry| {
            let name = yaml.str(entry.key)?;
            let value = yaml.str(entry.value)?;
            let removal = editor.as_ref().and_then(|editor| {
                editor
                    .remove_entry(env.value, entry.key)
                    .or_else(|_| editor.remove_entry(yaml.resolve(container), env.key))
                    .ok()
            });
            Some(WorkflowEnv {
                name: name.to_string(),
                value: (!value.is_empty() && !yaml.is_null(entry.value)).then(|| value.to_string()),
                range: yaml.range(entry.key).cover(yaml.range(entry.value)),
                removal,
            })
        })
        .collect()
}

/// The shell text of a scalar, mapped to where each line is written.
fn scalar_snippet(yaml: &Yaml, node: super::yaml::NodeId, text: &str) -> Option<Snippet> {
    let Value::Scalar { style, .. } = yaml.value(node) else {
        return None;
    };
    let range = yaml.node(node).range;
    let written = text.get(range.as_range())?;
    match style {
        Style::Plain if !written.contains('\n') => {
            Some(Snippet::verbatim(written, range.start as usize))
        }
        Style::Literal | Style::Folded => {
            // The header line (`|`, `>-`, `|2`) first, then the indented
            // body; the parser's range may start at either. Indentation is
            // left in: it means nothing to the shell.
            let body_start = if written.starts_with(['|', '>']) {
                written.find('\n')? + 1
            } else {
                0
            };
            let base = range.start as usize + body_start;
            let mut snippet = Snippet::from_lines(
                lines(&written[body_start..]).map(|(line, offset)| (line, base + offset)),
            );
            if *style == Style::Folded {
                // Folded lines are one line to the shell; the lengths match.
                snippet.text = snippet.text.replace('\n', " ");
            }
            Some(snippet)
        }
        // A plain scalar over several lines is folded as a quoted one is
        // (`run: docker run --rm` with `--gpus all img` on the next line).
        Style::Plain | Style::DoubleQuoted | Style::SingleQuoted => {
            let Value::Scalar { text: value, .. } = yaml.value(node) else {
                return None;
            };
            let snippet = quoted_snippet(written, range.start as usize, *style);
            // Only when every character maps back to where it is written.
            snippet.filter(|s| s.text == *value)
        }
    }
}

/// A scalar's value exactly, mapped to where each character is written,
/// for text that is no shell script (a workflow container's `options:`,
/// which .NET splits: indentation and line breaks are part of its words).
/// A block scalar's lines lose their indentation and keep the line breaks
/// its chomping keeps; `None` when the text built is not the value (an
/// indentation indicator, folding of more-indented lines).
fn exact_scalar_snippet(yaml: &Yaml, node: NodeId, text: &str) -> Option<Snippet> {
    let Value::Scalar { style, text: value } = yaml.value(node) else {
        return None;
    };
    if !matches!(style, Style::Literal | Style::Folded) {
        return scalar_snippet(yaml, node, text);
    }
    let range = yaml.node(node).range;
    let written = text.get(range.as_range())?;
    let body_start = if written.starts_with(['|', '>']) {
        written.find('\n')? + 1
    } else {
        0
    };
    let base = range.start as usize + body_start;
    // Each line whole, from its start in the host: the parser's range may
    // start after the first line's indentation.
    let body: Vec<(&str, usize)> = lines(&written[body_start..])
        .map(|(line, offset)| {
            let at = base + offset;
            let line_start = text[..at].rfind('\n').map_or(0, |n| n + 1);
            let start = if text[line_start..at].bytes().all(|b| b == b' ') {
                line_start
            } else {
                at
            };
            (&text[start..at + line.len()], start)
        })
        .collect();
    let indent = body
        .iter()
        .find(|(line, _)| !line.trim().is_empty())
        .map_or(0, |(line, _)| {
            line.len() - line.trim_start_matches(' ').len()
        });
    let separator = if *style == Style::Folded { ' ' } else { '\n' };
    let (mut out, mut pieces, mut ends) = (String::new(), Vec::new(), Vec::new());
    let content: Vec<&(&str, usize)> = {
        let last = body.iter().rposition(|(line, _)| !line.trim().is_empty());
        body.iter().take(last.map_or(0, |l| l + 1)).collect()
    };
    for (n, (line, start)) in content.iter().enumerate() {
        if n > 0 {
            out.push(separator);
        }
        let kept = line.get(indent.min(line.len())..).unwrap_or("");
        pieces.push((out.len(), start + (line.len() - kept.len())));
        out.push_str(kept);
        ends.push((out.len(), start + line.len()));
    }
    out.push_str(&"\n".repeat(value.len() - value.trim_end_matches('\n').len()));
    (out == *value).then(|| Snippet::mapped(out, pieces, ends))
}

/// A quoted scalar's value (escapes and line folding undone), each
/// character mapped to where it is written, starting at `base`; `None` for
/// an escape it does not know.
fn quoted_snippet(written: &str, base: usize, style: Style) -> Option<Snippet> {
    let double = style == Style::DoubleQuoted;
    let single = style == Style::SingleQuoted;
    // A plain scalar has no quotes and no escapes, only folding.
    let (inner, base) = if double || single {
        (written.get(1..written.len().checked_sub(1)?)?, base + 1)
    } else {
        (written, base)
    };
    let mut out = MappedText::default();
    let mut i = 0;
    while i < inner.len() {
        let rest = &inner[i..];
        let c = rest.chars().next()?;
        match c {
            '\\' if double => {
                let next = rest[1..].chars().next()?;
                let (decoded, len) = match next {
                    '\n' | '\r' => {
                        // An escaped line break joins the lines.
                        i = skip_line_break_and_indent(inner, i + 1);
                        continue;
                    }
                    'x' | 'u' | 'U' => {
                        let digits = match next {
                            'x' => 2,
                            'u' => 4,
                            _ => 8,
                        };
                        let hex = rest.get(2..2 + digits)?;
                        (
                            char::from_u32(u32::from_str_radix(hex, 16).ok()?)?,
                            2 + digits,
                        )
                    }
                    _ => (unescape(next)?, 1 + next.len_utf8()),
                };
                out.push(decoded, base + i, len);
                i += len;
            }
            '\'' if single && rest.starts_with("''") => {
                out.push('\'', base + i, 2);
                i += 2;
            }
            '\n' | '\r' => {
                // Folding: trailing blanks go, a line break becomes a space,
                // and each empty line after it a newline.
                out.trim_end_blanks();
                let mut j = skip_line_break_and_indent(inner, i);
                let mut empty = 0;
                while j < inner.len() && matches!(inner.as_bytes()[j], b'\n' | b'\r') {
                    empty += 1;
                    j = skip_line_break_and_indent(inner, j);
                }
                if empty == 0 {
                    out.push(' ', base + i, j - i);
                }
                for _ in 0..empty {
                    out.push('\n', base + i, j - i);
                }
                i = j;
            }
            c => {
                out.push(c, base + i, c.len_utf8());
                i += c.len_utf8();
            }
        }
    }
    Some(out.into_snippet())
}

/// The character a YAML double-quoted `\c` escape stands for.
fn unescape(c: char) -> Option<char> {
    Some(match c {
        '0' => '\0',
        'a' => '\x07',
        'b' => '\x08',
        't' | '\t' => '\t',
        'n' => '\n',
        'v' => '\x0b',
        'f' => '\x0c',
        'r' => '\r',
        'e' => '\x1b',
        ' ' => ' ',
        '"' => '"',
        '/' => '/',
        '\\' => '\\',
        'N' => '\u{85}',
        '_' => '\u{a0}',
        'L' => '\u{2028}',
        'P' => '\u{2029}',
        _ => return None,
    })
}

/// Past the line break at `at` and the next line's leading blanks.
fn skip_line_break_and_indent(text: &str, at: usize) -> usize {
    let bytes = text.as_bytes();
    let mut j = at;
    if bytes.get(j) == Some(&b'\r') {
        j += 1;
    }
    if bytes.get(j) == Some(&b'\n') {
        j += 1;
    }
    while matches!(bytes.get(j), Some(b' ' | b'\t')) {
        j += 1;
    }
    j
}

/// Text built character by character, each with its offset in the host.
#[derive(Default)]
struct MappedText {
    text: String,
    hosts: Vec<(usize, usize)>,
    /// After each character written as more or other bytes than it has.
    ends: Vec<(usize, usize)>,
}

impl MappedText {
    /// `c`, written as the `written` bytes at `host`.
    fn push(&mut self, c: char, host: usize, written: usize) {
        self.hosts.push((self.text.len(), host));
        self.text.push(c);
        if written != c.len_utf8() {
            self.ends.push((self.text.len(), host + written));
        }
    }

    fn trim_end_blanks(&mut self) {
        let kept = self.text.trim_end_matches([' ', '\t']).len();
        self.text.truncate(kept);
        self.hosts.retain(|&(at, _)| at < kept);
        self.ends.retain(|&(at, _)| at <= kept);
    }

    /// One piece per run of characters written one after another.
    fn into_snippet(self) -> Snippet {
        let mut pieces: Vec<(usize, usize)> = Vec::new();
        let mut expected = None;
        for (i, &(at, host)) in self.hosts.iter().enumerate() {
            if expected != Some(host) {
                pieces.push((at, host));
            }
            let len = self.hosts.get(i + 1).map_or(self.text.len(), |n| n.0) - at;
            expected = Some(host + len);
        }
        Snippet::mapped(self.text, pieces, self.ends)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::commands;

    fn first_words(snippets: &[Snippet]) -> Vec<String> {
        snippets
            .iter()
            .flat_map(commands)
            .map(|c| {
                c.words
                    .iter()
                    .map(|w| w.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    }

    #[test]
    fn makefile_recipes_lose_their_tabs_and_prefixes() {
        let text = "IMAGE=x\nrun:\n\t@docker run --gpus all \\\n\t  $(IMAGE)\n\techo done\n\nother:\n\t-ls\n";
        let snippets = makefile_recipes(text);
        assert_eq!(
            first_words(&snippets),
            ["docker run --gpus all $(IMAGE)", "echo done", "ls"]
        );
        let docker = &commands(&snippets[0])[0].words[0];
        assert_eq!(&text[docker.range.as_range()], "docker");
    }

    #[test]
    fn markdown_blocks_that_may_be_shell() {
        let text = "# T\n```bash\n$ docker run --gpus all img\n```\n```python\ndocker run x\n```\n  ~~~\n  podman run y\n  ~~~\n";
        let snippets = markdown_code_blocks(text);
        assert_eq!(
            first_words(&snippets),
            ["docker run --gpus all img", "podman run y"]
        );
        let word = &commands(&snippets[0])[0].words[3];
        assert_eq!(&text[word.range.as_range()], "all");
    }

    #[test]
    fn workflow_run_steps_written_as_plain_multi_line_scalars() {
        let text = "jobs:\n  gpu:\n    steps:\n      - run: docker run --rm\n          --gpus all img\n\n          next\n";
        let yaml = Yaml::parse(text).unwrap();
        let snippets = workflow_runs(&yaml, text);
        assert_eq!(snippets[0].text, "docker run --rm --gpus all img\nnext");
        assert_eq!(
            first_words(&snippets),
            ["docker run --rm --gpus all img", "next"]
        );
        let gpus = &commands(&snippets[0])[0].words[3];
        assert_eq!(&text[gpus.range.as_range()], "--gpus");
    }

    #[test]
    fn workflow_run_steps_of_every_scalar_style() {
        let text = "on: push\njobs:\n  gpu:\n    steps:\n      - run: docker run --gpus all a\n      - name: x\n        run: |\n          echo hi\n          docker run \\\n            --gpus all b\n      - run: >\n          docker run\n          --gpus all c\n";
        let yaml = Yaml::parse(text).unwrap();
        let snippets = workflow_runs(&yaml, text);
        assert_eq!(
            first_words(&snippets),
            [
                "docker run --gpus all a",
                "echo hi",
                "docker run --gpus all b",
                "docker run --gpus all c"
            ]
        );
        assert_eq!(
            snippets[1].yaml_path.as_deref().unwrap(),
            ["jobs", "gpu", "steps", "1", "run"]
        );
        let b = &commands(&snippets[1])[1].words[4];
        assert_eq!(&text[b.range.as_range()], "b");
    }

    #[test]
    fn quoted_run_steps_map_through_escapes_and_folding() {
        let text = "jobs:\n  gpu:\n    steps:\n      - run: \"docker run --gpus all -e \\\"A=1\\\" \\x69mg\"\n      - run: 'docker run --gpus all -e ''B=2''\n          img2'\n";
        let yaml = Yaml::parse(text).unwrap();
        let snippets = workflow_runs(&yaml, text);
        assert_eq!(
            first_words(&snippets),
            [
                "docker run --gpus all -e A=1 img",
                "docker run --gpus all -e B=2 img2"
            ]
        );
        let first = &commands(&snippets[0])[0].words;
        assert_eq!(&text[first[3].range.as_range()], "all");
        assert_eq!(&text[first[5].range.as_range()], "\\\"A=1\\\"");
        let second = &commands(&snippets[1])[0].words;
        assert_eq!(&text[second[5].range.as_range()], "''B=2''");
        assert_eq!(&text[second[6].range.as_range()], "img2");
    }

    /// A workflow container's `options:` is its value exactly: block
    /// scalars lose their indentation and keep what their chomping keeps.
    #[test]
    fn workflow_container_options_are_their_value_exactly() {
        let options = |written: &str| {
            let text = format!(
                "jobs:\n  t:\n    container:\n      image: x\n      options: {written}\n    steps: []\n"
            );
            let yaml = Yaml::parse(&text).unwrap();
            let container = workflow_containers(&yaml, &text).remove(0);
            container.options.map(|s| {
                let words: Vec<String> = crate::argv::dotnet_words(&s)
                    .iter()
                    .map(|w| text[w.range.as_range()].to_string())
                    .collect();
                (s.text, words)
            })
        };
        let (text, written) = options("|-\n        --shm-size 1g\n        --ipc host").unwrap();
        assert_eq!(text, "--shm-size 1g\n--ipc host");
        assert_eq!(written, ["--shm-size", "1g\n        --ipc", "host"]);
        let (text, _) = options("|\n        --shm-size 1g\n        --ipc host").unwrap();
        assert_eq!(text, "--shm-size 1g\n--ipc host\n");
        let (text, _) = options(">\n        --shm-size 1g\n        --ipc host").unwrap();
        assert_eq!(text, "--shm-size 1g --ipc host\n");
        // A plain scalar's quotes are characters of its value.
        let (text, _) = options("--gpus '\"device=0,1\"'").unwrap();
        assert_eq!(text, "--gpus '\"device=0,1\"'");
        // More-indented lines keep their line breaks when folded: not built.
        assert!(options(">\n        --shm-size 1g\n          --ipc host").is_none());
    }

    #[test]
    fn workflow_container_env_with_its_removal() {
        let text = "jobs:\n  a:\n    container:\n      image: x\n      env:\n        NCCL_P2P_DISABLE: 1\n        EMPTY:\n    services:\n      s:\n        image: y\n        env:\n          ONLY: \"v\"\n";
        let yaml = Yaml::parse(text).unwrap();
        let containers = workflow_containers(&yaml, text);
        let env = &containers[0].env;
        assert_eq!(
            env.iter()
                .map(|e| (e.name.as_str(), e.value.as_deref()))
                .collect::<Vec<_>>(),
            [("NCCL_P2P_DISABLE", Some("1")), ("EMPTY", None)]
        );
        assert_eq!(&text[env[0].range.as_range()], "NCCL_P2P_DISABLE: 1");
        let removed = |edit: &Edit| {
            let mut fixed = text.to_string();
            fixed.replace_range(edit.range.as_range(), &edit.content);
            fixed
        };
        let fixed = removed(env[0].removal.as_ref().unwrap());
        assert!(!fixed.contains("NCCL_P2P_DISABLE") && fixed.contains("EMPTY:"));
        // The only entry goes with its `env:`.
        let fixed = removed(containers[1].env[0].removal.as_ref().unwrap());
        assert!(
            !fixed.contains("ONLY") && !fixed.contains("          env:"),
            "{fixed}"
        );
        // An alias may share the mapping with another container: no edit.
        let shared =
            "x: &e {A: \"1\"}\njobs:\n  a:\n    container:\n      image: x\n      env: *e\n";
        let yaml = Yaml::parse(shared).unwrap();
        let env = &workflow_containers(&yaml, shared)[0].env;
        assert_eq!(env[0].value.as_deref(), Some("1"));
        assert!(env[0].removal.is_none());
    }
}
