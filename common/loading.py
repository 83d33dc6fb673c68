"""Load a Python file as a module by its path, once: deploy/'s folders have dashes in their
names (local-hbase, local-cassandra, local-zookeeper), so `import` cannot reach them, and the
tests, the benches and the demos must share one instance of each (the same classes, the same
module-level state)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load_file(name: str, path: str | Path) -> ModuleType:
    """The module `name` loaded from `path`, or the one already loaded under that name."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path} as a module")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # before exec: dataclasses look their module up there
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        del sys.modules[name]
        raise
    return mod


__all__ = ["load_file"]
