"""Workload 9, straggler: two ranks (torchrun --nproc-per-node 2) train the same model and
all-reduce their gradients every step; rank 1 spends an extra 15 ms per step on the host before
its compute (a slow input pipeline, a busier CPU), so rank 0 waits for it in the all-reduce.

Runs on one GPU too: with fewer GPUs than ranks NCCL refuses to share a device, so the ranks use
gloo (which all-reduces CUDA tensors through host memory); with a GPU per rank, NCCL.

Expected: rank 1 carries a straggler finding in most steady steps, rank 0 does not.
"""
import datetime
import os
import time

import torch
import torch.distributed as dist

from common import parse_args, run_steps

HIDDEN = 8192
BATCH = 4096
GRAD_ELEMENTS = 1 << 20
SLOW_RANK = 1
EXTRA_HOST_S = 0.015


def main():
    args = parse_args(__doc__)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    gpus = torch.cuda.device_count()
    backend = "nccl" if gpus >= world else "gloo"
    torch.cuda.set_device(local_rank % gpus)
    dist.init_process_group(backend=backend, timeout=datetime.timedelta(seconds=120))
    torch.manual_seed(rank)
    w = (torch.randn(HIDDEN, HIDDEN, device="cuda") / HIDDEN ** 0.5).to(torch.bfloat16)
    a = torch.randn(BATCH, HIDDEN, device="cuda", dtype=torch.bfloat16)
    grad = torch.randn(GRAD_ELEMENTS, device="cuda")

    def step(i):
        if rank == SLOW_RANK:
            time.sleep(EXTRA_HOST_S)
        x = a
        for _ in range(6):
            x = x @ w
        grad.add_(x[0, :1].float().sum() * 1e-6)
        dist.all_reduce(grad)

    dist.barrier()
    run_steps(args, step, "straggler", extra_result={"backend": backend, "world_size": world})
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
