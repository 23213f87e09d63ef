"""Attributes of a package that import on first use (PEP 562 module ``__getattr__``)."""

import importlib


def lazy_attributes(package, namespace, names):
    """(``__getattr__``, ``__dir__``) for the package named ``package`` whose globals are
    ``namespace``: ``names`` maps each lazy attribute to (module to import, attribute of it or None
    for the module itself)."""

    def __getattr__(name):
        if name in names:
            module, attr = names[name]
            mod = importlib.import_module(module)
            return mod if attr is None else getattr(mod, attr)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__
