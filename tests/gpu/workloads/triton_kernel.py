"""Workload 10b, a Triton kernel: Triton launches through the driver API (cuLaunchKernelEx), not
the runtime. Each step launches the same compute-bound kernel 20 times on 32M elements (~0.3-0.5
ms each on an H100) and nothing else, so the step's kernel count is known exactly.

Expected: gpu_bound, and exactly KERNELS_PER_STEP kernels per steady step. Skipped (exit 77) when
Triton is not importable.
"""
import sys

import torch

from common import EXIT_SKIP, parse_args, run_steps

try:
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover - depends on the machine
    triton = None

ELEMENTS = 32 * 1024 * 1024
ITERS = 256
BLOCK = 1024
KERNELS_PER_STEP = 20

if triton is not None:
    @triton.jit
    def gpusuite_fma_chain(x_ptr, y_ptr, n, ITERS: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        for _ in range(ITERS):
            x = x * 0.9999 + 0.0001
        tl.store(y_ptr + offs, x, mask=mask)


def main():
    args = parse_args(__doc__)
    if triton is None:
        print("SKIP: triton is not importable", flush=True)
        sys.exit(EXIT_SKIP)
    x = torch.randn(ELEMENTS, device="cuda")
    y = torch.empty_like(x)
    grid = (triton.cdiv(ELEMENTS, BLOCK),)
    gpusuite_fma_chain[grid](x, y, ELEMENTS, ITERS=ITERS, BLOCK=BLOCK)  # compile before step 0
    torch.cuda.synchronize()

    def step(i):
        for _ in range(KERNELS_PER_STEP):
            gpusuite_fma_chain[grid](x, y, ELEMENTS, ITERS=ITERS, BLOCK=BLOCK)

    run_steps(args, step, "triton",
              extra_result={"expect_per_step": {"kernels": KERNELS_PER_STEP, "memcpys": 0},
                            "kernel_name": "gpusuite_fma_chain"})


if __name__ == "__main__":
    main()
