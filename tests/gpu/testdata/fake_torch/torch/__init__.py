"""A stand-in for PyTorch that lets the workload scripts run their control flow on a machine
without PyTorch or a GPU (test_run_logic.py's smoke test): every attribute, call and operator
gives back another stand-in. It proves the scripts' own logic (arguments, variants, the step
loop, the result line), not their use of PyTorch's API."""


class Anything:
    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Anything()

    def __call__(self, *args, **kwargs):
        return Anything()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __iter__(self):
        return iter([Anything() for _ in range(4)])

    def __len__(self):
        return 4

    def __bool__(self):
        return True

    def __float__(self):
        return 0.0

    def __int__(self):
        return 0

    def __index__(self):
        return 0

    def __format__(self, spec):
        return format(0.0, spec) if spec else "tensor(0.)"

    def __getitem__(self, key):
        return Anything()

    def item(self):
        return 0.0


def _binary(name):
    return lambda self, *other: Anything()


for _op in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "neg"):
    for _form in ("__%s__", "__r%s__", "__i%s__"):
        setattr(Anything, _form % _op, _binary(_op))
for _op in ("lt", "le", "gt", "ge"):
    setattr(Anything, "__%s__" % _op, lambda self, other: True)

__version__ = "0.0-fake"
float32 = bfloat16 = float16 = "dtype"
channels_last = "channels_last"


def get_float32_matmul_precision():
    return "highest"


class _Cuda(Anything):
    def get_device_name(self, *args):
        return "fake GPU"

    def device_count(self):
        return 1


cuda = _Cuda()


def __getattr__(name):  # torch.randn, torch.nn, torch.backends, torch.compile, ...
    return Anything()
