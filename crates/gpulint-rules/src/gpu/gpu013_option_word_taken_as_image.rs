//! GPU013: a word among a container's options that the CLI takes as the
//! image. A workflow's `options:`, a dev container's `runArgs` and a
//! Quadlet unit's `PodmanArgs=` all go before the image their tool adds: a
//! word there that is neither an option nor an option's value
//! (`--gpus all ulimit`) becomes the image, and the real image becomes
//! the command.

use crate::model::container::Platform;
use crate::{Check, Reporter, ScriptContext};

crate::declare_rule! {
    name: "option-word-taken-as-image",
    severity: Error,
    fix: None,
    summary: "a word among a container's options that the CLI takes as the image",
    sources: [
        "actions/runner `DockerCommandManager.DockerCreate` (`docker create {options} {env} {image}`)",
        "devcontainers/cli `spawnDevContainer` (`runArgs` before the image)",
        "podman-systemd.unit(5), `PodmanArgs=` (added before the image)",
        "docker/cli `cli/command/container/run.go` (the first argument that is no flag is the image)",
    ],
}

pub const CHECK: Check = Check::commands(check);

/// The setting the options are written in, and the tool that passes them.
struct Surface {
    setting: &'static str,
    /// The CLI that reads the options: `Docker` or `Podman`.
    cli: &'static str,
    consequence: &'static str,
}

fn check(cx: &ScriptContext, out: &mut Reporter) {
    for site in &cx.script.runs {
        let (Some(taken), Some(written)) = (site.stray_image(), site.image_written_at) else {
            continue;
        };
        let platform = cx.script.platform();
        let surface = match platform {
            Platform::DevContainer => Surface {
                setting: "`runArgs`",
                cli: "Docker",
                consequence: "the dev container does not start",
            },
            Platform::Quadlet => Surface {
                setting: "`PodmanArgs=`",
                cli: "Podman",
                consequence: "the unit's service fails to start",
            },
            // A command line with its image written apart: a workflow
            // job or service container.
            _ => Surface {
                setting: "`options:`",
                cli: "Docker",
                consequence: "the job fails in \"Initialize containers\"",
            },
        };
        let words = &cx.script.commands[site.command].1.words;
        // `options: --device-cgroup-rule 'c 195:* rmw'`: no shell reads
        // it, so `'` groups nothing and the quoted words come apart.
        let before = words
            .iter()
            .filter(|w| w.range.end <= taken.range.start)
            .max_by_key(|w| w.range.end);
        let single_quoted = platform == Platform::DockerRun
            && (taken.text.contains('\'') || before.is_some_and(|w| w.text.contains('\'')));
        let image = words
            .iter()
            .find(|w| w.range == written)
            .map_or("the image it builds".to_string(), |w| {
                format!("the image `{}`", w.text)
            });
        out.report(
            taken.range,
            format!(
                "`{}` in {} is no option: {} takes it as the image, and runs {image} as its command",
                taken.text, surface.setting, surface.cli
            ),
        )
        .label(format!(
            "neither an option nor an option's value: {} reads the first such word as the image",
            surface.cli
        ))
        .related(written, "the image meant")
        .note(format!(
            "{} looks for an image named `{}` and the pull fails (or an image of that name starts with the wrong command): {}",
            surface.cli, taken.text, surface.consequence
        ))
        .help(if single_quoted {
            "the runner splits `options:` without a shell, so `'` groups nothing: group the words of one value with `\"` (`--device-cgroup-rule \"c 195:* rmw\"`)".to_string()
        } else {
            format!(
                "write `{}` as the value of the option it belongs to (`--ulimit memlock=-1`, `--ipc=host`), or remove it from {}",
                taken.text, surface.setting
            )
        });
    }
}
