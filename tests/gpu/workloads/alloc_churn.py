"""Workload 7, allocator churn: each step allocates twelve ~64 MiB activations of different
sizes, computes on them, drops them and calls torch.cuda.empty_cache(), which hands every cached
block back to the driver (cudaFree, which synchronizes) so the next step must cudaMalloc them all
again: ~24 allocator calls per step with the GPU idle.

--variant fixed (the twin): the same step without empty_cache(): after the first step the caching
allocator serves every block from its cache; no cudaMalloc/cudaFree in steady steps.
--variant leak: the fixed step that also appends a fresh 64 MiB tensor to a list every step (a
leak, like appending `loss` instead of `loss.item()` to a history): the device memory grows by
64 MiB a step.

Expected: alloc_churn; the fixed twin must not be flagged with it; the leak must get a
memory_growth finding.
"""
import os

# The native caching allocator with plain cudaMalloc segments, whatever the environment says.
os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:False"

import torch

from common import parse_args, run_steps

BLOCKS = 12
BLOCK_ELEMENTS = 16 * 1024 * 1024    # 64 MiB of fp32
HIDDEN = 8192
GEMMS = 2


def main():
    args = parse_args(__doc__, variants=("bad", "fixed", "leak"))
    torch.manual_seed(0)
    w = (torch.randn(HIDDEN, HIDDEN, device="cuda") / HIDDEN ** 0.5).to(torch.bfloat16)
    a = torch.randn(HIDDEN, HIDDEN, device="cuda", dtype=torch.bfloat16)
    leaked = []

    def step(i):
        acts = []
        for b in range(BLOCKS):
            # Distinct sizes (2 MiB apart) so each block is its own allocator segment.
            t = torch.empty(BLOCK_ELEMENTS + b * 512 * 1024, device="cuda")
            t.fill_(float(b))
            acts.append(t)
        x = a
        for _ in range(GEMMS):
            x = x @ w
        s = sum(t[:1024].sum() for t in acts)
        x.add_(s.to(x.dtype))
        del acts, s
        if args.variant == "bad":
            torch.cuda.empty_cache()
        elif args.variant == "leak":
            leaked.append(torch.ones(BLOCK_ELEMENTS, device="cuda"))

    run_steps(args, step, "alloc_churn",
              extra_result={"leaked_mib": len(leaked) * BLOCK_ELEMENTS * 4 // (1 << 20)})


if __name__ == "__main__":
    main()
