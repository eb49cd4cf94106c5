#!/usr/bin/env python3
"""The reference training step with PyTorch on real GPUs (GPU mode of tests/it/runtime.rs).

One process per rank (up to the GPUs the config reserves and the machine has), each:
- checks that it sees the GPU count the config reserves (`--gpus`), as the NVIDIA
  runtime would expose them;
- iterates a DataLoader with `--workers` workers, `--prefetch` batches each and
  pinned memory, batches of `--batch` 3x224x224 images passed through /dev/shm;
- runs a CUDA model step on each batch;
- joins a NCCL process group and all-reduces the gradients (with several ranks);
- shares a CUDA tensor with a child process (CUDA IPC through torch.multiprocessing).

The last line printed is `RESULT {json}`; the exit status is 0 when the step ran.
"""

import argparse
import os
import sys
import traceback

from result import failures_of, finish


def parse():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=1)
    parser.add_argument("--gpus", default="all", help="`all` or a count: what the config reserves")
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--prefetch", type=int, default=2)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--steps", type=int, default=4)
    # Accepted for the same command line as workload.py; the sandbox applies them.
    parser.add_argument("--rdma", action="store_true")
    parser.add_argument("--memlock")
    parser.add_argument("--stack")
    return parser.parse_args()


def classify(text):
    if "bus error" in text.lower() or "shared memory" in text.lower():
        return "bus-error"
    if "No space left on device" in text:
        return "no-space"
    if "NCCL" in text or "unhandled system error" in text:
        return "nccl"
    return "error"


def rank_main(rank, world, args, results):
    import torch
    import torch.distributed as dist
    from torch.utils.data import DataLoader, Dataset

    class Images(Dataset):
        def __len__(self):
            return args.batch * args.workers * args.prefetch * args.steps

        def __getitem__(self, i):
            return torch.full((3, 224, 224), float(i % 7)), i % 10

    try:
        torch.cuda.set_device(rank)
        if world > 1:
            dist.init_process_group("nccl", rank=rank, world_size=world,
                                    init_method="tcp://127.0.0.1:29512")
        model = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 7, stride=4), torch.nn.ReLU(),
                                    torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
                                    torch.nn.Linear(16, 10)).cuda()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        loader = DataLoader(Images(), batch_size=args.batch, num_workers=args.workers,
                            prefetch_factor=args.prefetch, pin_memory=True,
                            persistent_workers=False)
        for step, (x, y) in enumerate(loader):
            loss = torch.nn.functional.cross_entropy(model(x.cuda(non_blocking=True)), y.cuda())
            loss.backward()
            if world > 1:
                for p in model.parameters():
                    dist.all_reduce(p.grad)
            optimizer.step()
            optimizer.zero_grad()
            if step + 1 >= args.steps:
                break
        # CUDA IPC: a child process reads a tensor this rank owns.
        ctx = torch.multiprocessing.get_context("spawn")
        queue = ctx.SimpleQueue()
        shared = torch.arange(1024, device="cuda", dtype=torch.float32)
        child = ctx.Process(target=read_shared, args=(queue, rank))
        child.start()
        queue.put(shared)
        child.join(120)
        if child.exitcode != 0:
            raise RuntimeError(f"CUDA IPC child exited with {child.exitcode}")
        if world > 1:
            dist.barrier()
            dist.destroy_process_group()
        results.put({"rank": rank, "failure": None})
    except Exception:  # noqa: BLE001 (reported, as a user would see it)
        text = traceback.format_exc()
        results.put({"rank": rank, "failure": classify(text), "message": text[-2000:]})


def read_shared(queue, rank):
    import torch
    torch.cuda.set_device(rank)
    tensor = queue.get()
    if float(tensor.sum()) != float(sum(range(1024))):
        sys.exit(3)


def main():
    args = parse()
    if args.gpus != "all":
        os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(int(args.gpus)))
    import torch
    if not torch.cuda.is_available():
        finish([{"failure": "no-gpu", "message": "torch sees no CUDA device"}])
    visible = torch.cuda.device_count()
    wanted = visible if args.gpus == "all" else int(args.gpus)
    world = max(1, min(args.ranks, visible))
    failures = []
    if visible != wanted:
        failures.append({"failure": "gpu-count",
                         "message": f"the config reserves {wanted} GPUs, the workload sees {visible}"})
    else:
        ctx = torch.multiprocessing.get_context("spawn")
        results = ctx.SimpleQueue()
        procs = [ctx.Process(target=rank_main, args=(r, world, args, results)) for r in range(world)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(600)
        reports = [results.get() for _ in range(sum(1 for _ in procs)) if not results.empty()]
        failures = failures_of(reports, world)
    finish(failures, world=world, gpus_visible=visible, gpu=torch.cuda.get_device_name(0))


if __name__ == "__main__":
    main()
