"""The operator: every controller `glimmer manager` runs, wired in one place.

The CLI (`glimmer manager`), the embedded operator of `glimmer.testing` and our own
tests all call :func:`operator_registrations`, so what a test runs is what ships.

Read policy. Reconcilers get :class:`~glimmer.engine.Readers`: ``cached`` over this
manager's informers (runs, runner pods by run, nodes by cordon owner) and ``live``.
The rules that require a live read, and why a cached one would be wrong:

- E6/E10/E12 (capture of prior schedulability, cordon and release): the node is read
  live before its stamp or flag is written. A cached node lags our own writes, so our
  own fresh cordon would look pre-existing and be recorded as the prior state.
- E11 (heat marker): written only if absent or ours with an earlier expiry, decided
  on the live node read of E10 for the same reason.
- E19 (3)/E20 (the release scan): every node stamped by this run, listed live, so a
  stamp written a moment ago is not missed and left on the node forever.
- E3 (admission): all runs in all namespaces, listed live: a just-started run missing
  from the cache would let two runs take the same nodes.
- E21/E22 (the reaper's owner lookup): a run missing from a stale cache must never be
  taken as gone, since reaping a live run's cordon hands a hot node back.
- H (read back after the status write, and the pod list right after a create): the
  status write's answer is the read-back; the pods of a run are listed live after a
  create, so a pod we just created never looks vanished (and is never created twice).

- F1/F4 (rendezvous Services): read live by name, never cached (no Service informer:
  a run reads only its own attempt's Service, once at launch and once at delete), since
  one found under its deterministic name is used only when it is provably the run's.
  The manager's verbs on ``services``: get, create, delete (namespaced).
- E21 inside the fingerprint pass: the reaper runs first in every NodeFingerprint pass
  (the design's "cordon reaper in the fingerprint controller"), with the reads above.
- J5 (schedules): a schedule's owned runs are listed live before a tick fires, so a run
  created a moment ago counts as active under Forbid.

- Served by label (``--serve-namespace-selector``): a namespace's labels come from the
  selector-filtered Namespace cache; one missing from it is read live before its run is
  refused, since the refusal ends the run and a namespace labelled a moment ago may not
  have reached the cache yet. Serving still needs the labels positively read.

- E18 (Graceful cancel): the run's pods are listed live, since a cache lagging a pod's
  start would have it killed as never started.

Everything else reads the cache (the run itself, its pods by index, profiles, tests,
fingerprints, the target selector's nodes, the reaper's first look), through
``glimmer.controllers.run.reads.RunReads``: a read no cache covers, and a cached "not
found", are made live; a cordon is placed only from a run view confirmed live, and a
release is decided on a live pod list.
"""

from __future__ import annotations

import dataclasses
from typing import Final

from glimmer.controllers.fingerprint import (
    FingerprintOptions,
    VerdictMetrics,
    fingerprint_controller,
)
from glimmer.controllers.run.context import RunOptions, now_utc
from glimmer.controllers.run.delivery import Deliverer, SinkDeliverer
from glimmer.controllers.run.setup import run_controller
from glimmer.controllers.schedule import schedule_controller
from glimmer.engine import ControllerRegistration, Manager, Readers
from glimmer.sinks import FanoutOptions, RunExporter, SinkFanout
from glimmer.sinks.attestation import EnvelopeSigner, KeySource

#: Runs reconciled at once: enough that a fleet of small (Pair) runs is not queued
#: behind a few in-flight passes, few enough that their passes' copies stay small (100
#: one-pair runs on the bench: 4 workers 17.6 s and 80 MiB, 16 16.9 s and 91 MiB, 64
#: 25.6 s and 117 MiB; docs/performance-links.md).
RUN_WORKERS: Final = 16
#: Nodes whose NodeFingerprint is reconciled at once.
FINGERPRINT_WORKERS: Final = 4


def operator_registrations(
    *,
    manager: Manager,
    options: RunOptions,
    served_namespaces: frozenset[str] | None,
    readers: Readers | None = None,
    deliverer: Deliverer | None = None,
    run_workers: int = RUN_WORKERS,
    fingerprint_workers: int = FINGERPRINT_WORKERS,
    cluster_name: str = "",
    fanout_options: FanoutOptions | None = None,
    max_verdict_age_seconds: int | None = None,
    attestation_key_secret: tuple[str, str] | None = None,
) -> list[ControllerRegistration]:
    """The BurnInRun, NodeFingerprint (with the orphan-stamp reaper inside, E21) and
    BurnInSchedule controllers, for ``manager``.

    They share no memory: each decides from the cluster (admission reads every run
    live, E3/E22; ``maxConcurrentNodes`` counts the run's own status and pods, E9).
    ``served_namespaces`` are the namespaces whose runs are honoured (None: all); it
    becomes ``options.served_namespaces``. To serve by label instead, pass None here and
    set ``options.served_namespace_selector``: the run controller then also watches the
    Namespaces carrying those labels (and needs ``namespaces: get, list, watch``
    cluster-wide). ``readers`` default to the cached reader
    over ``manager``'s informers and the live reader over its client. A run's state on
    ``/metrics`` is the Prometheus sink's ``burnin_*`` families alone (one family per
    fact, L9); the operator serves no second copy of them.

    ``deliverer`` defaults to the sinks (:class:`SinkDeliverer`): envelopes to each run's
    pinned BurnInSinks, with the Prometheus sink's ``burnin_*`` collector registered on
    the manager's registry beside the engine's families. ``cluster_name`` is
    ``--cluster-name`` (envelopes carry no cluster block without it);
    ``fanout_options`` the delivery timings (default 15 s budget, 2 attempts 1 s apart).

    Fingerprints live in ``options.operator_namespace``; ``max_verdict_age_seconds`` is
    the default verdict age limit for fingerprints without their own (None: no limit).
    The verdict metric (``glimmer_node_verdict``) goes to the manager's registry.
    ``attestation_key_secret`` (namespace, name): the Secret whose ed25519 key signs each
    node's verdict (docs/attestations.md); None signs nothing.

    ``run_workers`` runs are reconciled at once (one key never twice), on the one event
    loop: a pass mostly waits on the apiserver, so many small runs want several workers,
    or each waits behind the passes queued ahead of it; each in-flight pass holds its
    own copies, so more workers cost memory (``RUN_WORKERS``).
    """
    client = manager.client
    exporter: RunExporter | None = None
    if deliverer is None:
        exporter = RunExporter().register(manager.metrics.registry)
        deliverer = SinkDeliverer(
            fanout=SinkFanout(
                client=client,
                exporter=exporter,
                options=fanout_options or FanoutOptions(),
                signer=EnvelopeSigner(
                    keys=KeySource(client=client, secret=attestation_key_secret), now=now_utc
                )
                if attestation_key_secret is not None
                else None,
            ),
            now=now_utc,
            cluster_name=cluster_name,
        )
    readers = readers if readers is not None else Readers.over(client, manager.informers)
    return [
        run_controller(
            client=client,
            namespace=manager.options.namespace,
            operator_namespace=options.operator_namespace,
            options=dataclasses.replace(options, served_namespaces=served_namespaces),
            deliverer=deliverer,
            workers=run_workers,
            readers=readers,
            exporter=exporter,
        ),
        fingerprint_controller(
            client=client,
            readers=readers,
            options=FingerprintOptions(
                operator_namespace=options.operator_namespace,
                max_verdict_age_seconds=max_verdict_age_seconds,
                runs_namespace=manager.options.namespace,
                attestation_key_secret=attestation_key_secret,
            ),
            runs_namespace=manager.options.namespace,
            metrics=VerdictMetrics().register(manager.metrics.registry),
            workers=fingerprint_workers,
        ),
        schedule_controller(
            client=client,
            readers=readers,
            operator_namespace=options.operator_namespace,
            namespace=manager.options.namespace,
        ),
    ]
