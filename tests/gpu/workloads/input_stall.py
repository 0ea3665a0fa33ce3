"""Workload 5, input stall: a DataLoader whose __getitem__ sleeps 3 ms per sample (decoding,
augmentation, slow storage), batch 8, num_workers=0: each step first waits ~25 ms for its batch
on the host, with no CUDA work at all, then computes ~10 ms on the GPU.

--variant fixed (the twin): the same dataset with num_workers=8, prefetch_factor=4,
persistent_workers and pin_memory: the workers produce a batch every ~3 ms, faster than the GPU
consumes them. (The workers are forked after CUDA is initialized and never use CUDA: gpuspy's
copy in them must stay inert.)

Expected: input_stall; the twin must not be flagged with it.
"""
import time

import torch
from torch.utils.data import DataLoader, Dataset

from common import parse_args, run_steps

HIDDEN = 8192
BATCH = 8
SAMPLE_SLEEP_S = 0.003
GEMMS = 7                      # (8192 x 8192) @ (8192 x 8192) bf16, ~1.4 ms each on an H100


class SlowDataset(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        time.sleep(SAMPLE_SLEEP_S)
        return torch.full((HIDDEN,), float(i % 7))


def main():
    args = parse_args(__doc__, variants=("bad", "fixed"))
    torch.manual_seed(0)
    w = (torch.randn(HIDDEN, HIDDEN, device="cuda") / HIDDEN ** 0.5).to(torch.bfloat16)
    a = torch.randn(HIDDEN, HIDDEN, device="cuda", dtype=torch.bfloat16)
    dataset = SlowDataset((args.steps + 8) * BATCH)
    if args.variant == "bad":
        loader = DataLoader(dataset, batch_size=BATCH, num_workers=0)
    else:
        loader = DataLoader(dataset, batch_size=BATCH, num_workers=8, prefetch_factor=4,
                            persistent_workers=True, pin_memory=True)
    batches = iter(loader)

    def step(i):
        batch = next(batches).to("cuda", non_blocking=True)
        x = a + batch.to(torch.bfloat16).mean()
        for _ in range(GEMMS):
            x = x @ w

    run_steps(args, step, "input_stall")


if __name__ == "__main__":
    main()
