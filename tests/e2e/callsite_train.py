# A "training loop" in Python driving the fake CUDA (tests/fake_cuda) through ctypes, with known
# lines: call_site_e2e_test.cc checks that gpuspy names them (lines 33, 38, 46 and 49: edit
# both together).
import ctypes
import sys
import time

# PyDLL keeps the GIL during each call, like a C extension that does not release it.
cuda = ctypes.PyDLL(sys.argv[1])
steps = int(sys.argv[2])


class Dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint32), ("y", ctypes.c_uint32), ("z", ctypes.c_uint32)]


cuda.fake_cuda_launch_kernel.argtypes = [ctypes.c_char_p, Dim3, Dim3, ctypes.c_uint32,
                                         ctypes.c_uint32, ctypes.c_uint64]
cuda.fake_cuda_memcpy.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_uint64,
                                  ctypes.c_int, ctypes.c_uint32, ctypes.c_uint64]
cuda.fake_cuda_stream_synchronize.argtypes = [ctypes.c_uint32]
cuda.fake_nvtx_range_push.argtypes = [ctypes.c_char_p]
FAKE_DTOH, FAKE_PAGEABLE, FAKE_DEVICE = 2, 1, 3

# A stand-in for torch internals: its frames are walked past (GPUSPY_CALLSITE_SKIP's default
# "/torch/"), so the user line that called it is named.
torch_ns = {"cuda": cuda}
exec(compile("def synchronize():\n    cuda.fake_cuda_device_synchronize()\n",
             "/opt/venv/lib/python3/site-packages/torch/cuda/__init__.py", "exec"), torch_ns)


def loss_item():
    cuda.fake_cuda_stream_synchronize(0)  # the sync every step


def forward():
    for _ in range(10):
        cuda.fake_cuda_launch_kernel(b"gemm", Dim3(64, 1, 1), Dim3(128, 1, 1), 0, 0, 300_000)


def train():
    for step in range(steps):
        cuda.fake_nvtx_range_push(b"ProfilerStep#%d" % step)
        forward()
        loss_item()
        cuda.fake_cuda_memcpy(FAKE_DTOH, FAKE_DEVICE, FAKE_PAGEABLE, 4096, 0, 0, 0)
        time.sleep(0.002)  # host work while the GPU idles
        if step % 2 == 1:
            torch_ns["synchronize"]()
        cuda.fake_nvtx_range_pop()


train()
