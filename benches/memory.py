#!/usr/bin/env python3
"""Peak memory of `gpulint check` on one large file, against the file's size.

    python3 benches/memory.py [--scales 1,2,4,8,16] [--gpulint PATH] [--work DIR]
                              [--max-ratio R]

Each kind of file that one user may hand gpulint as a single large input is
written at each scale, from the base units below times the scale, and
checked once under GNU time (`/usr/bin/time`): peak RSS, CPU time, and the
peak against the file's size. Every unit has findings, as a real file that
needs this tool has:

- `compose`: services that each reserve all GPUs for `torchrun` (SHM001 and
  ULIM001 on each), 400 services at 1x (6,400 at 16x, 1.7 MB);
- `manifests`: a stream of GPU pods running `torchrun` (K8S004 on each),
  1,000 pods at 1x (16,000 at 16x, 4.1 MB);
- `script`: `docker run --gpus all ... torchrun` lines (SHM001 and ULIM001
  on each), 5,000 lines at 1x (80,000 at 16x, 8.5 MB).

Each kind's floor (the peak of a run on an empty file of that kind: the
binary, its schemas and the allocator) is printed beside each figure, so that what grows
with the file is visible on its own. With `--max-ratio R` the run fails when
a peak exceeds R times its file's size. Results go to WORK/memory.json.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GNU_TIME = "/usr/bin/time"
IMAGE = "nvcr.io/nvidia/pytorch:24.01-py3"


def compose(units):
    gpu = (
        "    deploy:\n      resources:\n        reservations:\n          devices:\n"
        "            - driver: nvidia\n              count: all\n              capabilities: [gpu]\n"
    )
    return "services:\n" + "".join(
        f"  s{i}:\n    image: {IMAGE}\n    command: torchrun --nproc_per_node 8 train.py\n{gpu}" for i in range(units)
    )


def manifests(units):
    return "".join(
        f"---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p{i}\nspec:\n  containers:\n"
        f"    - name: c\n      image: {IMAGE}\n      command: [torchrun, --nproc_per_node, '8', train.py]\n"
        "      resources:\n        limits:\n          nvidia.com/gpu: 8\n"
        for i in range(units)
    )


def script(units):
    return "#!/bin/sh\n" + "".join(
        f"docker run --gpus all -e RANK={i} {IMAGE} torchrun --nproc_per_node 8 train.py\n" for i in range(units)
    )


# (name, file name, base units, generator)
KINDS = [
    ("compose", "docker-compose.yml", 400, compose),
    ("manifests", "pods.yaml", 1000, manifests),
    ("script", "run.sh", 5000, script),
]


def measure(gpulint, path):
    """Peak RSS (MiB) and CPU seconds of one `check` of `path`."""
    with tempfile.NamedTemporaryFile("r") as out:
        argv = [GNU_TIME, "-f", "%M %U %S", "-o", out.name, gpulint, "check", "--quiet", "--fail-on", "never", str(path)]
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        kib, user, system = out.read().split()[-3:]
    return int(kib) / 1024, float(user) + float(system)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="1,2,4,8,16")
    parser.add_argument("--base", type=float, default=1.0, help="multiply every kind's base units (small runs in tests)")
    parser.add_argument("--gpulint", type=Path, help="this binary instead of a fresh dist build")
    parser.add_argument("--work", type=Path, default=REPO / "target/bench-memory")
    parser.add_argument("--max-ratio", type=float, help="fail when a peak exceeds this many times its file's size")
    args = parser.parse_args()
    if not os.access(GNU_TIME, os.X_OK):
        sys.exit(f"{GNU_TIME} (GNU time) is needed for the peak RSS")
    if args.gpulint:
        gpulint = str(args.gpulint.resolve())
    else:
        subprocess.run(["cargo", "build", "--profile", "dist", "--locked", "--quiet"], cwd=REPO, check=True)
        gpulint = str(REPO / "target/dist/gpulint")
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)

    results = {"floor_mib": {}, "kinds": {}}
    over = []
    scales = [int(s) for s in args.scales.split(",") if s]
    for name, file_name, base, generate in KINDS:
        units0 = max(1, int(base * args.base))
        empty = work / f"{name}-empty" / file_name
        empty.parent.mkdir(exist_ok=True)
        empty.write_text(generate(0))
        floor, _ = measure(gpulint, empty)
        results["floor_mib"][name] = round(floor, 1)
        print(f"{name}: the floor (the same kind of file, empty) is {floor:.1f} MiB")
        rows = []
        for scale in scales:
            units = units0 * scale
            path = work / f"{name}-x{scale}" / file_name
            path.parent.mkdir(exist_ok=True)
            path.write_text(generate(units))
            size = path.stat().st_size / (1024 * 1024)
            peak, cpu = measure(gpulint, path)
            row = {
                "scale": scale,
                "units": units,
                "size_mib": round(size, 3),
                "peak_rss_mib": round(peak, 1),
                "peak_over_size": round(peak / size, 1),
                "growth_over_size": round((peak - floor) / size, 1),
                "cpu_seconds": round(cpu, 3),
            }
            rows.append(row)
            first = rows[0]
            per_unit = (cpu / units) / (first["cpu_seconds"] / first["units"]) if first["cpu_seconds"] else float("nan")
            print(
                f"  {name:<10} x{scale:<3} {units:7d} units {size:7.2f} MiB  peak {peak:7.1f} MiB"
                f"  {peak / size:6.1f}x its size ({(peak - floor) / size:5.1f}x above the floor)"
                f"  cpu {cpu:6.2f} s ({per_unit:4.2f} per unit of x{scales[0]})",
                flush=True,
            )
            if args.max_ratio is not None and peak / size > args.max_ratio:
                over.append(f"{name} x{scale}: {peak / size:.1f}x")
        results["kinds"][name] = rows
    out = work / "memory.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"Wrote {out}")
    if over:
        sys.exit(f"peak above {args.max_ratio}x the file's size: {', '.join(over)}")


if __name__ == "__main__":
    main()
