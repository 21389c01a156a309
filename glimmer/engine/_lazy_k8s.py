"""Import kubernetes-asyncio without its ~700 generated API and model classes.

The engine uses four things from kubernetes-asyncio: ``Configuration``, ``ApiClient``
(for its TLS connector and auth settings), the exceptions and the kubeconfig loaders.
Importing any of them runs ``kubernetes_asyncio/__init__.py``, which imports the whole
generated client: 33 MiB of resident memory a manager never touches (measured: 72 MiB
for ``import kubernetes_asyncio.client`` against 39 MiB for the four pieces), about a
fifth of the manager's peak RSS on a thousand-node run.

:func:`install` (run when this module is imported, first thing in
``glimmer.engine``) puts three lazy package modules in ``sys.modules`` before the first
import - ``kubernetes_asyncio``, ``kubernetes_asyncio.client`` and
``kubernetes_asyncio.client.models`` - whose attribute lookups resolve, in order: a
submodule of that name (imported on demand), one of the light names above, and only
then the package's real ``__init__``, executed once into the same module. So every
name the package exports still resolves (``kubernetes_asyncio.client.CoreV1Api``
loads the full client the first time it is asked for), and code that never asks pays
nothing. If kubernetes-asyncio is already imported, :func:`install` does nothing.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types
from pathlib import Path
from typing import Any

_LIGHT_CLIENT_NAMES = {
    "Configuration": "configuration",
    "ApiClient": "api_client",
    "ApiException": "exceptions",
    "ApiValueError": "exceptions",
    "ApiTypeError": "exceptions",
    "ApiKeyError": "exceptions",
    "OpenApiException": "exceptions",
}
_PACKAGES = ("kubernetes_asyncio", "kubernetes_asyncio.client", "kubernetes_asyncio.client.models")
_PACKAGE_DUNDERS = frozenset({"__version__", "__all__", "__project__"})
"""Dunder names the packages' own ``__init__`` defines: asking for one loads it."""
_lock = threading.RLock()


class LazyPackage(types.ModuleType):
    """A package whose real ``__init__`` runs only when a name it defines is needed."""

    def __init__(self, name: str, directory: Path) -> None:
        super().__init__(name)
        self.__path__ = [str(directory)]
        self.__file__ = str(directory / "__init__.py")
        self.__package__ = name
        self._lazy_loaded = False

    def __getattr__(self, attr: str) -> Any:
        if (attr.startswith("__") and attr not in _PACKAGE_DUNDERS) or attr == "_lazy_loaded":
            raise AttributeError(attr)  # probes by the import system and inspect
        directory = Path(self.__path__[0])
        if (directory / f"{attr}.py").is_file() or (directory / attr / "__init__.py").is_file():
            return importlib.import_module(f"{self.__name__}.{attr}")
        light = _LIGHT_CLIENT_NAMES.get(attr) if self.__name__ == _PACKAGES[1] else None
        if light is not None:
            return getattr(importlib.import_module(f"{self.__name__}.{light}"), attr)
        self.load()
        try:
            return self.__dict__[attr]
        except KeyError:
            raise AttributeError(f"module {self.__name__!r} has no attribute {attr!r}") from None

    def load(self) -> None:
        """Run the package's real ``__init__`` into this module (once)."""
        with _lock:
            if self._lazy_loaded:
                return
            self._lazy_loaded = True
            # The package's own __init__, run as `import` would have run it.
            source = Path(str(self.__file__)).read_text()
            exec(compile(source, str(self.__file__), "exec"), self.__dict__)


def install() -> bool:
    """Put the lazy packages in place; False (and no change) if it is too late or the
    package is not installed."""
    with _lock:
        if any(name in sys.modules for name in _PACKAGES):
            return False
        spec = importlib.util.find_spec("kubernetes_asyncio")
        if spec is None or spec.origin is None:
            return False
        root = Path(spec.origin).parent
        top = LazyPackage(_PACKAGES[0], root)
        client = LazyPackage(_PACKAGES[1], root / "client")
        models = LazyPackage(_PACKAGES[2], root / "client" / "models")
        for module in (top, client, models):
            directory = Path(module.__path__[0])
            module.__spec__ = importlib.util.spec_from_file_location(
                module.__name__,
                directory / "__init__.py",
                submodule_search_locations=[str(directory)],
            )
            sys.modules[module.__name__] = module
        top.__dict__["client"] = client  # what importing a submodule does to its parent
        client.__dict__["models"] = models
        return True


install()
