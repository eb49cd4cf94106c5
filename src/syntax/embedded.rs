//! Shell text inside other files: Makefile recipes, Markdown code blocks and
//! GitHub Actions `run:` steps, each as a [`Snippet`] that maps back to the
//! host file.

use super::shell::Snippet;
use super::yaml::{Style, Value, Yaml};

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
                snippets.push(Snippet::from_lines(recipe.drain(..)));
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
        snippets.push(Snippet::from_lines(recipe));
    }
    snippets
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
    for document in &yaml.documents {
        let Some(root) = document.root else { continue };
        let Some(jobs) = yaml.get(root, "jobs") else {
            continue;
        };
        for job in yaml.entries(jobs.value) {
            let Some(job_name) = yaml.str(job.key) else {
                continue;
            };
            let Some(steps) = yaml.get(job.value, "steps") else {
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
                    snippets.push(snippet);
                }
            }
        }
    }
    snippets
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
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::shell::commands;

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
}
