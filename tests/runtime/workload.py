#!/usr/bin/env python3
"""A reference multi-GPU training step on the CPU, with torch's shared-memory traffic.

It reproduces what a PyTorch job does with /dev/shm, without PyTorch or a GPU:

- torchrun starts one process per rank (`--ranks`);
- each rank's DataLoader forks `--workers` workers that each prefetch `--prefetch`
  batches of `--batch` images (3x224x224 float32) into shared memory, the way torch
  does it: a file in /dev/shm, ftruncate, mmap, write (a full tmpfs then kills the
  worker with SIGBUS, which torch reports as "DataLoader worker ... is killed by
  signal: Bus error");
- the ranks of the node set up NCCL's shared-memory transport: one segment of
  9,637,888 bytes per local peer, grown with posix_fallocate (a full tmpfs gives
  "NCCL WARN Error: failed to extend /dev/shm/nccl-... to N bytes");
  NCCL_SHM_DISABLE=1 skips it, as NCCL does;
- with `--rdma`, each rank registers 64 MiB for InfiniBand, which pins memory
  (mlock): without CAP_IPC_LOCK a small RLIMIT_MEMLOCK makes it fail as
  "ibv_reg_mr failed: Cannot allocate memory".

Every prefetched batch and NCCL segment is held at once (the peak a real job
reaches on its first step), then the batches are read back and checked.

The last line printed is `RESULT {json}`; the exit status is 0 when the step ran.
"""

import argparse
import ctypes
import ctypes.util
import mmap
import multiprocessing
import os
import resource
import secrets
import signal
import sys

from result import failures_of, finish

IMAGE_BYTES = 3 * 224 * 224 * 4
NCCL_SEGMENT_BYTES = 9_637_888  # seen in NCCL logs of 8-GPU jobs (NVIDIA/nccl#342)
RDMA_REGISTRATION_BYTES = 64 * 1024 * 1024
PAGE = mmap.PAGESIZE


def limit(text):
    """`soft:hard` with -1 for unlimited."""
    soft, _, hard = text.partition(":")
    conv = lambda v: resource.RLIM_INFINITY if int(v) < 0 else int(v)
    return conv(soft), conv(hard or soft)


def fill(mm, size, seed):
    """Writes every page, as a worker copying a batch in does (tmpfs allocates
    a page on its first write). One byte a page is enough to allocate it and
    keeps a run of gigabytes fast."""
    for offset in range(0, size, PAGE):
        mm[offset] = seed
    mm[size - 1] = seed


def worker(rank, index, args, out):
    """One DataLoader worker: prefetches its batches into /dev/shm."""
    size = args.batch * IMAGE_BYTES
    for k in range(args.prefetch):
        name = f"/dev/shm/torch_{os.getpid()}_{secrets.token_hex(4)}"
        try:
            fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError as e:
            out.send(("error", f"shm_open {name}: {e.strerror}"))
            os._exit(1)
        os.ftruncate(fd, size)
        with mmap.mmap(fd, size) as mm:
            fill(mm, size, (rank * 31 + index * 7 + k) % 251 + 1)  # SIGBUS here when full
        os.close(fd)
        out.send(("batch", name, (rank * 31 + index * 7 + k) % 251 + 1, size))
    out.close()
    os._exit(0)


def register_rdma():
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    buffer = mmap.mmap(-1, RDMA_REGISTRATION_BYTES)
    address = ctypes.addressof(ctypes.c_char.from_buffer(buffer))
    if libc.mlock(ctypes.c_void_p(address), ctypes.c_size_t(RDMA_REGISTRATION_BYTES)) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return buffer


def rank_main(rank, args, barrier, report):
    def fail(kind, message):
        report.send({"rank": rank, "failure": kind, "message": message})
        barrier.abort()
        os._exit(1)

    if args.rdma and os.environ.get("NCCL_IB_DISABLE") != "1":
        try:
            pinned = register_rdma()  # noqa: F841 (held for the step)
        except OSError as e:
            fail("rdma", f"NCCL WARN Call to ibv_reg_mr failed with error {e.strerror} "
                 f"(RLIMIT_MEMLOCK {resource.getrlimit(resource.RLIMIT_MEMLOCK)[0]})")

    # DataLoader: prime every worker with `prefetch` batches.
    pipes, pids = [], []
    for index in range(args.workers):
        receive, send = multiprocessing.Pipe(duplex=False)
        pid = os.fork()
        if pid == 0:
            receive.close()
            signal.signal(signal.SIGBUS, signal.SIG_DFL)
            worker(rank, index, args, send)
        send.close()
        pipes.append(receive)
        pids.append(pid)
    batches = []
    for pid, pipe in zip(pids, pipes):
        while True:
            try:
                message = pipe.recv()
            except EOFError:
                break
            if message[0] == "error":
                fail("shm", message[1])
            batches.append(message[1:])
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            name = signal.strsignal(sig)
            fail("bus-error" if sig == signal.SIGBUS else "worker-killed",
                 "ERROR: Unexpected bus error encountered in worker. This might be caused by "
                 "insufficient shared memory (shm).\nRuntimeError: DataLoader worker "
                 f"(pid {pid}) is killed by signal: {name}.")
        if os.WEXITSTATUS(status) != 0:
            fail("worker-exited", f"DataLoader worker (pid {pid}) exited unexpectedly")

    # NCCL: the shared-memory transport to every local peer.
    segments = []
    if args.ranks > 1 and os.environ.get("NCCL_SHM_DISABLE") != "1":
        for peer in range(args.ranks):
            if peer == rank:
                continue
            name = f"/dev/shm/nccl-{secrets.token_hex(3)}"
            try:
                fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
                os.posix_fallocate(fd, 0, NCCL_SEGMENT_BYTES)
                os.close(fd)
            except OSError as e:
                fail("nccl-shm",
                     f"NCCL WARN Error: failed to extend {name} to {NCCL_SEGMENT_BYTES} bytes "
                     f"({e.strerror})\nncclUnhandledCudaError / unhandled system error")
            segments.append(name)

    try:
        barrier.wait(timeout=300)  # every rank holds its batches and segments now
    except Exception:
        os._exit(1)

    # The training step reads each batch (torch maps the worker's file).
    for name, seed, size in batches:
        fd = os.open(name, os.O_RDONLY)
        with mmap.mmap(fd, size, prot=mmap.PROT_READ) as mm:
            for offset in (0, size // 2, size - 1):
                if mm[offset] != seed:
                    fail("corrupt", f"batch {name} byte {offset} is {mm[offset]}, not {seed}")
        os.close(fd)
        os.unlink(name)
    for name in segments:
        os.unlink(name)
    report.send({"rank": rank, "failure": None})
    os._exit(0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=1)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--prefetch", type=int, default=2)
    parser.add_argument("--batch", type=int, default=32, help="images per batch")
    parser.add_argument("--rdma", action="store_true")
    parser.add_argument("--gpus", help="what the config reserves (GPU mode checks it; no GPU here)")
    parser.add_argument("--memlock", type=limit, help="soft:hard bytes, -1 unlimited")
    parser.add_argument("--stack", type=limit, help="soft:hard bytes, -1 unlimited")
    args = parser.parse_args()
    for name, which, wanted in (("memlock", resource.RLIMIT_MEMLOCK, args.memlock),
                                ("stack", resource.RLIMIT_STACK, args.stack)):
        if wanted:
            try:
                resource.setrlimit(which, wanted)
            except ValueError:
                # Raising a hard limit needs CAP_SYS_RESOURCE: keep the stricter one.
                hard = resource.getrlimit(which)[1]
                resource.setrlimit(which, (min(wanted[0], hard), hard))
                print(f"note: {name} {wanted} is above this machine's hard limit {hard}",
                      file=sys.stderr)

    need = (args.ranks * args.workers * args.prefetch * args.batch * IMAGE_BYTES
            + (args.ranks * (args.ranks - 1) * NCCL_SEGMENT_BYTES
               if args.ranks > 1 and os.environ.get("NCCL_SHM_DISABLE") != "1" else 0))
    try:
        # Semaphores live in /dev/shm too (torch's worker queues use them).
        barrier = multiprocessing.Barrier(args.ranks)
    except OSError as e:
        report_result(args, need, [{"failure": "shm", "message": f"OSError: {e}"}])
    receive, send = multiprocessing.Pipe(duplex=False)
    pids = []
    for rank in range(args.ranks):
        pid = os.fork()
        if pid == 0:
            receive.close()
            rank_main(rank, args, barrier, send)
        pids.append(pid)
    send.close()
    reports = []
    while True:
        try:
            reports.append(receive.recv())
        except EOFError:
            break
    for pid in pids:
        os.waitpid(pid, 0)
    report_result(args, need, failures_of(reports, args.ranks))


def report_result(args, need, failures):
    shm = os.statvfs("/dev/shm") if os.path.isdir("/dev/shm") else None
    finish(
        failures,
        ranks=args.ranks,
        shape=f"{args.ranks} ranks x {args.workers} workers x {args.prefetch} prefetch x {args.batch} images",
        shm_needed=need,
        shm_size=shm.f_blocks * shm.f_frsize if shm else None,
    )


if __name__ == "__main__":
    main()
