"""Workload 2, sync stall: ten micro-steps per step, each reading its loss on the host
(loss.item() and print(loss): blocking device->host copies), then ~1.5 ms of Python on the value
(logging, metrics). Every read drains the GPU's queue, and the GPU idles through the Python that
follows until the next launch: ~30% of each step is lost.

--variant fixed (the twin): the same work and the same Python per micro-step, but the loss is
accumulated on the GPU and read once at the end of the step; the host runs ahead (its ~2 ms per
micro-step is less than the GPU's ~4 ms), so the GPU never waits.

Expected: sync_stall; the twin must not be flagged with it (gpu_bound or none).
"""
import io

import torch

from common import busy_wait, parse_args, run_steps

HIDDEN = 8192
BATCH = 4096
MICRO_STEPS = 10
HOST_WORK_S = 0.0015


def main():
    args = parse_args(__doc__, variants=("bad", "fixed"))
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(HIDDEN, HIDDEN, bias=False), torch.nn.GELU(),
        torch.nn.Linear(HIDDEN, HIDDEN, bias=False)).to("cuda", torch.bfloat16)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4, foreach=True)
    x = torch.randn(BATCH, HIDDEN, device="cuda", dtype=torch.bfloat16)
    sink = io.StringIO()

    def step(i):
        total = torch.zeros((), device="cuda")
        for m in range(MICRO_STEPS):
            loss = model(x).float().square().mean()
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            if args.variant == "bad":
                value = loss.item()                    # blocks until the GPU is done
                print(f"step {i}.{m} loss {loss}", file=sink)  # formats the tensor: blocks again
                busy_wait(HOST_WORK_S)                 # Python on the value; the GPU sits idle
                sink.write(f"{value:.4f}\n")
            else:
                total += loss.detach()                 # stays on the GPU
                busy_wait(HOST_WORK_S)                 # same Python; the GPU still has work queued
        if args.variant == "fixed":
            sink.write(f"step {i} mean loss {total.item() / MICRO_STEPS:.4f}\n")
        sink.seek(0)
        sink.truncate()

    run_steps(args, step, "sync_stall")


if __name__ == "__main__":
    main()
