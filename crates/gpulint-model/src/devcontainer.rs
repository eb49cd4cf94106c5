//! Dev containers: a `devcontainer.json` read as the `docker run` the Dev
//! Container CLI makes of it (devcontainers/cli `spawnDevContainer` in
//! `src/spec-node/singleContainer.ts`): a `--mount` for each `mounts`
//! entry, `-e` for each `containerEnv` entry, then `runArgs` as written,
//! then `--gpus all` when `hostRequirements.gpu` is set (`true`,
//! `"optional"` or an object, on a host with GPUs), then `--init`,
//! `--privileged`, `--cap-add` and `--security-opt`, then the image. The `docker run` model reads it, so
//! every rule that judges a `docker run` judges the dev container too.
//!
//! A configuration with `dockerComposeFile` is a Compose project instead
//! (`runArgs` is not read then): its container is the named `service`,
//! to which the CLI's own compose override gives every GPU for
//! `hostRequirements.gpu`.

use crate::compose::{Service, Vendor, settle_build_evidence};
use crate::container::Gpus;
use crate::docker_run::DockerRun;
use crate::syntax::jsonc::{self, Jsonc, Kind, Value};
use crate::syntax::shell::{Command, Word};
use crate::text::TextRange;

/// What a `devcontainer.json` says, with the parsed text its fixes edit.
#[derive(Debug, Clone, PartialEq)]
pub struct DevContainer {
    pub json: Jsonc,
    /// `dockerComposeFile` (one path or several) and `service`.
    pub compose: Option<ComposeBacked>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ComposeBacked {
    /// Relative to the `devcontainer.json`'s directory, in order.
    pub files: Vec<(String, TextRange)>,
    pub service: Option<(String, TextRange)>,
    /// `runServices`: the services `devcontainer up` names to `docker
    /// compose up` (with `service`); empty or absent, it names none and
    /// Compose starts every service.
    pub run_services: Vec<String>,
}

/// The file names the Dev Container CLI looks for: `.devcontainer.json`
/// at the top, `.devcontainer/devcontainer.json` and
/// `.devcontainer/<folder>/devcontainer.json`.
pub fn is_devcontainer_name(name: &str) -> bool {
    matches!(name, "devcontainer.json" | ".devcontainer.json")
}

impl DevContainer {
    pub fn parse(text: &str) -> Result<DevContainer, jsonc::JsonError> {
        let json = jsonc::parse(text)?;
        if json.root.as_object().is_none() {
            return Err(jsonc::JsonError {
                message: "a devcontainer.json holds one JSON object".into(),
                offset: json.root.range.start as usize,
            });
        }
        let compose = json.root.get("dockerComposeFile").map(|files| {
            let strings = |v: &Value| v.as_str().map(|s| (s.to_string(), v.range));
            ComposeBacked {
                files: match &files.kind {
                    Kind::Array(items) => items.iter().filter_map(strings).collect(),
                    _ => strings(files).into_iter().collect(),
                },
                service: json.root.get("service").and_then(strings),
                run_services: json
                    .root
                    .get("runServices")
                    .and_then(Value::as_array)
                    .unwrap_or(&[])
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect(),
            }
        });
        Ok(DevContainer { json, compose })
    }

    /// `runArgs`, when it is an array.
    pub fn run_args(&self) -> Option<&Value> {
        self.json
            .root
            .get("runArgs")
            .filter(|v| v.as_array().is_some())
    }

    /// The member `hostRequirements.gpu` when it asks for GPUs.
    pub(crate) fn gpu_requirement(&self) -> Option<&jsonc::Member> {
        self.json
            .root
            .get("hostRequirements")?
            .member("gpu")
            .filter(|m| m.value.truthy())
    }

    /// The `docker run` the Dev Container CLI starts, as a command of
    /// words whose ranges are in the file (a string's text between its
    /// quotes); `None` for a Compose-backed configuration, whose container
    /// Compose creates.
    pub fn command(&self) -> Option<Command> {
        if self.compose.is_some() {
            return None;
        }
        let root = &self.json.root;
        // Where findings about the whole container point.
        let anchor = root
            .member("runArgs")
            .map(|m| m.key_range)
            .or_else(|| self.gpu_requirement().map(|m| m.key_range))
            .or_else(|| root.member("image").map(|m| m.key_range))
            .unwrap_or(TextRange::new(
                root.range.start as usize,
                root.range.start as usize + 1,
            ));
        let word = |text: &str, range: TextRange, dynamic: bool| Word {
            text: text.to_string(),
            range,
            dynamic,
        };
        let mut words = vec![word("docker", anchor, false), word("run", anchor, false)];
        // `mounts`: a string is passed as it is, an object as
        // `type=T,src=S,dst=D` (devcontainers/cli `generateMountCommand`).
        for mount in root.get("mounts").and_then(Value::as_array).unwrap_or(&[]) {
            let field = |name: &str| mount.get(name).and_then(Value::as_str);
            let (text, range) = match (mount.as_str(), field("type"), field("target")) {
                (Some(text), _, _) => (text.to_string(), mount.inner_range()),
                (None, Some(kind), Some(target)) => {
                    let source = field("source").map_or(String::new(), |s| format!("src={s},"));
                    (format!("type={kind},{source}dst={target}"), mount.range)
                }
                // Not a mount the CLI can pass: what it gives is not read.
                _ => ("-?".to_string(), mount.range),
            };
            if text == "-?" {
                words.push(word(&text, range, true));
                continue;
            }
            words.push(word("--mount", range, false));
            words.push(word(&text, range, text.contains("${")));
        }
        if let Some(env) = root.get("containerEnv").and_then(Value::as_object) {
            for member in env {
                let Some(value) = member.value.as_str() else {
                    continue;
                };
                let setting = format!("{}={value}", member.key);
                words.push(word("-e", member.range(), false));
                words.push(word(&setting, member.range(), value.contains("${")));
            }
        }
        for arg in self.run_args().and_then(Value::as_array).unwrap_or(&[]) {
            match arg.as_str() {
                Some(text) => words.push(word(text, arg.inner_range(), text.contains("${"))),
                // Not a string: what the CLI passes on is not read.
                None => words.push(word("-?", arg.range, true)),
            }
        }
        if let Some(gpu) = self.gpu_requirement() {
            words.push(word("--gpus", gpu.range(), false));
            words.push(word("all", gpu.range(), false));
        }
        // After `runArgs` and the GPUs, as `spawnDevContainer` orders them.
        for flag in ["init", "privileged"] {
            if let Some(member) = root.member(flag).filter(|m| m.value.truthy()) {
                words.push(word(&format!("--{flag}"), member.range(), false));
            }
        }
        for (key, flag) in [("capAdd", "--cap-add"), ("securityOpt", "--security-opt")] {
            for item in root.get(key).and_then(Value::as_array).unwrap_or(&[]) {
                if let Some(text) = item.as_str() {
                    words.push(word(flag, item.inner_range(), false));
                    words.push(word(text, item.inner_range(), text.contains("${")));
                }
            }
        }
        if let Some(image) = root.get("image").filter(|v| v.as_str().is_some()) {
            let text = image.as_str().unwrap_or_default();
            words.push(word(text, image.inner_range(), text.contains("${")));
        }
        Some(Command { words })
    }

    /// A Compose-backed configuration's services as the Dev Container CLI
    /// starts them. For `hostRequirements.gpu` (on a host with GPUs) the
    /// override file it writes and gives Compose last reserves every GPU
    /// for `service` (`deploy.resources.reservations.devices:
    /// [{capabilities: [gpu]}]`, devcontainers/cli
    /// `generateFeaturesComposeOverrideContent`), added to the service's
    /// own requests; a project where some service reserves GPUs no longer
    /// counts the others built on a CUDA image as GPU services. With
    /// `runServices`, only those, `service` and what they depend on start.
    pub fn started_services(&self, services: &[Service]) -> Vec<Service> {
        let mut started = services.to_vec();
        let name = self.compose.as_ref().and_then(|c| c.service.as_ref());
        // `runServices` and `service` are named to `docker compose up`
        // (devcontainers/cli `dockerCompose.ts`), which starts them and
        // what they depend on; the other services are never created.
        if let Some(compose) = self.compose.as_ref().filter(|c| !c.run_services.is_empty()) {
            let mut wanted: Vec<String> = compose.run_services.clone();
            wanted.extend(name.map(|(name, _)| name.clone()));
            let mut at = 0;
            while let Some(next) = wanted.get(at).cloned() {
                let needs = started.iter().find(|s| s.name == next);
                for dependency in needs.map(|s| s.depends_on.clone()).unwrap_or_default() {
                    if !wanted.contains(&dependency) {
                        wanted.push(dependency);
                    }
                }
                at += 1;
            }
            started.retain(|s| wanted.contains(&s.name));
        }
        let service = name.and_then(|(name, _)| started.iter_mut().find(|s| &s.name == name));
        if let (Some(service), Some(_)) = (service, self.gpu_requirement()) {
            let gpu = &mut service.gpu;
            gpu.count = Some(gpu.count.map_or(Gpus::All, |c| c.combine(Gpus::All)));
            gpu.vendor = Some(Vendor::Nvidia);
            if gpu.reserved.is_none() {
                gpu.reserved = Some("`hostRequirements.gpu` of the dev container".into());
            }
            settle_build_evidence(&mut started);
        }
        started
    }

    /// Where the configuration names the image the Dev Container CLI
    /// passes after the options: `image`, or the `build` (or the older
    /// `dockerFile`) whose image it builds.
    pub fn image_written_at(&self) -> Option<TextRange> {
        let root = &self.json.root;
        if let Some(image) = root.get("image").filter(|v| v.as_str().is_some()) {
            return Some(image.inner_range());
        }
        ["build", "dockerFile", "dockerfile"]
            .iter()
            .find_map(|key| root.member(key))
            .map(|m| m.key_range)
    }

    /// The dev container's `docker run`, read by the `docker run` model.
    pub fn run(&self, command: &Command) -> Option<DockerRun> {
        let mut run = DockerRun::find(command)?;
        run.program = "devcontainer".into();
        run.subcommand.text = "up".into();
        // `"--shm-size 8g"` is one argument: the Docker CLI refuses it as
        // an unknown flag, and what it meant is not read.
        let run_args = self.run_args().and_then(Value::as_array).unwrap_or(&[]);
        if let Some(other) = run_args.iter().find(|a| a.as_str().is_none()) {
            let at = other.range.start;
            run.uncertain = Some(format!(
                "a `runArgs` item that is not a string (at byte {at}): what the CLI passes is not read"
            ));
        }
        if let Some(joined) = run_args
            .iter()
            .filter_map(Value::as_str)
            .find(|a| a.starts_with('-') && a.split('=').next().is_some_and(|f| f.contains(' ')))
        {
            run.uncertain = Some(format!(
                "`{joined}` is one argument in `runArgs`: the Docker CLI reads it as an unknown flag"
            ));
        }
        Some(run)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::container::{Gpus, ShmKind, ShmSetting};

    fn run(text: &str) -> Option<DockerRun> {
        let dev = DevContainer::parse(text).unwrap();
        dev.run(&dev.command()?)
    }

    #[test]
    fn run_args_are_docker_run_options() {
        let run = run(r#"{
            // comment
            "image": "nvcr.io/nvidia/pytorch:24.01-py3",
            "runArgs": ["--gpus", "all", "--ipc=host",],
        }"#)
        .unwrap();
        assert_eq!(run.gpus(), Gpus::All);
        assert_eq!(run.shm().kind, ShmKind::Host);
        assert_eq!(run.image.unwrap().text, "nvcr.io/nvidia/pytorch:24.01-py3");
    }

    #[test]
    fn host_requirements_gpu_adds_gpus_all_after_run_args() {
        for gpu in ["true", "\"optional\"", "{\"cores\": 1}"] {
            let text = format!("{{\"image\": \"x\", \"hostRequirements\": {{\"gpu\": {gpu}}}}}");
            let run = run(&text).unwrap();
            assert_eq!(run.gpus(), Gpus::All, "{gpu}");
            let shm = run.shm();
            assert_eq!(
                (shm.kind, shm.decided_by),
                (ShmKind::Default, ShmSetting::Default)
            );
        }
        let run = run("{\"image\": \"x\", \"hostRequirements\": {\"gpu\": false}}").unwrap();
        assert_eq!(run.gpu_request(), None);
    }

    #[test]
    fn container_env_is_passed_with_e() {
        let run =
            run(r#"{"image": "x", "containerEnv": {"NCCL_P2P_DISABLE": "1", "N": 2}}"#).unwrap();
        let env: Vec<_> = run.env().map(|(n, v, _)| (n, v)).collect();
        assert_eq!(env, [("NCCL_P2P_DISABLE", Some("1"))]);
    }

    #[test]
    fn a_compose_backed_configuration_starts_no_docker_run() {
        let text = r#"{"dockerComposeFile": ["../compose.yaml", "compose.extend.yml"], "service": "app", "runArgs": ["--gpus", "all"]}"#;
        let dev = DevContainer::parse(text).unwrap();
        assert!(dev.command().is_none());
        let compose = dev.compose.unwrap();
        assert_eq!(compose.files.len(), 2);
        assert_eq!(compose.service.unwrap().0, "app");
    }

    /// `mounts` come first and a mount at /dev/shm is the container's
    /// whatever `runArgs` say of the IPC mode; `capAdd` and `privileged`
    /// are passed after `runArgs` (devcontainers/cli `spawnDevContainer`).
    #[test]
    fn mounts_and_cap_add_are_passed_as_the_cli_passes_them() {
        let sized = run(r#"{"image": "x", "hostRequirements": {"gpu": true},
            "mounts": ["type=tmpfs,target=/dev/shm,tmpfs-size=4294967296"],
            "runArgs": ["--ipc=host"], "capAdd": ["IPC_LOCK"], "privileged": true}"#)
        .unwrap();
        let shm = sized.shm();
        assert_eq!((shm.kind, shm.bytes), (ShmKind::Sized, Some(4 << 30)));
        let flags: Vec<_> = sized.options.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(
            flags,
            ["--mount", "--ipc", "--gpus", "--privileged", "--cap-add"]
        );
        assert_eq!(
            sized.option("--cap-add").unwrap().1.value.as_deref(),
            Some("IPC_LOCK")
        );
        // An object mount: a named volume there is disk.
        let volume = run(
            r#"{"image": "x", "mounts": [{"source": "shm", "target": "/dev/shm", "type": "volume"}]}"#,
        )
        .unwrap();
        assert_eq!(volume.shm().kind, ShmKind::Disk);
    }

    #[test]
    fn an_option_and_value_in_one_argument_is_not_read() {
        let run = run(r#"{"image": "x", "runArgs": ["--gpus", "all", "--shm-size 8g"]}"#).unwrap();
        assert!(run.uncertain.as_deref().unwrap().contains("one argument"));
        assert_eq!(run.shm().kind, ShmKind::Unknown);
    }
}
