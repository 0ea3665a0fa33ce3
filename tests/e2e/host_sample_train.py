# A host-bound "training loop" driving the fake CUDA (tests/fake_cuda) through ctypes: each step
# launches 3 ms of GPU work, then computes metrics on the host for ~8 ms while the GPU idles.
# call_site_e2e_test.cc checks that the host sampler names the metrics line (line 26, called
# from line 34: edit both together).
import ctypes
import sys
import time

cuda = ctypes.PyDLL(sys.argv[1])
steps = int(sys.argv[2])
# A C call that releases the GIL, as each PyTorch op does.
libc = ctypes.CDLL(None)


class Dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint32), ("y", ctypes.c_uint32), ("z", ctypes.c_uint32)]


cuda.fake_cuda_launch_kernel.argtypes = [ctypes.c_char_p, Dim3, Dim3, ctypes.c_uint32,
                                         ctypes.c_uint32, ctypes.c_uint64]
cuda.fake_nvtx_range_push.argtypes = [ctypes.c_char_p]


def compute_metrics():
    end = time.monotonic() + 0.008
    while time.monotonic() < end: libc.getpid()


def train():
    for step in range(steps):
        cuda.fake_nvtx_range_push(b"ProfilerStep#%d" % step)
        for _ in range(10):
            cuda.fake_cuda_launch_kernel(b"gemm", Dim3(64, 1, 1), Dim3(128, 1, 1), 0, 0, 300_000)
        compute_metrics()
        cuda.fake_nvtx_range_pop()


train()
