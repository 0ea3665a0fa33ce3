"""Workload 1, healthy: a bf16 MLP training step of large GEMMs, back to back. The host enqueues
a step's ~40 kernels in well under a millisecond while the GPU computes for ~15-20 ms (H100), so
the GPU is busy nearly the whole step.

Expected: gpu_bound (compute >= 90% of the step); no host-side pathology.
"""
import torch

from common import parse_args, run_steps

HIDDEN = 8192
BATCH = 8192
LAYERS = 3


def main():
    args = parse_args(__doc__)
    torch.manual_seed(0)
    layers = []
    for _ in range(LAYERS):
        layers += [torch.nn.Linear(HIDDEN, HIDDEN, bias=False), torch.nn.GELU()]
    model = torch.nn.Sequential(*layers).to("cuda", torch.bfloat16)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4, foreach=True)
    x = torch.randn(BATCH, HIDDEN, device="cuda", dtype=torch.bfloat16)

    def step(i):
        loss = model(x).float().square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    run_steps(args, step, "healthy")


if __name__ == "__main__":
    main()
