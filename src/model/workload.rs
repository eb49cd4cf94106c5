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

/// Images that ship CUDA or ROCm user space (soft evidence of GPU intent).
pub fn is_gpu_image(image: &str) -> bool {
    let image = image.to_ascii_lowercase();
    let (name, tag) = match image.rsplit_once(':') {
        Some((n, t)) if !t.contains('/') => (n, t),
        _ => (image.as_str(), ""),
    };
    name.starts_with("nvcr.io/nvidia/")
        || name == "nvidia/cuda"
        || name.ends_with("/nvidia/cuda")
        || name.starts_with("nvidia/")
        || (name.ends_with("pytorch/pytorch") && tag.contains("cuda"))
        || name.starts_with("rocm/")
        || name.contains("vllm/vllm-openai")
        || name.contains("lmsysorg/sglang")
        || tag.contains("-gpu")
        || tag == "gpu"
        || tag.contains("cuda")
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
