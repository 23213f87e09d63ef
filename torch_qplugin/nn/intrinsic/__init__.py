from . import quantized  # noqa: F401
