# The host sampler's bench workload (bench/host_sampler.sh): a host-bound loop on the fake CUDA.
# Each step launches 10 kernels, then runs a host phase of ITERS Python iterations, each calling
# a C function that releases the GIL (as a PyTorch op does). Prints one JSON line: ns per
# host-phase iteration, and the CPU time of gpuspy's sampler thread.
import ctypes
import json
import os
import sys
import time

cuda = ctypes.PyDLL(sys.argv[1])
steps, iters = int(sys.argv[2]), int(sys.argv[3])
libc = ctypes.CDLL(None)


class Dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint32), ("y", ctypes.c_uint32), ("z", ctypes.c_uint32)]


cuda.fake_cuda_launch_kernel.argtypes = [ctypes.c_char_p, Dim3, Dim3, ctypes.c_uint32,
                                         ctypes.c_uint32, ctypes.c_uint64]


def host_phase():
    acc = 0
    for i in range(iters):
        acc += libc.getpid() * i
    return acc


host_ns = 0
for step in range(steps):
    for _ in range(10):
        cuda.fake_cuda_launch_kernel(b"gemm", Dim3(64, 1, 1), Dim3(128, 1, 1), 0, 0, 100_000)
    t = time.perf_counter_ns()
    host_phase()
    host_ns += time.perf_counter_ns() - t

sampler_cpu_ns = 0
tick = os.sysconf("SC_CLK_TCK")
for tid in os.listdir("/proc/self/task"):
    try:
        with open(f"/proc/self/task/{tid}/comm") as f:
            if f.read().strip() != "gpuspy-sample":
                continue
        with open(f"/proc/self/task/{tid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        sampler_cpu_ns = (int(fields[11]) + int(fields[12])) * 1_000_000_000 // tick
    except OSError:
        pass
print(json.dumps({"ns_per_iter": host_ns / (steps * iters), "host_s": host_ns / 1e9,
                  "sampler_cpu_ns": sampler_cpu_ns}))
