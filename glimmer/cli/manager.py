"""`glimmer manager`: the operator process (one replica of the Deployment).

Flags mirror a kubebuilder manager's so manifests and runbooks read the same.
Exit status is the contract with the Deployment: 0 after a requested stop
(SIGTERM/SIGINT, drained within the grace period), 1 when the lease was lost
or caches never synced, so the pod restarts as a standby instead of
reconciling on state it can no longer trust.

Webhook destinations are guarded (``--sink-allow``, ``--cluster-cidr``; see
:mod:`glimmer.sinks.destinations`): the manager adds the apiserver it talks to (its
kubeconfig or in-cluster host, resolved at start, and ``$KUBERNETES_SERVICE_HOST``) to
what it refuses, so a BurnInSink cannot make it POST to the control plane.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
from pathlib import Path

import click
import structlog

from glimmer.controllers.fingerprint.attestation import parse_secret_ref
from glimmer.controllers.kit.names import label_key_problem, label_value_problem
from glimmer.controllers.operator import RUN_WORKERS, operator_registrations
from glimmer.controllers.run.context import RunOptions
from glimmer.controllers.run.pods import RUNNER_SERVICE_ACCOUNT
from glimmer.engine import (
    ApiServerClient,
    CacheSyncTimeoutError,
    ClientOptions,
    EngineMetrics,
    LeadershipLostError,
    Manager,
    ManagerOptions,
    configure_logging,
    load_configuration,
)
from glimmer.sinks import FanoutOptions
from glimmer.sinks.destinations import (
    DestinationGuard,
    manager_guard,
    parse_allow,
    parse_cluster_cidrs,
)

_SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
_DEFAULT_LEADER_NAMESPACE = "glimmer-system"
_NAMESPACE_NAME = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SERVICE_ACCOUNT_NAME = re.compile(rf"{_DNS_LABEL}(\.{_DNS_LABEL})*")
ALL_NAMESPACES = "*"

log = structlog.get_logger("glimmer.cli.manager")


def _leader_namespace(explicit: str | None) -> str:
    if explicit:
        return explicit
    with contextlib.suppress(OSError):
        return _SERVICE_ACCOUNT_NAMESPACE.read_text().strip() or _DEFAULT_LEADER_NAMESPACE
    return _DEFAULT_LEADER_NAMESPACE


def operator_namespace() -> str:
    """The operator's own namespace: $POD_NAMESPACE, else the pod's, else glimmer-system."""
    return os.environ.get("POD_NAMESPACE") or _leader_namespace(None)


def parse_served_namespaces(text: str) -> frozenset[str] | None:
    """``--serve-namespaces``: "a,b" -> {"a", "b"}; "*" -> None (every namespace).

    Refused rather than guessed: an empty list, a name that is not a namespace name,
    and "*" mixed with names (serving everything and a list at once means neither).
    """
    names = [part.strip() for part in text.split(",")]
    if names == [ALL_NAMESPACES]:
        return None
    if ALL_NAMESPACES in names:
        raise ValueError(f"{text!r}: '*' (every namespace) cannot be combined with names")
    if not any(names) or not all(names):
        raise ValueError(f"{text!r}: give comma-separated namespace names, or '*'")
    bad = [n for n in names if not _NAMESPACE_NAME.fullmatch(n)]
    if bad:
        raise ValueError(f"{text!r}: not namespace names: {', '.join(bad)}")
    return frozenset(names)


def served_namespaces_of(*, flag: str | None, namespace: str | None) -> frozenset[str] | None:
    """What ``--serve-namespaces`` means, its default included (see the flag's help)."""
    if flag is None:
        return frozenset({namespace or operator_namespace()})
    return parse_served_namespaces(flag)


def parse_namespace_selector(text: str) -> dict[str, str]:
    """``--serve-namespace-selector``: "k1=v1,k2=v2" -> {"k1": "v1", "k2": "v2"}.

    Equality terms only, each a valid label key and value: the chart renders
    ``matchLabels`` this way, and a set-based or negative term (``!=``, ``in (...)``,
    ``!k``, a bare ``k``) could serve namespaces nobody labelled (``k!=v`` matches every
    namespace without ``k``), so it is refused rather than read. Empty is refused too.
    """
    terms: dict[str, str] = {}
    raw_terms = [part.strip() for part in text.split(",")]
    if not any(raw_terms):
        raise ValueError(f"{text!r}: give label=value terms, comma-separated")
    for term in raw_terms:
        if not term:
            raise ValueError(f"{text!r}: an empty term (stray ',')")
        if "!=" in term or "(" in term or ")" in term or "==" in term or " " in term:
            raise ValueError(
                f"{text!r}: {term!r} is not an equality term; only label=value terms "
                "(matchLabels) are served, never !=, ==, in (...), notin or exists"
            )
        key, equals, value = term.partition("=")
        if not equals:
            raise ValueError(f"{text!r}: {term!r} names no value; write {term}=<value>")
        problem = label_key_problem(key)
        if problem is not None:
            raise ValueError(f"{text!r}: invalid label key {key!r}: {problem}")
        problem = label_value_problem(value)
        if problem is not None:
            raise ValueError(f"{text!r}: {problem}")
        if terms.get(key, value) != value:
            raise ValueError(f"{text!r}: label {key!r} is given two values")
        terms[key] = value
    return dict(sorted(terms.items()))


def _check_selector(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> dict[str, str] | None:
    if value is None:
        return None
    try:
        return parse_namespace_selector(value)
    except ValueError as err:
        raise click.BadParameter(str(err)) from err


def _check_service_account(ctx: click.Context, param: click.Parameter, value: str) -> str:
    name = value.strip()
    if name and not (len(name) <= 253 and _SERVICE_ACCOUNT_NAME.fullmatch(name)):
        raise click.BadParameter(
            f"{value!r} is not a ServiceAccount name (a DNS subdomain: lower-case "
            "alphanumerics, '-' and '.'); give '' for the namespace's default"
        )
    return name


def _check_served(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None:
        try:
            parse_served_namespaces(value)
        except ValueError as err:
            raise click.BadParameter(str(err)) from err
    return value


def run_options_of(
    *, served_selector: dict[str, str] | None, runner_service_account: str
) -> RunOptions:
    """The run controller's options from the manager's flags (the rest at defaults)."""
    return RunOptions(
        operator_namespace=operator_namespace(),
        served_namespace_selector=served_selector,
        runner_service_account=runner_service_account.strip() or None,
    )


def _check_attestation_key(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> tuple[str, str] | None:
    if value is None or not value.strip():
        return None
    try:
        return parse_secret_ref(value, default_namespace=operator_namespace())
    except ValueError as err:
        raise click.BadParameter(str(err)) from err


def _check_sink_allow(
    ctx: click.Context, param: click.Parameter, value: tuple[str, ...]
) -> tuple[str, ...]:
    try:
        parse_allow(value)
    except ValueError as err:
        raise click.BadParameter(str(err)) from err
    return value


def _check_cluster_cidrs(
    ctx: click.Context, param: click.Parameter, value: tuple[str, ...]
) -> tuple[str, ...]:
    try:
        parse_cluster_cidrs(value)
    except ValueError as err:
        raise click.BadParameter(str(err)) from err
    return value


async def destination_guard(
    *, kubeconfig: str | None, sink_allow: tuple[str, ...], cluster_cidrs: tuple[str, ...]
) -> DestinationGuard:
    """The webhook destination guard for this manager: the flags plus the apiserver it
    talks to (the configuration's host and, in a pod, ``$KUBERNETES_SERVICE_HOST``)."""
    configuration = await load_configuration(kubeconfig)
    guard, warnings = await manager_guard(
        allow=sink_allow,
        cluster_cidrs=cluster_cidrs,
        apiserver_url=str(configuration.host or ""),
        service_host=os.environ.get("KUBERNETES_SERVICE_HOST", ""),
    )
    for warning in warnings:
        log.warning("webhook destination guard", warning=warning)
    log.info(
        "webhook destinations guarded",
        allowed=[str(n) for n in guard.allow] + list(guard.allow_hosts),
        cluster_cidrs=[str(n) for n in guard.cluster],
        apiserver=[str(a) for a in guard.apiserver] + list(guard.apiserver_hosts),
    )
    return guard


async def run_manager(
    *,
    kubeconfig: str | None,
    options: ManagerOptions,
    served_namespaces: frozenset[str] | None,
    client_options: ClientOptions | None = None,
    run_options: RunOptions | None = None,
    cluster_name: str = "",
    sink_allow: tuple[str, ...] = (),
    cluster_cidrs: tuple[str, ...] = (),
    attestation_key_secret: tuple[str, str] | None = None,
    run_workers: int = RUN_WORKERS,
) -> int:
    """Run until signalled (exit 0) or until leadership is lost (exit 1)."""
    metrics = EngineMetrics()
    guard = await destination_guard(
        kubeconfig=kubeconfig, sink_allow=sink_allow, cluster_cidrs=cluster_cidrs
    )
    client = await ApiServerClient.connect(kubeconfig, options=client_options, metrics=metrics)
    try:
        manager = Manager(client, options=options, metrics=metrics)
        registrations = operator_registrations(
            manager=manager,
            options=run_options or RunOptions(operator_namespace=operator_namespace()),
            served_namespaces=served_namespaces,
            cluster_name=cluster_name,
            fanout_options=FanoutOptions(destinations=guard),
            attestation_key_secret=attestation_key_secret,
            run_workers=run_workers,
        )
        for registration in registrations:
            manager.add_controller(registration)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        try:
            await manager.run(stop)
        except LeadershipLostError:
            log.error("leader lease lost; exiting so a standby can take over")
            return 1
        except CacheSyncTimeoutError as exc:
            log.error("caches did not sync", error=str(exc))
            return 1
        return 0
    finally:
        await client.close()


def _qps(value: float) -> float:
    """``--kube-api-qps``: at least 1, or negative (client-go's -1) for no limit; 0 and
    fractions are refused (a bucket that refills that slowly would stall a run)."""
    if value < 0:
        return -1.0
    if value < 1:
        raise click.BadParameter(f"{value} is neither at least 1 nor -1 (no limit)")
    return value


@click.command()
@click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False),
    default=None,
    help="Path to a kubeconfig; default: $KUBECONFIG, else in-cluster config.",
)
@click.option(
    "--namespace", default=None, help="Only watch this namespace (default: all namespaces)."
)
@click.option(
    "--serve-namespaces",
    "served",
    default=None,
    metavar="NS[,NS...]|*",
    callback=_check_served,
    help="Namespaces whose BurnInRuns this manager honours, comma-separated; '*' serves "
    "every namespace. A run in any other namespace ends Error with a condition saying how "
    "to allow it. Whoever may create BurnIn objects in a served namespace may cordon and "
    "load nodes. Default: the --namespace given, else the operator's own namespace "
    "($POD_NAMESPACE, else the pod's service-account namespace, else glimmer-system).",
)
@click.option(
    "--serve-namespace-selector",
    "served_selector",
    default=None,
    metavar="KEY=VALUE[,KEY=VALUE...]",
    callback=_check_selector,
    help="Serve the namespaces carrying all of these labels instead of a list "
    "(exclusive with --serve-namespaces): runs are watched in every namespace, and "
    "Namespaces are listed and watched (names and labels; needs namespaces get, list, "
    "watch cluster-wide). A namespace that loses a label unloads its runs; the "
    "operator's own namespace is never served. Equality terms only.",
)
@click.option(
    "--runner-service-account",
    default=RUNNER_SERVICE_ACCOUNT,
    show_default=True,
    callback=_check_service_account,
    help="ServiceAccount runner pods run as, in their run's namespace. It must exist "
    "there (the shipped manifests and chart create it, bound to nothing); '' runs them as "
    "the namespace's default. Runner pods never mount a token either way.",
)
@click.option(
    "--metrics-bind-address",
    default=":8080",
    show_default=True,
    help='host:port serving /metrics; "0" disables it.',
)
@click.option(
    "--health-probe-bind-address",
    default=":8081",
    show_default=True,
    help='host:port serving /healthz and /readyz; "0" disables it.',
)
@click.option(
    "--leader-elect/--no-leader-elect",
    default=True,
    show_default=True,
    help="Elect a leader on a Lease; only the leader reconciles.",
)
@click.option(
    "--leader-election-namespace",
    default=None,
    help="Namespace of the Lease (default: the pod's namespace, else glimmer-system).",
)
@click.option(
    "--leader-election-id",
    default="glimmer-manager.burnin.glimmer.ai",
    show_default=True,
    help="Name of the Lease.",
)
@click.option(
    "--graceful-shutdown-timeout",
    type=float,
    default=30.0,
    show_default=True,
    help="Seconds allowed for draining reconciles after SIGTERM.",
)
@click.option(
    "--kube-api-qps",
    type=float,
    callback=lambda _ctx, _param, value: _qps(value),
    default=ClientOptions().qps,
    show_default=True,
    help="Sustained requests per second to the apiserver, at least 1; -1 for no "
    "client-side limit (the apiserver's API Priority and Fairness still applies). "
    "See docs/performance.md for sizing.",
)
@click.option(
    "--kube-api-burst",
    type=click.IntRange(min=1),
    default=ClientOptions().burst,
    show_default=True,
    help="Requests allowed above --kube-api-qps in a burst.",
)
@click.option(
    "--max-concurrent-runs",
    "run_workers",
    type=click.IntRange(min=1),
    default=RUN_WORKERS,
    show_default=True,
    help="BurnInRuns reconciled at once (one run is never reconciled twice at once). "
    "Passes mostly wait on the apiserver, so many small runs (one per Pair) want "
    "several; each in-flight pass holds its own copies, so more cost memory.",
)
@click.option(
    "--cluster-name",
    default="",
    help="This cluster's name in every delivery envelope (cluster.name, with the "
    "kube-system namespace UID as cluster.uid). Never guessed: without it envelopes "
    "carry no cluster block.",
)
@click.option(
    "--sink-allow",
    multiple=True,
    metavar="CIDR|ADDRESS|HOST[,...]",
    callback=_check_sink_allow,
    help="Webhook destinations BurnInSinks may use although the guard would refuse "
    "them (loopback, link-local and metadata, multicast, unspecified, reserved, "
    "--cluster-cidr ranges, the apiserver): CIDRs, addresses and host names "
    "('*.svc.cluster.local' for every name under it), comma-separated, repeatable. The "
    "most specific entry wins, so allowing 10.0.0.0/8 does not open a --cluster-cidr "
    "inside it. See docs/sinks.md.",
)
@click.option(
    "--cluster-cidr",
    "cluster_cidrs",
    multiple=True,
    metavar="CIDR[,...]",
    callback=_check_cluster_cidrs,
    help="This cluster's Service and Pod CIDRs (and any other range webhooks must not "
    "reach), comma-separated, repeatable: BurnInSink webhooks there are refused unless "
    "--sink-allow permits them. The apiserver's own addresses are refused without it.",
)
@click.option(
    "--attestation-key-secret",
    default=None,
    metavar="[NAMESPACE/]NAME",
    callback=_check_attestation_key,
    help="Sign each node's verdict (an in-toto statement in a DSSE envelope, in a "
    "ConfigMap the node's burnin.glimmer.ai/attestation annotation names) with the "
    "ed25519 PEM private key under key ed25519.pem of this Secret (default namespace: the "
    "operator's). Unset: nothing is signed. See docs/attestations.md.",
)
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"]),
    default="info",
    show_default=True,
)
def manager(
    *,
    kubeconfig: str | None,
    namespace: str | None,
    served: str | None,
    served_selector: dict[str, str] | None,
    runner_service_account: str,
    metrics_bind_address: str,
    health_probe_bind_address: str,
    leader_elect: bool,
    leader_election_namespace: str | None,
    leader_election_id: str,
    graceful_shutdown_timeout: float,
    kube_api_qps: float,
    kube_api_burst: int,
    run_workers: int,
    cluster_name: str,
    sink_allow: tuple[str, ...],
    cluster_cidrs: tuple[str, ...],
    attestation_key_secret: tuple[str, str] | None,
    log_level: str,
) -> None:
    """Run the Glimmer controller manager."""
    if served is not None and served_selector is not None:
        raise click.UsageError(
            "--serve-namespaces and --serve-namespace-selector are mutually exclusive: "
            "serve a list of namespaces or the namespaces carrying labels, not both"
        )
    configure_logging(level=log_level)
    options = ManagerOptions(
        namespace=namespace,
        metrics_bind_address=metrics_bind_address,
        health_probe_bind_address=health_probe_bind_address,
        leader_elect=leader_elect,
        leader_election_namespace=_leader_namespace(leader_election_namespace),
        leader_election_id=leader_election_id,
        graceful_shutdown_timeout=graceful_shutdown_timeout,
    )
    client_options = ClientOptions(qps=kube_api_qps, burst=kube_api_burst)
    run_options = run_options_of(
        served_selector=served_selector, runner_service_account=runner_service_account
    )
    served_namespaces = (
        None
        if served_selector is not None
        else served_namespaces_of(flag=served, namespace=namespace)
    )
    if run_options.namespace_selector is not None:
        log.info("serving BurnInRuns", namespace_selector=run_options.namespace_selector)
    else:
        log.info(
            "serving BurnInRuns",
            namespaces=sorted(served_namespaces)
            if served_namespaces is not None
            else ALL_NAMESPACES,
        )
    sys.exit(
        asyncio.run(
            run_manager(
                kubeconfig=kubeconfig,
                options=options,
                served_namespaces=served_namespaces,
                run_options=run_options,
                client_options=client_options,
                cluster_name=cluster_name.strip(),
                sink_allow=sink_allow,
                cluster_cidrs=cluster_cidrs,
                attestation_key_secret=attestation_key_secret,
                run_workers=run_workers,
            )
        )
    )
