//! How much `/dev/shm` a GPU workload needs, from what its config says it
//! runs: the one place SHM002 (compose, Kubernetes, command lines) and the
//! rules that compare a size with it get their threshold. Every figure is
//! derived from the workload that was measured on the real engine
//! (`tests/runtime/workload.py`; the table is in rules/SHM002.md), by ranks
//! and DataLoader workers:
//!
//! - Training (a launcher such as torchrun, DeepSpeed, `accelerate launch`,
//!   or a distributed training kind such as PyTorchJob) holds, per rank,
//!   `prefetch_factor` (2) batches for each DataLoader worker, and one NCCL
//!   shared-memory segment per local peer. Its ranks are the launcher's,
//!   else one per GPU; all GPUs with no count is a full node of 8.
//! - Serving (vLLM, TGI, SGLang, Triton) needs NCCL's segments between its
//!   tensor-parallel ranks, plus the engine's own shared memory.
//! - Anything else on several GPUs (or with NCCL settings): gpulint does not
//!   know what runs, so it asks what the heaviest measured workload on those
//!   GPUs needs, training with one rank per GPU; `min-size-multi-gpu`
//!   replaces that when it is set. On one GPU it keeps `min-size`.
//!
//! A rank count nothing tells (`--nproc_per_node=gpu` with a GPU count that
//! is a variable) is taken as a full node too.
//!
//! Every need is rounded up to a multiple of 256 MiB (a size people write)
//! and is never below `min-size`. [`ShmNeed::size`] spells it: the number
//! the message states is the one the help asks for and the fix writes.

use super::container::{ContainerRuntime, Gpus, Workload, WorkloadKind};
use super::parallel::{Server, parallel_size, words};
use super::size::{GIB, HumanBytes, MIB};
use super::workload::detect_launcher;

/// One DataLoader worker's share: PyTorch's default `prefetch_factor` of 2
/// batches of 32 RGB 224×224 float32 images (the reference workload's).
pub(crate) const DATALOADER_WORKER_BYTES: u64 = 2 * 32 * 3 * 224 * 224 * 4;

/// One NCCL shared-memory segment, one per local peer of each rank: the
/// size NCCL logs of 8-GPU jobs show (NVIDIA/nccl#342, pytorch/torchtitan#853).
pub const NCCL_SEGMENT_BYTES: u64 = 9_637_888;

/// vLLM's executor broadcasts to its tensor-parallel workers through a
/// shared-memory ring of 10 chunks of `VLLM_MQ_MAX_CHUNK_BYTES_MB` (16 MiB).
pub const VLLM_RING_BYTES: u64 = 10 * 16 * MIB;

/// Triton's Python backend maps a region per model instance: 64 MiB by
/// default before 23.x (1 MiB since), growing with the tensors it passes.
pub const TRITON_PYTHON_BYTES: u64 = 64 * MIB;

/// Why `min-size` is the least any GPU workload gets.
const FLOOR: &str = "no GPU workload should get less (DeepSpeed's `ds_report` warns below 512 MiB)";

/// Needs are rounded up to this step.
const STEP: u64 = 256 * MIB;

/// Ranks assumed for a server given all the node's GPUs, with no size
/// written: a full 8-GPU node.
const FULL_NODE_GPUS: u64 = 8;

/// The configurable part of the decision (`[shm]` in gpulint.toml).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShmPolicy {
    /// The least any GPU workload gets (`min-size`).
    pub min: u64,
    /// Set by the user (`min-size-multi-gpu`): what a workload gpulint
    /// cannot classify on several GPUs, or training whose rank count is
    /// unknown, needs. Unset, it is derived from the measured workload.
    pub min_multi_gpu: Option<u64>,
    /// DataLoader workers per rank assumed when the command does not say
    /// (`dataloader-workers`).
    pub workers: u64,
}

/// What the platform models know about a container's command, read once
/// by the adapters into [`Workload`].
pub struct WorkloadFacts<'a> {
    /// `entrypoint` and `command`, or what `docker run` runs after the image.
    pub command: &'a str,
    pub image: Option<&'a str>,
    /// The container's environment (`NUM_SHARD`, `RAY_ADDRESS`).
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// Its kind runs distributed training (PyTorchJob, MPIJob, ...).
    pub distributed_kind: bool,
}

/// How much /dev/shm the workload needs, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShmNeed {
    /// A multiple of 256 MiB, at least `min-size`.
    pub bytes: u64,
    /// "8 training ranks with 8 DataLoader workers each (assumed) use about
    /// 2.8 GiB (...)", for messages.
    pub reason: String,
    /// The gpulint.toml `[shm]` key that changes it, when one does.
    pub key: Option<&'static str>,
    /// The size is not the config's workload but an assumption about it
    /// (gpulint cannot tell what runs): SHM002 then only informs.
    pub assumed: bool,
}

impl ShmNeed {
    /// The need as a size Compose and the Docker CLI read (`"3gb"`,
    /// `"768mb"`): what SHM002's help asks for and its fix writes, so the
    /// message, the help and the fix state one number.
    pub fn size(&self) -> String {
        if self.bytes.is_multiple_of(GIB) {
            format!("{}gb", self.bytes / GIB)
        } else {
            format!("{}mb", self.bytes.div_ceil(MIB))
        }
    }
}

/// The serving engine a command or image runs, by name.
pub(crate) fn serving_engine(command: &str, image: Option<&str>) -> Option<WorkloadKind> {
    let text = format!("{} {command}", image.unwrap_or("")).to_ascii_lowercase();
    if text.contains("sglang") {
        Some(WorkloadKind::Sglang)
    } else if text.contains("vllm") {
        Some(WorkloadKind::Vllm)
    } else if text.contains("text-generation-inference")
        || text.contains("text-generation-launcher")
        // LoRAX, TGI's fork, keeps its launcher and `--num-shard`.
        || text.contains("lorax")
    {
        Some(WorkloadKind::Tgi)
    } else if text.contains("tritonserver") {
        Some(WorkloadKind::Triton)
    } else {
        None
    }
}

/// NCCL's benchmark binaries (github.com/NVIDIA/nccl-tests, `src/*.cu`),
/// by the names they build to.
const NCCL_TESTS: &[&str] = &[
    "all_reduce_perf",
    "all_gather_perf",
    "alltoall_perf",
    "broadcast_perf",
    "gather_perf",
    "hypercube_perf",
    "reduce_perf",
    "reduce_scatter_perf",
    "scatter_perf",
    "sendrecv_perf",
];

/// The command runs one of NCCL's benchmarks (`mpirun ... all_reduce_perf
/// -g 8`, `BENCHMARK=all_gather_perf run.sh`).
pub(crate) fn runs_nccl_tests(command: &str) -> bool {
    NCCL_TESTS.iter().any(|name| {
        command.match_indices(name).any(|(at, _)| {
            let before = command[..at].chars().next_back();
            let after = command[at + name.len()..].chars().next();
            let boundary =
                |c: Option<char>| !c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
            boundary(before) && boundary(after)
        })
    })
}

/// An image reference's repository path, lowercase, without registry host
/// or tag (`us-docker.pkg.dev/p/nccl-plugin:v1` -> `p/nccl-plugin`).
fn image_name(image: &str) -> String {
    let without_digest = image.split('@').next().unwrap_or(image);
    let path = match without_digest.split_once('/') {
        Some((host, rest)) if host.contains('.') || host.contains(':') => rest,
        _ => without_digest,
    };
    let name = match path.rsplit_once(':') {
        Some((name, tag)) if !tag.contains('/') => name,
        _ => path,
    };
    name.to_ascii_lowercase()
}

/// DataLoader workers per rank the command sets: `--num_workers 4`,
/// `--dataloader-num-workers=4`, `--workers 4`, or a Hydra-style override
/// `data.num_workers=4`. The last one wins; a variable is unknown.
pub fn dataloader_workers(command: &str) -> Option<u64> {
    let words = words(command);
    let flags = [
        "--num-workers",
        "--dataloader-num-workers",
        "--workers",
        "--data-workers",
    ];
    let mut found = None;
    for (i, word) in words.iter().enumerate() {
        let (name, inline) = match word.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (*word, None),
        };
        let dashed = name.replace('_', "-");
        let value = if flags.contains(&dashed.as_str()) {
            inline.or_else(|| words.get(i + 1).copied())
        } else if !name.starts_with('-') && dashed.ends_with("num-workers") {
            inline
        } else {
            None
        };
        if let Some(value) = value {
            found = Some(value.parse::<u64>().ok());
        }
    }
    found.flatten()
}

/// What a container runs: training (a launcher, or a distributed training
/// kind), a serving engine, or neither; with the ranks and DataLoader
/// workers its command sets.
pub fn classify(facts: &WorkloadFacts) -> Workload {
    let (launcher, launcher_ranks) = detect_launcher(facts.command);
    let size = parallel_size(facts.command, facts.image, facts.env);
    let engine = serving_engine(facts.command, facts.image);
    let launched = matches!(
        size.as_ref().map(|s| s.server),
        Some(Server::Torchrun | Server::DeepSpeed)
    );
    if launcher.is_some() || (facts.distributed_kind && engine.is_none()) {
        // torchrun's and DeepSpeed's own options (a script's `--tp 2` after
        // them is not a rank count), else another launcher's process count
        // (`accelerate launch --num_processes`, `mpirun -np`).
        let own_options = matches!(
            launcher,
            Some("torchrun" | "torch.distributed.run" | "deepspeed")
        );
        let ranks = size
            .as_ref()
            .filter(|_| launched)
            .map(|s| s.gpus())
            .or(launcher_ranks.filter(|_| launcher.is_some() && !own_options));
        return Workload {
            kind: WorkloadKind::Training,
            ranks,
            dataloader_workers: dataloader_workers(facts.command),
        };
    }
    match engine {
        Some(kind) => Workload {
            kind,
            ranks: size.filter(|_| !launched).map(|s| s.gpus()),
            dataloader_workers: None,
        },
        // NCCL's benchmarks by their binaries, or an image built for NCCL
        // (`nccl-tests`, GKE's `nccl-plugin-gpudirecttcpx`) whose command
        // leaves the benchmark to `kubectl exec`.
        None if runs_nccl_tests(facts.command)
            || facts.image.is_some_and(|i| image_name(i).contains("nccl")) =>
        {
            Workload {
                kind: WorkloadKind::NcclTests,
                ranks: None,
                dataloader_workers: None,
            }
        }
        // DataLoader workers say what the process puts in /dev/shm, whatever
        // starts it.
        None => Workload {
            dataloader_workers: dataloader_workers(facts.command),
            ..Workload::default()
        },
    }
}

fn round_up(bytes: u64) -> u64 {
    bytes.div_ceil(STEP).saturating_mul(STEP)
}

fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// NCCL's segments on one node: one per ordered pair of local ranks.
fn nccl_bytes(ranks: u64) -> u64 {
    // Counts come from the config (`--nproc_per_node 99999999999`): a
    // need past u64 is simply more than any host has.
    ranks
        .saturating_mul(ranks.saturating_sub(1))
        .saturating_mul(NCCL_SEGMENT_BYTES)
}

/// A serving engine's shared memory besides NCCL's, with `ranks` ranks.
fn engine_bytes(kind: WorkloadKind, ranks: u64) -> u64 {
    match kind {
        // The ring exists only with several workers (multiprocessing executor).
        WorkloadKind::Vllm if ranks >= 2 => VLLM_RING_BYTES,
        WorkloadKind::Triton => TRITON_PYTHON_BYTES,
        // TGI's shards and SGLang's processes talk over sockets; only NCCL
        // uses /dev/shm.
        _ => 0,
    }
}

/// Training ranks on one node: `ranks` ranks with `workers` DataLoader
/// workers each (`assumed` says which of them gpulint assumed).
fn training_need(ranks: u64, workers: u64, assumed: &str, policy: &ShmPolicy) -> (u64, String) {
    let exact = ranks
        .saturating_mul(workers)
        .saturating_mul(DATALOADER_WORKER_BYTES)
        .saturating_add(nccl_bytes(ranks));
    let bytes = round_up(exact).max(policy.min);
    let what = format!(
        "{} with {} each{assumed} {} about {} (2 prefetched batches per worker, one NCCL segment per local peer)",
        plural(ranks, "training rank"),
        plural(workers, "DataLoader worker"),
        if ranks == 1 { "uses" } else { "use" },
        HumanBytes(exact),
    );
    (bytes, what)
}

/// The ranks a command sets, else one per GPU it is given (all of them is
/// a full node, said so), else one; with what was assumed, for messages.
fn ranks_per_gpu(ranks: Option<u64>, gpus: Option<Gpus>) -> (u64, &'static str) {
    match (ranks, gpus) {
        (Some(n), _) => (n, ""),
        (None, Some(Gpus::Count(n))) => (n, ""),
        (None, Some(Gpus::All)) => (FULL_NODE_GPUS, " (all GPUs, assumed a full node)"),
        _ => (1, ""),
    }
}

/// A need's reason, saying so when the floor decided it.
fn floored(what: String, bytes: u64, policy: &ShmPolicy) -> String {
    if bytes == policy.min {
        format!("{what}, and {FLOOR}")
    } else {
        what
    }
}

/// The GPUs a container is given, as ranks of one node: all of them (no
/// count) is a full node.
fn gpu_ranks(gpus: Option<Gpus>) -> Option<(u64, &'static str)> {
    match gpus {
        Some(Gpus::Count(n)) if n > 0 => Some((n, "")),
        Some(Gpus::All) => Some((FULL_NODE_GPUS, ", all GPUs taken as a full node of 8")),
        _ => None,
    }
}

/// The least any GPU workload gets (`min-size`): what a size is held to
/// where the workload's own need would be an assumption.
pub fn shm_floor(policy: &ShmPolicy) -> ShmNeed {
    ShmNeed {
        bytes: policy.min,
        reason: FLOOR.into(),
        key: Some("min-size"),
        assumed: false,
    }
}

/// The /dev/shm the container's workload needs.
pub fn shm_need(container: &ContainerRuntime, policy: &ShmPolicy) -> ShmNeed {
    let workload = container.workload;
    if workload.kind == WorkloadKind::Training {
        return training_shm(container, policy);
    }
    if workload.kind == WorkloadKind::NcclTests {
        return nccl_tests_shm(container, policy);
    }
    if let Some(engine) = workload.kind.engine() {
        return engine_shm(container, policy, engine);
    }
    if container.shares_shm_between_ranks() {
        return unknown_shared_shm(container, policy);
    }
    shm_floor(policy)
}

/// Training: its ranks times its DataLoader workers, with NCCL's segments.
fn training_shm(container: &ContainerRuntime, policy: &ShmPolicy) -> ShmNeed {
    let workload = container.workload;
    let (workers, workers_assumed) = match workload.dataloader_workers {
        Some(w) => (w, false),
        None => (policy.workers, true),
    };
    // The launcher's ranks, else one rank per GPU (a full node for
    // all of them), else a full node unless `min-size-multi-gpu` says.
    let ranks = match workload.ranks.filter(|n| *n > 0) {
        Some(n) => Some((n, "")),
        None => gpu_ranks(container.gpus),
    };
    let (ranks, ranks_assumed) = match (ranks, policy.min_multi_gpu) {
        (Some(known), _) => known,
        (None, Some(bytes)) => {
            return ShmNeed {
                bytes: round_up(bytes.max(policy.min)),
                reason: "distributed training whose rank count gpulint cannot tell".into(),
                key: Some("min-size-multi-gpu"),
                assumed: false,
            };
        }
        // The rank count is unknown: the need of one rank is what the
        // config shows for certain, a lower bound that assumes nothing.
        (None, None) => (1, ", rank count unknown: at least one"),
    };
    let assumed = match (workers_assumed, ranks_assumed.is_empty()) {
        (true, true) => " (assumed)".to_string(),
        (true, false) => format!(" (assumed{ranks_assumed})"),
        (false, true) => String::new(),
        (false, false) => format!(" ({})", ranks_assumed.trim_start_matches(", ")),
    };
    let (bytes, what) = training_need(ranks, workers, &assumed, policy);
    ShmNeed {
        bytes,
        reason: floored(what, bytes, policy),
        key: if bytes == policy.min {
            Some("min-size")
        } else if workers_assumed {
            Some("dataloader-workers")
        } else {
            None
        },
        assumed: false,
    }
}

/// An NCCL benchmark: one rank per GPU, NCCL's segments only.
fn nccl_tests_shm(container: &ContainerRuntime, policy: &ShmPolicy) -> ShmNeed {
    let workload = container.workload;
    // One rank per GPU; NCCL's segments are all it keeps there.
    let (ranks, assumed) = ranks_per_gpu(workload.ranks.or(container.ranks), container.gpus);
    let exact = nccl_bytes(ranks);
    let bytes = round_up(exact).max(policy.min);
    let what = format!(
        "an NCCL benchmark on {}{assumed} uses about {} (one NCCL segment per local peer)",
        plural(ranks, "GPU"),
        HumanBytes(exact)
    );
    ShmNeed {
        bytes,
        reason: floored(what, bytes, policy),
        key: (bytes == policy.min).then_some("min-size"),
        assumed: !assumed.is_empty(),
    }
}

/// An inference engine: its tensor-parallel ranks' NCCL segments and the
/// engine's own shared memory.
fn engine_shm(container: &ContainerRuntime, policy: &ShmPolicy, engine: &str) -> ShmNeed {
    let workload = container.workload;
    // The size the command sets, else the engine's default: TGI (and
    // LoRAX) shards over every GPU it sees, vLLM, SGLang and Triton run
    // one tensor-parallel rank.
    let shards_over_gpus = workload.kind == WorkloadKind::Tgi;
    let (ranks, assumed) = if shards_over_gpus {
        ranks_per_gpu(workload.ranks, container.gpus)
    } else {
        (workload.ranks.unwrap_or(1), "")
    };
    let exact = engine_bytes(workload.kind, ranks).saturating_add(nccl_bytes(ranks));
    let bytes = round_up(exact).max(policy.min);
    let what = if ranks >= 2 {
        format!(
            "{engine} with {}{assumed}",
            plural(ranks, "tensor-parallel rank")
        )
    } else {
        format!("{engine} on one GPU")
    };
    ShmNeed {
        bytes,
        reason: if bytes > policy.min {
            format!(
                "{what} uses about {} (NCCL's segments between its ranks and the engine's own shared memory)",
                HumanBytes(exact)
            )
        } else if exact == 0 {
            format!("{what}, and {FLOOR}")
        } else {
            format!("{what} uses about {}, and {FLOOR}", HumanBytes(exact))
        },
        key: (bytes == policy.min).then_some("min-size"),
        assumed: !assumed.is_empty(),
    }
}

/// Several GPUs or ranks share /dev/shm and gpulint cannot tell what runs.
fn unknown_shared_shm(container: &ContainerRuntime, policy: &ShmPolicy) -> ShmNeed {
    const UNKNOWN: &str = "gpulint cannot tell what runs";
    if let Some(bytes) = policy.min_multi_gpu {
        return ShmNeed {
            bytes: round_up(bytes.max(policy.min)),
            reason: format!("several GPUs or NCCL ranks share it, and {UNKNOWN}"),
            key: Some("min-size-multi-gpu"),
            assumed: false,
        };
    }
    // Sized for the heaviest workload measured on as many GPUs:
    // training with one rank per GPU (or per rank the command starts).
    let (ranks, who) = match (container.ranks.filter(|n| *n >= 2), container.gpus) {
        (Some(n), _) => (n, format!("the {n} ranks it starts")),
        (None, Some(Gpus::Count(n))) if n > 0 => (n, plural(n, "GPU")),
        (None, Some(Gpus::All)) => (FULL_NODE_GPUS, "all GPUs (a full node of 8)".into()),
        _ => (
            FULL_NODE_GPUS,
            "NCCL ranks (how many is unknown: a full node of 8)".into(),
        ),
    };
    let exact = ranks
        .saturating_mul(policy.workers)
        .saturating_mul(DATALOADER_WORKER_BYTES)
        .saturating_add(nccl_bytes(ranks));
    let bytes = round_up(exact).max(policy.min);
    let verb = if ranks == 1 { "uses" } else { "share" };
    ShmNeed {
        bytes,
        reason: format!(
            "{who} {verb} it and {UNKNOWN}, so it is sized for the heaviest workload measured there: {} with {} each (assumed), about {}",
            plural(ranks, "training rank"),
            plural(policy.workers, "DataLoader worker"),
            HumanBytes(exact),
        ),
        key: Some("min-size-multi-gpu"),
        assumed: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::size::GIB;

    const POLICY: ShmPolicy = ShmPolicy {
        min: 512 * MIB,
        min_multi_gpu: None,
        workers: 8,
    };

    /// A container that runs `command` in `image` with `gpus`, as the
    /// adapters would model it.
    fn container(command: &str, image: Option<&str>, gpus: Option<Gpus>) -> ContainerRuntime {
        let (launcher, ranks) = detect_launcher(command);
        ContainerRuntime {
            platform: crate::container::Platform::DockerRun,
            id: String::new(),
            name: String::new(),
            image: image.map(str::to_string),
            range: Default::default(),
            scope: Default::default(),
            file: 0,
            refused: None,
            gpu_workload: true,
            gpus,
            ranks,
            launcher: launcher.map(str::to_string),
            workload: classify(&WorkloadFacts {
                command,
                image,
                env: &|_| None,
                distributed_kind: false,
            }),
            shm: crate::container::Shm::default_of("Docker"),
            ipc: "private".into(),
            ulimits: Default::default(),
            cap_add: Vec::new(),
            rdma: false,
            env: Default::default(),
        }
    }

    fn need(command: &str, image: Option<&str>, gpus: Option<Gpus>) -> ShmNeed {
        shm_need(&container(command, image, gpus), &POLICY)
    }

    /// The reference workload's use of /dev/shm, as measured on the engine
    /// (rules/SHM002.md): every need covers it, and the sizes it failed
    /// at are below the need.
    #[test]
    fn training_needs_cover_the_measured_workload() {
        for (ranks, used, failed_at) in [
            (1u64, 308_281_344u64, None),
            (2, 635_838_464, None),
            (4, 1_348_780_032, Some(GIB)),
            (8, 3_005_972_480, Some(2800 * MIB)),
        ] {
            let command = format!("torchrun --nproc_per_node={ranks} train.py");
            let c = container(&command, None, Some(Gpus::Count(ranks)));
            assert_eq!(c.workload.kind, WorkloadKind::Training);
            let n = shm_need(&c, &POLICY);
            assert!(n.bytes >= used, "{ranks} ranks: {} < {used}", n.bytes);
            if let Some(failed) = failed_at {
                assert!(
                    n.bytes > failed,
                    "{ranks} ranks: {} passes a size that failed",
                    n.bytes
                );
            }
        }
        // The thresholds themselves: clean sizes a user would write.
        let at = |ranks: u64| {
            need(
                &format!("torchrun --nproc_per_node {ranks} t.py"),
                None,
                None,
            )
            .bytes
        };
        assert_eq!(
            (at(1), at(2), at(4), at(8)),
            (512 * MIB, 768 * MIB, 1536 * MIB, 3 * GIB)
        );
    }

    #[test]
    fn workers_written_in_the_command_count() {
        let n = need(
            "torchrun --nproc_per_node=8 train.py --num_workers 2",
            None,
            None,
        );
        // 8 ranks × 2 workers × 36.75 MiB + 56 NCCL segments = 1.1 GiB.
        assert_eq!(n.bytes, 1280 * MIB);
        assert!(
            n.reason.contains("2 DataLoader workers each use"),
            "{}",
            n.reason
        );
        assert_eq!(
            dataloader_workers("python t.py data.num_workers=6"),
            Some(6)
        );
        assert_eq!(
            dataloader_workers("python t.py --dataloader-num-workers=3"),
            Some(3)
        );
        assert_eq!(dataloader_workers("python t.py --workers $W"), None);
        assert_eq!(dataloader_workers("python t.py"), None);
    }

    #[test]
    fn ranks_come_from_the_launcher_else_the_gpus() {
        let by_gpus = need("torchrun train.py", None, Some(Gpus::Count(4)));
        assert_eq!(by_gpus.bytes, 1536 * MIB);
        // All GPUs and no rank count: a full node of 8 ranks, which the
        // measured workload needs 3 GiB for (it failed at 2 GiB and 2800 MiB).
        let unknown = need(
            "torchrun --nproc_per_node=gpu train.py",
            None,
            Some(Gpus::All),
        );
        assert_eq!(
            (unknown.bytes, unknown.key),
            (3 * GIB, Some("dataloader-workers"))
        );
        assert!(
            unknown
                .reason
                .contains("(assumed, all GPUs taken as a full node of 8)"),
            "{}",
            unknown.reason
        );
        // A rank count nothing tells: at least one rank, a lower bound that
        // assumes nothing more, unless `min-size-multi-gpu` is set.
        let hidden = need("torchrun --nproc_per_node=$N train.py", None, None);
        assert_eq!(hidden.bytes, 512 * MIB);
        assert!(
            hidden.reason.contains("rank count unknown: at least one"),
            "{}",
            hidden.reason
        );
        let set = ShmPolicy {
            min_multi_gpu: Some(2 * GIB),
            ..POLICY
        };
        let c = container("torchrun --nproc_per_node=$N train.py", None, None);
        assert_eq!(
            (shm_need(&c, &set).bytes, shm_need(&c, &set).key),
            (2 * GIB, Some("min-size-multi-gpu"))
        );
        let accelerate = need("accelerate launch --num_processes 2 t.py", None, None);
        assert_eq!(accelerate.bytes, 768 * MIB);
    }

    #[test]
    fn serving_needs_nccl_and_the_engine() {
        // A 4-GPU vLLM: 160 MiB ring + 12 segments, under the 512 MiB floor.
        let vllm = need(
            "--model m --tensor-parallel-size 4",
            Some("vllm/vllm-openai:v0.6.3"),
            Some(Gpus::Count(4)),
        );
        assert_eq!(vllm.bytes, 512 * MIB);
        // 8 ranks: 160 MiB + 56 segments = 675 MiB.
        let vllm8 = need("vllm serve m -tp 8", None, Some(Gpus::Count(8)));
        assert_eq!(vllm8.bytes, 768 * MIB);
        assert!(
            vllm8
                .reason
                .starts_with("vLLM with 8 tensor-parallel ranks uses"),
            "{}",
            vllm8.reason
        );
        // TGI shards over every GPU it is given.
        let tgi = need(
            "--model-id m",
            Some("ghcr.io/huggingface/text-generation-inference:2.0"),
            Some(Gpus::All),
        );
        assert_eq!(tgi.bytes, 768 * MIB);
        let triton = container(
            "tritonserver --model-repository=/models",
            None,
            Some(Gpus::Count(1)),
        );
        assert_eq!(triton.workload.kind, WorkloadKind::Triton);
        assert_eq!(shm_need(&triton, &POLICY).bytes, 512 * MIB);
    }

    #[test]
    fn a_scripts_own_options_are_not_ranks() {
        let script = need(
            "torchrun --nproc_per_node=gpu train.py --tp 2",
            None,
            Some(Gpus::All),
        );
        assert_eq!(script.bytes, 3 * GIB);
        let one = need("vllm serve m", None, Some(Gpus::Count(1)));
        assert_eq!(one.bytes, 512 * MIB);
        assert!(
            one.reason.starts_with("vLLM on one GPU, and no GPU"),
            "{}",
            one.reason
        );
    }

    #[test]
    fn classify_reads_the_command_image_and_kind() {
        let facts = |command, image, env: &'static dyn Fn(&str) -> Option<String>, kind| {
            classify(&WorkloadFacts {
                command,
                image,
                env,
                distributed_kind: kind,
            })
        };
        let none: &dyn Fn(&str) -> Option<String> = &|_| None;
        let vllm = facts("vllm serve m -tp 2 -pp 2", None, none, false);
        assert_eq!((vllm.kind, vllm.ranks), (WorkloadKind::Vllm, Some(4)));
        let shards: &dyn Fn(&str) -> Option<String> =
            &|name| (name == "NUM_SHARD").then(|| "4".to_string());
        let tgi = facts(
            "--model-id m",
            Some("ghcr.io/huggingface/text-generation-inference:2.0"),
            shards,
            false,
        );
        assert_eq!((tgi.kind, tgi.ranks), (WorkloadKind::Tgi, Some(4)));
        // A distributed kind trains, unless what it runs is a server.
        let job = facts("python train.py --num_workers 4", None, none, true);
        assert_eq!(
            (job.kind, job.ranks, job.dataloader_workers),
            (WorkloadKind::Training, None, Some(4))
        );
        let ray = facts("vllm serve m", None, none, true);
        assert_eq!(ray.kind, WorkloadKind::Vllm);
        assert!(facts("python app.py", None, none, false).is_unknown());
    }

    /// A workload gpulint cannot classify gets what the heaviest measured
    /// one needs on as many GPUs: training, one rank per GPU.
    #[test]
    fn unclassified_is_sized_like_training_on_its_gpus() {
        assert_eq!(
            need("python app.py", None, Some(Gpus::Count(1))).bytes,
            512 * MIB
        );
        let all = need("python app.py", None, Some(Gpus::All));
        assert_eq!((all.bytes, all.key), (3 * GIB, Some("min-size-multi-gpu")));
        assert!(
            all.reason
                .starts_with("all GPUs (a full node of 8) share it and gpulint cannot tell"),
            "{}",
            all.reason
        );
        let (two, four) = (
            need("", None, Some(Gpus::Count(2))),
            need("", None, Some(Gpus::Count(4))),
        );
        assert_eq!((two.bytes, four.bytes), (768 * MIB, 1536 * MIB));
        assert_eq!(two.key, Some("min-size-multi-gpu"));
        // Set in gpulint.toml, `min-size-multi-gpu` is the threshold again.
        let set = ShmPolicy {
            min_multi_gpu: Some(2 * GIB),
            ..POLICY
        };
        let c = container("python app.py", None, Some(Gpus::All));
        assert_eq!(shm_need(&c, &set).bytes, 2 * GIB);
    }

    /// The message, the help and the fix state one number: the need,
    /// spelled as Compose and the Docker CLI read it.
    #[test]
    fn the_need_is_spelled_as_one_size() {
        let size = |bytes| {
            ShmNeed {
                bytes,
                reason: String::new(),
                key: None,
                assumed: false,
            }
            .size()
        };
        assert_eq!(
            (size(3 * GIB), size(768 * MIB), size(1536 * MIB)),
            ("3gb".to_string(), "768mb".to_string(), "1536mb".to_string())
        );
        for bytes in [512 * MIB, 1280 * MIB, 3 * GIB] {
            assert_eq!(
                crate::size::parse_compose_size(&size(bytes)),
                crate::size::SizeValue::Bytes {
                    bytes,
                    bare_number: false
                }
            );
        }
    }
}
