"""Workload 6, FP32 GEMMs without tensor cores: an fp32 MLP training step with TF32 disabled, so
cuBLAS runs SIMT sgemm kernels (~50 TFLOP/s on an H100 instead of ~700 with bf16 tensor cores).

--variant amp (the twin): the same model under torch.autocast(dtype=torch.bfloat16): tensor-core
GEMMs.

Expected: fp32_gemm; the AMP twin must not be flagged with it.
"""
import torch

from common import parse_args, run_steps

HIDDEN = 4096
BATCH = 4096
LAYERS = 3


def disable_tf32():
    # PyTorch's defaults already keep fp32 matmuls off TF32; say so explicitly, through the one
    # long-standing API (PyTorch >= 2.9 objects to mixing it with the newer fp32_precision knobs).
    torch.set_float32_matmul_precision("highest")
    torch.backends.cudnn.allow_tf32 = False


def main():
    args = parse_args(__doc__, variants=("bad", "amp"))
    disable_tf32()
    torch.manual_seed(0)
    layers = []
    for _ in range(LAYERS):
        layers += [torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-4, foreach=True)
    x = torch.randn(BATCH, HIDDEN, device="cuda")

    def step(i):
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.variant == "amp"):
            loss = model(x).float().square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    run_steps(args, step, "fp32_gemm",
              extra_result={"float32_matmul_precision": torch.get_float32_matmul_precision()})


if __name__ == "__main__":
    main()
