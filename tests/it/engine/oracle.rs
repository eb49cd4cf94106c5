//! The engine side of tests/it/engine.rs: load a Compose project with the real
//! `docker compose`, create its containers, read them back with `docker
//! inspect`, start them and look at `/dev/shm` from inside, and compare each
//! fact with what `gpulint inspect` says.
//!
//! Known differences between gpulint (which follows the current Compose
//! specification) and the Compose that judges (.ci/engine pins 2.40) are listed in
//! [`known_difference`], each with its reason; everything else that differs
//! is a disagreement and fails the test.

use crate::common::docker::{DEFAULT_FILES, DEFAULT_OVERRIDES, compose, docker, run, text};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

pub const MIB: u64 = 1024 * 1024;
const PAGE: u64 = 4096;

/// The run phase's entrypoint: what /dev/shm is, then sleep (IPC donors
/// must stay up for the containers that join them).
const PROBE: &str = "echo PROBE $$(stat -f -c %T /dev/shm 2>/dev/null || echo absent) $$(df -B1 --output=size /dev/shm 2>/dev/null | tail -1); exec sleep infinity";

static PROJECTS: AtomicUsize = AtomicUsize::new(0);

/// The judging Compose's (major, minor) version, read by [`Engine::connect`].
static JUDGE_COMPOSE: std::sync::OnceLock<(u32, u32)> = std::sync::OnceLock::new();

fn judge_compose_before(major: u32, minor: u32) -> bool {
    JUDGE_COMPOSE
        .get()
        .is_some_and(|&version| version < (major, minor))
}

/// A Compose project to judge.
pub struct Case {
    pub label: String,
    /// The project directory: Compose runs there.
    pub dir: PathBuf,
    /// Compose files given with `-f`, in order; empty means Compose's own
    /// discovery (`compose.yaml` and its `compose.override.yaml`).
    pub files: Vec<String>,
    /// What `gpulint inspect` is pointed at: the files whose services
    /// Compose creates (a default project's base and override, an overlay
    /// merged over its base), or the directory.
    pub targets: Vec<PathBuf>,
    /// Removed when the case is dropped.
    pub cleanup: Option<PathBuf>,
    /// Many generated cases in one project: when Compose refuses it, the
    /// caller judges them one by one instead of recording the refusal.
    pub batch: bool,
    /// The generated cases in the project, by number.
    pub members: Vec<usize>,
    /// A file taken out of its repository (the corpus): when Compose
    /// cannot load or create it without its siblings (`.env`, `env_file`,
    /// the base it extends, bind sources, variables), it is listed as not
    /// loadable here instead of judged.
    pub alone: bool,
    /// Start the containers and read `/dev/shm` from inside; `false` for
    /// cases about what Compose loads, whose containers `docker inspect`
    /// already judges (the run phase costs seconds a project).
    pub run: bool,
}

impl Drop for Case {
    fn drop(&mut self) {
        if let Some(dir) = &self.cleanup {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl Case {
    /// The default project of `dir`, as Compose discovers it.
    /// A refused batch's members in two halves, each packed by `batch`
    /// into a case of its own.
    pub fn halves(&self, batch: impl Fn(&[usize]) -> Case) -> Vec<Case> {
        let (a, b) = self.members.split_at(self.members.len() / 2);
        [a, b]
            .into_iter()
            .filter(|m| !m.is_empty())
            .map(batch)
            .collect()
    }

    pub fn project(label: &str, dir: &Path) -> Case {
        Case {
            label: label.to_string(),
            dir: dir.to_path_buf(),
            files: Vec::new(),
            targets: vec![dir.to_path_buf()],
            cleanup: None,
            batch: false,
            members: Vec::new(),
            alone: false,
            run: true,
        }
    }

    /// The projects in `dir`: Compose's default project when it has one
    /// (its first default file and first override, as Compose picks them),
    /// and every other compose file alone. A lone file that Compose would
    /// not discover (`invalid.yaml`) is given with `-f`. `cleanup` is
    /// removed when the last case is dropped.
    pub fn from_dir(label: &str, dir: &Path, cleanup: &Path) -> Vec<Case> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| {
                let e = e.unwrap();
                let name = e.file_name().to_string_lossy().to_string();
                let yaml = name.ends_with(".yaml") || name.ends_with(".yml");
                (e.file_type().unwrap().is_file() && yaml && !is_kubernetes(&e.path()))
                    .then_some(name)
            })
            .collect();
        names.sort();
        let mut cases = Vec::new();
        let base = DEFAULT_FILES.iter().find(|n| names.iter().any(|m| m == *n));
        let mut used: Vec<&str> = Vec::new();
        if let Some(base) = base {
            used.push(base);
            if let Some(o) = DEFAULT_OVERRIDES
                .iter()
                .find(|n| names.iter().any(|m| m == *n))
            {
                used.push(o);
            }
            cases.push(Case {
                label: label.to_string(),
                dir: dir.to_path_buf(),
                files: Vec::new(),
                // The project's own files: a file it extends is judged on
                // its own below, and its services are not this project's.
                targets: used.iter().map(|n| dir.join(n)).collect(),
                cleanup: None,
                batch: false,
                members: Vec::new(),
                alone: false,
                run: true,
            });
        }
        for name in &names {
            if used.contains(&name.as_str())
                || DEFAULT_FILES.contains(&name.as_str())
                || DEFAULT_OVERRIDES.contains(&name.as_str())
            {
                continue;
            }
            let shown = if label.ends_with(name.as_str()) {
                label.to_string()
            } else {
                format!("{label}/{name}")
            };
            // An overlay (`docker-compose.gpu.yml` next to the base whose
            // services it adds to) is run as users run it: `-f base -f
            // overlay`; so is a file `COMPOSE_FILE` in `.env` names.
            let workspace =
                gpulint::project::Workspace::new(gpulint::vfs::Files::snapshot(gpulint::vfs::Disk));
            let specs =
                gpulint::project::discover::projects_of(&workspace, &dir.join(name), &[], &[]);
            // A file the directory's own project extends or includes is
            // judged with that project (Compose never runs it alone).
            if specs.first().is_some_and(|spec| {
                matches!(
                    spec.how,
                    gpulint::project::Discovery::Default | gpulint::project::Discovery::ComposeFile
                ) && !spec.names(&dir.join(name))
            }) {
                continue;
            }
            let files = match specs.first() {
                Some(spec) if spec.files.len() > 1 => spec
                    .files
                    .iter()
                    .map(|f| f.file_name().unwrap().to_string_lossy().to_string())
                    .collect(),
                _ => vec![name.clone()],
            };
            cases.push(Case {
                label: shown,
                dir: dir.to_path_buf(),
                files,
                targets: vec![dir.join(name)],
                cleanup: None,
                batch: false,
                members: Vec::new(),
                alone: false,
                run: true,
            });
        }
        if let Some(last) = cases.last_mut() {
            last.cleanup = Some(cleanup.to_path_buf());
        }
        cases
    }
}

/// What was judged, and every disagreement.
#[derive(Default)]
pub struct Tally {
    pub projects: usize,
    /// Services compared with a created container.
    pub services: usize,
    /// Containers started and looked at from inside.
    pub ran: usize,
    /// Projects that Compose refused to load or create, and gpulint flagged.
    pub refused: Vec<String>,
    /// Projects gpulint has nothing to say about (no compose service).
    pub skipped: Vec<String>,
    /// Files Compose cannot load or create without their repository, and why.
    pub unloadable: Vec<String>,
    /// Projects whose services name no image (fixtures show only the
    /// settings under test): given the workload image to load.
    pub imageless: Vec<String>,
    /// Known differences met, by kind.
    pub known: BTreeMap<&'static str, Vec<String>>,
    /// Settings the sandbox cannot give, and how they were handled.
    pub sandbox: Vec<String>,
    pub disagreements: Vec<String>,
}

impl Tally {
    pub fn report(&self) -> String {
        let mut out = format!(
            "  {} projects, {} services compared with `docker inspect`, {} containers run and read with df; {} refused by Compose and flagged by gpulint; {} without compose services\n",
            self.projects,
            self.services,
            self.ran,
            self.refused.len(),
            self.skipped.len()
        );
        if !self.imageless.is_empty() {
            out.push_str(&format!(
                "  {} projects name no image for some service (Compose refuses that); each was given the workload image\n",
                self.imageless.len()
            ));
        }
        for r in &self.refused {
            out.push_str(&format!("  refused: {r}\n"));
        }
        for r in &self.unloadable {
            out.push_str(&format!("  not loadable without its repository: {r}\n"));
        }
        for (kind, cases) in &self.known {
            out.push_str(&format!(
                "  known difference ({} cases): {kind}\n",
                cases.len()
            ));
            for c in cases.iter().take(3) {
                out.push_str(&format!("    e.g. {c}\n"));
            }
        }
        for s in &self.sandbox {
            out.push_str(&format!("  sandbox: {s}\n"));
        }
        out.push_str(&format!("  {} disagreements\n", self.disagreements.len()));
        for d in &self.disagreements {
            out.push_str(&format!("  DISAGREE {d}\n"));
        }
        out
    }

    pub fn merge(&mut self, other: Tally) {
        self.projects += other.projects;
        self.services += other.services;
        self.ran += other.ran;
        self.refused.extend(other.refused);
        self.skipped.extend(other.skipped);
        self.imageless.extend(other.imageless);
        self.unloadable.extend(other.unloadable);
        for (k, v) in other.known {
            self.known.entry(k).or_default().extend(v);
        }
        self.sandbox.extend(other.sandbox);
        self.disagreements.extend(other.disagreements);
    }
}

/// A connection to the engine, with the facts of the host it runs on.
pub struct Engine {
    image: String,
    /// The host's /dev/shm size, which `ipc: host` gives.
    host_shm: u64,
    /// The size of a tmpfs mounted with no size: half the memory.
    unsized_tmpfs: u64,
    /// The host's memory in pages (`MemTotal`), which a tmpfs `size=N%`
    /// takes its share of.
    ram_pages: u64,
    /// Hard limits (bytes or counts) the sandbox cannot raise, by ulimit name.
    hard_limits: BTreeMap<String, i64>,
    /// A container kept running whose network namespace the run phase's
    /// containers join (`network_mode: container:NAME`), removed with the
    /// engine.
    network_holder: String,
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = docker(&["rm", "-f", &self.network_holder]);
    }
}

impl Engine {
    /// The workload image every judged container runs.
    pub fn image(&self) -> &str {
        &self.image
    }

    /// Judges `cases` on `threads` threads (the engine works while the
    /// harness waits on it), each case's work in the order given.
    pub fn judge_all(
        &self,
        cases: &[Case],
        threads: usize,
        on_refused: impl Fn(&Case) -> Vec<Case> + Sync,
    ) -> Tally {
        let mut total = Tally::default();
        for tally in self.judge_each(cases, threads, on_refused) {
            total.merge(tally);
        }
        total.refused.sort();
        total.disagreements.sort();
        total
    }

    /// [`Engine::judge_all`], one tally per case (with the parts a refused
    /// batch was split into), in the order of `cases`.
    pub fn judge_each(
        &self,
        cases: &[Case],
        threads: usize,
        on_refused: impl Fn(&Case) -> Vec<Case> + Sync,
    ) -> Vec<Tally> {
        let next = AtomicUsize::new(0);
        let mut judged: Vec<(usize, Tally)> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    scope.spawn(|| {
                        let mut judged = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(case) = cases.get(i) else { break };
                            let mut tally = Tally::default();
                            if !self.judge(case, &mut tally) {
                                // Refused batches are split until each
                                // refusal is a case of its own.
                                let mut stack = on_refused(case);
                                while let Some(part) = stack.pop() {
                                    if !self.judge(&part, &mut tally) {
                                        stack.extend(on_refused(&part));
                                    }
                                }
                            }
                            judged.push((i, tally));
                        }
                        judged
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().unwrap())
                .collect()
        });
        judged.sort_by_key(|(i, _)| *i);
        judged.into_iter().map(|(_, tally)| tally).collect()
    }

    pub fn connect() -> Result<Engine, String> {
        let info = Command::new("docker")
            .args(["info", "--format", "{{.ServerVersion}}"])
            .output();
        if !info.as_ref().is_ok_and(|o| o.status.success()) {
            return Err(
                "no Docker Engine answers `docker info`: run `eval \"$(bash .ci/engine start)\"`"
                    .into(),
            );
        }
        // Networks left by an earlier run that was killed (its projects are
        // named after its process id) would use up Docker's address pools;
        // its network holders are removed too.
        let left_by_the_dead = |name: &str| {
            name.strip_prefix("gljudge")
                .and_then(|rest| rest.split('-').next())
                .and_then(|pid| pid.parse::<u32>().ok())
                .is_some_and(|pid| {
                    pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists()
                })
        };
        let networks = docker(&["network", "ls", "--format", "{{.Name}}"]);
        for name in String::from_utf8_lossy(&networks.stdout).lines() {
            if left_by_the_dead(name) {
                let _ = docker(&["network", "rm", name]);
            }
        }
        let holders = docker(&[
            "ps",
            "-a",
            "--filter",
            "name=-netns-",
            "--format",
            "{{.Names}}",
        ]);
        for name in String::from_utf8_lossy(&holders.stdout).lines() {
            if left_by_the_dead(name) {
                let _ = docker(&["rm", "-f", name]);
            }
        }
        let compose = run(compose().args(["version", "--short"]));
        if !compose.status.success() {
            return Err(format!(
                "`docker compose` (v2) is missing: {}",
                text(&compose)
            ));
        }
        let version = text(&compose);
        let mut parts = version.trim().trim_start_matches('v').split(['.', '-']);
        let mut number = || {
            parts
                .next()
                .and_then(|p| p.parse::<u32>().ok())
                .unwrap_or(0)
        };
        let _ = JUDGE_COMPOSE.set((number(), number()));
        let image = std::env::var("GPULINT_ENGINE_IMAGE").map_err(|_| {
            "GPULINT_ENGINE_IMAGE is not set: run `eval \"$(bash .ci/engine start)\"`".to_string()
        })?;
        if !docker(&["image", "inspect", &image]).status.success() {
            return Err(format!(
                "the workload image {image} is missing: run .ci/engine start"
            ));
        }
        let host_shm = df_bytes(&run(Command::new("df").args([
            "-B1",
            "--output=size",
            "/dev/shm",
        ])));
        let unsized_probe = docker(&[
            "run",
            "--rm",
            "--tmpfs",
            "/probe",
            &image,
            "df",
            "-B1",
            "--output=size",
            "/probe",
        ]);
        assert!(
            unsized_probe.status.success(),
            "probe: {}",
            text(&unsized_probe)
        );
        let mut hard_limits = BTreeMap::new();
        let limits = std::fs::read_to_string("/proc/self/limits").unwrap();
        for (name, label) in [
            ("memlock", "Max locked memory"),
            ("nofile", "Max open files"),
            ("stack", "Max stack size"),
            ("nproc", "Max processes"),
            ("core", "Max core file size"),
        ] {
            let line = limits.lines().find(|l| l.starts_with(label)).unwrap();
            let hard = line[label.len()..].split_whitespace().nth(1).unwrap();
            let hard = if hard == "unlimited" {
                -1
            } else {
                hard.parse().unwrap()
            };
            hard_limits.insert(name.to_string(), hard);
        }
        eprintln!(
            "engine {}, compose {}, image {image}",
            String::from_utf8_lossy(&info.unwrap().stdout).trim(),
            String::from_utf8_lossy(&compose.stdout).trim()
        );
        // Docker 20.10's libnetwork deadlocks when a container joins a
        // network while another leaves one (moby/moby#42545, fixed after
        // 20.10.24): the daemon then answers nothing more. The run phase
        // starts and stops thousands of containers from several threads, so
        // they join this container's network namespace instead, which
        // gives them no network endpoint of their own: libnetwork does no
        // work for them (nor does starting them set one up, the most of
        // what a start costs). What a container's network is does not
        // touch its IPC namespace or /dev/shm.
        let network_holder = format!(
            "gljudge{}-netns-{}",
            std::process::id(),
            PROJECTS.fetch_add(1, Ordering::Relaxed)
        );
        let held = docker(&[
            "run",
            "-d",
            "--name",
            &network_holder,
            "--network",
            "none",
            &image,
            "sleep",
            "infinity",
        ]);
        assert!(held.status.success(), "network holder: {}", text(&held));
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
        let mem_total_kib: u64 = meminfo
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|l| l.trim().strip_suffix("kB"))
            .and_then(|kib| kib.trim().parse().ok())
            .unwrap_or_else(|| panic!("no MemTotal in /proc/meminfo: {meminfo}"));
        Ok(Engine {
            image,
            host_shm,
            unsized_tmpfs: df_bytes(&unsized_probe),
            ram_pages: mem_total_kib * 1024 / PAGE,
            hard_limits,
            network_holder,
        })
    }

    /// The size the kernel gives a tmpfs of `size=N%` (mm/shmem.c: the
    /// percent times the RAM's bytes, divided by 100, in whole pages).
    fn share_of_ram(&self, percent: u64) -> u64 {
        (percent * PAGE * self.ram_pages / 100).div_ceil(PAGE) * PAGE
    }

    /// What `df -B1 /dev/shm` inside a container (its filesystem type and
    /// size) shows, in the terms of gpulint's `claimed` /dev/shm: a size
    /// equal to the host's or to an unsized tmpfs's is that only where the
    /// claim says so (the same bytes could be a size written out).
    pub fn seen_in_container(&self, fstype: &str, size: Option<u64>, claimed: Shm) -> Shm {
        match (fstype, size) {
            ("tmpfs", Some(size)) if size == self.host_shm && claimed == Shm::Host => Shm::Host,
            ("tmpfs", Some(size)) if size == self.unsized_tmpfs && claimed == Shm::Unbounded => {
                Shm::Unbounded
            }
            // `size=0`: no limit, which df shows as a size of 0.
            ("tmpfs", Some(0)) => Shm::Unbounded,
            ("tmpfs", Some(size)) => Shm::Bytes(size),
            ("absent", _) => Shm::Missing,
            _ => Shm::Disk,
        }
    }

    /// What df shows for gpulint's `claimed` /dev/shm on this host: sizes
    /// in whole pages, a share of the memory in this host's bytes.
    pub fn expected_in_container(&self, claimed: Shm) -> Shm {
        match claimed {
            Shm::Bytes(b) => Shm::Bytes(b.div_ceil(PAGE) * PAGE),
            Shm::ShareOfRam(percent) => Shm::Bytes(self.share_of_ram(percent)),
            other => other,
        }
    }

    fn compose(&self, case: &Case, project: &str, extra_files: &[&str], args: &[&str]) -> Output {
        self.compose_with(case, project, extra_files, args, true)
    }

    /// `docker compose` in the case's directory; `all_profiles` enables
    /// every profile (`--profile '*'`), else the `.env`'s `COMPOSE_PROFILES`
    /// decides, as for a plain `docker compose up`.
    fn compose_with(
        &self,
        case: &Case,
        project: &str,
        extra_files: &[&str],
        args: &[&str],
        all_profiles: bool,
    ) -> Output {
        let mut command = compose();
        command.current_dir(&case.dir).args(["-p", project]);
        if all_profiles {
            command.args(["--profile", "*"]);
        }
        // The project's own .env is Compose's business; the caller's
        // environment must not leak into interpolation.
        command
            .env_remove("COMPOSE_FILE")
            .env_remove("COMPOSE_PATH_SEPARATOR")
            .env_remove("COMPOSE_PROFILES");
        if case.files.is_empty() {
            // Compose's own discovery. An extra file needs the discovered
            // ones named too: in `COMPOSE_FILE`, which Compose reads as it
            // reads the `.env`'s (the `.env` where it runs interpolates,
            // and no override is added), where `-f` would make the first
            // file's directory the one whose `.env` is read first.
            // [`Engine::check_discovery`] holds this list to Compose's own.
            if !extra_files.is_empty() {
                let mut files = discovered_files(&case.dir);
                files.extend(extra_files.iter().map(|f| f.to_string()));
                command
                    .env("COMPOSE_FILE", files.join(":"))
                    .env("COMPOSE_PATH_SEPARATOR", ":");
            }
        } else {
            for f in case
                .files
                .iter()
                .map(String::as_str)
                .chain(extra_files.iter().copied())
            {
                command.args(["-f", f]);
            }
        }
        command.args(args);
        run(&mut command)
    }

    /// Judges one project: load, create, inspect, run; every fact compared.
    /// `false` when a batch was refused and nothing was recorded.
    pub fn judge(&self, case: &Case, tally: &mut Tally) -> bool {
        let gpulint = gpulint_containers(&case.targets, "compose");
        let project = format!(
            "gljudge{}-{}",
            std::process::id(),
            PROJECTS.fetch_add(1, Ordering::Relaxed)
        );
        let config = self.compose(case, &project, &[], &["config", "--format", "json"]);
        if gpulint.is_empty() {
            // Nothing to compare; but a project Compose refuses must still
            // be one gpulint refuses (a missing `include:` file leaves it
            // no service to show).
            if config.status.success() || case.alone {
                tally.skipped.push(case.label.clone());
                return true;
            }
            if case.batch {
                return false;
            }
            self.refused(case, &gpulint, "load", &text(&config), tally);
            tally.projects += 1;
            return true;
        }
        if case.files.is_empty() && config.status.success() {
            self.check_discovery(case, &project, &config.stdout, tally);
        }
        // Nothing can be pulled or built here: every service runs the
        // workload image, named in one more file (the only change made to
        // the project as written, with `container_name` dropped so that
        // projects judged side by side do not clash, and `cpus` above the
        // sandbox's lowered below). A fixture often names no image at all,
        // which Compose refuses; it gets the image too, and says so.
        // The services gpulint reports, for the image file when Compose
        // cannot list them itself.
        let claimed_services = || -> Vec<String> {
            gpulint
                .iter()
                .map(|c| c["id"].as_str().unwrap().to_string())
                .collect()
        };
        let (config, named) = if config.status.success() {
            let config: Value = serde_json::from_slice(&config.stdout).unwrap();
            let names: Vec<String> = config["services"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect();
            (Ok(config), names)
        } else if text(&config).contains("has neither an image nor a build context") {
            let names = claimed_services();
            tally.imageless.push(case.label.clone());
            (Err(config), names)
        } else if text(&config).contains("is already in use by service") {
            // The judge enables every profile at once, so services of
            // profiles a user enables one at a time can share a
            // `container_name`; the image file drops it, as for every project.
            let names = claimed_services();
            tally.sandbox.push(format!(
                "{}: services of profiles used one at a time share a container_name; loaded with it dropped",
                case.label
            ));
            (Err(config), names)
        } else {
            (Err(config), Vec::new())
        };
        let image_file = format!(".{project}-image.yaml");
        let mut yaml = String::from("services:\n");
        for name in &named {
            yaml.push_str(&format!(
                "  {}: {{image: {}, container_name: !reset null}}\n",
                serde_json::to_string(name).unwrap(),
                self.image
            ));
        }
        std::fs::write(case.dir.join(&image_file), yaml).unwrap();
        let with_image = [image_file.as_str()];
        let config = match config {
            Ok(config) => config,
            Err(first) => {
                let retried =
                    self.compose(case, &project, &with_image, &["config", "--format", "json"]);
                if named.is_empty() || !retried.status.success() {
                    let _ = std::fs::remove_file(case.dir.join(&image_file));
                    if case.batch {
                        return false;
                    }
                    let why = if named.is_empty() {
                        text(&first)
                    } else {
                        text(&retried)
                    };
                    self.refused(case, &gpulint, "load", &why, tally);
                    return true;
                }
                serde_json::from_slice(&retried.stdout).unwrap()
            }
        };
        // What a real host would have and this sandbox lacks, supplied
        // before `create` and said in the report (neither is a compared
        // fact): CPU limits above the sandbox's CPUs are lowered to them in
        // the image file, and the volumes a project declares `external`
        // (which its install script creates) are created, then removed.
        let lowered = self.lower_cpus(case, &config, tally);
        if !lowered.is_empty() {
            let mut yaml = String::from("services:\n");
            for name in &named {
                yaml.push_str(&format!(
                    "  {}: {{image: {}, container_name: !reset null{}}}\n",
                    serde_json::to_string(name).unwrap(),
                    self.image,
                    lowered.get(name).map(String::as_str).unwrap_or("")
                ));
            }
            std::fs::write(case.dir.join(&image_file), yaml).unwrap();
        }
        // The judge loads every profile (`--profile '*'`) to create every
        // service; a plain `docker compose up` enables only those of the
        // `.env`'s `COMPOSE_PROFILES`, and refuses a dependency on a service
        // it leaves out: that load is judged too.
        let profiled = config["services"]
            .as_object()
            .into_iter()
            .flatten()
            .any(|(_, s)| s["profiles"].as_array().is_some_and(|p| !p.is_empty()));
        if profiled {
            let plain = self.compose_with(case, &project, &with_image, &["config", "-q"], false);
            if !plain.status.success() {
                let _ = std::fs::remove_file(case.dir.join(&image_file));
                if case.batch {
                    return false;
                }
                self.refused(
                    case,
                    &gpulint,
                    "load with the profiles its .env enables",
                    &text(&plain),
                    tally,
                );
                tally.projects += 1;
                return true;
            }
        }
        let external = create_external_volumes(case, &config, tally);
        let created = self.compose(
            case,
            &project,
            &with_image,
            &["create", "--pull", "never", "--no-build"],
        );
        let recorded = created.status.success() || !case.batch;
        if created.status.success() {
            // Refusals are judged both ways: Compose created it, so gpulint
            // must not say that Compose refuses it.
            for finding in refusal_findings(&case.targets) {
                tally.disagreements.push(format!(
                    "{}: Compose loads and creates it, but gpulint says it refuses it: {finding}",
                    case.label
                ));
            }
            let containers = project_containers(&project);
            let gpulint = claims_of_project(case, &gpulint, &containers, tally);
            self.compare_created(case, &config, &gpulint, &containers, tally);
            if case.run {
                self.run_and_compare(case, &project, &image_file, &config, &gpulint, tally);
            }
        } else if !case.batch {
            self.refused(case, &gpulint, "create", &text(&created), tally);
        }
        let _ = self.compose(
            case,
            &project,
            &with_image,
            &["down", "-v", "-t", "0", "--remove-orphans"],
        );
        let _ = std::fs::remove_file(case.dir.join(&image_file));
        for volume in external {
            let _ = docker(&["volume", "rm", &volume]);
        }
        if recorded {
            tally.projects += 1;
        }
        recorded
    }

    /// Holds the harness's [`discovered_files`] (which every call with an
    /// extra file names) to the project Compose discovers by itself in the
    /// case's directory: both loads must give the same model.
    fn check_discovery(&self, case: &Case, project: &str, discovered: &[u8], tally: &mut Tally) {
        let files = discovered_files(&case.dir);
        let named = run(compose()
            .current_dir(&case.dir)
            .args(["-p", project, "--profile", "*"])
            .args(["config", "--format", "json"])
            .env_remove("COMPOSE_PROFILES")
            .env("COMPOSE_FILE", files.join(":"))
            .env("COMPOSE_PATH_SEPARATOR", ":"));
        let parse = |bytes: &[u8]| serde_json::from_slice::<Value>(bytes).ok();
        if !named.status.success() || parse(&named.stdout) != parse(discovered) {
            tally.disagreements.push(format!(
                "{}: the harness reads the project's files as {files:?}, which is not the project Compose discovers there ({})",
                case.label,
                text(&named).lines().last().unwrap_or("")
            ));
        }
    }

    /// `cpus` (on the service or under `deploy.resources.limits`) above the
    /// sandbox's CPUs, which the engine refuses, as the image file's extra
    /// entries lowering them, by service.
    fn lower_cpus(
        &self,
        case: &Case,
        config: &Value,
        tally: &mut Tally,
    ) -> BTreeMap<String, String> {
        let host = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        let number = |v: &Value| {
            v.as_f64()
                .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
        };
        let mut lowered = BTreeMap::new();
        let Some(services) = config["services"].as_object() else {
            return lowered;
        };
        for (name, service) in services {
            let mut extra = String::new();
            if number(&service["cpus"]).is_some_and(|c| c > host) {
                extra.push_str(&format!(", cpus: {host}"));
            }
            let limit = &service["deploy"]["resources"]["limits"]["cpus"];
            if number(limit).is_some_and(|c| c > host) {
                extra.push_str(&format!(
                    ", deploy: {{resources: {{limits: {{cpus: \"{host}\"}}}}}}"
                ));
            }
            if !extra.is_empty() {
                tally.sandbox.push(format!(
                    "{} {name}: cpus lowered to the sandbox's {host} to create it",
                    case.label
                ));
                lowered.insert(name.clone(), extra);
            }
        }
        lowered
    }

    /// Compose (or the engine) refused the project: gpulint must refuse or
    /// report an error for it.
    fn refused(&self, case: &Case, gpulint: &[Value], step: &str, why: &str, tally: &mut Tally) {
        let why = why
            .lines()
            .rfind(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim();
        // gpulint refuses it: a container it says is refused, or a PROJ001
        // finding (of any severity).
        let flagged =
            gpulint.iter().any(claims_refusal) || !refusal_findings(&case.targets).is_empty();
        if let Some(kind) = known_refusal(why) {
            tally
                .known
                .entry(kind)
                .or_default()
                .push(format!("{}: {why}", case.label));
        } else if case.alone && !flagged {
            tally
                .unloadable
                .push(format!("{} ({step}): {why}", case.label));
        } else if flagged {
            tally
                .refused
                .push(format!("{} ({step}): {why}", case.label));
        } else {
            tally.disagreements.push(format!(
                "{}: Compose refuses to {step} it ({why}) but gpulint reports no error",
                case.label
            ));
        }
    }

    fn compare_created(
        &self,
        case: &Case,
        config: &Value,
        gpulint: &[Value],
        containers: &BTreeMap<String, Value>,
        tally: &mut Tally,
    ) {
        let by_id: BTreeMap<String, &Value> = containers
            .values()
            .map(|c| (c["Id"].as_str().unwrap().to_string(), c))
            .collect();
        for claim in gpulint {
            let service = claim["id"].as_str().unwrap();
            let at = format!("{} {}", case.label, service);
            let Some(container) = containers.get(service) else {
                if !claims_refusal(claim) {
                    tally.disagreements.push(format!(
                        "{at}: gpulint lists it but Compose created no container"
                    ));
                }
                continue;
            };
            tally.services += 1;
            let host = &container["HostConfig"];
            let written = &config["services"][service];
            let layers = project_files(container);
            let mut differ = |what: &str, gpulint: String, engine: String| {
                if gpulint == engine {
                    return;
                }
                match known_difference(what, claim, written, layers) {
                    Some(kind) => tally
                        .known
                        .entry(kind)
                        .or_default()
                        .push(format!("{at}: {what} gpulint {gpulint}, engine {engine}")),
                    None => tally.disagreements.push(format!(
                        "{at}: {what}: gpulint says {gpulint}, the engine has {engine}"
                    )),
                }
            };
            // IPC mode; a service donor is a container id to the engine.
            let engine_ipc = host["IpcMode"].as_str().unwrap_or("").to_string();
            let engine_ipc = match engine_ipc.strip_prefix("container:") {
                Some(id) => match by_id.get(id) {
                    Some(c) => format!("service:{}", service_of(c)),
                    None => engine_ipc.clone(),
                },
                None => engine_ipc,
            };
            match claim["ipc"].as_str() {
                // A variable with no value: gpulint makes no claim.
                Some(ipc) if ipc.contains("${") => {}
                // The engine resolves a container's name (or a prefix of its
                // id) to the full id; the container is outside the project.
                Some(ipc)
                    if ipc.starts_with("container:") && engine_ipc.starts_with("container:") => {}
                Some(ipc) => differ("ipc", ipc.to_string(), engine_ipc),
                None => {}
            }
            // /dev/shm, derived from the HostConfig.
            if let Some(claimed) = claimed_shm(claim) {
                let given = created_shm(container, &by_id);
                differ("/dev/shm", claimed.to_string(), given.to_string());
            }
            // Ulimits.
            differ(
                "ulimits",
                format!("{:?}", claimed_ulimits(claim)),
                format!("{:?}", engine_ulimits(host)),
            );
            // GPUs, where gpulint can tell.
            // A request gpulint says the engine refuses is not compared:
            // this engine has no NVIDIA device driver to refuse it with.
            if claim["gpus"] != "unknown" && claim["refused"].is_null() {
                let (claimed, given) = (claimed_gpus(claim), engine_gpus(container));
                let given = if given == claimed {
                    given
                } else {
                    format!(
                        "{given} (DeviceRequests {}, Devices {})",
                        host["DeviceRequests"], host["Devices"]
                    )
                };
                differ("gpus", claimed, given);
            }
            // Capabilities added, as the engine records them.
            differ(
                "cap_add",
                format!("{:?}", capabilities(&claim["cap_add"])),
                format!("{:?}", capabilities(&host["CapAdd"])),
            );
            // The GPU and NCCL variables of the container's environment
            // (those `inspect` shows); one gpulint cannot know (from the
            // shell) is not compared.
            let engine_env = gpu_environment(&container["Config"]["Env"]);
            let mut claimed_env = BTreeMap::new();
            let mut unknown = Vec::new();
            for (name, value) in claim["env"].as_object().into_iter().flatten() {
                match value.as_str() {
                    Some(v) => {
                        claimed_env.insert(name.clone(), v.to_string());
                    }
                    None => unknown.push(name.clone()),
                }
            }
            let engine_env: BTreeMap<String, String> = engine_env
                .into_iter()
                .filter(|(name, _)| !unknown.contains(name))
                .collect();
            differ(
                "environment",
                format!("{claimed_env:?}"),
                format!("{engine_env:?}"),
            );
        }
    }

    /// Starts every container (GPU requests removed, ulimits the sandbox
    /// cannot raise lowered, both said in the report) and compares
    /// `/dev/shm` from inside with gpulint's claim.
    fn run_and_compare(
        &self,
        case: &Case,
        project: &str,
        image_file: &str,
        config: &Value,
        gpulint: &[Value],
        tally: &mut Tally,
    ) {
        let run_project = format!("{project}run");
        let override_path = case.dir.join(format!(".{run_project}.yaml"));
        let mut services = serde_json::Map::new();
        for (name, service) in config["services"].as_object().unwrap() {
            let mut ov = serde_json::json!({
                // The image's `sleep infinity`: the service's own command
                // is for an image that is not here.
                // `$$` is a `$` to Compose.
                "entrypoint": ["sh", "-c", PROBE],
                "command": [],
                "user": "root",
                "healthcheck": {"disable": true},
                "restart": "no",
            });
            let mut lowered = Vec::new();
            if let Some(ulimits) = service["ulimits"].as_object() {
                let mut capped = serde_json::Map::new();
                for (limit, value) in ulimits {
                    let (soft, hard) = match value {
                        Value::Number(n) => (n.as_i64().unwrap(), n.as_i64().unwrap()),
                        v => (
                            v["soft"].as_i64().unwrap_or(0),
                            v["hard"].as_i64().unwrap_or(0),
                        ),
                    };
                    let Some(&max) = self.hard_limits.get(limit.as_str()) else {
                        continue;
                    };
                    let over = |v: i64| max != -1 && (v == -1 || v > max);
                    if over(soft) || over(hard) {
                        capped.insert(limit.clone(), serde_json::json!({"soft": max, "hard": max}));
                        lowered.push(format!("{limit} {soft}:{hard} lowered to {max}"));
                    }
                }
                if !capped.is_empty() {
                    ov["ulimits"] = Value::Object(capped);
                }
            }
            if !lowered.is_empty() {
                tally.sandbox.push(format!(
                    "{} {name}: {} to start it (no CAP_SYS_RESOURCE here; the engine's Ulimits were compared as created)",
                    case.label,
                    lowered.join(", ")
                ));
            }
            services.insert(name.clone(), ov);
        }
        // `!reset` cannot be written in JSON: append the resets as YAML.
        let run_override = |in_holders_namespace: bool| {
            let mut yaml = String::from("services:\n");
            for (name, ov) in &services {
                yaml.push_str(&format!("  {}:\n", serde_json::to_string(name).unwrap()));
                for (key, value) in ov.as_object().unwrap() {
                    yaml.push_str(&format!(
                        "    {key}: {}\n",
                        serde_json::to_string(value).unwrap()
                    ));
                }
                // No GPUs or host devices here: the engine refuses the requests.
                yaml.push_str(
                    "    devices: !reset []\n    gpus: !reset []\n    ports: !reset []\n",
                );
                yaml.push_str("    deploy: {resources: {reservations: {devices: !reset []}}}\n");
                // The network holder's namespace, and none of the settings
                // the engine refuses beside `network_mode: container:`
                // (see `Engine::connect`).
                if in_holders_namespace {
                    yaml.push_str(&format!(
                        "    network_mode: \"container:{}\"\n",
                        self.network_holder
                    ));
                    yaml.push_str(
                        "    networks: !reset null\n    links: !reset []\n    external_links: !reset []\n    expose: !reset []\n    hostname: !reset null\n    domainname: !reset null\n    mac_address: !reset null\n    dns: !reset []\n    dns_search: !reset []\n    dns_opt: !reset []\n    extra_hosts: !reset []\n",
                    );
                }
            }
            std::fs::write(&override_path, yaml).unwrap();
        };
        let ov = override_path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .to_string();
        run_override(true);
        let mut created = self.compose(
            case,
            &run_project,
            &[image_file, &ov],
            &["create", "--pull", "never", "--no-build"],
        );
        if !created.status.success() {
            // A setting that needs a network (one the engine refuses
            // without): run it on the networks it has, and say so.
            run_override(false);
            created = self.compose(
                case,
                &run_project,
                &[image_file, &ov],
                &["create", "--pull", "never", "--no-build"],
            );
            if created.status.success() {
                tally.sandbox.push(format!(
                    "{}: run with its networks (created without them, it was refused)",
                    case.label
                ));
            }
        }
        if !created.status.success() {
            tally.disagreements.push(format!(
                "{}: created as written but not with GPUs removed: {}",
                case.label,
                text(&created)
            ));
            let _ = std::fs::remove_file(&override_path);
            return;
        }
        // `up` starts them in dependency order (IPC donors first); one that
        // fails to start is started again alone below to learn why.
        let _ = self.compose(
            case,
            &run_project,
            &[image_file, &ov],
            &["up", "-d", "--no-build", "--pull", "never", "--no-recreate"],
        );
        let containers = project_containers(&run_project);
        for container in containers.values() {
            let service = service_of(container);
            let at = format!("{} {}", case.label, service);
            let Some(claim) = gpulint.iter().find(|c| c["id"] == service) else {
                continue;
            };
            let id = container["Id"].as_str().unwrap();
            if container["State"]["Running"] != true {
                let started = docker(&["start", id]);
                if !started.status.success() {
                    let why = text(&started);
                    if let Some(kind) = known_refusal(&why) {
                        tally
                            .known
                            .entry(kind)
                            .or_default()
                            .push(format!("{at}: {}", why.trim()));
                    } else if !claims_refusal(claim) {
                        tally.disagreements.push(format!(
                            "{at}: the engine will not start it ({}) but gpulint does not say it is refused",
                            why.trim()
                        ));
                    }
                    continue;
                }
            }
            // The entrypoint printed what it saw before sleeping; CI builds
            // in the background meanwhile, so a start may take seconds.
            let mut probe = String::new();
            for _ in 0..300 {
                probe = String::from_utf8_lossy(&docker(&["logs", id]).stdout).to_string();
                if probe.contains("PROBE") {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            let Some(line) = probe.lines().find_map(|l| l.strip_prefix("PROBE ")) else {
                tally
                    .disagreements
                    .push(format!("{at}: the probe printed nothing: {probe}"));
                continue;
            };
            let mut words = line.split_whitespace();
            let fstype = words.next().unwrap_or("absent").to_string();
            let size: Option<u64> = words.next().and_then(|w| w.parse().ok());
            tally.ran += 1;
            // The GPU requests were removed to start it here; any other
            // refusal gpulint claims is wrong when it runs.
            if claim["shm"]["kind"] == "refused" {
                tally.disagreements.push(format!(
                    "{at}: gpulint says the engine refuses it ({}), but it runs with /dev/shm {fstype} {size:?}",
                    claim["shm"]["from"]
                ));
                continue;
            }
            let Some(claimed) = claimed_shm(claim) else {
                continue;
            };
            let seen = self.seen_in_container(&fstype, size, claimed);
            let expected = self.expected_in_container(claimed);
            if seen != expected {
                match known_difference(
                    "/dev/shm",
                    claim,
                    &config["services"][service],
                    project_files(container),
                ) {
                    Some(kind) => tally.known.entry(kind).or_default().push(format!(
                        "{at}: df gpulint {claimed}, container {seen}"
                    )),
                    None => tally.disagreements.push(format!(
                        "{at}: inside the container /dev/shm is {seen} ({fstype}), gpulint says {claimed}"
                    )),
                }
            }
        }
        let _ = self.compose(
            case,
            &run_project,
            &[image_file, &ov],
            &["down", "-v", "-t", "0"],
        );
        let _ = std::fs::remove_file(&override_path);
    }
}

/// The files Compose discovers in `dir`: `COMPOSE_FILE` in its `.env`
/// (split at `COMPOSE_PATH_SEPARATOR`, `:` by default; the last line that
/// sets one wins), else the first default file and the first default
/// override. The harness's own reading, held to Compose's by
/// [`Engine::check_discovery`].
fn discovered_files(dir: &Path) -> Vec<String> {
    let env = std::fs::read_to_string(dir.join(".env")).unwrap_or_default();
    let setting = |name: &str| {
        env.lines()
            .filter_map(|l| {
                let l = l.trim();
                let l = l.strip_prefix("export ").unwrap_or(l).trim_start();
                let value = l.strip_prefix(name)?.trim_start().strip_prefix('=')?;
                let value = value.trim();
                let unquoted = ["\"", "'"]
                    .iter()
                    .find_map(|q| value.strip_prefix(q).and_then(|v| v.strip_suffix(q)));
                Some(unquoted.unwrap_or(value).to_string())
            })
            .next_back()
    };
    if let Some(list) = setting("COMPOSE_FILE") {
        let separator = setting("COMPOSE_PATH_SEPARATOR")
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| ":".to_string());
        return list.split(separator.as_str()).map(str::to_string).collect();
    }
    let first = |names: &[&str]| {
        names
            .iter()
            .find(|n| dir.join(n).is_file())
            .map(|n| n.to_string())
    };
    first(&DEFAULT_FILES)
        .into_iter()
        .chain(first(&DEFAULT_OVERRIDES))
        .collect()
}

fn df_bytes(output: &Output) -> u64 {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("df: {}", text(output)))
}

/// The containers of `platform` (`compose`, `docker-run`) that `gpulint
/// inspect` reports for `targets`, in its order.
pub fn gpulint_containers(targets: &[PathBuf], platform: &str) -> Vec<Value> {
    let output = run(Command::new(env!("CARGO_BIN_EXE_gpulint"))
        .args(["inspect", "--format", "json"])
        .args(targets)
        .env("NO_COLOR", "1"));
    let json: Value = match serde_json::from_slice(&output.stdout) {
        Ok(json) => json,
        Err(_) => return Vec::new(),
    };
    json["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["platform"] == platform)
        .cloned()
        .collect()
}

/// gpulint's findings that Compose refuses the project (PROJ001, of any
/// severity: a warning says the shell may settle it, and the judge's shell
/// sets none of the variables the cases use), as messages.
fn refusal_findings(targets: &[PathBuf]) -> Vec<String> {
    let output = run(Command::new(env!("CARGO_BIN_EXE_gpulint"))
        .args(["check", "--output-format", "json", "--select", "PROJ001"])
        .args(targets)
        .env("NO_COLOR", "1"));
    let json: Value = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
    json["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|d| d["code"] == "PROJ001")
        .map(|d| {
            format!(
                "{} ({})",
                d["message"].as_str().unwrap_or(""),
                d["path"].as_str().unwrap_or("")
            )
        })
        .collect()
}

/// A path as the harness compares it: made absolute against the current
/// directory (where gpulint ran) and canonical when it exists.
fn comparable(path: &str) -> PathBuf {
    let path = std::env::current_dir().unwrap().join(path);
    std::fs::canonicalize(&path).unwrap_or(path)
}

/// gpulint's claims for the project Compose created: those whose
/// `project` runs where Compose ran (the case's directory) with the files
/// Compose loaded (its `config_files` label, without the harness's own
/// files). A project gpulint does not judge at all is a disagreement: it
/// read other files than Compose does.
fn claims_of_project(
    case: &Case,
    gpulint: &[Value],
    containers: &BTreeMap<String, Value>,
    tally: &mut Tally,
) -> Vec<Value> {
    let Some(container) = containers.values().next() else {
        return gpulint.to_vec();
    };
    let loaded: Vec<PathBuf> =
        container["Config"]["Labels"]["com.docker.compose.project.config_files"]
            .as_str()
            .unwrap_or("")
            .split(',')
            .filter(|f| !f.contains("/.gljudge"))
            .map(comparable)
            .collect();
    let dir = comparable(&case.dir.to_string_lossy());
    // The projects a claim is in (several that give it alike).
    let identities = |claim: &Value| -> Vec<(PathBuf, Vec<PathBuf>)> {
        claim["projects"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|project| {
                Some((
                    comparable(project["dir"].as_str()?),
                    project["files"]
                        .as_array()?
                        .iter()
                        .filter_map(Value::as_str)
                        .map(comparable)
                        .collect(),
                ))
            })
            .collect()
    };
    if gpulint.iter().all(|c| identities(c).is_empty()) {
        return gpulint.to_vec();
    }
    let wanted = (dir, loaded);
    let matching: Vec<Value> = gpulint
        .iter()
        .filter(|c| identities(c).contains(&wanted))
        .cloned()
        .collect();
    if matching.is_empty() {
        let judged: std::collections::BTreeSet<String> = gpulint
            .iter()
            .flat_map(identities)
            .map(|(dir, files)| format!("{files:?} run in {}", dir.display()))
            .collect();
        tally.disagreements.push(format!(
            "{}: Compose loads {:?} run in {}, a project gpulint does not judge (it judges {})",
            case.label,
            wanted.1,
            wanted.0.display(),
            judged.into_iter().collect::<Vec<_>>().join("; ")
        ));
    }
    matching
}

/// The project's containers as `docker inspect` shows them, by service.
fn project_containers(project: &str) -> BTreeMap<String, Value> {
    let ids = docker(&[
        "ps",
        "-aq",
        "--filter",
        &format!("label=com.docker.compose.project={project}"),
    ]);
    let ids: Vec<String> = String::from_utf8_lossy(&ids.stdout)
        .split_whitespace()
        .map(String::from)
        .collect();
    if ids.is_empty() {
        return BTreeMap::new();
    }
    let mut args = vec!["inspect"];
    args.extend(ids.iter().map(String::as_str));
    let inspected: Value = serde_json::from_slice(&docker(&args).stdout).unwrap();
    inspected
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (service_of(c).to_string(), c.clone()))
        .collect()
}

/// How many of the user's compose files made the container (the workload
/// image file this harness adds is not one).
fn project_files(container: &Value) -> usize {
    container["Config"]["Labels"]["com.docker.compose.project.config_files"]
        .as_str()
        .unwrap_or("")
        .split(',')
        .filter(|f| !f.contains("/.gljudge"))
        .count()
}

fn service_of(container: &Value) -> &str {
    container["Config"]["Labels"]["com.docker.compose.service"]
        .as_str()
        .unwrap_or("?")
}

/// The effective /dev/shm, as gpulint claims it or the engine gives it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shm {
    Bytes(u64),
    Host,
    /// A tmpfs with no size (half the memory), or of size 0 (no limit).
    Unbounded,
    /// A tmpfs of `size=N%` of the host's memory.
    ShareOfRam(u64),
    /// Disk, not memory: a volume or bind mount.
    Disk,
    /// No /dev/shm at all (`ipc: none`).
    Missing,
}

impl std::fmt::Display for Shm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Shm::Bytes(b) => write!(f, "{b} bytes"),
            Shm::Host => write!(f, "the host's"),
            Shm::Unbounded => write!(f, "an unsized tmpfs"),
            Shm::ShareOfRam(percent) => write!(f, "{percent}% of the memory"),
            Shm::Disk => write!(f, "disk"),
            Shm::Missing => write!(f, "none"),
        }
    }
}

/// gpulint says the engine will not create or start the container.
fn claims_refusal(claim: &Value) -> bool {
    !claim["refused"].is_null() || claim["shm"]["kind"] == "refused"
}

/// gpulint's claim; `None` where it makes none (a variable with no default).
pub fn claimed_shm(claim: &Value) -> Option<Shm> {
    let shm = &claim["shm"];
    Some(match shm["kind"].as_str()? {
        "default" | "sized" => Shm::Bytes(shm["bytes"].as_u64()?),
        "host" => Shm::Host,
        "unbounded" => Shm::Unbounded,
        "host-share" => Shm::ShareOfRam(shm["host_memory_percent"].as_u64()?),
        "disk" => Shm::Disk,
        "missing" => Shm::Missing,
        _ => return None,
    })
}

/// What the engine's HostConfig gives: a mount at /dev/shm wins, then the
/// IPC mode, then ShmSize (0 is the engine's 64 MiB).
fn created_shm(container: &Value, by_id: &BTreeMap<String, &Value>) -> Shm {
    let host = &container["HostConfig"];
    if let Some(options) = host["Tmpfs"].get("/dev/shm").and_then(Value::as_str) {
        return tmpfs_size(options).unwrap_or(Shm::Unbounded);
    }
    for mount in host["Mounts"].as_array().into_iter().flatten() {
        if mount["Target"] == "/dev/shm" {
            return match mount["Type"].as_str() {
                Some("bind") if mount["Source"] == "/dev/shm" => Shm::Host,
                Some("tmpfs") => match mount["TmpfsOptions"]["SizeBytes"].as_u64() {
                    Some(b) if b > 0 => Shm::Bytes(b),
                    _ => Shm::Unbounded,
                },
                Some("volume") => mount["Source"].as_str().map_or(Shm::Disk, volume_shm),
                _ => Shm::Disk,
            };
        }
    }
    for mount in container["Mounts"].as_array().into_iter().flatten() {
        if mount["Destination"] == "/dev/shm" {
            return match mount["Type"].as_str() {
                Some("bind") if mount["Source"] == "/dev/shm" => Shm::Host,
                Some("volume") => mount["Name"].as_str().map_or(Shm::Disk, volume_shm),
                _ => Shm::Disk,
            };
        }
    }
    let ipc = host["IpcMode"].as_str().unwrap_or("");
    if ipc == "host" {
        return Shm::Host;
    }
    if ipc == "none" {
        return Shm::Missing;
    }
    if let Some(donor) = ipc.strip_prefix("container:").and_then(|id| by_id.get(id)) {
        return created_shm(donor, by_id);
    }
    match host["ShmSize"].as_u64() {
        Some(0) | None => Shm::Bytes(64 * MIB),
        Some(b) => Shm::Bytes(b),
    }
}

/// The `size=` of tmpfs mount options, as the kernel reads it (memparse:
/// a C integer, `0x` hex or `0` octal, then k, m, g, t suffixes, binary;
/// then shmem's `%` of the memory). 0 is no limit; `None` without a size.
/// What a named volume mounted at /dev/shm is, as the engine made it: the
/// local driver mounts `type=tmpfs` as a tmpfs with the options of `o`.
fn volume_shm(name: &str) -> Shm {
    let output = Command::new("docker")
        .args(["volume", "inspect", name])
        .output()
        .expect("docker volume inspect runs");
    let volumes: Value = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
    let volume = &volumes[0];
    let options = &volume["Options"];
    if volume["Driver"] != "local" || options["type"] != "tmpfs" {
        return Shm::Disk;
    }
    tmpfs_size(options["o"].as_str().unwrap_or("")).unwrap_or(Shm::Unbounded)
}

fn tmpfs_size(options: &str) -> Option<Shm> {
    let size = options.split(',').find_map(|o| o.strip_prefix("size="))?;
    let (size, percent) = match size.strip_suffix('%') {
        Some(number) => (number, true),
        None => (size, false),
    };
    let (radix, body) = match size.strip_prefix("0x").or_else(|| size.strip_prefix("0X")) {
        Some(hex) => (16, hex),
        None if size.len() > 1 && size.starts_with('0') => (8, &size[1..]),
        None => (10, size),
    };
    let digits_len = body
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(body.len());
    let n = u64::from_str_radix(&body[..digits_len], radix).ok()?;
    let mul = match body[digits_len..].to_ascii_lowercase().as_str() {
        "" => 1,
        "k" => 1024,
        "m" => MIB,
        "g" => 1024 * MIB,
        "t" => 1024 * 1024 * MIB,
        _ => return None,
    };
    Some(match n * mul {
        0 => Shm::Unbounded,
        n if percent => Shm::ShareOfRam(n),
        bytes => Shm::Bytes(bytes),
    })
}

fn claimed_ulimits(claim: &Value) -> BTreeMap<String, (i64, i64)> {
    claim["ulimits"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, l)| {
            let soft = l["soft"].as_i64().unwrap_or(i64::MIN);
            (name.clone(), (soft, l["hard"].as_i64().unwrap_or(soft)))
        })
        .collect()
}

fn engine_ulimits(host: &Value) -> BTreeMap<String, (i64, i64)> {
    host["Ulimits"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| {
            (
                l["Name"].as_str().unwrap().to_string(),
                (l["Soft"].as_i64().unwrap(), l["Hard"].as_i64().unwrap()),
            )
        })
        .collect()
}

/// Capability names as a set: upper case, without the `CAP_` prefix
/// (the engine accepts both spellings).
fn capabilities(list: &Value) -> std::collections::BTreeSet<String> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|c| {
            let c = c.trim().to_ascii_uppercase();
            c.strip_prefix("CAP_").map(str::to_string).unwrap_or(c)
        })
        .collect()
}

/// The variables of a container's `Config.Env` that `inspect` shows
/// (GPU, CUDA, NCCL, PyTorch and UCX ones).
fn gpu_environment(env: &Value) -> BTreeMap<String, String> {
    const PREFIXES: [&str; 6] = ["NCCL_", "TORCH_", "CUDA_", "NVIDIA_", "PYTORCH_", "UCX_"];
    env.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter_map(|var| var.split_once('='))
        .filter(|(name, _)| PREFIXES.iter().any(|p| name.starts_with(p)))
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect()
}

pub fn claimed_gpus(claim: &Value) -> String {
    match &claim["gpus"] {
        Value::Null => "none".into(),
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// The NVIDIA GPUs the engine was asked for: `all`, a count, or `none`.
/// A device request is NVIDIA's when its driver is `nvidia`, or when no
/// driver is named and one of its capability sets is within the NVIDIA
/// driver's (moby daemon/nvidia_linux.go, matched as daemon/devices.go
/// does). A CDI device name (`nvidia.com/gpu=all`) in `devices:` is what
/// Docker 25+ hands to CDI; this engine only records it.
pub fn engine_gpus(container: &Value) -> String {
    let host = &container["HostConfig"];
    const NVIDIA_CAPS: [&str; 8] = [
        "gpu", "nvidia", "compute", "compat32", "graphics", "utility", "video", "display",
    ];
    let mut total: i64 = 0;
    let mut any = false;
    for request in host["DeviceRequests"].as_array().into_iter().flatten() {
        let sets = request["Capabilities"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let within = sets.iter().any(|set| {
            set.as_array().is_some_and(|caps| {
                caps.iter()
                    .all(|c| NVIDIA_CAPS.contains(&c.as_str().unwrap_or("")))
            })
        });
        let ids: Vec<&str> = request["DeviceIDs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let nvidia = match request["Driver"].as_str().unwrap_or("") {
            "" => within,
            // CDI requests (Docker 25+) name their devices.
            "cdi" => ids.iter().any(|id| id.starts_with("nvidia.com/gpu=")),
            driver => driver == "nvidia",
        };
        if ids.contains(&"nvidia.com/gpu=all") {
            return "all".into();
        }
        if !nvidia {
            continue;
        }
        any = true;
        // The daemon hands the runtime `NVIDIA_VISIBLE_DEVICES` as the ids
        // joined with commas (moby daemon/nvidia_linux.go `setNvidiaGPUs`),
        // and the runtime splits it: `["0,1"]` is two GPUs.
        let mut visible: Vec<&str> = ids
            .iter()
            .flat_map(|id| id.split(','))
            .map(str::trim)
            .filter(|id| !id.is_empty())
            .collect();
        visible.sort_unstable();
        visible.dedup();
        let ids = visible.len() as i64;
        // A negative count is all of them (moby `getRequestedDevicesIDs`:
        // `req.Count < 0`), not only -1.
        match request["Count"].as_i64().unwrap_or(0) {
            n if n < 0 => return "all".into(),
            n => total += n.max(ids),
        }
    }
    for device in host["Devices"].as_array().into_iter().flatten() {
        let path = device["PathOnHost"].as_str().unwrap_or("");
        if let Some(name) = path.strip_prefix("nvidia.com/gpu=") {
            if name == "all" {
                return "all".into();
            }
            any = true;
            total += 1;
        }
    }
    if any {
        return total.to_string();
    }
    // The legacy `runtime: nvidia` takes its GPUs from the environment.
    if host["Runtime"] == "nvidia" {
        let env = container["Config"]["Env"].as_array().into_iter().flatten();
        for var in env.filter_map(Value::as_str) {
            if let Some(v) = var.strip_prefix("NVIDIA_VISIBLE_DEVICES=") {
                return match v {
                    "all" => "all".into(),
                    "" | "void" | "none" => "none".into(),
                    list => list.split(',').count().to_string(),
                };
            }
        }
    }
    "none".into()
}

/// Creates the volumes `config` declares `external` that do not exist yet
/// (a repository's install script creates them: getsentry/self-hosted's
/// `install/create-docker-volumes.sh`), says so, and returns their names
/// for removal.
fn create_external_volumes(case: &Case, config: &Value, tally: &mut Tally) -> Vec<String> {
    let mut created = Vec::new();
    let Some(volumes) = config["volumes"].as_object() else {
        return created;
    };
    for (key, volume) in volumes {
        if volume["external"] != true {
            continue;
        }
        let name = volume["name"].as_str().unwrap_or(key);
        if docker(&["volume", "inspect", name]).status.success() {
            continue;
        }
        if docker(&["volume", "create", name]).status.success() {
            created.push(name.to_string());
        }
    }
    if !created.is_empty() {
        tally.sandbox.push(format!(
            "{}: external volumes created as its install script would: {}",
            case.label,
            created.join(", ")
        ));
    }
    created
}

/// A difference between the judging Compose and the current Compose
/// specification that gpulint follows, named; `None` for a real disagreement.
/// .ci/engine's Compose 2.40 meets none of them; they name what an older
/// judge (a developer's own Compose) differs in.
fn known_difference(
    what: &str,
    claim: &Value,
    written: &Value,
    layers: usize,
) -> Option<&'static str> {
    let _ = (claim, layers);
    // `gpus:` on a service came with Compose 2.30 (compose-go 2.4.0,
    // "introduce service.gpus", 2024-10-04); 2.26 keeps the key in its
    // model but creates no device request from it.
    if what == "gpus" && !written["gpus"].is_null() && judge_compose_before(2, 30) {
        return Some(
            "`gpus:` is ignored by Compose before 2.30; gpulint follows the current specification",
        );
    }
    None
}

/// A refusal that is this sandbox's, not the config's, named.
fn known_refusal(why: &str) -> Option<&'static str> {
    if why.contains("Unknown runtime specified") {
        return Some(
            "a runtime this sandbox does not have (it has runc, and `nvidia` as an alias of runc)",
        );
    }
    if why.contains("No such container")
        || (why.contains("can't join IPC of container") && why.contains("is not running"))
    {
        return Some(
            "`ipc: container:NAME` joins a container outside the project, which is not running here",
        );
    }
    if why.contains("Range of CPUs is from") {
        return Some("the sandbox has 2 CPUs, fewer than the config's `cpus`");
    }
    if why.contains("error setting rlimit") {
        return Some("the sandbox lacks CAP_SYS_RESOURCE to raise a hard rlimit");
    }
    None
}

/// A Kubernetes manifest (a top-level `apiVersion` or `kind`), which is no
/// Compose project: Compose refuses it, and gpulint lints it as Kubernetes.
fn is_kubernetes(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|text| {
        text.lines()
            .any(|l| l.starts_with("apiVersion:") || l.starts_with("kind:"))
    })
}
