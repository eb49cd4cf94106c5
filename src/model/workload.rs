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
pub fn selects_rdma(name: &str, value: Option<&str>) -> bool {
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
pub fn image_accelerator(image: &str) -> Option<Accelerator> {
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
pub fn detect_launcher(command: &str) -> (Option<&'static str>, Option<u64>) {
    if command.is_empty() {
        return (None, None);
    }
    let tokens: Vec<&str> = command
        .split(|c: char| c.is_whitespace() || c == '"' || c == '\'' || c == ';' || c == '&')
        .filter(|t| !t.is_empty())
        .collect();
    let base = |t: &str| t.rsplit('/').next().unwrap_or(t).to_string();
    let mut launcher = None;
    for (i, t) in tokens.iter().enumerate() {
        let b = base(t);
        let found = match b.as_str() {
            "torchrun" => Some("torchrun"),
            "torch.distributed.run" | "torch.distributed.launch" => Some("torch.distributed.run"),
            "deepspeed" => Some("deepspeed"),
            "horovodrun" => Some("horovodrun"),
            "mpirun" | "mpiexec" => Some("mpirun"),
            "launch" if i > 0 && base(tokens[i - 1]) == "accelerate" => Some("accelerate launch"),
            _ => None,
        };
        if found.is_some() {
            launcher = found;
            break;
        }
    }
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
    (launcher, parallelism)
}
