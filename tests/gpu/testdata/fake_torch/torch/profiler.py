from torch import Anything

ProfilerActivity = Anything()


def profile(*args, on_trace_ready=None, **kwargs):
    return Anything()


def schedule(wait, warmup, active, repeat):
    return Anything()


def record_function(name):
    return Anything()
