"""pytest fixtures for tests against the real control plane.

Enable with ``-p glimmer.testing.pytest_plugin``. Tests using these fixtures are marked
``@pytest.mark.controlplane``. When the binaries are missing, the ``control_plane``
fixture *fails* with instructions (run ``hack/envtest``): a test that silently skips
would read as a pass for code that was never exercised.

Fixtures:

- ``control_plane`` (session): a started :class:`~glimmer.testing.ControlPlane`.
- ``kubeconfig`` (session): its admin kubeconfig path.
- ``namespace`` (function): a fresh namespace; its objects are deleted afterwards.
- ``api_client`` (function, async): a ``kubernetes_asyncio`` ``ApiClient`` as admin,
  on the test's function-scoped event loop; closed afterwards.
- ``sim_nodes`` (function): factory ``sim_nodes(count=1, **options) -> SimNodes``
  starting simulated nodes (``python -m glimmer.sim``) for the test; stopped afterwards.
- ``kwok`` (session): a started :class:`~glimmer.testing.kwok.Kwok` (KWOK + scheduler);
  ``kwok.create_nodes(n)`` adds fake GPU nodes, ``kwok.set_pod_log(...)`` a pod's log.
- ``kwok_nodes`` (function): factory ``kwok_nodes(n, **options) -> names``; the nodes are
  deleted after the test.
- ``glimmer_crds`` (session): the burnin.glimmer.ai CRDs, generated from ``glimmer.api``,
  installed into ``control_plane`` and Established.
- ``manager_process`` (function): factory ``manager_process(**options) -> ManagerProcess``
  starting ``glimmer manager`` as a child process against ``control_plane``, CRDs
  installed (options as
  :class:`~glimmer.testing.ManagerProcess`; ``ready=False`` to skip waiting for
  ``/readyz``); stopped after the test.

At the end of the session the plugin fails the run if any process it started (etcd,
kube-apiserver, kwok, simulator, manager) is still alive.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import yaml
from kubernetes_asyncio.client import ApiClient
from kubernetes_asyncio.config import new_client_from_config

from glimmer.testing import _process
from glimmer.testing.assets import AssetsMissingError
from glimmer.testing.control_plane import ControlPlane
from glimmer.testing.kwok import Kwok
from glimmer.testing.manager_process import ManagerProcess
from glimmer.testing.sim_nodes import SimNodes

SimNodesFactory = Callable[..., SimNodes]
ManagerProcessFactory = Callable[..., ManagerProcess]


@pytest.fixture(scope="session")
def control_plane() -> Iterator[ControlPlane]:
    plane = ControlPlane()
    try:
        plane.start()
    except AssetsMissingError as error:
        pytest.fail(str(error), pytrace=False)
    try:
        yield plane
    finally:
        plane.stop()


@pytest.fixture(scope="session")
def kubeconfig(control_plane: ControlPlane) -> Path:
    return control_plane.kubeconfig_path


def _namespace_name(test_name: str) -> str:
    stem = re.sub(r"[^a-z0-9-]+", "-", test_name.lower()).strip("-")[:40].strip("-")
    return f"{stem or 't'}-{uuid.uuid4().hex[:5]}"


@pytest.fixture
def namespace(control_plane: ControlPlane, request: pytest.FixtureRequest) -> Iterator[str]:
    name = _namespace_name(request.node.name)
    control_plane.kubectl("create", "namespace", name)
    try:
        yield name
    finally:
        control_plane.delete_namespace(name)


@pytest_asyncio.fixture(loop_scope="function")
async def api_client(kubeconfig: Path) -> AsyncIterator[ApiClient]:
    client = await new_client_from_config(config_file=str(kubeconfig))
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture
def sim_nodes(control_plane: ControlPlane) -> Iterator[SimNodesFactory]:
    started: list[SimNodes] = []

    def factory(count: int = 1, **options: Any) -> SimNodes:
        nodes = SimNodes(
            kubeconfig=control_plane.kubeconfig_path,
            work_dir=control_plane.work_dir / "sim",
            count=count,
            tls=control_plane.kubelet_tls,
            **options,
        )
        started.append(nodes)
        return nodes.start()

    try:
        yield factory
    finally:
        for nodes in reversed(started):
            nodes.stop()


@pytest.fixture(scope="session")
def kwok(control_plane: ControlPlane) -> Iterator[Kwok]:
    controller = Kwok(control_plane)
    try:
        controller.start()
    except AssetsMissingError as error:
        pytest.fail(str(error), pytrace=False)
    try:
        yield controller
    finally:
        controller.stop()


@pytest.fixture
def kwok_nodes(kwok: Kwok) -> Iterator[Callable[..., list[str]]]:
    """Factory ``kwok_nodes(count, **options) -> names`` whose nodes are deleted after
    the test (options as :meth:`Kwok.create_nodes`)."""
    created: list[str] = []

    def factory(count: int, **options: Any) -> list[str]:
        names = kwok.create_nodes(count, **options)
        created.extend(names)
        return names

    try:
        yield factory
    finally:
        kwok.delete_nodes(created)


@pytest.fixture(scope="session")
def glimmer_crds(control_plane: ControlPlane) -> None:
    from glimmer.api.crd import render_crds  # only for tests that want the CRDs

    documents = "---\n".join(render_crds().values())
    control_plane.kubectl("apply", "--server-side", "--force-conflicts", "-f", "-", input=documents)
    names = [
        f"crd/{document['metadata']['name']}"
        for document in yaml.safe_load_all(documents)
        if document
    ]
    control_plane.wait_established(*names)


@pytest.fixture
def manager_process(
    control_plane: ControlPlane, glimmer_crds: None, tmp_path: Path
) -> Iterator[ManagerProcessFactory]:
    started: list[ManagerProcess] = []

    def factory(*, ready: bool = True, **options: Any) -> ManagerProcess:
        options.setdefault("log_path", tmp_path / f"manager-{len(started)}.log")
        manager = ManagerProcess(kubeconfig=control_plane.kubeconfig_path, **options)
        started.append(manager)
        manager.start()
        if ready:
            manager.wait_ready()
        return manager

    try:
        yield factory
    finally:
        for manager in reversed(started):
            manager.stop()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    alive = _process.surviving(_process.SPAWNED)
    if alive:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = f"glimmer.testing: child processes still running after the session: {alive}"
        if reporter is not None:
            reporter.ensure_newline()
            reporter.write_line(message, red=True)
