"""Workload 4, copy-dominated: each step copies a 128 MiB fp32 batch from pageable host memory
(`.to("cuda")`: staged by the driver, synchronous, ~10-25 GB/s) and then computes ~15 ms of bf16
GEMMs on it. Nothing overlaps the copy, which takes ~30-50% of the step.

--variant fixed (the twin): the batch lives in pinned memory and the next step's batch is copied
with non_blocking=True on a side stream while this step computes (double-buffered, ordered with
events): the copy (~3-5 ms at pinned speed) hides behind the compute.

Expected: copy_dominated; the twin must not be flagged with it.
"""
import torch

from common import parse_args, run_steps

ROWS, COLS = 4096, 8192        # 128 MiB of fp32
GEMMS = 12                     # (4096 x 8192) @ (8192 x 8192) bf16, ~0.75 ms each on an H100


def main():
    args = parse_args(__doc__, variants=("bad", "fixed"))
    torch.manual_seed(0)
    host = torch.randn(ROWS, COLS)                     # pageable
    w = (torch.randn(COLS, COLS, device="cuda") / COLS ** 0.5).to(torch.bfloat16)

    def compute(batch):
        x = batch.to(torch.bfloat16)
        for _ in range(GEMMS):
            x = x @ w
        return x

    if args.variant == "bad":
        def step(i):
            compute(host.to("cuda"))
    else:
        pinned = host.pin_memory()
        bufs = [torch.empty(ROWS, COLS, device="cuda") for _ in range(2)]
        ready = [torch.cuda.Event() for _ in range(2)]
        consumed = [torch.cuda.Event() for _ in range(2)]
        copy_stream = torch.cuda.Stream()
        compute_stream = torch.cuda.current_stream()

        def prefetch(i):
            s = i % 2
            with torch.cuda.stream(copy_stream):
                copy_stream.wait_event(consumed[s])    # buffer s is free once step i-2 used it
                bufs[s].copy_(pinned, non_blocking=True)
                ready[s].record(copy_stream)

        for s in range(2):
            consumed[s].record(compute_stream)
        prefetch(0)

        def step(i):
            s = i % 2
            compute_stream.wait_event(ready[s])
            prefetch(i + 1)
            compute(bufs[s])
            consumed[s].record(compute_stream)

    run_steps(args, step, "copy_dominated")


if __name__ == "__main__":
    main()
