"""The operator inside your test process, wired exactly as ``glimmer manager`` wires it.

Like ``kopf.testing.KopfRunner``: start it in a test against any apiserver (the bundled
:class:`~glimmer.testing.ControlPlane` or your own), drive BurnIn objects, assert on
what it did, stop it::

    async with EmbeddedOperator(kubeconfig=path) as operator:
        run = await operator.wait_for_verdict(namespace="ns", name="r")

It runs the same controllers as the binary (:func:`glimmer.controllers.operator.
operator_registrations`), so a test exercises what ships. Entering waits until the
informers have synced and the controllers run; leaving drains in-flight reconciles
and closes the client, and raises if the operator died on its own meanwhile (a test
must not pass over a crashed operator). For a crash without any cleanup, run the
manager as a process (:class:`~glimmer.testing.ManagerProcess`) and SIGKILL it.

Defaults differ from the binary's where a test needs it: every namespace is served
(tests create runs in throwaway namespaces), no leader election, no HTTP servers, a
higher client rate limit, and webhooks may reach loopback (where test receivers listen;
the binary refuses it, docs/sinks.md#where-webhooks-may-go).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from types import TracebackType
from typing import Any, Self

from glimmer.controllers.kit.names import RUNS
from glimmer.controllers.operator import operator_registrations
from glimmer.controllers.run.context import RunOptions
from glimmer.engine import (
    ApiServerClient,
    ClientOptions,
    EngineMetrics,
    KubeClient,
    Manager,
    ManagerOptions,
    Readers,
)
from glimmer.sinks import FanoutOptions
from glimmer.sinks.destinations import DestinationGuard
from glimmer.verdict import Phase

JSON = dict[str, Any]

#: The operator namespace tests assume (where NodeFingerprints would live).
DEFAULT_OPERATOR_NAMESPACE = "glimmer-system"
#: The embedded operator's webhook guard: the binary's, but test receivers on loopback
#: are reachable.
LOOPBACK_RECEIVERS = DestinationGuard.from_flags(allow=["127.0.0.0/8", "::1"])


class OperatorFailedError(RuntimeError):
    """The embedded operator stopped on its own (its exception is the cause)."""


def _is_verdict(run: JSON) -> bool:
    phase = str((run.get("status") or {}).get("phase") or "")
    done = phase in {p.value for p in Phase} and Phase(phase).terminal
    return done and not (run.get("metadata") or {}).get("finalizers")


async def wait_for_verdict(
    client: KubeClient,
    *,
    namespace: str,
    name: str,
    timeout: float = 120.0,
    poll: float = 0.3,
) -> JSON:
    """The BurnInRun once it is terminal **and** its finalizer is gone (cleanup done).

    Raises ``TimeoutError`` with the run's last status after ``timeout`` seconds.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last: JSON | None = None
    while True:
        last = await client.get(RUNS, name, namespace=namespace)
        if _is_verdict(last):
            return last
        if loop.time() >= deadline:
            raise TimeoutError(
                f"BurnInRun {namespace}/{name} reached no verdict in {timeout:.0f}s; "
                f"last status: {last.get('status')!r}"
            )
        await asyncio.sleep(poll)


class EmbeddedOperator:
    """The operator's controllers in this process, until :meth:`stop` (or ``async with``)."""

    def __init__(
        self,
        *,
        kubeconfig: str | os.PathLike[str] | None,
        served_namespaces: frozenset[str] | None = None,
        run_options: RunOptions | None = None,
        manager_options: ManagerOptions | None = None,
        client_options: ClientOptions | None = None,
        fanout_options: FanoutOptions | None = None,
        start_timeout: float = 60.0,
        attestation_key_secret: tuple[str, str] | None = None,
    ) -> None:
        """Configure; start nothing.

        ``kubeconfig``: the apiserver to run against (None: ``$KUBECONFIG``, else
        in-cluster). ``served_namespaces``: whose runs are honoured, None (default) for
        every namespace. ``run_options``: the run controller's timings (default the
        binary's, with operator namespace ``glimmer-system``). ``manager_options``:
        default no leader election and no metrics/health servers. ``client_options``:
        default 200 qps, burst 400. ``fanout_options``: sink delivery timings and the
        webhook destination guard, default the binary's timings with loopback allowed
        (:data:`LOOPBACK_RECEIVERS`). ``start_timeout``: seconds :meth:`start` waits for
        synced caches and running controllers. ``attestation_key_secret``: (namespace,
        name) of the key Secret, as ``glimmer manager --attestation-key-secret``.
        """
        self.kubeconfig = None if kubeconfig is None else os.fspath(kubeconfig)
        self.served_namespaces = served_namespaces
        self.run_options = run_options or RunOptions(operator_namespace=DEFAULT_OPERATOR_NAMESPACE)
        self.manager_options = manager_options or ManagerOptions(
            leader_elect=False, metrics_bind_address="0", health_probe_bind_address="0"
        )
        self.client_options = client_options or ClientOptions(qps=200, burst=400)
        self.fanout_options = fanout_options or FanoutOptions(destinations=LOOPBACK_RECEIVERS)
        self.start_timeout = start_timeout
        self.attestation_key_secret = attestation_key_secret
        #: Engine metrics of the current (or last) start; the operator's families (node
        #: verdicts, the Prometheus sink's burnin_*) are on its registry.
        self.metrics = EngineMetrics()
        self._client: ApiServerClient | None = None
        self._manager: Manager | None = None
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        #: How many times :meth:`start` has run (a restart is a stop then a start).
        self.starts = 0

    # --- what a test reads -------------------------------------------------------

    @property
    def client(self) -> ApiServerClient:
        """The operator's own client (admin of whatever the kubeconfig grants)."""
        if self._client is None:
            raise RuntimeError("the embedded operator is not running")
        return self._client

    @property
    def manager(self) -> Manager:
        if self._manager is None:
            raise RuntimeError("the embedded operator is not running")
        return self._manager

    @property
    def readers(self) -> Readers:
        """Readers over the operator's own caches (``cached``) and its client (``live``)."""
        return Readers.over(self.client, self.manager.informers)

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def wait_for_verdict(self, *, namespace: str, name: str, timeout: float = 120.0) -> JSON:
        """:func:`wait_for_verdict`, failing at once if the operator dies meanwhile."""
        waiting = asyncio.ensure_future(
            wait_for_verdict(self.client, namespace=namespace, name=name, timeout=timeout)
        )
        assert self._task is not None
        await asyncio.wait({waiting, self._task}, return_when=asyncio.FIRST_COMPLETED)
        if not waiting.done():
            waiting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await waiting
            self._raise_if_died()
        return waiting.result()

    # --- lifecycle -----------------------------------------------------------------

    async def start(self) -> None:
        """Connect, start informers and controllers; return once caches synced."""
        if self._task is not None:
            raise RuntimeError("the embedded operator is already running")
        self.metrics = EngineMetrics()
        self._client = await ApiServerClient.connect(
            self.kubeconfig, options=self.client_options, metrics=self.metrics
        )
        try:
            self._manager = Manager(
                self._client, options=self.manager_options, metrics=self.metrics
            )
            for registration in operator_registrations(
                manager=self._manager,
                options=self.run_options,
                served_namespaces=self.served_namespaces,
                fanout_options=self.fanout_options,
                attestation_key_secret=self.attestation_key_secret,
            ):
                self._manager.add_controller(registration)
            self._stop = asyncio.Event()
            self._task = asyncio.create_task(self._manager.run(self._stop), name="glimmer-operator")
            self.starts += 1
            async with asyncio.timeout(self.start_timeout):
                while not self._manager.controllers_running:
                    if self._task.done():
                        self._raise_if_died()
                        raise OperatorFailedError("the operator returned before it started")
                    await asyncio.sleep(0.05)
        except BaseException:
            await self.stop(crash=True)
            raise

    async def stop(self, *, crash: bool = False) -> None:
        """Stop as SIGTERM would (drain, then close); ``crash`` cancels instead.

        Raises :class:`OperatorFailedError` if the operator had already died on its own
        (unless ``crash``, which is for tests that break it on purpose).
        """
        task, self._task = self._task, None
        died: BaseException | None = None
        if task is not None:
            if task.done() and not task.cancelled():
                died = task.exception()
            if crash:
                task.cancel()
            elif self._stop is not None:
                self._stop.set()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._client is not None:
            await self._client.close()
        self._client = None
        self._manager = None
        if died is not None and not crash:
            raise OperatorFailedError(f"the embedded operator died: {died!r}") from died

    def _raise_if_died(self) -> None:
        task = self._task
        if task is not None and task.done():
            cause = None if task.cancelled() else task.exception()
            raise OperatorFailedError(f"the embedded operator stopped: {cause!r}") from cause

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()
