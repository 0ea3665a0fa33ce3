"""Workload 8, warm-up: a conv net with cudnn.benchmark=True (cuDNN autotunes every conv shape in
the first step) followed by a torch.compile'd MLP head (compiled during the first step: seconds).
The first step or few are far slower than the rest and run kernels never seen again.

Expected: step 0 is a warm-up step (primary "warmup", not steady), at most a few steps are, and
the remaining steps are steady.
"""
import os

os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")  # compile in-process: no worker pool

import torch

from common import parse_args, run_steps

BATCH = 256
CHANNELS = 128
SIZE = 56


def main():
    args = parse_args(__doc__)
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)
    convs = torch.nn.Sequential(
        torch.nn.Conv2d(3, CHANNELS, 3, padding=1), torch.nn.ReLU(),
        torch.nn.Conv2d(CHANNELS, CHANNELS, 3, padding=1), torch.nn.ReLU(),
        torch.nn.Conv2d(CHANNELS, CHANNELS, 3, padding=1), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(4), torch.nn.Flatten(),
    ).to("cuda", torch.bfloat16).to(memory_format=torch.channels_last)
    head = torch.nn.Sequential(
        torch.nn.Linear(CHANNELS * 16, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1000),
    ).to("cuda", torch.bfloat16)
    compiled_head = torch.compile(head)
    params = list(convs.parameters()) + list(head.parameters())
    opt = torch.optim.SGD(params, lr=1e-4, foreach=True)
    x = torch.randn(BATCH, 3, SIZE, SIZE, device="cuda", dtype=torch.bfloat16)
    x = x.to(memory_format=torch.channels_last)

    def step(i):
        loss = compiled_head(convs(x)).float().square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    run_steps(args, step, "warmup")


if __name__ == "__main__":
    main()
