//! How many GPUs a serving engine or a launcher will use in one container,
//! read from its command line: vLLM's tensor × pipeline parallel size,
//! TGI's shard count, SGLang's tensor parallel size, DeepSpeed's and
//! torchrun's processes per node.
//!
//! Only sizes written as plain numbers count: a variable, `auto` or
//! `gpu` is left unknown, as is a size spread over several nodes (Ray, a
//! node count above one), where the other nodes' GPUs count too.

/// A serving engine or launcher that starts one worker per GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    Vllm,
    Tgi,
    Sglang,
    DeepSpeed,
    Torchrun,
}

impl Server {
    pub fn name(self) -> &'static str {
        match self {
            Server::Vllm => "vLLM",
            Server::Tgi => "TGI",
            Server::Sglang => "SGLang",
            Server::DeepSpeed => "DeepSpeed",
            Server::Torchrun => "torchrun",
        }
    }
}

/// One number the size is made of: the flag (or variable) as written and
/// its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeSetting {
    /// `--tensor-parallel-size`, `-tp`, `NUM_SHARD`.
    pub name: String,
    pub value: u64,
    /// The value as written (`4`, `"4"`).
    pub written: String,
    /// Set in the environment, not on the command line.
    pub from_env: bool,
}

/// The GPUs a command will use in its container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParallelSize {
    pub server: Server,
    /// The setting a fix lowers (the tensor parallel size for vLLM).
    pub main: SizeSetting,
    /// A factor multiplying it (vLLM's or SGLang's pipeline parallel size).
    pub factor: Option<SizeSetting>,
}

impl ParallelSize {
    /// GPUs needed in the container.
    pub fn gpus(&self) -> u64 {
        self.main.value * self.factor.as_ref().map_or(1, |f| f.value)
    }

    /// "`--tensor-parallel-size 4` × `--pipeline-parallel-size 2`".
    pub fn describe(&self) -> String {
        let one = |s: &SizeSetting| {
            if s.from_env {
                format!("`{}={}`", s.name, s.value)
            } else {
                format!("`{} {}`", s.name, s.value)
            }
        };
        match &self.factor {
            Some(f) => format!("{} × {}", one(&self.main), one(f)),
            None => one(&self.main),
        }
    }

    /// The value the main setting takes to fit `gpus` GPUs, when there is one.
    pub fn fitting_value(&self, gpus: u64) -> Option<u64> {
        let factor = self.factor.as_ref().map_or(1, |f| f.value);
        (gpus >= factor && gpus.is_multiple_of(factor)).then(|| gpus / factor)
    }
}

/// The words of a command line, split as `detect_launcher` splits them:
/// at blanks, quotes and command separators.
pub fn words(command: &str) -> Vec<&str> {
    command
        .split(|c: char| c.is_whitespace() || c == '"' || c == '\'' || c == ';' || c == '&')
        .filter(|t| !t.is_empty())
        .collect()
}

/// The value of an option in `words`: `--flag=N`, `--flag N`; the last one
/// wins, as with argparse. Names are compared with `_` read as `-`.
fn option<'w>(words: &[&'w str], names: &[&str]) -> Option<(String, &'w str)> {
    let same = |a: &str, b: &str| a.replace('_', "-") == b.replace('_', "-");
    let mut found = None;
    for (i, word) in words.iter().enumerate() {
        let (name, inline) = match word.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (*word, None),
        };
        if names.iter().any(|n| same(n, name)) {
            let value = inline.or_else(|| words.get(i + 1).copied());
            if let Some(value) = value {
                found = Some((name.to_string(), value));
            }
        }
    }
    found
}

/// A setting whose value is a plain number, else `None` (a variable,
/// `auto`, a placeholder).
fn number(name: String, written: &str, from_env: bool) -> Option<SizeSetting> {
    let value = written.trim().parse::<u64>().ok().filter(|n| *n > 0)?;
    Some(SizeSetting {
        name,
        value,
        written: written.to_string(),
        from_env,
    })
}

/// An option that is present with a value that is not a plain number: the
/// size is unknown.
fn unknown(words: &[&str], names: &[&str]) -> bool {
    option(words, names).is_some_and(|(_, v)| v.trim().parse::<u64>().is_err())
}

/// The words from the first launcher word on, up to the script it runs:
/// its own options (`deepspeed --num_gpus 4 train.py --num_gpus 8` has one
/// DeepSpeed option).
fn launcher_options<'a, 'w>(words: &'a [&'w str], launcher: &[&str]) -> Option<&'a [&'w str]> {
    let base = |w: &str| w.rsplit('/').next().unwrap_or(w).to_string();
    let start = words
        .iter()
        .position(|w| launcher.contains(&base(w).as_str()))?;
    let end = words[start + 1..]
        .iter()
        .position(|w| w.ends_with(".py") || *w == "-m" || *w == "--module")
        .map_or(words.len(), |i| start + 1 + i);
    Some(&words[start..end])
}

/// Spread over several nodes: their GPUs count too. vLLM takes Ray as its
/// executor by itself when the size is above the local GPUs and a Ray
/// cluster is there, so any mention of Ray (`ray start`,
/// `--ray_cluster_size`, `--distributed-executor-backend ray`) counts.
fn multi_node(words: &[&str]) -> bool {
    let ray = words.iter().any(|w| {
        w.split(|c: char| !c.is_ascii_alphanumeric())
            .any(|part| part.eq_ignore_ascii_case("ray"))
    });
    let nodes = option(words, &["--nnodes", "--num-nodes", "--num_nodes"])
        .is_some_and(|(_, v)| v.parse::<u64>().map_or(true, |n| n > 1));
    ray || nodes
}

/// The GPUs the command (with its image and environment, for the engine it
/// runs and `NUM_SHARD`) uses in one container, when it says so with plain
/// numbers.
pub fn parallel_size(
    command: &str,
    image: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<ParallelSize> {
    let words = words(command);
    let context = format!("{} {}", image.unwrap_or(""), command).to_ascii_lowercase();

    // torchrun and DeepSpeed: their own options only.
    for (server, launcher, names) in [
        (
            Server::Torchrun,
            &[
                "torchrun",
                "torch.distributed.run",
                "torch.distributed.launch",
            ][..],
            &["--nproc-per-node"][..],
        ),
        (
            Server::DeepSpeed,
            &["deepspeed", "deepspeed.launcher.runner"][..],
            &["--num-gpus"][..],
        ),
    ] {
        if let Some(options) = launcher_options(&words, launcher) {
            // Both count processes per node: one container's share even
            // when the job spans nodes.
            let (name, value) = option(options, names)?;
            return Some(ParallelSize {
                server,
                main: number(name, value, false)?,
                factor: None,
            });
        }
    }

    // A Ray cluster to join (`RAY_ADDRESS`) pools other nodes' GPUs too.
    if multi_node(&words) || env("RAY_ADDRESS").is_some() {
        return None;
    }

    // TGI: `--num-shard` or `NUM_SHARD` (the launcher reads either).
    let tgi = context.contains("text-generation-inference")
        || context.contains("text-generation-launcher")
        || context.contains("lorax");
    if let Some((name, value)) = option(&words, &["--num-shard"]) {
        return Some(ParallelSize {
            server: Server::Tgi,
            main: number(name, value, false)?,
            factor: None,
        });
    }
    if tgi && let Some(value) = env("NUM_SHARD") {
        return Some(ParallelSize {
            server: Server::Tgi,
            main: number("NUM_SHARD".into(), &value, true)?,
            factor: None,
        });
    }

    // vLLM and SGLang: tensor × pipeline parallel size, when the command
    // or image names the engine (a script's own `--tp` may mean anything).
    let server = if context.contains("sglang") {
        Server::Sglang
    } else if context.contains("vllm") {
        Server::Vllm
    } else {
        return None;
    };
    let tensor = ["--tensor-parallel-size", "-tp", "--tp", "--tp-size"];
    let pipeline = ["--pipeline-parallel-size", "-pp", "--pp-size"];
    let (name, value) = option(&words, &tensor)?;
    if unknown(&words, &pipeline) {
        return None;
    }
    let factor = match option(&words, &pipeline) {
        Some((n, v)) => Some(number(n, v, false)?),
        None => None,
    };
    Some(ParallelSize {
        server,
        main: number(name, value, false)?,
        factor,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(command: &str, image: Option<&str>) -> Option<(Server, u64)> {
        parallel_size(command, image, &|_| None).map(|p| (p.server, p.gpus()))
    }

    #[test]
    fn sizes_from_each_server() {
        assert_eq!(
            size(
                "--model m --tensor-parallel-size 4",
                Some("vllm/vllm-openai:v0.6.3")
            ),
            Some((Server::Vllm, 4))
        );
        assert_eq!(
            size("vllm serve m -tp=2 --pipeline-parallel-size 2", None),
            Some((Server::Vllm, 4))
        );
        assert_eq!(
            size(
                "python3 -m sglang.launch_server --model-path m --tp 8",
                None
            ),
            Some((Server::Sglang, 8))
        );
        assert_eq!(
            size("--model-id m --num-shard 2", None),
            Some((Server::Tgi, 2))
        );
        assert_eq!(
            size("deepspeed --num_gpus 4 train.py --num_gpus 8", None),
            Some((Server::DeepSpeed, 4))
        );
        assert_eq!(
            size("torchrun --nproc_per_node=8 train.py --tp 2", None),
            Some((Server::Torchrun, 8))
        );
        let env = |name: &str| (name == "NUM_SHARD").then(|| "4".to_string());
        let tgi = parallel_size(
            "--model-id m",
            Some("ghcr.io/huggingface/text-generation-inference:2.0"),
            &env,
        )
        .unwrap();
        assert_eq!((tgi.server, tgi.gpus()), (Server::Tgi, 4));
        assert!(tgi.main.from_env);
    }

    #[test]
    fn unknown_sizes_are_none() {
        for command in [
            "vllm serve m --tensor-parallel-size ${TP:-2}",
            "vllm serve m --tensor-parallel-size 2 --pipeline-parallel-size $PP",
            "vllm serve m -tp 8 --distributed-executor-backend ray",
            "python -m sglang.launch_server --tp 16 --nnodes 2",
            "bash multi-node-serving.sh leader --ray_cluster_size=2; vllm serve m -tp 8 -pp 2",
            "torchrun --nproc_per_node=gpu train.py",
            "torchrun --nproc_per_node $GPUS train.py",
            "python train.py --num_gpus 8",
            "deepspeed train.py",
            "echo hello",
            "python train.py --tp 2",
            "python infer.py --tensor-parallel-size 4",
        ] {
            assert_eq!(size(command, None), None, "{command}");
        }
        // A Ray cluster to join pools the GPUs of other nodes.
        let ray = |name: &str| (name == "RAY_ADDRESS").then(|| "head:6379".to_string());
        assert!(parallel_size("vllm serve m -tp 8", None, &ray).is_none());
        // NUM_SHARD means nothing to a container that does not run TGI.
        let env = |_: &str| Some("4".to_string());
        assert!(parallel_size("python app.py", Some("python:3.11"), &env).is_none());
    }
}
