//! DF003: a PyTorch build for another accelerator installed into a GPU image
//! (a CPU-only wheel into a CUDA image, a ROCm wheel into a CUDA image, ...).

use crate::diagnostic::Severity;
use crate::model::dockerfile::BaseImage;
use crate::model::dockerfile_scope::{Scope, walk_stage};
use crate::model::workload::Accelerator;
use crate::syntax::dockerfile::{Args, Instruction};
use crate::syntax::shell_script::{BlockKind, ShellScript};
use crate::text::TextRange;
use crate::{Check, DockerfileContext, Reporter};
use foldhash::{HashMap, HashMapExt};

crate::declare_rule! {
    name: "torch-wheel-accelerator-mismatch",
    severity: Warning,
    fix: None,
    summary: "PyTorch build for another accelerator installed into a CUDA or ROCm image",
    sources: [
        "PyTorch installation matrix (download.pytorch.org/whl/<variant>)",
        "uv docs, --torch-backend",
        "Dockerfile reference: ARG scope, using ARG variables, ENV overriding ARG (https://docs.docker.com/reference/dockerfile/#arg)",
    ],
}

pub const CHECK: Check = Check::dockerfile(check);

/// What a PyTorch build targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Build {
    Cpu,
    Cuda,
    Rocm,
}

impl Build {
    /// `cpu`, `cu121`, `rocm6.0` (a wheel index, local version or uv backend).
    fn of_variant(variant: &str) -> Option<Build> {
        let v = variant.to_ascii_lowercase();
        if v == "cpu" || v == "cpu-cxx11-abi" {
            Some(Build::Cpu)
        } else if v.starts_with("rocm") {
            Some(Build::Rocm)
        } else if v
            .strip_prefix("cu")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        {
            Some(Build::Cuda)
        } else {
            None
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Build::Cpu => "a CPU-only PyTorch build",
            Build::Cuda => "a CUDA PyTorch build",
            Build::Rocm => "a ROCm PyTorch build",
        }
    }

    fn matches(self, accelerator: Accelerator) -> bool {
        matches!(
            (self, accelerator),
            (Build::Cuda, Accelerator::Cuda) | (Build::Rocm, Accelerator::Rocm)
        )
    }
}

/// A marker of a PyTorch build: where it is (offsets in the scanned text).
struct Marker {
    build: Build,
    start: usize,
    end: usize,
}

const WHEEL_INDEX: &str = "download.pytorch.org/whl/";

/// Finds PyTorch build markers in a shell script: wheel index URLs and
/// `--torch-backend` in install commands, `torch==x+cpu` pins, conda's
/// `cpuonly`.
fn markers(script: &str) -> Vec<Marker> {
    let mut found = Vec::new();
    // Every marker names torch (the wheel index is download.pytorch.org)
    // or conda's `cpuonly`: most scripts name neither.
    let lower = script.to_ascii_lowercase();
    if !lower.contains("torch") && !lower.contains("cpuonly") {
        return found;
    }
    let mut segment_start = 0;
    let bytes = script.as_bytes();
    let mut i = 0;
    while i <= script.len() {
        let boundary = i == script.len()
            || matches!(bytes[i], b'\n' | b';' | b'|')
            // Bytes, not `script[i..]`: `i` steps through multi-byte characters.
            || bytes[i..].starts_with(b"&&");
        if boundary {
            scan_command(script, segment_start, i, &mut found);
            segment_start = i + 1;
        }
        i += 1;
    }
    found
}

fn scan_command(script: &str, start: usize, end: usize, found: &mut Vec<Marker>) {
    let command = &script[start..end];
    let lower = command.to_ascii_lowercase();
    let words: Vec<(usize, &str)> = word_offsets(&lower);
    let installs = words
        .iter()
        .any(|(_, w)| *w == "install" || *w == "add" || *w == "sync");
    if !installs {
        return;
    }
    let conda = words
        .iter()
        .any(|(_, w)| matches!(*w, "conda" | "mamba" | "micromamba"));
    let names_index = lower.contains(WHEEL_INDEX);
    for (k, &(at, word)) in words.iter().enumerate() {
        let word_trimmed = word.trim_matches(['"', '\'']);
        let quote = word.len() - word.trim_start_matches(['"', '\'']).len();
        let abs = start + at + quote;
        if let Some(i) = word_trimmed.find(WHEEL_INDEX).filter(|_| names_index) {
            let rest = &word_trimmed[i + WHEEL_INDEX.len()..];
            let rest = rest
                .strip_prefix("nightly/")
                .or_else(|| rest.strip_prefix("test/"))
                .unwrap_or(rest);
            let variant: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '-')
                .collect();
            if let Some(build) = Build::of_variant(&variant) {
                found.push(Marker {
                    build,
                    start: abs,
                    end: abs + word_trimmed.len(),
                });
            }
            continue;
        }
        if word_trimmed.starts_with("torch")
            && let Some((_, local)) = word_trimmed.split_once('+')
        {
            let variant: String = local
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '.')
                .collect();
            if let Some(build) = Build::of_variant(&variant) {
                found.push(Marker {
                    build,
                    start: abs,
                    end: abs + word_trimmed.len(),
                });
            }
            continue;
        }
        let backend = word_trimmed.strip_prefix("--torch-backend=").or_else(|| {
            (word_trimmed == "--torch-backend").then(|| words.get(k + 1).map_or("", |w| w.1))
        });
        if let Some(variant) = backend
            && let Some(build) = Build::of_variant(variant.trim_matches(['"', '\'']))
        {
            found.push(Marker {
                build,
                start: abs,
                end: abs + word_trimmed.len(),
            });
            continue;
        }
        if conda && word_trimmed == "cpuonly" {
            found.push(Marker {
                build: Build::Cpu,
                start: abs,
                end: abs + word_trimmed.len(),
            });
        }
    }
}

fn word_offsets(text: &str) -> Vec<(usize, &str)> {
    let mut words = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (start, c.is_whitespace()) {
            (None, false) => start = Some(i),
            (Some(s), true) => {
                words.push((s, &text[s..i]));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        words.push((s, &text[s..]));
    }
    words
}

/// The variable references in a shell text: `$NAME` and `${NAME...}`, with
/// their spans.
fn references(text: &str) -> Vec<(&str, usize, usize)> {
    let bytes = text.as_bytes();
    let is_name = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'$' || (i > 0 && bytes[i - 1] == b'\\') {
            i += 1;
            continue;
        }
        let braced = bytes.get(i + 1) == Some(&b'{');
        let name_start = i + 1 + usize::from(braced);
        let name_end = (name_start..bytes.len())
            .find(|&j| !is_name(bytes[j]))
            .unwrap_or(bytes.len());
        if name_end == name_start {
            i += 1;
            continue;
        }
        let end = if braced {
            let mut depth = 0;
            (i + 1..bytes.len())
                .find(|&j| {
                    match bytes[j] {
                        b'{' => depth += 1,
                        b'}' => depth -= 1,
                        _ => {}
                    }
                    depth == 0
                })
                .map_or(bytes.len(), |j| j + 1)
        } else {
            name_end
        };
        out.push((&text[name_start..name_end], i, end));
        i = end;
    }
    out
}

/// A build chosen through variables: markers that appear in `text` once
/// the variables in `scope` are expanded (as the shell of a `RUN` expands
/// the `ARG` and `ENV` values BuildKit passes it), and not before. Each
/// comes with the span (in `text`) of the reference that brings it in and
/// the variable's instruction.
fn expanded_markers(text: &str, scope: &Scope) -> Vec<(Build, (usize, usize), Option<usize>)> {
    if !text.contains('$') {
        return Vec::new();
    }
    let (expanded, _) = scope.expand(text);
    let mut extra: Vec<Build> = markers(&expanded).iter().map(|m| m.build).collect();
    for m in markers(text) {
        if let Some(i) = extra.iter().position(|b| *b == m.build) {
            extra.remove(i);
        }
    }
    let refs = references(text);
    extra
        .into_iter()
        .map(|build| {
            let source = refs.iter().find_map(|&(name, start, end)| {
                let variable = scope.get(name)?;
                let value = variable.value.as_deref()?;
                let chooses = markers(&format!("pip install {value}"))
                    .iter()
                    .any(|m| m.build == build);
                chooses.then_some(((start, end), Some(variable.instruction)))
            });
            let (span, instruction) = source.unwrap_or(((0, text.len()), None));
            (build, span, instruction)
        })
        .collect()
}

/// Environment variables that point pip or uv at a PyTorch build.
fn env_build(name: &str, value: &str) -> Option<Build> {
    match name {
        "UV_TORCH_BACKEND" => Build::of_variant(value.trim()),
        "PIP_INDEX_URL"
        | "PIP_EXTRA_INDEX_URL"
        | "PIP_FIND_LINKS"
        | "UV_INDEX_URL"
        | "UV_EXTRA_INDEX_URL"
        | "UV_DEFAULT_INDEX"
        | "UV_INDEX" => {
            let at = value.find(WHEEL_INDEX)? + WHEEL_INDEX.len();
            let rest = &value[at..];
            let rest = rest.strip_prefix("nightly/").unwrap_or(rest);
            let variant: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '.')
                .collect();
            Build::of_variant(&variant)
        }
        _ => None,
    }
}

/// Whether `offset` of a shell script is inside an `if`/`else` branch or a
/// `case` arm: what is there runs only when the branch is taken.
fn in_branch(shell: &ShellScript, offset: usize) -> bool {
    let mut at = shell.block_at(offset);
    while let Some(i) = at {
        let block = &shell.blocks[i];
        if matches!(
            block.kind,
            BlockKind::Then | BlockKind::Else | BlockKind::CaseArm
        ) {
            return true;
        }
        at = block.parent;
    }
    false
}

/// One PyTorch build a stage installs, and where it is named.
struct Install {
    build: Build,
    range: TextRange,
    /// The `ARG` or `ENV` instruction whose value names the build.
    source: Option<usize>,
    /// The install runs only in one branch of the script
    /// (`if [ "$framework" = "jax" ]; then ...`).
    conditional: bool,
}

fn check(cx: &DockerfileContext, out: &mut Reporter) {
    for stage in 0..cx.model.stages.len() {
        let Some(base) = cx.model.base(stage, &HashMap::new()) else {
            continue;
        };
        let Some(accelerator) = base.accelerator() else {
            continue;
        };
        for install in installs(cx, stage) {
            if !install.build.matches(accelerator) {
                report(cx, out, stage, &base, accelerator, install);
            }
        }
    }
}

/// Every PyTorch build the stage's `RUN` scripts and `ENV` values name.
fn installs(cx: &DockerfileContext, stage: usize) -> Vec<Install> {
    let mut found = Vec::new();
    walk_stage(cx.model, stage, |index, scope| {
        let instruction = cx.model.instruction(index);
        match instruction.keyword.as_str() {
            "RUN" => run_installs(instruction, scope, &mut found),
            "ENV" => env_installs(instruction, scope, &mut found),
            _ => {}
        }
    });
    found
}

/// The builds a `RUN` installs, in its shell or exec form and its
/// here-documents. A build named through an `ARG` or `ENV` value comes with
/// the instruction that sets it.
fn run_installs(instruction: &Instruction, scope: &Scope, found: &mut Vec<Install>) {
    match &instruction.args {
        Args::Shell(_) => {
            let text = instruction.args_text();
            let shell = ShellScript::read(text, 0);
            for m in markers(text) {
                found.push(Install {
                    build: m.build,
                    range: instruction.args_range(m.start, m.end),
                    source: None,
                    conditional: in_branch(&shell, m.start),
                });
            }
            for (build, (start, end), source) in expanded_markers(text, scope) {
                found.push(Install {
                    build,
                    range: instruction.args_range(start, end),
                    source,
                    conditional: in_branch(&shell, start),
                });
            }
        }
        Args::Exec(words) => {
            let script: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
            for m in markers(&script.join(" ")) {
                let range = words
                    .iter()
                    .map(|w| w.range)
                    .reduce(|a, b| a.cover(b))
                    .unwrap_or(instruction.range);
                found.push(Install {
                    build: m.build,
                    range,
                    source: None,
                    conditional: false,
                });
            }
        }
    }
    for heredoc in &instruction.heredocs {
        let at = heredoc.body.range.start as usize;
        let shell = ShellScript::read(&heredoc.body.text, 0);
        for m in markers(&heredoc.body.text) {
            found.push(Install {
                build: m.build,
                range: TextRange::new(at + m.start, at + m.end),
                source: None,
                conditional: in_branch(&shell, m.start),
            });
        }
        for (build, (start, end), source) in expanded_markers(&heredoc.body.text, scope) {
            found.push(Install {
                build,
                range: TextRange::new(at + start, at + end),
                source,
                conditional: in_branch(&shell, start),
            });
        }
    }
}

/// The builds an `ENV` names (`PIP_INDEX_URL=.../whl/cpu`, `UV_TORCH_BACKEND`), directly or
/// through a variable it expands.
fn env_installs(instruction: &Instruction, scope: &Scope, found: &mut Vec<Install>) {
    for pair in instruction.key_values() {
        let Some(value) = &pair.value else { continue };
        if let Some(build) = env_build(&pair.key.text, &value.text) {
            found.push(Install {
                build,
                range: pair.range,
                source: None,
                conditional: false,
            });
        } else if value.text.contains('$')
            && let Some(build) = env_build(&pair.key.text, &scope.expand(&value.text).0)
        {
            let source = references(&value.text)
                .iter()
                .find_map(|(name, _, _)| scope.get(name))
                .map(|v| v.instruction);
            found.push(Install {
                build,
                range: pair.range,
                source,
                conditional: false,
            });
        }
    }
}

fn report(
    cx: &DockerfileContext,
    out: &mut Reporter,
    stage: usize,
    base: &BaseImage,
    accelerator: Accelerator,
    install: Install,
) {
    let Install {
        build,
        range,
        source,
        conditional,
    } = install;
    let (image_kind, consequence) = match accelerator {
        Accelerator::Cuda => (
            "CUDA",
            "`torch.cuda.is_available()` is False and training runs on the CPU, or fails with `Torch not compiled with CUDA enabled`",
        ),
        Accelerator::Rocm => (
            "ROCm",
            "`torch.cuda.is_available()` is False on the AMD GPUs and training runs on the CPU",
        ),
    };
    let mut finding = out
        .report(
            range,
            format!(
                "{} is installed into the {image_kind} image `{}`",
                build.describe(),
                base.image
            ),
        )
        .label(format!(
            "{} in {}",
            build.describe(),
            cx.describe_stage(stage)
        ))
        .related(base.range, format!("the {image_kind} base image"));
    if let Some(source) = source {
        let instruction = cx.model.instruction(source);
        finding = finding.related(
            instruction.range,
            format!(
                "the `{}` value the build expands there",
                instruction.keyword
            ),
        );
    }
    // In one branch of the script (a build argument picks the
    // framework), the other builds may be the GPU ones: it informs.
    if conditional {
        finding = finding.severity(Severity::Info).label(format!(
            "{} in {}, in one branch of the `RUN` script: the image gets it only when the build takes that branch",
            build.describe(),
            cx.describe_stage(stage)
        ));
    }
    finding
        .note(format!("the GPUs in the container go unused: {consequence}"))
        .help(match accelerator {
            Accelerator::Cuda => "install the CUDA build whose version the base image supports (`--index-url https://download.pytorch.org/whl/cu124`, or the default PyPI wheel), or start from a CPU base image if no GPU is meant",
            Accelerator::Rocm => "install the ROCm build (`--index-url https://download.pytorch.org/whl/rocm6.2`), or start from a CPU base image if no GPU is meant",
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builds(script: &str) -> Vec<(Build, &str)> {
        markers(script)
            .iter()
            .map(|m| (m.build, &script[m.start..m.end]))
            .collect()
    }

    #[test]
    fn finds_wheel_indexes_pins_backends_and_cpuonly() {
        assert_eq!(
            builds(
                "apt-get update && pip install torch --index-url https://download.pytorch.org/whl/cpu"
            ),
            [(Build::Cpu, "https://download.pytorch.org/whl/cpu")]
        );
        assert_eq!(
            builds("pip3 install \"torch==2.3.1+cu121\""),
            [(Build::Cuda, "torch==2.3.1+cu121")]
        );
        assert_eq!(
            builds("uv pip install torch --torch-backend=cpu"),
            [(Build::Cpu, "--torch-backend=cpu")]
        );
        assert_eq!(
            builds("conda install -y pytorch cpuonly -c pytorch"),
            [(Build::Cpu, "cpuonly")]
        );
        assert_eq!(
            builds(
                "pip install --pre torch -f https://download.pytorch.org/whl/nightly/rocm6.2/torch"
            ),
            [(
                Build::Rocm,
                "https://download.pytorch.org/whl/nightly/rocm6.2/torch"
            )]
        );
    }

    #[test]
    fn ignores_urls_outside_install_commands() {
        assert!(
            builds("echo https://download.pytorch.org/whl/cpu > note; pip install numpy")
                .is_empty()
        );
        assert!(builds("pip install torch").is_empty());
    }

    #[test]
    fn variable_references_and_their_spans() {
        let text = "pip install ${SPEC} $EXTRA \\$NOT ${A:-${B}}x $1";
        let refs: Vec<&str> = references(text)
            .iter()
            .map(|&(name, start, end)| {
                assert!(text[start..end].contains(name));
                name
            })
            .collect();
        assert_eq!(refs, ["SPEC", "EXTRA", "A", "1"]);
    }

    #[test]
    fn non_ascii_text_is_scanned_without_panicking() {
        // `→` is three bytes; the boundary scan steps byte by byte through it.
        assert_eq!(
            builds(
                "echo \"→ done\" && pip install torch --index-url https://download.pytorch.org/whl/cpu"
            ),
            [(Build::Cpu, "https://download.pytorch.org/whl/cpu")]
        );
    }
}
