"""structlog imported as if rich were not installed (66 modules, about 3 MiB of a manager).

structlog imports rich and pygments at import time whenever rich is installed, for its
console renderer's tracebacks and its rendering of traceback locals. The manager logs
JSON (:func:`glimmer.engine.configure_logging` renders locals without rich), and the
commands that print with rich import it themselves; a command logging through
structlog's default console renderer shows a plain traceback instead of rich's.
:func:`install` (called by :mod:`glimmer.cli`) puts a finder first on
``sys.meta_path`` that, the first time ``structlog`` is imported, runs structlog's own
``__init__`` with ``import rich`` failing, then takes itself off. A command that never
imports structlog pays nothing (``glimmer run`` must start fast), and once structlog is
loaded ``rich`` imports as usual.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import cast

_TARGET = "structlog"
_HIDDEN = "rich"


class _WithoutRich(importlib.abc.Loader):
    """structlog's own loader, run with ``import rich`` failing."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self.loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        _remove_finder()
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        # None in sys.modules makes `import rich` raise ImportError, which structlog
        # reads as "rich is not installed".
        cast("dict[str, ModuleType | None]", sys.modules)[_HIDDEN] = None
        try:
            self.loader.exec_module(module)
        finally:
            del sys.modules[_HIDDEN]


class _StructlogWithoutRich(importlib.abc.MetaPathFinder):
    def __init__(self) -> None:
        self._finding = False

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != _TARGET or self._finding or _HIDDEN in sys.modules:
            return None
        self._finding = True  # the finders after this one find the real spec
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self._finding = False
        if spec is None or spec.loader is None:
            return None
        spec.loader = _WithoutRich(spec.loader)
        return spec


def _remove_finder() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _StructlogWithoutRich)]


def install() -> bool:
    """Put the finder in place; False (and no change) if structlog is already imported."""
    if _TARGET in sys.modules or any(isinstance(f, _StructlogWithoutRich) for f in sys.meta_path):
        return False
    sys.meta_path.insert(0, _StructlogWithoutRich())
    return True
