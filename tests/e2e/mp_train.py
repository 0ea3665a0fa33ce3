"""A PyTorch-like Python program on the fake CUDA (through ctypes), for the process-model tests.

The parent trains, then starts workers the ways PyTorch programs do: multiprocessing's "spawn"
(a fresh interpreter that uses CUDA too: profiled as a process of its own), "fork" after CUDA is
initialised (gpuspy's copy in the child must stay inert), and a DataLoader-like worker that never
touches CUDA and ends with os._exit. Exits 0 only if every worker did.
"""
import ctypes
import multiprocessing as mp
import os
import sys


class Dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint32), ("y", ctypes.c_uint32), ("z", ctypes.c_uint32)]


def cuda():
    lib = ctypes.CDLL(os.environ["FAKE_CUPTI_LIB"])
    lib.fake_cuda_launch_kernel.argtypes = [ctypes.c_char_p, Dim3, Dim3, ctypes.c_uint32,
                                            ctypes.c_uint32, ctypes.c_uint64]
    lib.fake_cuda_stream_synchronize.argtypes = [ctypes.c_uint32]
    lib.fake_nvtx_range_push.argtypes = [ctypes.c_char_p]
    return lib


def train(first_step, steps):
    lib = cuda()
    lib.fake_cuda_init()  # model.cuda(): CUDA (and so the profiler) starts before the first step
    for s in range(first_step, first_step + steps):
        lib.fake_nvtx_range_push(b"ProfilerStep#%d" % s)
        for _ in range(5):
            lib.fake_cuda_launch_kernel(b"ampere_sgemm_128x64_tn", Dim3(80, 1, 1), Dim3(256, 1, 1),
                                        0, 7, 20000)
        lib.fake_cuda_stream_synchronize(7)
        lib.fake_nvtx_range_pop()


def dataloader_worker(queue):
    queue.put(sum(range(1000)))
    queue.close()
    queue.join_thread()  # the feeder thread has written the result
    os._exit(0)  # how DataLoader workers end: no exit handlers


def main():
    train(0, 3)
    codes = {}
    spawned = mp.get_context("spawn").Process(target=train, args=(100, 3))
    spawned.start()
    spawned.join(60)
    codes["spawn"] = spawned.exitcode
    forked = mp.get_context("fork").Process(target=train, args=(200, 2))
    forked.start()
    forked.join(60)
    codes["fork"] = forked.exitcode
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    loader = ctx.Process(target=dataloader_worker, args=(queue,))
    loader.start()
    queue.get(timeout=60)
    loader.join(60)
    codes["dataloader"] = loader.exitcode
    train(3, 2)
    print("worker exit codes:", codes, flush=True)
    return 0 if all(c == 0 for c in codes.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
