//! GPU004: a serving engine or launcher told to use more GPUs than its
//! container gets (vLLM tensor × pipeline parallel size, TGI shards, SGLang
//! tensor parallel size, DeepSpeed `--num_gpus`, torchrun
//! `--nproc_per_node`), when both numbers are known.

use crate::container_context::locate_setting;
use crate::fix::{Applicability, Edit, Fix, ModelPath};
use crate::model::container::ContainerRuntime;
use crate::model::docker_run::DockerRun;
use crate::model::parallel::{ParallelSize, Server, SizeSetting, parallel_size};
use crate::text::TextRange;
use crate::{Check, ContainerSite, DiagnosticBuilder, Reporter, ScriptContext};

crate::declare_rule! {
    name: "parallel-size-above-gpus",
    severity: Error,
    fix: DisplayOnly,
    summary: "a server or launcher starts more GPU workers than its container gets",
    sources: [
        "CUDA C Programming Guide, CUDA Environment Variables (`CUDA_VISIBLE_DEVICES`)",
        "vLLM `vllm/executor/mp_distributed_executor.py` `_check_cuda`",
        "TGI `server/text_generation_server/utils/dist.py` `initialize_torch_distributed`",
        "NCCL `src/init.cc` (`Duplicate GPU detected`)",
        "PyTorch torchrun docs (`--nproc-per-node`)",
        "DeepSpeed launcher docs (`--num_gpus`)",
        "SGLang server arguments (`--tp-size`)",
    ],
}

pub const CHECK: Check = Check::containers(container).and_slurm(slurm);

/// Where a setting is written: the option (or variable) and its value.
struct Located {
    whole: crate::diagnostic::At,
    value: TextRange,
}

/// [`locate_setting`] in a text of the linted file.
fn locate(text: &str, base: usize, setting: &SizeSetting) -> Option<Located> {
    let (whole, value) = locate_setting(text, base, setting)?;
    Some(Located {
        whole: whole.into(),
        value,
    })
}

fn gpus(n: u64) -> String {
    format!("{n} GPU{}", if n == 1 { "" } else { "s" })
}

/// What the server prints when it gets `gets` GPUs for `size`, as its
/// source says (rules/GPU004.md names each).
fn failure(size: &ParallelSize, gets: u64) -> String {
    let needs = size.gpus();
    match size.server {
        Server::Vllm if size.main.value > gets => format!(
            "vLLM stops with `please set tensor_parallel_size ({}) to less than max local gpu count ({gets})`",
            size.main.value
        ),
        Server::Vllm => format!(
            "vLLM stops with `please ensure that world_size ({needs}) is less than than max local gpu count ({gets})`"
        ),
        Server::Tgi => "each TGI shard asserts `Each process is one gpu` (`world_size <= torch.cuda.device_count()`), and the launcher stops when a shard fails".into(),
        Server::Sglang => "the SGLang workers past the last GPU stop with `CUDA error: invalid device ordinal` when they select their device".into(),
        Server::DeepSpeed | Server::Torchrun => "the ranks past the last GPU stop with `CUDA error: invalid device ordinal` when they select their device, or NCCL stops with `Duplicate GPU detected : rank 1 and rank 0 both on CUDA device` when two share one".into(),
    }
}

/// The GPUs the processes of a container see: what it gets, narrowed by
/// a `CUDA_VISIBLE_DEVICES` it sets (which then says so in the message).
struct Visible {
    gets: u64,
    narrowed_by: Option<String>,
}

impl Visible {
    /// What the processes of `container` see of the `reserved` GPUs, with
    /// the `CUDA_VISIBLE_DEVICES` of its environment in the container model
    /// (for compose, as the project merges it: an env_file too).
    fn in_container(reserved: Option<u64>, container: &ContainerRuntime) -> Option<Visible> {
        let listed = container
            .env
            .get("CUDA_VISIBLE_DEVICES")
            .and_then(Option::as_deref);
        Visible::of(reserved, listed)
    }

    /// `reserved` is `None` for all the host's GPUs (then only a
    /// `CUDA_VISIBLE_DEVICES` list tells how many the processes see).
    fn of(reserved: Option<u64>, cuda_visible_devices: Option<&str>) -> Option<Visible> {
        let listed = cuda_visible_devices.and_then(|v| visible_count(v, reserved).map(|n| (n, v)));
        let visible = match (reserved, listed) {
            (Some(gets), Some((n, value))) if n < gets => Visible {
                gets: n,
                narrowed_by: Some(value.to_string()),
            },
            (Some(gets), _) => Visible {
                gets,
                narrowed_by: None,
            },
            (None, Some((n, value))) => Visible {
                gets: n,
                narrowed_by: Some(value.to_string()),
            },
            (None, None) => return None,
        };
        (visible.gets > 0).then_some(visible)
    }
}

/// How many GPUs CUDA shows for a `CUDA_VISIBLE_DEVICES` list of indexes,
/// `GPU-` UUIDs or `MIG-` ids: it enumerates them in order and stops at the
/// first index the container does not have (CUDA C Programming Guide,
/// "CUDA Environment Variables"). `None` when it is only known at run time.
fn visible_count(value: &str, reserved: Option<u64>) -> Option<u64> {
    let value = value.trim();
    if value.contains('$') {
        return None;
    }
    let mut count = 0;
    for entry in value.split(',').map(str::trim) {
        match entry.parse::<u64>() {
            Ok(index) if reserved.is_none_or(|gets| index < gets) => count += 1,
            Ok(_) => break,
            Err(_) if entry.starts_with("GPU-") || entry.starts_with("MIG-") => count += 1,
            Err(_) => break,
        }
    }
    Some(count)
}

/// The finding, when `size` needs more GPUs than the container's processes
/// see; `located` is where the size is written, `fix_paths` what a fix
/// changes.
fn report<'r>(
    out: &'r mut Reporter,
    size: &ParallelSize,
    visible: Visible,
    owner: &str,
    located: Located,
    fix_with: impl FnOnce(String, Edit) -> Fix,
) -> Option<DiagnosticBuilder<'r>> {
    let Visible { gets, narrowed_by } = visible;
    let needs = size.gpus();
    if needs <= gets {
        return None;
    }
    let fix = size.fitting_value(gets).map(|value| {
        let title = format!(
            "Set `{}` to {value}, for the {} it gets",
            size.main.name,
            gpus(gets)
        );
        fix_with(
            title,
            Edit {
                range: located.value,
                content: value.to_string(),
            },
        )
    });
    let (sees, give) = match &narrowed_by {
        Some(value) => (
            format!("sees {gets} (`CUDA_VISIBLE_DEVICES={value}`)"),
            format!("let `CUDA_VISIBLE_DEVICES` show it {}", gpus(needs)),
        ),
        None => (format!("gets {gets}"), format!("give it {}", gpus(needs))),
    };
    let finding = out
        .report(
            located.whole,
            format!(
                "{} asks {} for {} but {owner} {sees}",
                size.describe(),
                size.server.name(),
                gpus(needs)
            ),
        )
        .label(format!("{}, one worker each", gpus(needs)))
        .note(format!("{}: it never starts serving or training", failure(size, gets)))
        .help(format!(
            "{give}, or lower the parallel size to fit {} (a model that needs more GPUs then needs a smaller or quantized variant)",
            gpus(gets)
        ))
        .fix(fix);
    Some(finding)
}

/// A compose service, a pod's container or a command line's container.
fn container(site: &ContainerSite, out: &mut Reporter) {
    let Some(given) = site.given_gpus() else {
        return;
    };
    let Some(visible) = Visible::in_container(given, site.model) else {
        return;
    };
    let env = |name: &str| site.env_value(name);
    let Some(size) = parallel_size(site.command_line(), site.image(), &env) else {
        return;
    };
    // A multi-node serving group (LeaderWorkerSet, a Ray cluster) pools the
    // GPUs of its pods; launchers count per pod.
    let per_pod = matches!(size.server, Server::Torchrun | Server::DeepSpeed);
    if site.in_distributed_group() && !per_pod {
        return;
    }
    let Some(written) = site.written_setting(&size.main) else {
        return;
    };
    let located = Located {
        whole: written.whole.clone(),
        value: written.value,
    };
    let finding = report(
        out,
        &size,
        visible,
        &site.describe(),
        located,
        |title, edit| written.display_fix(title, edit.content),
    );
    // Where its GPUs are asked for in another place: the compose file that
    // reserves them, the InferenceService KServe merges into a runtime.
    finding.map(|finding| site.gpu_evidence(finding));
}

/// Servers started on the nodes of a batch job; torchrun is SLURM003's.
fn slurm(cx: &ScriptContext, out: &mut Reporter) {
    if cx.script.batches.is_empty() {
        return;
    }
    let ray = cx.script.commands.iter().any(|(_, command)| {
        command.words.iter().any(|w| {
            w.text
                .split(|c: char| !c.is_ascii_alphanumeric())
                .any(|part| part.eq_ignore_ascii_case("ray"))
        })
    });
    if ray {
        return;
    }
    for (n, (_, command)) in cx.script.commands.iter().enumerate() {
        let Some(batch) = cx.script.batch_for(command.range()) else {
            continue;
        };
        let Some((gets, _)) = batch.gpus_per_node() else {
            continue;
        };
        // A job on several nodes may spread a server over the GPUs of all
        // its nodes.
        let one_node = batch.get("--nodes").is_none() || batch.count("--nodes") == Some(1);
        if gets == 0 || !one_node {
            continue;
        }
        // A container's GPUs are its own (the commands check reads them);
        // an `srun` that asks for GPUs itself changes the share.
        let srun_gpus = command.words.iter().any(|w| {
            ["--gpus", "--gres", "-G"]
                .iter()
                .any(|o| w.text.starts_with(o))
        });
        if DockerRun::find(command).is_some() || srun_gpus {
            continue;
        }
        let line: Vec<&str> = command.words.iter().map(|w| w.text.as_str()).collect();
        let Some(size) = parallel_size(&line.join(" "), None, &|_| None) else {
            continue;
        };
        if size.server == Server::Torchrun {
            continue;
        }
        let range = command.range();
        let Some(located) = cx
            .text
            .get(range.as_range())
            .and_then(|text| locate(text, range.start as usize, &size.main))
        else {
            continue;
        };
        report(
            out,
            &size,
            Visible {
                gets,
                narrowed_by: None,
            },
            "each node of the job",
            located,
            |title, edit| {
                Fix::new(
                    title,
                    Applicability::DisplayOnly,
                    vec![edit],
                    vec![ModelPath::new(["command".to_string(), n.to_string()])],
                )
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuda_visible_devices_narrows_what_the_processes_see() {
        let sees = |reserved, value| Visible::of(reserved, value).map(|v| (v.gets, v.narrowed_by));
        assert_eq!(sees(Some(8), None), Some((8, None)));
        assert_eq!(sees(Some(8), Some("0,1")), Some((2, Some("0,1".into()))));
        // Listing more than the container has shows only what it has.
        assert_eq!(sees(Some(2), Some("0,1,2,3")), Some((2, None)));
        // CUDA stops at the first index the container lacks.
        assert_eq!(
            sees(Some(2), Some("1,5,0")),
            Some((1, Some("1,5,0".into())))
        );
        assert_eq!(sees(Some(2), Some("2,3")), None);
        assert_eq!(
            sees(None, Some("GPU-6f1c,MIG-1")),
            Some((2, Some("GPU-6f1c,MIG-1".into())))
        );
        assert_eq!(sees(None, Some("5")), Some((1, Some("5".into()))));
        // All the host's GPUs, or a list only known at run time: unknown.
        assert_eq!(sees(None, None), None);
        assert_eq!(sees(None, Some("$GPUS")), None);
        assert_eq!(sees(Some(4), Some("${GPUS}")), Some((4, None)));
    }

    #[test]
    fn locates_each_spelling() {
        let setting = SizeSetting {
            name: "--tensor-parallel-size".into(),
            value: 4,
            written: "4".into(),
            from_env: false,
        };
        for text in [
            "--model m --tensor-parallel-size 4 --port 8000",
            "[\"--model\", \"m\", \"--tensor-parallel-size\", \"4\"]",
            "--tensor-parallel-size=4",
            "- --tensor-parallel-size\n        - \"4\"",
        ] {
            let located = locate(text, 10, &setting).expect(text);
            assert_eq!(
                &text[located.value.start as usize - 10..][..1],
                "4",
                "{text}"
            );
        }
        assert!(locate("--tensor-parallel-size 42", 0, &setting).is_none());
        assert!(locate("--xtensor-parallel-size 4", 0, &setting).is_none());
    }
}
