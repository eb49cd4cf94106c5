#!/usr/bin/env python3
"""Writes a seeded, reproducible tree of GPU services for benchmarks.

Each service gets a directory with a compose file, a Dockerfile and a
Kubernetes manifest, so one "service" is three files, as peers measure them:

    OUT/svc-00000/compose.yaml   services that build ".", YAML anchors and
                                 merge keys, GPU reservations, shm settings
    OUT/svc-00000/Dockerfile     ARG-based FROMs, multi-stage, heredoc-free
    OUT/svc-00000/deploy.yaml    Deployment, StatefulSet or Job, with a
                                 Service or ConfigMap as a second document

About a third of the services are healthy, the rest carry the faults the
rules look for (no /dev/shm, a small shm_size, a malformed reservation,
NCCL switches), so the lint pass does real work. The same seed and size
always give the same bytes.

    python3 benches/tree.py OUT [--services 2000] [--seed 1]
"""

import argparse
import os
import random

CUDA_TAGS = ["12.1.1", "12.2.2", "12.4.1", "11.8.0"]
PYTORCH_TAGS = ["24.01-py3", "23.10-py3", "24.05-py3"]
NON_GPU_IMAGES = ["redis:7", "postgres:16", "nginx:1.25", "python:3.11-slim"]
SHM_SIZES = ["64m", "256mb", "1g", "2gb", "8gb", "16G"]


def compose(rng, n):
    gpus = rng.choice([1, 2, 4, 8, "all"])
    anchor = rng.random() < 0.5
    lines = []
    if anchor:
        lines += [
            "x-gpu: &gpu",
            "  deploy:",
            "    resources:",
            "      reservations:",
            "        devices:",
            f"          - driver: nvidia",
            f"            count: {gpus}",
            "            capabilities: [gpu]",
            "",
        ]
    lines += ["services:"]
    lines += [f"  trainer-{n}:", "    build: .", f"    image: registry.local/trainer-{n}:latest"]
    if anchor:
        lines += ["    <<: *gpu"]
    fault = rng.randrange(5)
    if fault == 0:
        lines += ["    shm_size: " + rng.choice(SHM_SIZES[2:])]
    elif fault == 1:
        lines += ["    ipc: host"]
    elif fault == 2:
        lines += ["    shm_size: " + rng.choice(SHM_SIZES[:2]) + "  # too small"]
    # fault 3 and 4: no /dev/shm setting at all
    launcher = rng.choice(["torchrun --nproc_per_node=8 train.py", "python serve.py", "deepspeed train.py"])
    lines += [f'    command: "{launcher}"', "    environment:"]
    lines += [f"      - RANK_SEED={n}", "      - NCCL_DEBUG=" + rng.choice(["INFO", "WARN"])]
    if rng.random() < 0.2:
        lines += ["      - NCCL_P2P_DISABLE=1"]
    if rng.random() < 0.5:
        lines += ["    ulimits:", "      memlock: -1", "      stack: 67108864"]
    if not anchor:
        lines += [
            "    deploy:",
            "      resources:",
            "        reservations:",
            "          devices:",
            "            - driver: nvidia",
            f"              count: {gpus}" if fault != 4 else '              count: "two"',
            "              capabilities: [gpu]",
        ]
    lines += ["    volumes:", "      - ./data:/data:ro", "      - cache:/root/.cache"]
    for k in range(rng.randrange(3)):
        image = rng.choice(NON_GPU_IMAGES)
        lines += [f"  side-{k}:", f"    image: {image}", "    restart: unless-stopped", "    ports:", f'      - "{6000 + k}:{6000 + k}"']
    lines += ["volumes:", "  cache: {}", ""]
    return "\n".join(lines)


def dockerfile(rng, n):
    lines = [f"# syntax=docker/dockerfile:1", f"# service {n}"]
    kind = rng.randrange(3)
    if kind == 0:
        lines += [f"ARG CUDA_VERSION={rng.choice(CUDA_TAGS)}", "ARG FLAVOR=runtime"]
        lines += ["FROM nvidia/cuda:${CUDA_VERSION}-cudnn8-${FLAVOR}-ubuntu22.04 AS base"]
    elif kind == 1:
        lines += [f"FROM nvcr.io/nvidia/pytorch:{rng.choice(PYTORCH_TAGS)} AS base"]
    else:
        lines += ["FROM python:3.11-slim AS base"]
    lines += [
        "ENV PYTHONUNBUFFERED=1 \\",
        "    PIP_NO_CACHE_DIR=1",
        "RUN apt-get update && apt-get install -y --no-install-recommends \\",
        "        git curl ca-certificates \\",
        "    && rm -rf /var/lib/apt/lists/*",
        "WORKDIR /app",
        "COPY requirements.txt .",
        "RUN pip install -r requirements.txt",
    ]
    if rng.random() < 0.3:
        lines += ["RUN pip install torch --index-url https://download.pytorch.org/whl/cpu"]
    if rng.random() < 0.5:
        lines += ["", "FROM base AS final", "COPY . /app"]
    else:
        lines += ["COPY . ."]
    if rng.random() < 0.3:
        lines += ["ENV NCCL_IB_DISABLE=1"]
    lines += [f'ENV SERVICE_ID="{n}"', 'CMD ["torchrun", "--nproc_per_node=8", "train.py"]', ""]
    return "\n".join(lines)


def manifest(rng, n):
    kind = rng.choice(["Deployment", "StatefulSet", "Job"])
    api = "batch/v1" if kind == "Job" else "apps/v1"
    gpus = rng.choice([1, 2, 4, 8])
    shm = rng.randrange(3)
    lines = [
        f"apiVersion: {api}",
        f"kind: {kind}",
        "metadata:",
        f"  name: trainer-{n}",
        "  labels:",
        f"    app: trainer-{n}",
        "spec:",
    ]
    if kind != "Job":
        lines += ["  replicas: 1", "  selector:", "    matchLabels:", f"      app: trainer-{n}"]
    if kind == "StatefulSet":
        lines += [f"  serviceName: trainer-{n}"]
    lines += [
        "  template:",
        "    metadata:",
        "      labels:",
        f"        app: trainer-{n}",
        "    spec:",
    ]
    if kind == "Job":
        lines += ["      restartPolicy: Never"]
    lines += [
        "      containers:",
        "        - name: trainer",
        f"          image: nvcr.io/nvidia/pytorch:{rng.choice(PYTORCH_TAGS)}",
        '          command: ["torchrun", "--nproc_per_node=%d", "train.py"]' % gpus,
        "          env:",
        "            - name: NCCL_DEBUG",
        "              value: INFO",
        "          resources:",
        "            limits:",
        f"              nvidia.com/gpu: {gpus}",
        '              memory: "64Gi"',
    ]
    if shm:
        lines += ["          volumeMounts:", "            - name: dshm", "              mountPath: /dev/shm"]
        lines += ["      volumes:", "        - name: dshm", "          emptyDir:", "            medium: Memory"]
        if shm == 2:
            lines += ["            sizeLimit: 8Gi"]
    lines += ["---"]
    if rng.random() < 0.5:
        lines += [
            "apiVersion: v1",
            "kind: Service",
            "metadata:",
            f"  name: trainer-{n}",
            "spec:",
            "  selector:",
            f"    app: trainer-{n}",
            "  ports:",
            "    - port: 29500",
        ]
    else:
        lines += [
            "apiVersion: v1",
            "kind: ConfigMap",
            "metadata:",
            f"  name: trainer-{n}-config",
            "data:",
            "  config.yaml: |",
            "    epochs: 10",
            f"    seed: {n}",
        ]
    lines += [""]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--services", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    for n in range(args.services):
        # One generator per service: growing the tree keeps earlier services.
        rng = random.Random(args.seed * 1_000_003 + n)
        directory = os.path.join(args.out, f"svc-{n:05d}")
        os.makedirs(directory, exist_ok=True)
        for name, text in [
            ("compose.yaml", compose(rng, n)),
            ("Dockerfile", dockerfile(rng, n)),
            ("deploy.yaml", manifest(rng, n)),
        ]:
            with open(os.path.join(directory, name), "w", newline="\n") as f:
                f.write(text)


if __name__ == "__main__":
    main()
