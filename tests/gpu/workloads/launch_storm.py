"""Workload 3, launch storm: 3,000 tiny elementwise kernels per step (a 100-op pointwise chain on
a 64k-element tensor, called 30 times). Each kernel runs ~2-3 us on the GPU, each eager op costs
the host ~5-10 us to launch: the GPU idles between launches most of the step.

--variant compiled (the fixed twin): the same chain under torch.compile, which fuses it into one
Triton kernel per call: 30 kernels per step instead of 3,000.
--variant graph: the same chain captured once in a CUDA graph and replayed (30 cudaGraphLaunch per
step, still 3,000 kernels, ~1 us apart). Advisory only: whether back-to-back graph kernels count as
"launch-bound" is a question for the detector, see tests/gpu/README.md.

Expected: launch_storm; the compiled twin must not be flagged with it.
"""
import os

os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")  # compile in-process: no worker pool

import torch

from common import parse_args, run_steps

ELEMENTS = 64 * 1024
OPS_PER_CALL = 100
CALLS_PER_STEP = 30


def chain(x):
    for _ in range(OPS_PER_CALL // 2):
        x = x * 1.0001
        x = x + 0.0001
    return x


def main():
    args = parse_args(__doc__, variants=("bad", "compiled", "graph"))
    torch.manual_seed(0)
    x0 = torch.randn(ELEMENTS, device="cuda")
    if args.variant == "bad":
        fn = chain
    elif args.variant == "compiled":
        fn = torch.compile(chain, fullgraph=True, dynamic=False)
    else:
        static_in = x0.clone()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm up outside capture, as CUDA graphs require
            chain(static_in)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_out = chain(static_in)

        def fn(x):
            graph.replay()
            return static_out

    def step(i):
        y = x0
        for _ in range(CALLS_PER_STEP):
            y = fn(x0)
        return y

    run_steps(args, step, "launch_storm")


if __name__ == "__main__":
    main()
