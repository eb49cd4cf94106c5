#!/usr/bin/env python3
"""Scaffold a new gpulint rule in one step.

    python3 scripts/new_rule.py SHM012 shm-size-from-host --target compose \
        --severity warning --summary "..."

writes, and registers:

- crates/gpulint-rules/src/<family>/<code>_<name>.rs, the rule (its `CHECK` and a check
  function that reports nothing yet), declared in the family's `mod.rs`;
- one line in `for_each_rule!` (crates/gpulint-base/src/codes.rs), which gives it a `RuleCode`
  and puts it in `RULES`;
- rules/<CODE>.md, its doc (its metadata is the rule's `declare_rule!`);
- fixtures/<CODE>/, an `invalid` and a `valid` case for its target.

The family is the code's prefix (`SHM` -> `shm/`). Then edit the rule, its
doc and its fixtures, and run
`UPDATE_SNAPSHOTS=1 cargo test --test it <CODE>`: the new rule's tests fail
until its `invalid` fixture and its doc's `bad` example report it.

Like ruff's scripts/add_rule.py and clippy's `cargo dev new_lint`. Nothing
is written when the code or the module exists already.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The code's prefix names the family directory under crates/gpulint-rules/src/.
FAMILIES = {
    "SHM": "shm",
    "GPU": "gpu",
    "NCCL": "nccl",
    "ULIM": "ulim",
    "K8S": "k8s",
    "DF": "dockerfile",
    "SLURM": "slurm",
    "PROJ": "proj",
    "SUP": "suppression",
    "DEV": "devcontainer",
}

# What each kind of check is written against: its `Check` constructor, the
# context the function gets, the targets its doc lists and the fixture
# files for it.
TARGETS = {
    "compose": {
        "check": "Check::compose(check)",
        "signature": "cx: &ComposeContext, out: &mut Reporter",
        "imports": "use crate::{Check, ComposeContext, Reporter};",
        "body": "    for service in cx.services() {\n"
        "        let container = cx.container(service);\n"
        "        // Read the container model (`container.shm`, `.gpus`, `.env`, ...)\n"
        "        // and report with `out.report(cx.range(service.key), ...)`.\n"
        "        let _ = (container, &out);\n"
        "    }\n",
        "targets": ["compose"],
        "fixtures": {
            "invalid.yaml": "services:\n  trainer:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n",
            "valid.yaml": "services:\n  web:\n    image: nginx:1.27\n",
        },
        "example": ("yaml", "services:\n  trainer:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n"),
    },
    "kubernetes": {
        "check": "Check::kubernetes(check)",
        "signature": "cx: &KubeContext, out: &mut Reporter",
        "imports": "use crate::{Check, KubeContext, Reporter};",
        "body": "    for (pod, container) in cx.containers() {\n"
        "        // `cx.container(container)` is the container model;\n"
        "        // report with `out.report(cx.range(container.map), ...)`.\n"
        "        let _ = (pod, container, &out);\n"
        "    }\n",
        "targets": ["kubernetes"],
        "fixtures": {
            "invalid.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: train\nspec:\n  containers:\n  - name: train\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    resources:\n      limits:\n        nvidia.com/gpu: 8\n",
            "valid.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: web\n    image: nginx:1.27\n",
        },
        "example": ("yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: train\nspec:\n  containers:\n  - name: train\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    resources:\n      limits:\n        nvidia.com/gpu: 8\n"),
    },
    "dockerfile": {
        "check": "Check::dockerfile(check)",
        "signature": "cx: &DockerfileContext, out: &mut Reporter",
        "imports": "use crate::{Check, DockerfileContext, Reporter};",
        "body": "    for stage in &cx.model.stages {\n"
        "        // Report with `out.report(range, ...)`.\n"
        "        let _ = (stage, &out);\n"
        "    }\n",
        "targets": ["dockerfile"],
        "fixtures": {
            "invalid.Dockerfile": "FROM nvcr.io/nvidia/pytorch:24.01-py3\n",
            "valid.Dockerfile": "FROM debian:12\n",
        },
        "example": ("dockerfile", "FROM nvcr.io/nvidia/pytorch:24.01-py3\n"),
    },
    "commands": {
        "check": "Check::commands(check)",
        "signature": "cx: &ScriptContext, out: &mut Reporter",
        "imports": "use crate::{Check, Reporter, ScriptContext};",
        "body": "    for site in &cx.script.runs {\n"
        "        // `cx.container(site)` is the container model of this `docker run`;\n"
        "        // report with `out.report(site.run.program_range, ...)`.\n"
        "        let _ = (cx.container(site), &out);\n"
        "    }\n",
        "targets": ["commands"],
        "fixtures": {
            "invalid_docker_run.sh": "#!/bin/sh\ndocker run --gpus all nvcr.io/nvidia/pytorch:24.01-py3 python train.py\n",
            "valid_docker_run.sh": "#!/bin/sh\ndocker run nginx:1.27\n",
        },
        "example": ("bash", "docker run --gpus all nvcr.io/nvidia/pytorch:24.01-py3 python train.py\n"),
    },
    "slurm": {
        "check": "Check::slurm(check)",
        "signature": "cx: &ScriptContext, out: &mut Reporter",
        "imports": "use crate::{Check, Reporter, ScriptContext};",
        "body": "    // The file's batch script, then each here-document fed to sbatch.\n"
        "    for batch in &cx.script.batches {\n"
        "        // Report with `out.report(range, ...)`.\n"
        "        let _ = (batch, &out);\n"
        "    }\n",
        "targets": ["slurm"],
        "fixtures": {
            "invalid.sbatch": "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gpus-per-node=8\nsrun python train.py\n",
            "valid.sbatch": "#!/bin/bash\n#SBATCH --nodes=1\nsrun hostname\n",
        },
        "example": ("bash", "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gpus-per-node=8\nsrun python train.py\n"),
    },
    "containers": {
        "check": "Check::containers(check)",
        "signature": "site: &ContainerSite, out: &mut Reporter",
        "imports": "use crate::{Check, ContainerSite, Reporter};",
        "body": "    // Every container of a compose project, a Kubernetes pod or a command\n"
        "    // line (docker and podman run, dev containers, workflow containers,\n"
        "    // Quadlet units):\n"
        "    // judge `site.model` (what `gpulint inspect` prints) and ask the site\n"
        "    // where settings are written and for fixes in the file's syntax.\n"
        "    // Report with `out.report(site.at(), format!(\"{} ...\", site.describe()))`.\n"
        "    let _ = (site.model, &out);\n",
        "targets": ["compose", "kubernetes", "commands"],
        "fixtures": {
            "invalid.yaml": "services:\n  trainer:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n",
            "invalid_docker_run.sh": "#!/bin/sh\ndocker run --gpus all nvcr.io/nvidia/pytorch:24.01-py3 python train.py\n",
            "valid.yaml": "services:\n  web:\n    image: nginx:1.27\n",
        },
        "example": ("yaml", "services:\n  trainer:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n"),
    },
    "env": {
        "check": "Check::env(check)",
        "signature": "var: &EnvSetting, out: &mut Reporter",
        "imports": "use crate::{Check, EnvSetting, Reporter};",
        "body": "    // Every variable of every platform: a compose service, a Kubernetes\n"
        "    // container or ConfigMap, a Dockerfile `ENV`, a script, a `docker run -e`.\n"
        "    // Report with `var.report(out, format!(\"{} sets ...\", var.owner))`:\n"
        "    // it is placed where the variable is written, with the fix that\n"
        "    // removes it.\n"
        "    let _ = (var, &out);\n",
        "targets": ["compose", "kubernetes", "dockerfile", "commands"],
        "fixtures": {
            "invalid.yaml": "services:\n  trainer:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n    environment:\n      - NCCL_EXAMPLE=1\n",
            "valid.yaml": "services:\n  trainer:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n",
        },
        "example": ("yaml", "services:\n  trainer:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n    environment:\n      - NCCL_EXAMPLE=1\n"),
    },
}

SEVERITIES = ["error", "warning", "info"]


def fail(message: str) -> None:
    print(f"new_rule: {message}", file=sys.stderr)
    sys.exit(1)


def family_of(code: str) -> tuple[str, str]:
    """The code's prefix and its family directory."""
    match = re.fullmatch(r"([A-Z]+?|K8S)(\d{3})", code)
    if match is None or match.group(1) not in FAMILIES:
        fail(
            f"`{code}` is not a code of a known family: a prefix of "
            f"{', '.join(FAMILIES)} and three digits (a new family needs its "
            "directory under crates/gpulint-rules/src/, its `mod` in crates/gpulint-rules/src/lib.rs, "
            "its block in for_each_rule! and an entry in FAMILIES here)"
        )
    return match.group(1), FAMILIES[match.group(1)]


def rust_string(text: str) -> str:
    """`text` as a Rust string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def rule_source(code: str, name: str, target: dict, severity: str, summary: str) -> str:
    return (
        f"//! {code}: {summary}.\n"
        "\n"
        f"{target['imports']}\n"
        "\n"
        "crate::declare_rule! {\n"
        f"    name: {rust_string(name)},\n"
        f"    severity: {severity.capitalize()},\n"
        "    fix: None,\n"
        f"    summary: {rust_string(summary)},\n"
        "    sources: [],\n"
        "}\n"
        "\n"
        f"pub const CHECK: Check = {target['check']};\n"
        "\n"
        f"fn check({target['signature']}) {{\n"
        f"{target['body']}"
        "}\n"
    )


def rule_doc(code: str, name: str, target: dict) -> str:
    language, example = target["example"]
    return (
        f"# {name} ({code})\n"
        "\n"
        "## What it does\n"
        "What the rule flags, where, and what it leaves alone.\n"
        "\n"
        "## Why is this bad?\n"
        "What fails at run time, with the message users see.\n"
        "\n"
        "## Example\n"
        f"```{language} bad\n{example}```\n"
        "\n"
        "## Use instead\n"
        f"```{language} good\n{example}```\n"
        "\n"
        "## Fix safety\n"
        "No automatic fix yet.\n"
        "\n"
        "## Not reported\n"
        "The healthy variants and traps the rule stays quiet on.\n"
        "\n"
        "## References\n"
        "- The documentation or source the rule follows.\n"
    )


def insert_mod_line(mod_rs: Path, module: str, visibility: str = "pub(crate) ") -> None:
    """`pub(crate) mod <module>;` among the family's, in order (a family is
    `mod <family>;` in the crate's lib.rs: the crate's API is what lib.rs
    re-exports, and `for_each_rule!` reaches each rule inside it)."""
    text = mod_rs.read_text()
    lines = text.splitlines(keepends=True)
    new = f"{visibility}mod {module};\n"
    mods = [i for i, line in enumerate(lines) if line.startswith(f"{visibility}mod ")]
    at = next((i for i in mods if lines[i] > new), (mods[-1] + 1) if mods else len(lines))
    lines.insert(at, new)
    mod_rs.write_text("".join(lines))


def register(codes_rs: Path, family: str, prefix: str, code: str, module: str) -> None:
    """`CODE => module,` in the family's block of `for_each_rule!`, by number."""
    text = codes_rs.read_text()
    block = re.search(rf"\n( +){family} \{{\n(.*?)\n +\}}", text, re.S)
    if block is None:
        fail(f"crates/gpulint-base/src/codes.rs has no `{family} {{ ... }}` block in for_each_rule!")
    entries = block.group(2).split("\n")
    indent = re.match(r" *", entries[0]).group(0)
    number = int(code[len(prefix):])

    def number_of(entry: str) -> int:
        found = re.match(rf" *{prefix}(\d+) =>", entry)
        return int(found.group(1)) if found else -1

    at = next((i for i, e in enumerate(entries) if number_of(e) > number), len(entries))
    entries.insert(at, f"{indent}{code} => {module},")
    start, end = block.span(2)
    codes_rs.write_text(text[:start] + "\n".join(entries) + text[end:])


def start_family(root: Path, family: str, prefix: str, code: str, module: str) -> None:
    """A family's first rule: its module (`mod <family>;` in the rules
    crate), its `mod.rs`, and its block in `for_each_rule!` (before
    `suppression`, which stays last), holding this rule."""
    directory = root / "crates" / "gpulint-rules" / "src" / family
    directory.mkdir()
    (directory / "mod.rs").write_text(f"//! The {prefix} rules.\n")
    insert_mod_line(root / "crates" / "gpulint-rules" / "src" / "lib.rs", family, visibility="")
    codes_rs = root / "crates" / "gpulint-base" / "src" / "codes.rs"
    text = codes_rs.read_text()
    last = re.search(r"\n( +)suppression \{\n", text)
    if last is None:
        fail("crates/gpulint-base/src/codes.rs has no `suppression { ... }` block in for_each_rule!")
    indent = last.group(1)
    block = f"\n{indent}{family} {{\n{indent}    {code} => {module},\n{indent}}}"
    codes_rs.write_text(text[: last.start()] + block + text[last.start() :])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("code", help="the rule's code, e.g. SHM012")
    parser.add_argument("name", help="kebab-case name, e.g. shm-size-from-host")
    parser.add_argument("--target", choices=sorted(TARGETS), required=True)
    parser.add_argument("--severity", choices=SEVERITIES, default="warning")
    parser.add_argument("--summary", default=None, help="one line for rules/README.md")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args()

    code = args.code.upper()
    if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", args.name):
        fail(f"`{args.name}` is not kebab-case (`shm-size-from-host`)")
    prefix, family = family_of(code)
    module = f"{code.lower()}_{args.name.replace('-', '_')}"
    summary = args.summary or args.name.replace("-", " ")
    target = TARGETS[args.target]
    root = args.root

    rule_file = root / "crates" / "gpulint-rules" / "src" / family / f"{module}.rs"
    doc = root / "rules" / f"{code}.md"
    fixtures = root / "fixtures" / code
    codes_rs = root / "crates" / "gpulint-base" / "src" / "codes.rs"
    if re.search(rf"\b{code} =>", codes_rs.read_text()):
        fail(f"{code} is already registered in crates/gpulint-base/src/codes.rs")
    for existing in (rule_file, doc, fixtures):
        if existing.exists():
            fail(f"{existing.relative_to(root)} exists already")

    if (root / "crates" / "gpulint-rules" / "src" / family).exists():
        rule_file.write_text(rule_source(code, args.name, target, args.severity, summary))
        insert_mod_line(root / "crates" / "gpulint-rules" / "src" / family / "mod.rs", module)
        register(codes_rs, family, prefix, code, module)
    else:
        start_family(root, family, prefix, code, module)
        rule_file.write_text(rule_source(code, args.name, target, args.severity, summary))
        insert_mod_line(rule_file.parent / "mod.rs", module)
    doc.write_text(rule_doc(code, args.name, target))
    fixtures.mkdir(parents=True)
    for name, text in target["fixtures"].items():
        (fixtures / name).write_text(text)

    print(f"created {rule_file.relative_to(root)}, {doc.relative_to(root)} and {fixtures.relative_to(root)}/;")
    print(f"registered {code} in crates/gpulint-base/src/codes.rs and crates/gpulint-rules/src/{family}/mod.rs. Next:")
    print(f"  1. write the check in {rule_file.relative_to(root)}")
    print(f"  2. write the doc {doc.relative_to(root)} (its bad/good examples are linted)")
    print(f"  3. make {fixtures.relative_to(root)}/invalid* fire and valid* stay quiet")
    print(f"  4. UPDATE_SNAPSHOTS=1 cargo test --test it {code}; review the new snapshots")


if __name__ == "__main__":
    main()
