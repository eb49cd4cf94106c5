#!/usr/bin/env python3
"""The ecosystem check: gpulint on real repositories, against a reviewed baseline.

    python3 scripts/ecosystem.py [--gpulint BIN] [--ecosystem DIR] [--update]

runs `gpulint check --output-format json --fail-on never .` at the root of
every repository of the ecosystem corpus (`../shared/ecosystem`: the config
trees of public repositories at pinned commits; its SOURCES.tsv lists them)
and compares what it finds with `scripts/ecosystem/baseline.tsv`, where
every finding has been read once and given a verdict:

- TRUE: the engine, cluster or scheduler really misbehaves as the message says;
- NOISE: true to the letter, harmless in that repository.

A finding judged false is a bug in gpulint: it is fixed there, never
recorded here. File errors (a file gpulint cannot read or parse) are
recorded in `scripts/ecosystem/errors.tsv`, each with its reason.

Like ruff's ecosystem check, it prints what changed, per repository and
code (`+` added, `-` removed), then the findings by code and severity with
their verdicts, the precision of what users see as warnings and errors, and
the slowest repositories. It exits 1 on any finding not in the baseline,
any baseline finding that disappeared, any file error not recorded, any
verdict that is not TRUE or NOISE, and any crash or timeout of gpulint.

`--update` rewrites both files from this run: lines that still match keep
their verdict and reason, new ones get the verdict `?` and must be reviewed
(the check fails until they are). A finding is identified by repository,
file, line, code and a digest of its message, so a changed message is a
change to review too; its severity is recorded beside it and checked.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import hashlib
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "scripts" / "ecosystem" / "baseline.tsv"
ERRORS = ROOT / "scripts" / "ecosystem" / "errors.tsv"
VERDICTS = ("TRUE", "NOISE")
# gpulint checks the largest repository in well under a second; a minute
# is a hang.
TIMEOUT_SECONDS = 60

BASELINE_HEADER = "repo\tpath\tline\tcode\tseverity\tdigest\tverdict\treason"
ERRORS_HEADER = "repo\tpath\tdigest\treason"


def digest(text: str) -> str:
    """A short stable name for a message: the same words, the same digest."""
    return hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Finding:
    repo: str
    path: str
    line: int
    code: str
    severity: str
    digest: str
    message: str = ""

    def key(self) -> tuple:
        return (self.repo, self.path, self.line, self.code, self.digest)


@dataclass
class Run:
    repo: str
    findings: list
    errors: list  # (path, digest, message)
    files: int
    seconds: float
    failure: str | None  # a crash, a timeout, unreadable output


def clean(text: str) -> str:
    """One line of a TSV field."""
    return " ".join(text.replace("\t", " ").split())


def check_repository(gpulint: str, repo_dir: Path) -> Run:
    repo = repo_dir.name
    start = time.monotonic()
    try:
        done = subprocess.run(
            [gpulint, "check", "--output-format", "json", "--fail-on", "never", "."],
            cwd=repo_dir,
            capture_output=True,
            timeout=TIMEOUT_SECONDS,
            env={**os.environ, "NO_COLOR": "1"},
        )
    except subprocess.TimeoutExpired:
        return Run(repo, [], [], 0, TIMEOUT_SECONDS, f"timed out after {TIMEOUT_SECONDS} s")
    seconds = time.monotonic() - start
    # Exit 2 is a file gpulint could not read or parse: the report still
    # comes, with the file in `errors`, checked against errors.tsv below.
    if done.returncode not in (0, 1, 2) or not done.stdout:
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-5:]
        return Run(repo, [], [], 0, seconds, f"exit {done.returncode}: " + " | ".join(tail))
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError as error:
        return Run(repo, [], [], 0, seconds, f"unreadable JSON report: {error}")
    findings = [
        Finding(
            repo,
            d["path"],
            d["start"]["line"],
            d["code"],
            d["severity"],
            digest(d["message"]),
            clean(d["message"]),
        )
        for d in report["diagnostics"]
    ]
    errors = [
        (e["path"], digest(e["message"]), clean(e["message"]))
        for e in report.get("errors", [])
    ]
    return Run(repo, findings, errors, report["summary"]["files"], seconds, None)


def repositories(ecosystem: Path) -> list:
    """Every repository of SOURCES.tsv, as its folder under repos/."""
    lines = (ecosystem / "SOURCES.tsv").read_text().splitlines()[1:]
    dirs = []
    for line in lines:
        if not line.strip():
            continue
        name = line.split("\t")[0].replace("/", "__")
        path = ecosystem / "repos" / name
        if path.is_dir():
            dirs.append(path)
    return dirs


def read_baseline(path: Path) -> dict:
    """Finding key -> (severity, verdict, reason)."""
    entries = {}
    if not path.exists():
        return entries
    for number, line in enumerate(path.read_text().splitlines()[1:], start=2):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 8:
            sys.exit(f"{path}:{number}: expected 8 tab-separated fields, found {len(fields)}")
        repo, file, line_no, code, severity, dig, verdict, reason = fields
        entries[(repo, file, int(line_no), code, dig)] = (severity, verdict, reason)
    return entries


def read_errors(path: Path) -> dict:
    entries = {}
    if not path.exists():
        return entries
    for line in path.read_text().splitlines()[1:]:
        if line.strip():
            repo, file, dig, reason = line.split("\t")
            entries[(repo, file, dig)] = reason
    return entries


def write_baseline(path: Path, findings: list, old: dict) -> None:
    rows = [BASELINE_HEADER]
    for f in sorted(findings, key=lambda f: (f.repo.lower(), f.path, f.line, f.code, f.digest)):
        _, verdict, reason = old.get(f.key(), (None, "?", f.message))
        rows.append("\t".join([f.repo, f.path, str(f.line), f.code, f.severity, f.digest, verdict, reason]))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(rows) + "\n")


def write_errors(path: Path, runs: list, old: dict) -> None:
    rows = [ERRORS_HEADER]
    for run in sorted(runs, key=lambda r: r.repo.lower()):
        for file, dig, message in sorted(run.errors):
            reason = old.get((run.repo, file, dig), "? " + message)
            rows.append("\t".join([run.repo, file, dig, reason]))
    path.write_text("\n".join(rows) + "\n")


def main(argv: list) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpulint", default=str(ROOT / "target" / "debug" / "gpulint"))
    parser.add_argument("--ecosystem", default=str(ROOT.parent / "shared" / "ecosystem"))
    parser.add_argument("--baseline", default=str(BASELINE))
    parser.add_argument("--errors", default=str(ERRORS))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--update", action="store_true", help="rewrite the baseline from this run")
    args = parser.parse_args(argv)

    ecosystem = Path(args.ecosystem)
    if not (ecosystem / "SOURCES.tsv").exists():
        print(f"ecosystem: no SOURCES.tsv in {ecosystem}", file=sys.stderr)
        return 2
    gpulint = str(Path(args.gpulint).resolve())
    dirs = repositories(ecosystem)
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        runs = list(pool.map(lambda d: check_repository(gpulint, d), dirs))
    wall = time.monotonic() - started

    baseline_path, errors_path = Path(args.baseline), Path(args.errors)
    baseline = read_baseline(baseline_path)
    recorded_errors = read_errors(errors_path)
    findings = [f for run in runs for f in run.findings]
    if args.update:
        write_baseline(baseline_path, findings, baseline)
        write_errors(errors_path, runs, recorded_errors)
        baseline = read_baseline(baseline_path)
        recorded_errors = read_errors(errors_path)

    problems = []
    seen = {f.key(): f for f in findings}
    added = [f for f in findings if f.key() not in baseline]
    removed = [k for k in baseline if k not in seen]
    changed = [
        (f, baseline[f.key()][0])
        for f in findings
        if f.key() in baseline and baseline[f.key()][0] != f.severity
    ]
    unjudged = [k for k, (_, verdict, _) in baseline.items() if verdict not in VERDICTS]

    # What changed, per repository, as ruff's ecosystem report shows it.
    by_repo = collections.defaultdict(list)
    for f in added:
        by_repo[f.repo].append(f"+ {f.path}:{f.line} {f.code} {f.severity}: {f.message}")
    for key in removed:
        severity, verdict, reason = baseline[key]
        repo, file, line, code, _ = key
        by_repo[repo].append(f"- {file}:{line} {code} {severity} ({verdict}: {reason})")
    for f, old in changed:
        by_repo[f.repo].append(f"~ {f.path}:{f.line} {f.code} {old} -> {f.severity}: {f.message}")
    for run in runs:
        if run.failure:
            by_repo[run.repo].append(f"! gpulint failed: {run.failure}")
            problems.append(f"{run.repo}: {run.failure}")
        for file, dig, message in run.errors:
            if (run.repo, file, dig) not in recorded_errors:
                by_repo[run.repo].append(f"! file error not recorded: {file}: {message}")
                problems.append(f"{run.repo}: unrecorded file error in {file}")
    if by_repo:
        print("## Changes against the reviewed baseline\n")
        for repo in sorted(by_repo, key=str.lower):
            lines = by_repo[repo]
            plus = sum(1 for x in lines if x.startswith("+"))
            minus = sum(1 for x in lines if x.startswith("-"))
            print(f"### {repo} (+{plus} -{minus})")
            codes = collections.Counter(x.split()[2] for x in lines if x[0] in "+-~")
            if codes:
                print("    by code: " + ", ".join(f"{c} {n}" for c, n in sorted(codes.items())))
            for line in lines:
                print("    " + line)
            print()
    if added:
        problems.append(f"{len(added)} findings not in the baseline")
    if removed:
        problems.append(f"{len(removed)} baseline findings no longer reported")
    if changed:
        problems.append(f"{len(changed)} findings changed severity")
    if unjudged:
        problems.append(f"{len(unjudged)} baseline findings without a TRUE or NOISE verdict")
    reported_errors = {(r.repo, p, d) for r in runs for p, d, _ in r.errors}
    stale_errors = [k for k in recorded_errors if k not in reported_errors]
    if stale_errors:
        problems.append(f"{len(stale_errors)} recorded file errors no longer reported")
        for repo, file, _ in stale_errors:
            print(f"- file error gone: {repo}: {file}")

    # Findings by code and severity, with their verdicts.
    table = collections.defaultdict(collections.Counter)
    for f in findings:
        verdict = baseline.get(f.key(), (None, "?", None))[1]
        table[(f.code, f.severity)][verdict] += 1
    print("## Findings by code and severity\n")
    print(f"    {'code':<9} {'severity':<8} {'total':>5} {'TRUE':>5} {'NOISE':>5} {'?':>4}")
    for (code, severity), counts in sorted(table.items()):
        total = sum(counts.values())
        print(f"    {code:<9} {severity:<8} {total:>5} {counts['TRUE']:>5} {counts['NOISE']:>5} {counts['?']:>4}")
    loud = [f for f in findings if f.severity in ("warning", "error")]
    loud_true = sum(1 for f in loud if baseline.get(f.key(), (0, "?", 0))[1] == "TRUE")
    share = 100.0 * loud_true / len(loud) if loud else 100.0
    print(f"\n    warnings and errors: {len(loud)}, TRUE {loud_true} ({share:.1f}%)")
    print(f"    infos: {len(findings) - len(loud)}")

    files = sum(r.files for r in runs)
    errors = sum(len(r.errors) for r in runs)
    print("\n## Time per repository (slowest 8)\n")
    for run in sorted(runs, key=lambda r: -r.seconds)[:8]:
        print(f"    {run.seconds:6.2f} s  {run.repo} ({run.files} files)")
    print(
        f"\necosystem: {len(runs)} repositories, {files} files, {len(findings)} findings, "
        f"{errors} file errors, {wall:.1f} s"
    )
    if problems:
        print("\necosystem: FAILED\n" + "\n".join("  - " + p for p in problems))
        print(
            "Review each change: a FALSE finding is a bug to fix in gpulint; a TRUE or NOISE one"
            " goes in the baseline with its reason (`--update`, then edit the `?` lines)."
        )
        return 1
    print("ecosystem: the findings match the reviewed baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
