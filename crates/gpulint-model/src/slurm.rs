//! A SLURM batch script: its `#SBATCH` directives (the ones sbatch reads,
//! and the ones it ignores), the resources they ask for, and the
//! distributed launches in its body.
//!
//! A file may hold several: its own, and the here-documents it gives
//! sbatch (`sbatch <<EOF`) or writes out as batch scripts (`cat <<EOF >
//! job.sbatch`), each a job of its own with its own directives and first
//! command. A launch belongs to the innermost one whose text holds it, and
//! knows the branches it sits in (`BranchPath`): a launch in the `else` of
//! `if [ "$SLURM_NNODES" -gt 1 ]` never runs on several nodes.

use crate::syntax::shell::{Command, Word};
use crate::syntax::shell_script::{BlockKind, ShellScript};
use crate::text::TextRange;

/// One `#SBATCH` option.
#[derive(Debug, Clone)]
pub struct Directive {
    /// The long name (`--nodes` for `-N`).
    pub name: String,
    pub value: Option<String>,
    /// The option as written, without a trailing comment.
    pub range: TextRange,
    /// The whole `#SBATCH` line.
    pub line: TextRange,
    /// After the first command: sbatch stops reading directives there.
    pub ignored: bool,
    /// In an unquoted here-document: the shell expands `$…` in the line
    /// before sbatch reads it (only an escaped `\$` reaches sbatch).
    pub expanded: bool,
}

/// Short options of sbatch that take a value, and their long names.
const SHORT: &[(&str, &str)] = &[
    ("-N", "--nodes"),
    ("-n", "--ntasks"),
    ("-G", "--gpus"),
    ("-c", "--cpus-per-task"),
    ("-J", "--job-name"),
    ("-o", "--output"),
    ("-e", "--error"),
    ("-p", "--partition"),
    ("-t", "--time"),
    ("-A", "--account"),
    ("-C", "--constraint"),
    ("-w", "--nodelist"),
];

#[derive(Debug, Clone, Default)]
pub struct BatchScript {
    pub directives: Vec<Directive>,
    /// The text sbatch reads as this script: the whole file, or a
    /// here-document's body.
    pub scope: TextRange,
    /// The here-document operator whose body this is (`None`: the file).
    pub heredoc: Option<TextRange>,
}

/// Where a batch script's text is in a file.
#[derive(Debug, Clone, Copy, Default)]
pub struct Scope<'a> {
    pub range: TextRange,
    /// Here-document bodies inside it: another script's text, never this
    /// one's directives.
    pub excluded: &'a [TextRange],
    /// An unquoted here-document: expanded by the shell first.
    pub expanded: bool,
    /// `<<-`: the shell removes leading tabs first.
    pub strip_tabs: bool,
    pub heredoc: Option<TextRange>,
}

impl BatchScript {
    /// The directives of a whole file; `None` when it has none.
    pub fn parse(text: &str) -> Option<BatchScript> {
        let script = Self::read(
            text,
            Scope {
                range: TextRange::new(0, text.len()),
                ..Scope::default()
            },
        );
        (!script.directives.is_empty()).then_some(script)
    }

    /// The directives in `scope` of `text`, read line by line as sbatch
    /// reads its script: until the first line that is neither blank nor a
    /// comment, and the ones after it marked ignored.
    pub fn read(text: &str, scope: Scope) -> BatchScript {
        let mut script = BatchScript {
            scope: scope.range,
            heredoc: scope.heredoc,
            ..BatchScript::default()
        };
        let Some(body) = text.get(scope.range.as_range()) else {
            return script;
        };
        if !body.contains("#SBATCH") {
            return script;
        }
        let mut commands_started = false;
        let mut offset = scope.range.start as usize;
        let mut excluded = scope.excluded.iter().peekable();
        for raw in body.split_inclusive('\n') {
            let mut start = offset;
            offset += raw.len();
            while excluded
                .next_if(|r| (r.end as usize) <= start && !r.contains(start))
                .is_some()
            {}
            if excluded.peek().is_some_and(|r| r.contains(start)) {
                continue;
            }
            let mut line = raw.trim_end_matches(['\n', '\r']);
            if scope.strip_tabs {
                let tabs = line.len() - line.trim_start_matches('\t').len();
                (line, start) = (&line[tabs..], start + tabs);
            }
            if let Some(rest) = line.strip_prefix("#SBATCH") {
                let line_range = TextRange::new(start, start + line.len());
                let at = script.directives.len();
                script.read_line(rest, start + "#SBATCH".len(), line_range, commands_started);
                for directive in &mut script.directives[at..] {
                    directive.expanded = scope.expanded;
                }
                continue;
            }
            let trimmed = line.trim();
            if !trimmed.is_empty() && !trimmed.starts_with('#') {
                commands_started = true;
            }
        }
        script
    }

    fn read_line(&mut self, rest: &str, offset: usize, line: TextRange, ignored: bool) {
        // Options end at a comment: `#SBATCH --nodes=4 # number of nodes`.
        let options = match rest.find(" #").or_else(|| rest.find("\t#")) {
            Some(end) => &rest[..end],
            None => rest,
        };
        let mut words = Vec::new();
        let mut at = 0;
        for part in options.split([' ', '\t']) {
            if !part.is_empty() {
                words.push((part, offset + at));
            }
            at += part.len() + 1;
        }
        let mut i = 0;
        while i < words.len() {
            let (word, start) = words[i];
            let range =
                |end_word: (&str, usize)| TextRange::new(start, end_word.1 + end_word.0.len());
            if let Some((name, value)) = word.split_once('=').filter(|_| word.starts_with("--")) {
                self.push(name, Some(value), range(words[i]), line, ignored);
                i += 1;
            } else if let Some((_, long)) = SHORT.iter().find(|(s, _)| word.starts_with(s)) {
                if word.len() > 2 {
                    self.push(long, Some(&word[2..]), range(words[i]), line, ignored);
                    i += 1;
                } else if let Some(&next) = words.get(i + 1) {
                    self.push(long, Some(next.0), range(next), line, ignored);
                    i += 2;
                } else {
                    self.push(long, None, range(words[i]), line, ignored);
                    i += 1;
                }
            } else if word.starts_with("--")
                && let Some(&next) = words.get(i + 1).filter(|w| !w.0.starts_with('-'))
            {
                // `--nodes 4`: sbatch accepts a separate value for options that take one.
                self.push(word, Some(next.0), range(next), line, ignored);
                i += 2;
            } else {
                self.push(word, None, range(words[i]), line, ignored);
                i += 1;
            }
        }
    }

    fn push(
        &mut self,
        name: &str,
        value: Option<&str>,
        range: TextRange,
        line: TextRange,
        ignored: bool,
    ) {
        self.directives.push(Directive {
            name: name.to_string(),
            value: value.map(str::to_string),
            range,
            line,
            ignored,
            expanded: false,
        });
    }

    /// The last directive sbatch reads with this name.
    pub fn get(&self, name: &str) -> Option<&Directive> {
        self.directives
            .iter()
            .rfind(|d| !d.ignored && d.name == name)
    }

    /// A directive's value as a count; `None` when absent, a range
    /// (`--nodes=2-4`) or not a number.
    pub fn count(&self, name: &str) -> Option<u64> {
        self.get(name)?.value.as_deref()?.parse().ok()
    }

    /// GPUs per node, when the directives say it for certain:
    /// `--gpus-per-node`, `--gres=gpu:N`, `--gpus-per-task` times
    /// `--ntasks-per-node`, or `--gpus` on one node.
    pub fn gpus_per_node(&self) -> Option<(u64, &Directive)> {
        let count = |value: &str| value.rsplit(':').next()?.parse::<u64>().ok();
        if let Some(d) = self.get("--gpus-per-node") {
            return Some((count(d.value.as_deref()?)?, d));
        }
        if let Some(d) = self.get("--gres") {
            let gpu = d
                .value
                .as_deref()?
                .split(',')
                .find(|g| g.starts_with("gpu"))?;
            return Some((count(gpu).unwrap_or(1), d));
        }
        if let Some(d) = self.get("--gpus-per-task") {
            let per_task = count(d.value.as_deref()?)?;
            return Some((per_task * self.count("--ntasks-per-node")?, d));
        }
        if let Some(d) = self.get("--gpus")
            && self.count("--nodes") == Some(1)
        {
            return Some((count(d.value.as_deref()?)?, d));
        }
        None
    }

    /// Whether the job asks for GPUs at all.
    pub fn requests_gpus(&self) -> bool {
        [
            "--gpus",
            "--gpus-per-node",
            "--gpus-per-task",
            "--gpus-per-socket",
        ]
        .iter()
        .any(|n| self.get(n).is_some())
            || self
                .get("--gres")
                .and_then(|d| d.value.as_deref())
                .is_some_and(|v| v.split(',').any(|g| g.starts_with("gpu")))
    }
}

/// A `torchrun` (or `python -m torch.distributed.run`) launch.
#[derive(Debug, Clone)]
pub struct TorchLaunch {
    /// The `torchrun` word (or `torch.distributed.run`).
    pub launcher: Word,
    /// `--nproc-per-node` and the word holding its value.
    pub nproc_per_node: Option<(String, Word)>,
    pub nnodes: Option<String>,
    /// `--rdzv-endpoint`, `--master-addr` or `--standalone` is given.
    pub has_rendezvous: bool,
    /// `--rdzv-endpoint` or `--master-addr`: where the nodes meet.
    pub endpoint: bool,
    /// Some of its arguments come from an array or a variable that may hold
    /// any option: what is missing may be there.
    pub opaque_arguments: bool,
    pub range: TextRange,
    /// The branches it runs in, innermost first.
    pub branches: Vec<BranchPath>,
}

/// A branch a command sits in: when it runs, as far as the node count
/// decides it, and its sibling branches.
#[derive(Debug, Clone, Default)]
pub struct BranchPath {
    /// Node-count tests that must each come out as given for the branch to
    /// run (an `else`'s are its siblings' conditions, false): each a set
    /// of alternatives, any of which makes it true.
    pub known: Vec<(Vec<NodeTest>, bool)>,
    /// Some condition on the way is not a node-count test gpulint reads.
    pub unknown: bool,
    /// The other branches of the same `if` or `case`.
    pub siblings: Vec<TextRange>,
}

/// A comparison of the job's node count with a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeTest {
    pub op: NodeOp,
    pub value: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeOp {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
    /// A `case` pattern `*`.
    Any,
}

impl NodeTest {
    pub fn holds(self, nodes: u64) -> bool {
        let v = self.value;
        match self.op {
            NodeOp::Eq => nodes == v,
            NodeOp::Ne => nodes != v,
            NodeOp::Gt => nodes > v,
            NodeOp::Ge => nodes >= v,
            NodeOp::Lt => nodes < v,
            NodeOp::Le => nodes <= v,
            NodeOp::Any => true,
        }
    }
}

impl BranchPath {
    /// Whether the branch can run on a job of `nodes` nodes, as far as
    /// its known tests say.
    pub(crate) fn runs_with(&self, nodes: u64) -> bool {
        self.known
            .iter()
            .all(|(any, must)| any.iter().any(|t| t.holds(nodes)) == *must)
    }
}

/// Whether a command in `branches` can run with more than one node: some
/// node count above 1 passes every known test. Counts are tried around
/// each number the tests name, which is where their answers change.
pub fn runs_on_several_nodes(branches: &[BranchPath]) -> bool {
    let mut candidates = vec![2u64];
    for path in branches {
        for (tests, _) in &path.known {
            for t in tests {
                for n in [
                    t.value.saturating_sub(1),
                    t.value,
                    t.value.saturating_add(1),
                ] {
                    if n > 1 {
                        candidates.push(n);
                    }
                }
            }
        }
    }
    candidates
        .iter()
        .any(|&n| branches.iter().all(|path| path.runs_with(n)))
}

/// Variables that hold the job's node count: SLURM's own, and those the
/// script assigns from them and nothing else (`NNODES=${SLURM_NNODES:-1}`).
#[derive(Debug, Clone, Default)]
pub(crate) struct NodeVariables {
    names: Vec<String>,
}

const SLURM_NODE_COUNTS: &[&str] = &["SLURM_NNODES", "SLURM_JOB_NUM_NODES"];

impl NodeVariables {
    pub fn read<'a>(commands: impl Iterator<Item = &'a Command> + Clone) -> NodeVariables {
        let mut names: Vec<String> = SLURM_NODE_COUNTS.iter().map(|s| s.to_string()).collect();
        // One round per level of aliasing is plenty: two.
        for _ in 0..2 {
            let mut verdicts: Vec<(String, bool)> = Vec::new();
            for word in commands.clone().flat_map(|c| c.words.iter()) {
                let Some(name) = word.assigned_name() else {
                    continue;
                };
                if SLURM_NODE_COUNTS.contains(&name) {
                    continue;
                }
                let value = &word.text[name.len() + 1..];
                let ok = referenced(value).is_some_and(|r| names.iter().any(|n| n == r));
                match verdicts.iter_mut().find(|(n, _)| n == name) {
                    Some((_, all)) => *all &= ok,
                    None => verdicts.push((name.to_string(), ok)),
                }
            }
            for (name, ok) in verdicts {
                if ok && !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        NodeVariables { names }
    }

    fn holds_nodes(&self, word: &str) -> bool {
        referenced(word).is_some_and(|r| self.names.iter().any(|n| n == r))
    }

    /// A test of the node count: `[ "$SLURM_NNODES" -gt 1 ]`, `[[ $N -eq 1
    /// ]]`, `test 1 -lt "${NNODES:-1}"`, negated with `!`.
    fn test(&self, words: &[Word]) -> Option<(NodeTest, bool)> {
        let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
        let (negated, texts) = match texts.split_first() {
            Some((&"!", rest)) => (true, rest),
            _ => (false, &texts[..]),
        };
        let inner = match texts {
            ["[", inner @ .., "]"] | ["[[", inner @ .., "]]"] | ["test", inner @ ..] => inner,
            _ => return None,
        };
        let [a, op, b] = inner else {
            return None;
        };
        let op = match *op {
            "-eq" | "=" | "==" => NodeOp::Eq,
            "-ne" | "!=" => NodeOp::Ne,
            "-gt" => NodeOp::Gt,
            "-ge" => NodeOp::Ge,
            "-lt" => NodeOp::Lt,
            "-le" => NodeOp::Le,
            _ => return None,
        };
        let flip = |op| match op {
            NodeOp::Gt => NodeOp::Lt,
            NodeOp::Ge => NodeOp::Le,
            NodeOp::Lt => NodeOp::Gt,
            NodeOp::Le => NodeOp::Ge,
            other => other,
        };
        let test = if self.holds_nodes(a) {
            NodeTest {
                op,
                value: b.parse().ok()?,
            }
        } else if self.holds_nodes(b) {
            NodeTest {
                op: flip(op),
                value: a.parse().ok()?,
            }
        } else {
            return None;
        };
        Some((test, !negated))
    }
}

/// The variable a word is a lone reference to: `$N`, `${N}`, `${N:-1}`,
/// `${N-1}` (a default is the value outside a job).
fn referenced(word: &str) -> Option<&str> {
    let rest = word.strip_prefix('$')?;
    let name = match rest.strip_prefix('{') {
        Some(braced) => {
            let braced = braced.strip_suffix('}')?;
            let end = braced
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(braced.len());
            let default = &braced[end..];
            let default = default
                .strip_prefix(":-")
                .or_else(|| default.strip_prefix('-'));
            if end < braced.len() && !default.is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit()))
            {
                return None;
            }
            &braced[..end]
        }
        None => rest,
    };
    (!name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        .then_some(name)
}

/// The branches command `n` of `script` sits in, innermost first, with
/// what the node count says about each.
pub(crate) fn branch_paths(
    script: &ShellScript,
    n: usize,
    nodes: &NodeVariables,
) -> Vec<BranchPath> {
    let mut paths = Vec::new();
    for (index, block) in script.blocks_of(n) {
        if !matches!(
            block.kind,
            BlockKind::Then | BlockKind::Else | BlockKind::CaseArm
        ) {
            continue;
        }
        let mut path = BranchPath::default();
        for (sibling, other) in script.branches(block.statement) {
            if sibling == index {
                // This branch's own condition must hold; an `else` has none.
                if block.kind != BlockKind::Else {
                    match condition(script, other, nodes) {
                        Some(test) => path.known.push((test, true)),
                        None => path.unknown = true,
                    }
                }
                continue;
            }
            path.siblings.push(other.range);
            // An earlier sibling's condition must not hold.
            if sibling < index {
                match condition(script, other, nodes) {
                    Some(test) => path.known.push((test, false)),
                    None => path.unknown = true,
                }
            }
        }
        paths.push(path);
    }
    paths
}

/// A branch's condition as node-count tests, any of which holds: an `if`
/// of one test, or a `case` on the node count with numeric patterns.
fn condition(
    script: &ShellScript,
    block: &crate::syntax::shell_script::Block,
    nodes: &NodeVariables,
) -> Option<Vec<NodeTest>> {
    if block.kind == BlockKind::CaseArm {
        let subject = script.condition(block).next()?.first()?;
        if !nodes.holds_nodes(&subject.text) {
            return None;
        }
        return block
            .patterns
            .iter()
            .map(|p| match p.as_str() {
                "*" => Some(NodeTest {
                    op: NodeOp::Any,
                    value: 0,
                }),
                p => Some(NodeTest {
                    op: NodeOp::Eq,
                    value: p.parse().ok()?,
                }),
            })
            .collect();
    }
    let mut commands = script.condition(block);
    let words = commands.next()?;
    if commands.next().is_some() {
        return None;
    }
    let (test, holds) = nodes.test(words)?;
    // A negated test is true where its comparison is false.
    Some(if holds {
        vec![test]
    } else {
        vec![NodeTest {
            op: negate(test.op),
            value: test.value,
        }]
    })
}

fn negate(op: NodeOp) -> NodeOp {
    match op {
        NodeOp::Eq => NodeOp::Ne,
        NodeOp::Ne => NodeOp::Eq,
        NodeOp::Gt => NodeOp::Le,
        NodeOp::Ge => NodeOp::Lt,
        NodeOp::Lt => NodeOp::Ge,
        NodeOp::Le => NodeOp::Gt,
        NodeOp::Any => NodeOp::Any,
    }
}

impl TorchLaunch {
    pub fn find(command: &Command) -> Option<TorchLaunch> {
        let words = &command.words;
        let start = words.iter().position(|w| {
            !w.dynamic
                && (w.text.rsplit('/').next() == Some("torchrun")
                    || w.text == "torch.distributed.run")
        })?;
        // `python -m torch.distributed.run`: `-m` must come right before.
        if words[start].text == "torch.distributed.run"
            && (start == 0 || words[start - 1].text != "-m")
        {
            return None;
        }
        let mut launch = TorchLaunch {
            launcher: words[start].clone(),
            nproc_per_node: None,
            nnodes: None,
            has_rendezvous: false,
            endpoint: false,
            opaque_arguments: false,
            branches: Vec::new(),
            range: words[start].range.cover(words.last()?.range),
        };
        let mut i = start + 1;
        // torchrun's own options come before the training script.
        while let Some(word) = words.get(i) {
            let text = word.text.as_str();
            if !text.starts_with('-') {
                if word.dynamic {
                    // `"${TORCHRUN_ARGS[@]}"` or `$ARGS`: options we cannot see.
                    launch.opaque_arguments = true;
                    i += 1;
                    continue;
                }
                break;
            }
            let (name, inline) = match text.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (text, None),
            };
            let name = name.replace('_', "-");
            let takes_value = !matches!(
                name.as_str(),
                "--standalone" | "--no-python" | "--run-path" | "-m" | "--module"
            );
            let value_word = if inline.is_some() || !takes_value {
                None
            } else {
                words.get(i + 1)
            };
            let value = inline
                .map(str::to_string)
                .or_else(|| value_word.map(|w| w.text.clone()));
            match name.as_str() {
                "--nproc-per-node" => {
                    launch.nproc_per_node = value.map(|v| (v, value_word.unwrap_or(word).clone()));
                }
                "--nnodes" => launch.nnodes = value,
                "--rdzv-endpoint" | "--master-addr" => {
                    launch.has_rendezvous = true;
                    launch.endpoint = true;
                }
                "--standalone" => launch.has_rendezvous = true,
                _ => {}
            }
            i += if value_word.is_some() { 2 } else { 1 };
        }
        Some(launch)
    }

    /// Ranks per node, when written as a number.
    pub fn ranks_per_node(&self) -> Option<(u64, &Word)> {
        let (value, word) = self.nproc_per_node.as_ref()?;
        if word.dynamic {
            return None;
        }
        Some((value.parse().ok()?, word))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::shell::{Snippet, commands};

    #[test]
    fn directives_before_the_first_command_count() {
        let text = "#!/bin/bash\n#SBATCH --nodes=4 # nodes\n#SBATCH -N 2\n#SBATCH --gpus-per-node=h100:8\n\nset -e\n#SBATCH --ntasks-per-node=8\n";
        let script = BatchScript::parse(text).unwrap();
        assert_eq!(script.count("--nodes"), Some(2));
        assert_eq!(script.gpus_per_node().unwrap().0, 8);
        let late = script.directives.last().unwrap();
        assert!(late.ignored);
        assert_eq!(&text[late.range.as_range()], "--ntasks-per-node=8");
        assert_eq!(&text[script.directives[0].range.as_range()], "--nodes=4");
        assert!(script.get("--ntasks-per-node").is_none());
    }

    #[test]
    fn gpus_per_node_from_every_spelling() {
        let per_node = |d: &str| BatchScript::parse(d).and_then(|s| s.gpus_per_node().map(|g| g.0));
        assert_eq!(per_node("#SBATCH --gres=gpu:a100:4\n"), Some(4));
        assert_eq!(
            per_node("#SBATCH --gpus-per-task=2\n#SBATCH --ntasks-per-node=4\n"),
            Some(8)
        );
        assert_eq!(per_node("#SBATCH --gpus=4\n#SBATCH --nodes=1\n"), Some(4));
        assert_eq!(per_node("#SBATCH --gpus=4\n#SBATCH --ntasks=4\n"), None);
    }

    #[test]
    fn torchrun_options() {
        let text = "srun torchrun --nnodes 2 --nproc_per_node=8 --rdzv-endpoint=$HOST:29500 train.py --lr 1";
        let command = &commands(&Snippet::verbatim(text, 0))[0];
        let launch = TorchLaunch::find(command).unwrap();
        assert_eq!(launch.ranks_per_node().unwrap().0, 8);
        assert_eq!(launch.nnodes.as_deref(), Some("2"));
        assert!(launch.has_rendezvous && !launch.opaque_arguments);
        let text = "torchrun \"${ARGS[@]}\" train.py";
        let launch = TorchLaunch::find(&commands(&Snippet::verbatim(text, 0))[0]).unwrap();
        assert!(launch.opaque_arguments);
    }
}
