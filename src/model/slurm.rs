//! A SLURM batch script: its `#SBATCH` directives (the ones sbatch reads,
//! and the ones it ignores), the resources they ask for, and the
//! distributed launches in its body.

use crate::syntax::shell::{Command, Word};
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
}

impl BatchScript {
    /// The directives of a script; `None` when it has none.
    pub fn parse(text: &str) -> Option<BatchScript> {
        if !text.contains("#SBATCH") {
            return None;
        }
        let mut script = BatchScript::default();
        let mut commands_started = false;
        let mut offset = 0;
        for raw in text.split_inclusive('\n') {
            let start = offset;
            offset += raw.len();
            let line = raw.trim_end_matches(['\n', '\r']);
            if let Some(rest) = line.strip_prefix("#SBATCH") {
                let line_range = TextRange::new(start, start + line.len());
                script.read_line(rest, start + "#SBATCH".len(), line_range, commands_started);
                continue;
            }
            let trimmed = line.trim();
            if !trimmed.is_empty() && !trimmed.starts_with('#') {
                commands_started = true;
            }
        }
        (!script.directives.is_empty()).then_some(script)
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
    /// Some of its arguments come from an array or a variable that may hold
    /// any option: what is missing may be there.
    pub opaque_arguments: bool,
    pub range: TextRange,
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
            opaque_arguments: false,
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
                "--rdzv-endpoint" | "--master-addr" | "--standalone" => {
                    launch.has_rendezvous = true
                }
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
