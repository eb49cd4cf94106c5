//! gpulint as CI systems run it: the pre-commit hooks through real
//! pre-commit, and the GitHub Action's steps run the way the runner runs a
//! composite action, plus schema checks of action.yml and the example
//! workflow with real checkers.

use crate::common;

use common::write;
use gpulint::syntax::yaml::{NodeId, Yaml};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const GPU_SERVICE: &str =
    "services:\n  trainer:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n";
const HEALTHY_GPU_SERVICE: &str = "services:\n  trainer:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n    shm_size: 8gb\n";

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
}

/// The commit `rev` names in the repository at `dir`, if it names one.
fn git_rev(dir: &Path, rev: &str) -> Option<String> {
    let out = Command::new("git")
        .args(["rev-parse", rev])
        .current_dir(dir)
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| String::from_utf8(out.stdout).unwrap().trim().to_string())
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=gpulint tests",
            "-c",
            "user.email=tests@gpulint.invalid",
        ])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        // A fixed date makes the commit of an unchanged tree the same
        // commit, so pre-commit reuses the hook it built last time.
        .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", text(&out));
}

/// Scratch space under target/ that survives between test runs, so builds
/// made by pre-commit and the action's installer are incremental.
fn persistent_scratch(name: &str) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| common::root().join("target"));
    let dir = target.join("integration").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::path::absolute(dir).unwrap()
}

/// Release-profile settings for the builds these tests make from source
/// (`cargo install`, which builds `[profile.release]`): no optimisation,
/// no LTO and many codegen units. They prove that the hooks and the action build and
/// run gpulint, not how well the build optimises; optimising the crate and
/// its dependencies is most of what such a build costs, and CI makes it
/// beside the engine tier on two cores.
const QUICK_RELEASE: [(&str, &str); 3] = [
    ("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0"),
    ("CARGO_PROFILE_RELEASE_LTO", "false"),
    ("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "256"),
];

/// This working tree (tracked and untracked, not ignored files) as a
/// one-commit git repository: what pre-commit would clone from a pushed
/// commit, including changes not committed yet.
fn working_tree_repository(dir: &Path) -> PathBuf {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let listed = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(common::root())
        .output()
        .unwrap();
    assert!(listed.status.success());
    for name in listed.stdout.split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let name = std::str::from_utf8(name).unwrap();
        let from = common::root().join(name);
        let to = dir.join(name);
        // A symbolic link is committed as one (crates/gpulint-rules/rules
        // names the rule docs), as git stores it.
        if let Ok(target) = std::fs::read_link(&from) {
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(target, &to).unwrap();
            continue;
        }
        if !from.is_file() {
            continue; // deleted but not yet staged
        }
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&from, &to).unwrap();
    }
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "snapshot"]);
    dir.to_path_buf()
}

#[test]
#[ignore = "needs pre-commit: installed by .ci/run"]
fn pre_commit_hooks_fail_bad_files_pass_good_ones_and_fix() {
    let pre_commit =
        common::required_tool("GPULINT_PRE_COMMIT", "pre-commit", "pip install pre-commit");
    let scratch = persistent_scratch("pre-commit");
    let hook_repo = working_tree_repository(&scratch.join("hook-repo"));
    let work = tempfile::tempdir().unwrap();
    git(work.path(), &["init", "-q"]);
    write(work.path(), "bad/docker-compose.yml", GPU_SERVICE);
    write(work.path(), "good/compose.yaml", HEALTHY_GPU_SERVICE);
    git(work.path(), &["add", "-A"]);

    // A config pinning the hook repository at its commit, as users write
    // it: pre-commit installs the hooks' environment (builds gpulint) once
    // per repository and rev, where `try-repo` clones and builds anew on
    // each call.
    let rev = git_rev(&hook_repo, "HEAD").expect("the hook repository has a commit");
    write(
        work.path(),
        ".pre-commit-config.yaml",
        format!(
            "repos:\n  - repo: {}\n    rev: {}\n    hooks:\n      - id: gpulint\n      - id: gpulint-fix\n",
            hook_repo.display(),
            rev
        ),
    );
    git(work.path(), &["add", "-A"]);
    let run_hook = |hook: &str, file: &str| {
        Command::new(&pre_commit)
            .args(["run", hook, "--files", file])
            .current_dir(work.path())
            .env("PRE_COMMIT_HOME", scratch.join("home"))
            .env("CARGO_TARGET_DIR", persistent_scratch("cargo-target"))
            .envs(QUICK_RELEASE)
            .env("NO_COLOR", "1")
            .output()
            .expect("pre-commit runs")
    };

    let bad = run_hook("gpulint", "bad/docker-compose.yml");
    assert_eq!(bad.status.code(), Some(1), "{}", text(&bad));
    assert!(text(&bad).contains("warning[SHM001]"), "{}", text(&bad));
    assert!(
        text(&bad).contains("bad/docker-compose.yml:2:3"),
        "{}",
        text(&bad)
    );

    let good = run_hook("gpulint", "good/compose.yaml");
    assert_eq!(good.status.code(), Some(0), "{}", text(&good));
    assert!(text(&good).contains("Passed"), "{}", text(&good));

    // The fixing hook changes the file, which fails the commit so the fix
    // can be reviewed; the fixed file then passes.
    let fix = run_hook("gpulint-fix", "bad/docker-compose.yml");
    assert_eq!(fix.status.code(), Some(1), "{}", text(&fix));
    assert!(
        text(&fix).contains("files were modified by this hook"),
        "{}",
        text(&fix)
    );
    let fixed = std::fs::read_to_string(work.path().join("bad/docker-compose.yml")).unwrap();
    assert_eq!(fixed, format!("{GPU_SERVICE}    shm_size: \"8gb\"\n"));
    let again = run_hook("gpulint", "bad/docker-compose.yml");
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
}

/// The hook's `files`/`exclude` patterns, applied by pre-commit itself,
/// pick the files `gpulint check <dir>` treats as Dockerfiles or YAML.
#[test]
#[ignore = "needs pre-commit: installed by .ci/run"]
fn pre_commit_file_patterns_match_gpulints_file_kinds() {
    let pre_commit =
        common::required_tool("GPULINT_PRE_COMMIT", "pre-commit", "pip install pre-commit");
    let hooks = std::fs::read_to_string(common::root().join(".pre-commit-hooks.yaml")).unwrap();
    let yaml = Yaml::parse(&hooks).unwrap();
    let hook = yaml.items(yaml.documents[0].root.unwrap())[0];
    let pattern = |key: &str| {
        yaml.str(yaml.get(hook, key).unwrap().value)
            .unwrap()
            .to_string()
    };
    let names = [
        "Dockerfile",
        "dockerfile",
        "Containerfile",
        "Dockerfile.gpu",
        "Dockerfile-cuda12",
        "Dockerfile_train",
        "base.Dockerfile",
        "cuda_Dockerfile",
        "gpu-containerfile",
        "mydockerfile",
        "Dockerfile.md",
        "Dockerfile.dockerignore",
        ".dockerignore",
        "Dockerfile.j2",
        "Dockerfile.template",
        "Dockerfile.yml",
        "x.Dockerfile.md",
        "compose.yaml",
        "values.YML",
        "README.md",
        "notes.txt",
        "setup.sh",
        "sub/dir/Dockerfile.prod",
        "sub/dir/DOCKERFILE.sh",
        "jobs/train.sbatch",
        "jobs/train.SLURM",
        "scripts/run.bash",
        "Makefile",
        "GNUmakefile",
        "MAKEFILE",
        "rules.mk",
        "docs/guide.markdown",
        ".devcontainer/devcontainer.json",
        ".devcontainer/gpu/devcontainer.json",
        ".devcontainer.json",
        "DEVCONTAINER.JSON",
        "package.json",
        "quadlets/vllm.container",
        "vllm.CONTAINER",
        "Containerfile.container",
    ];
    let work = tempfile::tempdir().unwrap();
    git(work.path(), &["init", "-q"]);
    for name in names {
        write(work.path(), name, "");
    }
    let config = format!(
        "repos:\n  - repo: local\n    hooks:\n      - id: list\n        name: list\n        entry: echo PASSED\n        language: system\n        verbose: true\n        files: '{}'\n        exclude: '{}'\n",
        pattern("files"),
        pattern("exclude")
    );
    write(work.path(), ".pre-commit-config.yaml", &config);
    git(work.path(), &["add", "-A"]);
    let out = Command::new(&pre_commit)
        .args(["run", "list", "--all-files"])
        .current_dir(work.path())
        .env(
            "PRE_COMMIT_HOME",
            persistent_scratch("pre-commit").join("home"),
        )
        .output()
        .unwrap();
    let printed = text(&out);
    // pre-commit splits the files over several runs of the hook.
    let passed: Vec<&str> = printed
        .lines()
        .filter_map(|l| l.strip_prefix("PASSED "))
        .flat_map(|l| l.split(' '))
        .collect();
    assert!(!passed.is_empty(), "{printed}");
    for name in names {
        let base = name.rsplit('/').next().unwrap();
        let lower = base.to_ascii_lowercase();
        // Markdown is read only when asked for, when walking and here.
        let script = gpulint::engine::discover::script_kind(std::path::Path::new(name))
            .is_some_and(|k| k != gpulint::model::script::ScriptKind::Markdown);
        let linted = gpulint::engine::discover::is_dockerfile_name(base)
            || lower.ends_with(".yaml")
            || lower.ends_with(".yml")
            || script;
        assert_eq!(
            passed.contains(&name),
            linted,
            "{name}: pre-commit passes it: {}, gpulint lints it: {linted}",
            passed.contains(&name)
        );
    }
}

/// action.yml, parsed.
struct Action {
    yaml: Yaml,
    root: NodeId,
}

impl Action {
    fn load() -> Action {
        let text = std::fs::read_to_string(common::root().join("action.yml")).unwrap();
        let yaml = Yaml::parse(&text).unwrap();
        let root = yaml.documents[0].root.unwrap();
        Action { yaml, root }
    }

    fn str_at(&self, node: NodeId, path: &[&str]) -> Option<String> {
        let entry = self.yaml.get_path(node, path)?;
        self.yaml.str(entry.value).map(str::to_string)
    }

    fn map(&self, node: NodeId, key: &str) -> Vec<(String, NodeId)> {
        let Some(entry) = self.yaml.get(node, key) else {
            return Vec::new();
        };
        self.yaml
            .entries(entry.value)
            .into_iter()
            .map(|e| (self.yaml.str(e.key).unwrap().to_string(), e.value))
            .collect()
    }

    fn input_defaults(&self) -> BTreeMap<String, String> {
        self.map(self.root, "inputs")
            .into_iter()
            .map(|(name, node)| (name, self.str_at(node, &["default"]).unwrap_or_default()))
            .collect()
    }

    fn steps(&self) -> Vec<NodeId> {
        let steps = self.yaml.get_path(self.root, &["runs", "steps"]).unwrap();
        self.yaml.items(steps.value).to_vec()
    }
}

/// A GitHub runner, as far as a composite action sees it.
struct Runner {
    action: Action,
    inputs: BTreeMap<String, String>,
    /// The job's environment (a workflow's `env:`).
    env: BTreeMap<String, String>,
    /// The ref the workflow pinned the action to (`@v0`): `GITHUB_ACTION_REF`.
    action_ref: String,
    workspace: PathBuf,
    temp: tempfile::TempDir,
}

struct Run {
    status: i32,
    log: String,
    outputs: BTreeMap<String, String>,
    summary: String,
}

impl Runner {
    fn new(workspace: &Path) -> Runner {
        let action = Action::load();
        let inputs = action.input_defaults();
        Runner {
            action,
            inputs,
            env: BTreeMap::new(),
            action_ref: String::new(),
            workspace: workspace.to_path_buf(),
            temp: tempfile::tempdir().unwrap(),
        }
    }

    fn input(mut self, name: &str, value: &str) -> Runner {
        assert!(
            self.inputs.contains_key(name),
            "action.yml has no input `{name}`"
        );
        self.inputs.insert(name.to_string(), value.to_string());
        self
    }

    fn env(mut self, name: &str, value: &str) -> Runner {
        self.env.insert(name.to_string(), value.to_string());
        self
    }

    fn pinned_to(mut self, action_ref: &str) -> Runner {
        self.action_ref = action_ref.to_string();
        self
    }

    /// `${{ … }}` as the runner expands it in `env:`, `with:` and `outputs:`,
    /// for the contexts action.yml may use; anything else fails the test.
    fn expand(&self, value: &str, steps: &BTreeMap<String, BTreeMap<String, String>>) -> String {
        let mut out = String::new();
        let mut rest = value;
        while let Some(start) = rest.find("${{") {
            out.push_str(&rest[..start]);
            let end = rest[start..].find("}}").expect("closed expression") + start;
            let expression = rest[start + 3..end].trim();
            let parts: Vec<&str> = expression.split('.').collect();
            let value = match parts.as_slice() {
                ["inputs", name] => self.inputs[*name].clone(),
                ["steps", id, "outputs", name] => steps
                    .get(*id)
                    .and_then(|o| o.get(*name))
                    .cloned()
                    .unwrap_or_default(),
                ["github", "action_path"] => common::root().display().to_string(),
                _ => panic!("action.yml uses `{expression}`, which this emulation does not know"),
            };
            out.push_str(&value);
            rest = &rest[end + 2..];
        }
        out.push_str(rest);
        out
    }

    /// Runs the `run:` steps in order with `bash --noprofile --norc -eo
    /// pipefail`, as the runner does; `uses:` steps (the cache) are passed
    /// over. Stops at the first failing step, as a composite action does.
    fn run(&self) -> Run {
        let temp = self.temp.path();
        let tool_cache = temp.join("tool-cache");
        let runner_temp = temp.join("runner-temp");
        std::fs::create_dir_all(&runner_temp).unwrap();
        let github_path = temp.join("github-path");
        let summary = temp.join("step-summary");
        let _ = std::fs::remove_file(&summary);
        std::fs::write(&github_path, "").unwrap();
        let mut steps: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        let mut log = String::new();
        let mut status = 0;
        for (i, step) in self.action.steps().into_iter().enumerate() {
            if let Some(uses) = self.action.str_at(step, &["uses"]) {
                assert!(uses.starts_with("actions/cache@"), "unexpected step {uses}");
                continue;
            }
            let script = self.action.str_at(step, &["run"]).expect("a run step");
            assert!(
                !script.contains("${{"),
                "step {i} expands an expression into its script (template injection); pass it through env"
            );
            assert_eq!(
                self.action.str_at(step, &["shell"]).as_deref(),
                Some("bash")
            );
            let script_file = temp.join(format!("step-{i}.sh"));
            std::fs::write(&script_file, &script).unwrap();
            let output_file = temp.join(format!("step-{i}.output"));
            std::fs::write(&output_file, "").unwrap();
            // Directories earlier steps added to GITHUB_PATH come first.
            let mut path: Vec<String> = std::fs::read_to_string(&github_path)
                .unwrap()
                .lines()
                .rev()
                .map(str::to_string)
                .collect();
            path.push(std::env::var("PATH").unwrap());
            let mut command = Command::new("bash");
            command
                .args(["--noprofile", "--norc", "-eo", "pipefail"])
                .arg(&script_file)
                .current_dir(&self.workspace)
                .envs(&self.env)
                .env("PATH", path.join(":"))
                .env("GITHUB_ACTIONS", "true")
                .env("GITHUB_ACTION_PATH", common::root())
                .env("GITHUB_ACTION_REF", &self.action_ref)
                .env("GITHUB_WORKSPACE", &self.workspace)
                .env("GITHUB_OUTPUT", &output_file)
                .env("GITHUB_PATH", &github_path)
                .env("GITHUB_STEP_SUMMARY", &summary)
                .env("RUNNER_TEMP", &runner_temp)
                .env("RUNNER_TOOL_CACHE", &tool_cache)
                .stdin(Stdio::null());
            for (name, value) in self.action.map(step, "env") {
                let value = self.action.yaml.str(value).unwrap_or_default();
                command.env(name, self.expand(value, &steps));
            }
            let out = command.output().unwrap();
            log.push_str(&text(&out));
            let outputs = std::fs::read_to_string(&output_file).unwrap();
            assert!(
                !outputs.contains("<<"),
                "multi-line outputs are not emulated"
            );
            if let Some(id) = self.action.str_at(step, &["id"]) {
                let parsed = outputs
                    .lines()
                    .filter_map(|l| l.split_once('='))
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                steps.insert(id, parsed);
            }
            status = out.status.code().unwrap_or(-1);
            if status != 0 {
                break;
            }
        }
        let outputs = self
            .action
            .map(self.action.root, "outputs")
            .into_iter()
            .map(|(name, node)| {
                let value = self.action.str_at(node, &["value"]).unwrap();
                (name, self.expand(&value, &steps))
            })
            .collect();
        Run {
            status,
            log,
            outputs,
            summary: std::fs::read_to_string(&summary).unwrap_or_default(),
        }
    }
}

/// A mirror laid out like GitHub's release downloads, holding this build of
/// gpulint as release `version`, and its URL. It names the Linux assets, so
/// the tests that use it are ignored elsewhere.
fn release_mirror(version: &str, tamper: bool) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let release = dir.path().join(version);
    std::fs::create_dir_all(&release).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_gpulint"), release.join("gpulint")).unwrap();
    let target = match std::env::consts::ARCH {
        "x86_64" => "x86_64-unknown-linux-gnu",
        "aarch64" => "aarch64-unknown-linux-gnu",
        other => panic!("no release name for {other}"),
    };
    let archive = format!("gpulint-{target}.tar.gz");
    let run = |script: &str| {
        let out = Command::new("bash")
            .args(["-c", script])
            .current_dir(&release)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
    };
    run(&format!(
        "tar -czf {archive} gpulint && sha256sum {archive} > {archive}.sha256 && rm gpulint"
    ));
    if tamper {
        run(&format!("echo extra >> {archive}"));
    }
    let url = format!("file://{}", dir.path().display());
    (dir, url)
}

fn lint_workspace() -> tempfile::TempDir {
    let workspace = tempfile::tempdir().unwrap();
    write(workspace.path(), "train/docker-compose.yml", GPU_SERVICE);
    write(workspace.path(), "serve/compose.yaml", HEALTHY_GPU_SERVICE);
    workspace
}

#[test]
#[cfg_attr(
    not(target_os = "linux"),
    ignore = "the release mirror names the Linux assets"
)]
fn action_installs_a_release_lints_annotates_and_writes_sarif() {
    let (_mirror, base) = release_mirror("v9.9.9", false);
    let workspace = lint_workspace();
    let runner = || {
        Runner::new(workspace.path())
            .env("GPULINT_DOWNLOAD_BASE", &base)
            .input("version", "v9.9.9")
    };

    let run = runner().input("sarif-file", "reports/gpulint.sarif").run();
    assert_eq!(run.status, 1, "findings fail the step: {}", run.log);
    assert!(run.log.contains("installed release v9.9.9"), "{}", run.log);
    assert!(
        run.log.contains("warning[SHM001]"),
        "the log has the report: {}",
        run.log
    );
    assert!(
        run.log.lines().any(|l| l.starts_with(
            "::warning file=train/docker-compose.yml,line=2,col=3,endLine=2,endColumn=10,title=gpulint SHM001"
        )),
        "{}",
        run.log
    );
    assert_eq!(run.outputs["exit-code"], "1");
    assert_eq!(run.outputs["findings"], "1");
    assert_eq!(run.outputs["sarif-file"], "reports/gpulint.sarif");
    assert!(
        run.summary.contains("### gpulint: 1 finding\n"),
        "{}",
        run.summary
    );
    let sarif: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(workspace.path().join("reports/gpulint.sarif")).unwrap(),
    )
    .unwrap();
    assert_eq!(sarif["runs"][0]["results"][0]["ruleId"], "SHM001");

    // A warning does not fail the step when only errors should.
    let run = runner().input("fail-on", "error").run();
    assert_eq!(run.status, 0, "{}", run.log);
    assert!(run.log.contains("::warning file=train/docker-compose.yml"));

    let run = runner()
        .input("annotations", "false")
        .input("args", "--select GPU")
        .run();
    assert_eq!(run.status, 0, "{}", run.log);
    assert!(!run.log.contains("::warning"), "{}", run.log);

    let run = runner().input("mode", "diff").run();
    assert_eq!(run.status, 1, "{}", run.log);
    assert!(run.log.contains("+    shm_size: \"8gb\""), "{}", run.log);
    assert_eq!(
        std::fs::read_to_string(workspace.path().join("train/docker-compose.yml")).unwrap(),
        GPU_SERVICE
    );

    let run = runner().input("mode", "fix").run();
    assert_eq!(run.status, 0, "{}", run.log);
    assert_eq!(run.outputs["findings"], "0");
    assert!(run.summary.contains("no findings"), "{}", run.summary);
    assert!(
        std::fs::read_to_string(workspace.path().join("train/docker-compose.yml"))
            .unwrap()
            .contains("shm_size: \"8gb\"")
    );

    let run = runner().input("mode", "lint").run();
    assert_eq!(run.status, 2);
    assert!(
        run.log
            .contains("::error title=gpulint action::mode must be check, fix or diff")
    );
}

#[test]
#[cfg_attr(
    not(target_os = "linux"),
    ignore = "the release mirror names the Linux assets"
)]
fn action_refuses_a_release_asset_that_fails_its_checksum() {
    let (_mirror, base) = release_mirror("v9.9.9", true);
    let workspace = lint_workspace();
    let run = Runner::new(workspace.path())
        .env("GPULINT_DOWNLOAD_BASE", &base)
        .input("version", "v9.9.9")
        .run();
    assert_eq!(run.status, 1);
    assert!(
        run.log.contains("does not match its .sha256"),
        "{}",
        run.log
    );
    assert!(!run.outputs.contains_key("exit-code") || run.outputs["exit-code"].is_empty());
}

/// `uses: gpulint/gpulint@v0` looked for a release named `v0`, which
/// nothing publishes, and fell back to building from source. A major (or
/// minor) tag now means the newest release of that line, which is the
/// version of the action's own source (the release workflow moves the tag
/// there; see the next test).
#[test]
#[cfg_attr(
    not(target_os = "linux"),
    ignore = "the release mirror names the Linux assets"
)]
fn action_pinned_to_a_major_tag_installs_the_newest_release_of_that_line() {
    let release = format!("v{}", env!("CARGO_PKG_VERSION"));
    let (_mirror, base) = release_mirror(&release, false);
    let workspace = lint_workspace();
    let major = release.split('.').next().unwrap().to_string();
    let minor = release.rsplit_once('.').unwrap().0.to_string();
    for pinned in [&major, &minor] {
        let run = Runner::new(workspace.path())
            .env("GPULINT_DOWNLOAD_BASE", &base)
            .pinned_to(pinned)
            .input("paths", "serve")
            .run();
        assert_eq!(run.status, 0, "{}", run.log);
        assert!(
            run.log.contains(&format!("installed release {release}")),
            "@{pinned}: {}",
            run.log
        );
        assert!(!run.log.contains("building from"), "{}", run.log);
    }
    // Another line's tag is not this release: the cache key says the action
    // would build its source instead of downloading anything.
    let key = |pinned: &str| {
        let out = Command::new("bash")
            .arg(common::root().join("editors/github/install.sh"))
            .arg("key")
            .env("GITHUB_ACTION_PATH", common::root())
            .env("GITHUB_ACTION_REF", pinned)
            .env_remove("GITHUB_OUTPUT")
            .env_remove("GPULINT_VERSION")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(key(&major).starts_with(&format!("key=gpulint-release-{release}-")));
    assert!(
        key("v99").starts_with("key=gpulint-source-"),
        "{}",
        key("v99")
    );
    assert!(key("main").starts_with("key=gpulint-source-"));
}

/// The release workflow's trigger, as GitHub matches a tag filter pattern:
/// `*` any run of characters but `/`, `+` one or more of what precedes it,
/// `[...]` a class; everything else literal.
fn tag_filter_matches(pattern: &str, tag: &str) -> bool {
    let mut regex = String::from("^");
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' => regex.push_str("[^/]*"),
            '+' => regex.push('+'),
            '[' => {
                regex.push('[');
                for c in chars.by_ref() {
                    regex.push(c);
                    if c == ']' {
                        break;
                    }
                }
            }
            c if c.is_ascii_alphanumeric() => regex.push(c),
            c => {
                regex.push('\\');
                regex.push(c);
            }
        }
    }
    regex.push('$');
    let out = Command::new("python3")
        .args([
            "-c",
            "import re, sys; sys.exit(0 if re.match(sys.argv[1], sys.argv[2]) else 1)",
        ])
        .args([&regex, tag])
        .output()
        .expect("python3 runs");
    out.status.success()
}

/// The release workflow moves the major tag to a new release, only when it
/// is the newest final release of its line, and the moved tag does not
/// start a release of its own. The tag step's script is run on a real git
/// repository with a bare `origin`.
#[test]
fn the_release_workflow_moves_the_major_tag_to_the_newest_release() {
    let workflow =
        std::fs::read_to_string(common::root().join(".github/workflows/release.yml")).unwrap();
    let yaml = Yaml::parse(&workflow).unwrap();
    let root = yaml.documents[0].root.unwrap();
    let patterns: Vec<String> = yaml
        .get_path(root, &["on", "push", "tags"])
        .map(|e| {
            yaml.items(e.value)
                .iter()
                .filter_map(|&i| yaml.str(i))
                .map(str::to_string)
                .collect()
        })
        .unwrap();
    let triggers = |tag: &str| patterns.iter().any(|p| tag_filter_matches(p, tag));
    for tag in ["v0.1.0", "v1.2.3", "v10.20.30", "v1.0.0-rc.1"] {
        assert!(
            triggers(tag),
            "{tag} does not start a release: {patterns:?}"
        );
    }
    for tag in ["v0", "v1", "v0.1", "latest"] {
        assert!(
            !triggers(tag),
            "moving {tag} would start a release: {patterns:?}"
        );
    }
    let job = yaml.get_path(root, &["jobs", "major-tag"]).unwrap().value;
    let needs: Vec<&str> = yaml
        .get(job, "needs")
        .map(|e| {
            yaml.items(e.value)
                .iter()
                .filter_map(|&i| yaml.str(i))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        needs,
        ["github-release"],
        "the tag moves once the assets are out"
    );
    let script = yaml
        .items(yaml.get(job, "steps").unwrap().value)
        .iter()
        .find_map(|&step| yaml.get(step, "run"))
        .and_then(|e| yaml.str(e.value))
        .unwrap()
        .to_string();

    let dir = tempfile::tempdir().unwrap();
    let origin = dir.path().join("origin.git");
    let work = dir.path().join("work");
    git(
        dir.path(),
        &["init", "-q", "--bare", origin.to_str().unwrap()],
    );
    git(
        dir.path(),
        &[
            "clone",
            "-q",
            origin.to_str().unwrap(),
            work.to_str().unwrap(),
        ],
    );
    let commit = |name: &str| {
        write(&work, name, name);
        git(&work, &["add", "-A"]);
        git(&work, &["commit", "-q", "-m", name]);
        git_rev(&work, "HEAD").expect("a commit was made")
    };
    let tag = |name: &str, sha: &str| {
        git(&work, &["tag", name, sha]);
        git(
            &work,
            &["push", "-q", "origin", &format!("refs/tags/{name}")],
        );
    };
    let release = |name: &str, sha: &str| {
        let out = Command::new("bash")
            .args(["-c", &script])
            .current_dir(&work)
            .env("GITHUB_REF_NAME", name)
            .env("GITHUB_SHA", sha)
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}: {}", text(&out));
        text(&out)
    };
    let major_at = || git_rev(&origin, "refs/tags/v0^{commit}");
    let (first, second, third) = (commit("a"), commit("b"), commit("c"));
    tag("v0.1.0", &first);
    release("v0.1.0", &first);
    assert_eq!(major_at().as_deref(), Some(first.as_str()));
    tag("v0.2.0", &second);
    release("v0.2.0", &second);
    assert_eq!(major_at().as_deref(), Some(second.as_str()));
    // A fix of the older line, and a pre-release, leave it.
    tag("v0.1.1", &third);
    assert!(release("v0.1.1", &third).contains("v0.2.0 is newer than v0.1.1"));
    tag("v0.3.0-rc.1", &third);
    assert!(release("v0.3.0-rc.1", &third).contains("is a pre-release"));
    assert_eq!(major_at().as_deref(), Some(second.as_str()));
    tag("v0.3.0", &third);
    release("v0.3.0", &third);
    assert_eq!(major_at().as_deref(), Some(third.as_str()));
}

#[test]
#[ignore = "slow: builds gpulint from source (minutes on a cold target/integration); run by .ci/run"]
fn action_builds_from_source_without_a_release() {
    let workspace = lint_workspace();
    // No release for an unpinned action: it builds its own checkout.
    let mut runner = Runner::new(workspace.path()).env(
        "CARGO_TARGET_DIR",
        &persistent_scratch("cargo-target").display().to_string(),
    );
    for (name, value) in QUICK_RELEASE {
        runner = runner.env(name, value);
    }
    let run = runner.input("paths", "serve").run();
    assert_eq!(run.status, 0, "{}", run.log);
    assert!(run.log.contains("building from"), "{}", run.log);
    assert!(
        run.log
            .contains(&format!("gpulint {}", env!("CARGO_PKG_VERSION"))),
        "{}",
        run.log
    );
    assert!(
        run.log.contains("All checks passed (1 file checked)."),
        "{}",
        run.log
    );
}

fn schema_check(tool: &Path, schema: &str, file: &Path) -> Output {
    Command::new(tool)
        .args(["--builtin-schema", schema])
        .arg(file)
        .output()
        .unwrap()
}

/// action.yml, the example workflow, and a copy of action.yml broken on
/// purpose (a composite step without `shell`), so a checker that passes
/// everything fails the test.
struct WorkflowFiles {
    action: PathBuf,
    workflow: PathBuf,
    broken: PathBuf,
    _scratch: tempfile::TempDir,
}

fn workflow_files() -> WorkflowFiles {
    let action = common::root().join("action.yml");
    let workflow = common::root().join("editors/github/gpulint.yml");
    let scratch = tempfile::tempdir().unwrap();
    let broken = scratch.path().join("action.yml");
    let original = std::fs::read_to_string(&action).unwrap();
    assert!(original.contains("      shell: bash\n"));
    std::fs::write(&broken, original.replacen("      shell: bash\n", "", 1)).unwrap();
    WorkflowFiles {
        action,
        workflow,
        broken,
        _scratch: scratch,
    }
}

#[test]
#[ignore = "needs check-jsonschema: installed by .ci/run"]
fn action_and_example_workflow_pass_check_jsonschema() {
    let check = common::required_tool(
        "GPULINT_CHECK_JSONSCHEMA",
        "check-jsonschema",
        "pip install check-jsonschema",
    );
    let files = workflow_files();
    let out = schema_check(&check, "vendor.github-actions", &files.action);
    assert!(out.status.success(), "{}", text(&out));
    let out = schema_check(&check, "vendor.github-workflows", &files.workflow);
    assert!(out.status.success(), "{}", text(&out));
    let out = schema_check(&check, "vendor.github-actions", &files.broken);
    assert!(!out.status.success(), "{}", text(&out));
}

#[test]
#[ignore = "needs action-validator: installed by .ci/run"]
fn action_and_example_workflow_pass_action_validator() {
    let validator = common::required_tool(
        "GPULINT_ACTION_VALIDATOR",
        "action-validator",
        "npm install @action-validator/cli",
    );
    let files = workflow_files();
    for file in [&files.action, &files.workflow] {
        let out = Command::new(&validator).arg(file).output().unwrap();
        assert!(out.status.success(), "{}: {}", file.display(), text(&out));
    }
    let out = Command::new(&validator)
        .arg(&files.broken)
        .output()
        .unwrap();
    assert!(!out.status.success(), "{}", text(&out));
}

/// actionlint cannot check a local action's inputs; this does, for the
/// example workflow.
#[test]
fn example_workflow_uses_only_inputs_the_action_declares() {
    let action = Action::load();
    let inputs = action.input_defaults();
    let text = std::fs::read_to_string(common::root().join("editors/github/gpulint.yml")).unwrap();
    let yaml = Yaml::parse(&text).unwrap();
    let root = yaml.documents[0].root.unwrap();
    let mut used = 0;
    for job in yaml.entries(yaml.get(root, "jobs").unwrap().value) {
        for &step in yaml.items(yaml.get(job.value, "steps").unwrap().value) {
            let uses = yaml.get(step, "uses").and_then(|e| yaml.str(e.value));
            if !uses.is_some_and(|u| u.starts_with("gpulint/gpulint@")) {
                continue;
            }
            used += 1;
            for entry in yaml.entries(yaml.get(step, "with").unwrap().value) {
                let name = yaml.str(entry.key).unwrap();
                assert!(
                    inputs.contains_key(name),
                    "the action has no input `{name}`"
                );
            }
        }
    }
    assert_eq!(used, 1);
}

/// Without a Rust toolchain, a source build (`pip install .`, or the sdist
/// where no wheel fits) stops in its first hook with one line saying what
/// it needs, instead of maturin downloading a toolchain (or, offline, an
/// 81-line traceback). `.ci/wheel` runs the same through real pip.
#[test]
fn the_build_backend_refuses_a_source_build_without_rust_in_one_line() {
    let root = common::root();
    // The interpreter itself, found on this PATH, since the hooks run with
    // a PATH that has no cargo (nor anything else).
    let found = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    let python = String::from_utf8(found.stdout).unwrap().trim().to_string();
    // Every hook, with no cargo on the PATH and no `CARGO`.
    let hooks = [
        "get_requires_for_build_wheel()",
        "get_requires_for_build_sdist()",
        "prepare_metadata_for_build_wheel('.')",
        "build_wheel('.')",
        "build_sdist('.')",
    ];
    for hook in hooks {
        let out = Command::new(&python)
            .args([
                "-c",
                &format!("import sys; sys.path.insert(0, 'python'); import gpulint_build; gpulint_build.{hook}"),
            ])
            .current_dir(&root)
            .env_remove("CARGO")
            .env("PATH", std::env::temp_dir())
            .output()
            .expect("python3 runs");
        assert_eq!(out.status.code(), Some(1), "{hook}: {}", text(&out));
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "gpulint: building gpulint from source needs Rust 1.88 or newer, with cargo on the PATH (https://rustup.rs)\n",
            "{hook}"
        );
    }
    // The version it names is the crate's `rust-version`.
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let backend = std::fs::read_to_string(root.join("python/gpulint_build.py")).unwrap();
    let rust_version = manifest
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = "))
        .unwrap();
    assert!(
        backend.contains(&format!("RUST_VERSION = {rust_version}\n")),
        "python/gpulint_build.py names another Rust than Cargo.toml's {rust_version}"
    );
}

#[test]
#[cfg_attr(
    not(target_os = "linux"),
    ignore = "the release mirror names the Linux assets"
)]
fn nothing_a_checked_file_holds_becomes_a_workflow_command_in_the_log() {
    let (_mirror, base) = release_mirror("v9.9.9", false);
    let workspace = tempfile::tempdir().unwrap();
    // Commands in a service name (escaped in the report, verbatim in a
    // diff's lines) and in a path.
    write(
        workspace.path(),
        "compose.yaml",
        "services:\n  \"t\\n::add-mask::x ##[set-output name=pwned]1\":\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n::error::in-the-file: x\n",
    );
    write(
        workspace.path(),
        "::error::dir/compose.yaml",
        "services:\n  t:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n",
    );
    for mode in ["check", "diff"] {
        let run = Runner::new(workspace.path())
            .env("GPULINT_DOWNLOAD_BASE", &base)
            .input("version", "v9.9.9")
            .input("mode", mode)
            .run();
        assert!(run.log.contains("set-output name=pwned"), "{}", run.log);
        let commands = common::workflow_commands(&run.log);
        let (stops, others): (Vec<&String>, Vec<&String>) = commands
            .iter()
            .partition(|c| c.starts_with("::stop-commands::gpulint-"));
        assert_eq!(stops.len(), 1, "{mode}: {commands:#?}");
        // Only the annotations, printed after the report.
        for command in &others {
            assert!(
                command.starts_with("::warning file=") || command.starts_with("::error file="),
                "{mode}: {command}\n{}",
                run.log
            );
        }
        assert!(!others.is_empty(), "{mode}: {}", run.log);
    }
}

/// `cargo build --release` is what a new user builds first (the README's
/// quick start), so it keeps cargo's quick defaults; what ships (wheels,
/// archives, the image) and what is benchmarked builds `[profile.dist]`,
/// the whole-program-LTO profile, and takes its binary from `dist/`.
#[test]
fn release_builds_quickly_and_what_ships_or_is_benchmarked_builds_dist() {
    let root = common::root();
    let read = |name: &str| std::fs::read_to_string(root.join(name)).unwrap();
    let manifest: toml::Table = read("Cargo.toml").parse().unwrap();
    let profiles = manifest["profile"].as_table().unwrap();
    let release = profiles["release"].as_table().unwrap();
    assert!(
        !matches!(release.get("lto"), Some(toml::Value::String(s)) if s == "fat")
            && release.get("lto") != Some(&toml::Value::Boolean(true)),
        "the release profile builds with whole-program LTO: {release:?}"
    );
    assert_ne!(
        release.get("codegen-units"),
        Some(&toml::Value::Integer(1)),
        "the release profile builds one codegen unit"
    );
    let dist = profiles["dist"].as_table().expect("a [profile.dist]");
    assert_eq!(dist["inherits"].as_str(), Some("release"));
    assert_eq!(dist["lto"].as_str(), Some("fat"));
    assert_eq!(dist["codegen-units"].as_integer(), Some(1));

    // Every build for distribution or benchmarks, and where it takes the
    // binary from.
    for name in [
        ".ci/wheel",
        ".ci/image",
        ".ci/bench-guard",
        ".ci/run",
        "Dockerfile",
        ".github/workflows/release.yml",
        "benches/compare.py",
    ] {
        let text = read(name);
        assert!(
            text.contains("--profile dist") || text.contains("\"--profile\", \"dist\""),
            "{name} does not build --profile dist"
        );
        for release in ["--release", "\"--release\"", "/release/gpulint"] {
            assert!(!text.contains(release), "{name} still uses {release}");
        }
    }
    for name in ["Dockerfile", ".dockerignore", ".ci/image"] {
        assert!(
            read(name).contains("x86_64-unknown-linux-gnu/dist/gpulint")
                || read(name).contains("$target/dist/gpulint"),
            "{name} does not take the dist binary"
        );
    }
    let pyproject: toml::Table = read("pyproject.toml").parse().unwrap();
    assert_eq!(
        pyproject["tool"]["maturin"]["profile"].as_str(),
        Some("dist"),
        "the wheel (and a source build of the sdist) builds the dist profile"
    );
    let readme = read("README.md");
    assert!(readme.contains("cargo run --release -- check fixtures/_examples"));
    assert!(
        readme.contains("(docs/performance.md)"),
        "the README links the performance figures"
    );
    let performance = read("docs/performance.md");
    assert!(
        performance.contains("`--profile dist`") && performance.contains("`--release`"),
        "docs/performance.md does not say which profile each figure used"
    );
}
