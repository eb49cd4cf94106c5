//! What compose services and Kubernetes containers have in common: the
//! environment they set and the commands they launch.

use crate::syntax::yaml::NodeId;
use crate::text::TextRange;

#[derive(Debug, Clone)]
pub struct EnvVar {
    pub name: String,
    /// The value after interpolation; `None` when unset or unknown.
    pub value: Option<String>,
    /// The list item or mapping key that sets it.
    pub node: NodeId,
    /// The whole `KEY=value` item or `KEY: value` entry.
    pub range: TextRange,
}

impl EnvVar {
    pub fn view(&self) -> EnvView<'_> {
        EnvView {
            name: &self.name,
            value: self.value.as_deref(),
            range: self.range,
        }
    }
}

/// An environment variable as rules read it, wherever it is set (compose
/// `environment`, a container's `env`, a Dockerfile `ENV`).
#[derive(Debug, Clone, Copy)]
pub struct EnvView<'a> {
    pub name: &'a str,
    /// `None` when unset or unknown.
    pub value: Option<&'a str>,
    /// The whole setting as written.
    pub range: TextRange,
}

/// An environment variable that points NCCL or UCX at InfiniBand/RDMA
/// devices (which then need `memlock` unlimited to register memory).
pub(crate) fn selects_rdma(name: &str, value: Option<&str>) -> bool {
    let value = value.unwrap_or("");
    name == "NCCL_IB_HCA"
        || (name == "NCCL_NET" && value.eq_ignore_ascii_case("ib"))
        || (name == "UCX_NET_DEVICES" && value.contains("mlx"))
}

/// The GPU user space an image ships.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accelerator {
    Cuda,
    Rocm,
}

/// An image reference split into repository and tag (a digest dropped).
pub fn split_image(image: &str) -> (&str, Option<&str>) {
    let image = image.split('@').next().unwrap_or(image);
    match image.rsplit_once(':') {
        Some((name, tag)) if !tag.contains('/') => (name, Some(tag)),
        _ => (image, None),
    }
}

/// Whether an image ships CUDA or ROCm user space, by its name and tag
/// (NGC, `nvidia/cuda`, `pytorch/pytorch:*-cuda*`, `*-gpu` and `cu124` tags,
/// `rocm/*`): soft evidence of GPU intent.
pub(crate) fn image_accelerator(image: &str) -> Option<Accelerator> {
    let image = image.to_ascii_lowercase();
    let (name, tag) = split_image(&image);
    let tag = tag.unwrap_or("");
    if name.starts_with("rocm/") || name.contains("/rocm/") || tag.contains("rocm") {
        return Some(Accelerator::Rocm);
    }
    // `cu124`, `cu121` as a tag part (`2.3.0-cu121`, `th2.6.0-cu124-flashattn`).
    let cuda_tag_part = tag.split(['-', '_', '.']).any(|part| {
        part.strip_prefix("cu")
            .is_some_and(|v| (2..=3).contains(&v.len()) && v.bytes().all(|b| b.is_ascii_digit()))
    });
    // NVIDIA's distroless images hold a static program and no CUDA (the
    // MIG manager, the device plugin's helpers build on them).
    if name.starts_with("nvcr.io/nvidia/distroless/") {
        return None;
    }
    let cuda = name.starts_with("nvcr.io/nvidia/")
        || name == "nvidia/cuda"
        || name.ends_with("/nvidia/cuda")
        || name.starts_with("nvidia/")
        || name.contains("vllm/vllm-openai")
        || name.contains("lmsysorg/sglang")
        || tag.contains("-gpu")
        || tag == "gpu"
        || tag.contains("cuda")
        || cuda_tag_part;
    cuda.then_some(Accelerator::Cuda)
}

/// Finds a distributed launcher and the ranks per container it starts.
/// Only a command's program counts as its launcher (`echo torchrun` launches
/// nothing): after `NAME=value` assignments and wrappers that run the rest
/// of the line (`env`, `exec`, `nohup`, ...), as `python -m MODULE`, or in
/// the script of `bash -c` / `sh -c`.
pub fn detect_launcher(command: &str) -> (Option<&'static str>, Option<u64>) {
    if command.is_empty() {
        return (None, None);
    }
    let launcher = launcher_in(command, 0);
    let tokens: Vec<&str> = command
        .split(|c: char| c.is_whitespace() || c == '"' || c == '\'' || c == ';' || c == '&')
        .filter(|t| !t.is_empty())
        .collect();
    let flags: &[&str] = &[
        "--nproc_per_node",
        "--nproc-per-node",
        "--num_gpus",
        "--num-gpus",
        "--num_processes",
        "--num-processes",
        "--tensor-parallel-size",
        "--tensor_parallel_size",
        "--tp-size",
        "--tp",
        "-tp",
        "-np",
    ];
    let mut parallelism = None;
    for (i, t) in tokens.iter().enumerate() {
        for flag in flags {
            let value = if let Some(v) = t.strip_prefix(flag).and_then(|r| r.strip_prefix('=')) {
                Some(v)
            } else if t == flag {
                tokens.get(i + 1).copied()
            } else {
                None
            };
            if let Some(n) = value.and_then(|v| v.parse::<u64>().ok()) {
                parallelism = Some(parallelism.map_or(n, |p: u64| p.max(n)));
            }
        }
    }
    // `mpirun -np N` with a host list counts the ranks of every host: how
    // many run here is the host list's business (`slots=`), not known.
    let mpi = |t: &&str| matches!(t.rsplit('/').next(), Some("mpirun" | "mpiexec"));
    let spread_over_hosts = tokens.iter().any(mpi)
        && tokens.iter().any(|t| {
            let name = t.split('=').next().unwrap_or(t);
            matches!(
                name,
                "-hostfile"
                    | "--hostfile"
                    | "-machinefile"
                    | "--machinefile"
                    | "-H"
                    | "--host"
                    | "-host"
            )
        });
    if spread_over_hosts {
        parallelism = None;
    }
    (launcher, parallelism)
}

/// `bash -c` scripts nest at most this deep.
const MAX_SHELL_DEPTH: usize = 4;

/// The launcher that is the program of one of the shell commands in `line`.
fn launcher_in(line: &str, depth: usize) -> Option<&'static str> {
    let snippet = crate::syntax::shell::Snippet::verbatim(line, 0);
    crate::syntax::shell::commands(&snippet)
        .iter()
        .find_map(|command| {
            let words: Vec<&str> = command.words.iter().map(|w| w.text.as_str()).collect();
            program_launcher(&words, depth)
        })
}

/// The launcher a simple command's words run, if its program is one.
fn program_launcher(words: &[&str], depth: usize) -> Option<&'static str> {
    let base = |w: &str| w.rsplit('/').next().unwrap_or(w).to_string();
    let is_assignment = |w: &str| {
        w.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
    };
    let mut i = 0;
    loop {
        let word = *words.get(i)?;
        let program = base(word);
        match program.as_str() {
            _ if is_assignment(word) => i += 1,
            // Wrappers that run the rest of the line, after their options
            // and (for `env`) assignments.
            "env" | "exec" | "nohup" | "time" | "command" | "sudo" | "srun" | "nice" => {
                i += 1;
                while let Some(w) = words.get(i) {
                    if w.starts_with('-') {
                        // `nice -n 10`, `env -u NAME`: an option's value.
                        let takes_value = matches!(*w, "-n" | "-u" | "--unset" | "-C");
                        i += if takes_value { 2 } else { 1 };
                    } else if is_assignment(w) {
                        i += 1;
                    } else {
                        break;
                    }
                }
            }
            "bash" | "sh" | "dash" | "zsh" | "ash" => {
                // `bash -c SCRIPT` (also `-lc`, `-ec`): the script's commands.
                let mut j = i + 1;
                while let Some(w) = words.get(j).filter(|w| w.starts_with('-')) {
                    if !w.starts_with("--") && w.contains('c') {
                        if depth >= MAX_SHELL_DEPTH {
                            return None;
                        }
                        return launcher_in(&words[j + 1..].join(" "), depth + 1);
                    }
                    j += 1;
                }
                return None;
            }
            p if p.starts_with("python") => {
                // `python [options] -m MODULE`; a script is not a launcher.
                let mut j = i + 1;
                while let Some(w) = words.get(j).filter(|w| w.starts_with('-')) {
                    if *w == "-m" {
                        return match *words.get(j + 1)? {
                            "torch.distributed.run" | "torch.distributed.launch" => {
                                Some("torch.distributed.run")
                            }
                            "deepspeed" | "deepspeed.launcher.runner" => Some("deepspeed"),
                            "horovod.runner.launch" => Some("horovodrun"),
                            _ => None,
                        };
                    }
                    j += 1;
                }
                return None;
            }
            "torchrun" => return Some("torchrun"),
            "deepspeed" => return Some("deepspeed"),
            "horovodrun" => return Some("horovodrun"),
            "mpirun" | "mpiexec" => return Some("mpirun"),
            "accelerate" if words.get(i + 1) == Some(&"launch") => {
                return Some("accelerate launch");
            }
            // torchtune's `tune run` hands the recipe to torchrun when it is
            // given torchrun's options (torchtune `_cli/run.py`,
            // `_is_distributed_args`), else runs one process.
            "tune" if words.get(i + 1) == Some(&"run") => {
                let distributed = words[i + 2..].iter().any(|w| {
                    [
                        "--nproc_per_node",
                        "--nproc-per-node",
                        "--nnodes",
                        "--rdzv_endpoint",
                        "--rdzv-endpoint",
                    ]
                    .iter()
                    .any(|flag| {
                        w.strip_prefix(flag)
                            .is_some_and(|r| r.is_empty() || r.starts_with('='))
                    })
                });
                return distributed.then_some("tune run");
            }
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// opendatahub-io/distributed-workloads
    /// benchmarks/osu-benchmarks/mpi-runtime-gpu.yaml: `-np 2` over two
    /// hosts of one slot each runs no rank beside the launcher.
    #[test]
    fn mpirun_over_a_host_list_has_no_local_rank_count() {
        assert_eq!(
            detect_launcher("mpirun -np 8 ./all_reduce_perf -g 1").1,
            Some(8)
        );
        assert_eq!(
            detect_launcher("mpirun -np 2 -hostfile /tmp/h ./osu_bw").1,
            None
        );
        assert_eq!(
            detect_launcher("MPIARGS=\"-np 2 --hostfile /tmp/h\" && eval mpirun $MPIARGS ./osu_bw")
                .1,
            None
        );
        assert_eq!(detect_launcher("mpirun -H a,b -np 2 ./osu_bw").1, None);
    }

    #[test]
    fn only_the_program_is_a_launcher() {
        for (line, launcher) in [
            // kubeflow/manifests, trainer runtimes/torchtune/llama3_2/llama3_2_1B.yaml
            (
                "tune run --rdzv_endpoint=localhost:29500 full_finetune_distributed --config x",
                Some("tune run"),
            ),
            ("tune run lora_finetune_single_device --config x", None),
            ("torchrun --nproc_per_node=8 train.py", Some("torchrun")),
            ("/opt/conda/bin/torchrun train.py", Some("torchrun")),
            (
                "NCCL_DEBUG=INFO env A=1 -u B nohup torchrun t.py",
                Some("torchrun"),
            ),
            (
                "python3 -u -m torch.distributed.run t.py",
                Some("torch.distributed.run"),
            ),
            (
                "bash -c \"pip install -e . && deepspeed t.py\"",
                Some("deepspeed"),
            ),
            (
                "sh -lc 'cd /w; accelerate launch t.py'",
                Some("accelerate launch"),
            ),
            ("mpirun -np 4 python t.py", Some("mpirun")),
            (
                "mpirun -np 2 -hostfile /tmp/hostfile ./osu_bw",
                Some("mpirun"),
            ),
            ("eval mpirun $MPIARGS ./osu_bw", None),
            ("echo torchrun", None),
            ("python train.py --launcher torchrun", None),
            ("python -c 'import torch.distributed.run'", None),
            ("bash run_torchrun.sh", None),
            ("cat deepspeed.json", None),
        ] {
            assert_eq!(detect_launcher(line).0, launcher, "{line}");
        }
    }
}
