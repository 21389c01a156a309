"""A real etcd + kube-apiserver on loopback, for tests and ``glimmer dev up``.

The flags follow controller-runtime's envtest, so behaviour seen here is the behaviour of
a cluster: RBAC authorisation with client-certificate authentication, service-account
tokens signed by a real key (TokenRequest works), and kubelet-client certificates so the
apiserver can proxy ``pods/log`` to a (simulated) kubelet. By default there is no
controller-manager and no scheduler: namespaces stay ``Terminating`` after deletion, owner
references do not cascade, and pods are bound by the simulated nodes' scheduler (see
``glimmer.sim``). With ``controller_manager=True`` a kube-controller-manager (built from
the same k8s.io/kubernetes module) runs beside the apiserver, and the ServiceAccount
admission plugin is on, as in a real cluster: Deployments get ReplicaSets and pods, every
namespace gets its ``default`` ServiceAccount and ``kube-root-ca.crt``, pods get the
projected ``kube-api-access-*`` volume, and deletion cascades. That is the cluster an
installed operator (chart or kustomize) runs in.

The apiserver's watch cache is off by default. With it on, a restarted apiserver answers
every watch resumed from before the restart with 410 (its cache starts empty), and a watch
served from the cache never sees an etcd compaction; with it off, :meth:`restart_apiserver`
and :meth:`compact_etcd` test two different things - resume succeeds after a restart,
and is refused with 410 Gone after a compaction - as the engine's tests need.

The control plane is synchronous on purpose: it is driven from pytest fixtures and a CLI,
and blocking there keeps it independent of whichever event loop a test uses.

It is private by default, since ``glimmer dev up`` runs on shared machines: etcd serves
TLS only and requires a client certificate from the etcd CA (which only the apiserver and
this class hold; its peer port likewise), the apiserver verifies the kubelets it proxies
logs from against the cluster CA (``--kubelet-certificate-authority``) and presents its
kubelet-client certificate to them, and the simulated kubelets (:attr:`kubelet_tls`)
require that certificate. Every key file is 0600 from its first byte and the work
directory is 0700 (``_pki``). Another local user can neither read runs from etcd nor
serve the apiserver forged pod logs.
"""

from __future__ import annotations

import base64
import functools
import json
import shutil
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import yaml

from glimmer.testing import _pki, _process
from glimmer.testing.assets import Assets, find_assets, require_controller_manager
from glimmer.testing.kubeconfig import write_kubeconfig
from glimmer.testing.sim_nodes import KubeletTLS

SERVICE_CLUSTER_IP_RANGE = "10.0.0.0/24"
SERVICE_ACCOUNT_ISSUER = "https://kubernetes.default.svc.cluster.local"
_TOKEN_SECONDS = 24 * 3600


class KubectlError(subprocess.CalledProcessError):
    """A kubectl call failed; ``str()`` carries its stderr, which is what one needs."""

    def __str__(self) -> str:
        return f"{super().__str__()}\nstderr: {self.stderr}"


class ControlPlane:
    """etcd + kube-apiserver with an admin kubeconfig, started by :meth:`start`.

    Use as a context manager, or call :meth:`start` / :meth:`stop`. Children are tied to
    this process (see ``_process``), so even a SIGKILLed test run leaves none behind.
    """

    def __init__(
        self,
        *,
        assets: Assets | None = None,
        work_dir: Path | None = None,
        extra_apiserver_args: tuple[str, ...] = (),
        watch_cache: bool = False,
        controller_manager: bool = False,
        start_timeout: float = 90.0,
    ) -> None:
        """Configure, start nothing.

        ``assets``: binaries, default :func:`find_assets`. ``work_dir``: certificates,
        etcd data, logs and kubeconfigs; default a fresh temp dir removed by :meth:`stop`
        (a given one is kept). ``extra_apiserver_args``: appended to the apiserver flags.
        ``watch_cache``: the apiserver watch cache, default off (see module docstring).
        ``controller_manager``: run kube-controller-manager too (see module docstring).
        ``start_timeout``: seconds each process may take to become ready, default 90.
        """
        self._watch_cache = watch_cache
        self._with_controller_manager = controller_manager
        self._controller_manager: subprocess.Popen[bytes] | None = None
        self._assets = assets
        self._given_work_dir = work_dir
        self._extra_apiserver_args = extra_apiserver_args
        self._start_timeout = start_timeout
        self._etcd: subprocess.Popen[bytes] | None = None
        self._apiserver: subprocess.Popen[bytes] | None = None
        self.work_dir: Path = work_dir or Path("/nonexistent")
        self.kubeconfig_path: Path = self.work_dir / "admin.kubeconfig"
        self.server: str = ""
        self.etcd_url: str = ""
        #: Seconds :meth:`start` took to reach a ready apiserver (for reporting).
        self.startup_seconds: float = 0.0
        self._apiserver_argv: list[str] = []
        self._ssl: ssl.SSLContext | None = None
        self._etcd_ssl: ssl.SSLContext | None = None

    # -- lifecycle --------------------------------------------------------------------

    @property
    def assets(self) -> Assets:
        if self._assets is None:
            self._assets = find_assets()
        return self._assets

    @property
    def assets_dir(self) -> Path:
        return self.assets.directory

    @property
    def ca_path(self) -> Path:
        return self.work_dir / "pki" / "ca.crt"

    @property
    def etcd_ca_path(self) -> Path:
        """The CA etcd trusts for clients (and peers); only etcd's own certificates
        are from it, so no cluster credential opens etcd."""
        return self.work_dir / "pki" / "etcd" / "ca.crt"

    @property
    def kubelet_tls(self) -> KubeletTLS:
        """What a simulated kubelet (or KWOK) serves with so that this apiserver, which
        verifies kubelets, reads its logs, and whom it lets in (this apiserver)."""
        return KubeletTLS(
            cert=self._kubelet_serving.cert, key=self._kubelet_serving.key, client_ca=self.ca_path
        )

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> None:
        assets = self.assets  # fail before creating anything if binaries are missing
        began = time.monotonic()
        if self._given_work_dir is None:
            self.work_dir = Path(tempfile.mkdtemp(prefix="glimmer-cp-"))
        else:
            self.work_dir = self._given_work_dir
            self.work_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.kubeconfig_path = self.work_dir / "admin.kubeconfig"
        try:
            self._prepare_pki()
            _retry_port_races(lambda: self._start_etcd(assets))

            def apiserver() -> None:
                self._apiserver_argv = self._apiserver_args(assets)
                self._start_apiserver()

            _retry_port_races(apiserver)
            if self._with_controller_manager:
                self._start_controller_manager(assets)
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - began

    def stop(self) -> None:
        for process in (self._controller_manager, self._apiserver, self._etcd):
            if process is not None:
                _process.stop(process)
        self._controller_manager = self._apiserver = self._etcd = None
        if self._given_work_dir is None and self.work_dir.exists():
            shutil.rmtree(self.work_dir, ignore_errors=True)

    def restart_apiserver(self) -> None:
        """Stop and start kube-apiserver on the same port and etcd (watch-resume tests)."""
        if self._apiserver is None:
            raise RuntimeError("control plane is not running")
        _process.stop(self._apiserver)
        self._apiserver = None
        self._start_apiserver()

    @property
    def pids(self) -> list[int]:
        processes = (self._etcd, self._apiserver, self._controller_manager)
        return [p.pid for p in processes if p is not None]

    # -- etcd -------------------------------------------------------------------------

    def _start_etcd(self, assets: Assets) -> None:
        client, peer = _process.free_port(), _process.free_port()
        self.etcd_url = f"https://127.0.0.1:{client}"
        peer_url = f"https://127.0.0.1:{peer}"
        log = self.work_dir / "etcd.log"
        shutil.rmtree(self.work_dir / "etcd", ignore_errors=True)  # from a failed attempt
        self._etcd = _process.spawn(
            [
                str(assets.etcd),
                "--name=glimmer-test",
                f"--data-dir={self.work_dir / 'etcd'}",
                f"--listen-client-urls={self.etcd_url}",
                f"--advertise-client-urls={self.etcd_url}",
                f"--cert-file={self._etcd_server.cert}",
                f"--key-file={self._etcd_server.key}",
                "--client-cert-auth=true",
                f"--trusted-ca-file={self.etcd_ca_path}",
                # One member, but it still listens for peers: as private as the clients.
                f"--listen-peer-urls={peer_url}",
                f"--initial-advertise-peer-urls={peer_url}",
                f"--initial-cluster=glimmer-test={peer_url}",
                f"--peer-cert-file={self._etcd_server.cert}",
                f"--peer-key-file={self._etcd_server.key}",
                "--peer-client-cert-auth=true",
                f"--peer-trusted-ca-file={self.etcd_ca_path}",
                "--unsafe-no-fsync",
                "--log-level=warn",
            ],
            log_path=log,
        )
        _process.wait_for(
            "etcd",
            lambda: _http_ok(f"{self.etcd_url}/health", context=self._etcd_ssl),
            timeout=self._start_timeout,
            process=self._etcd,
            log_path=log,
        )

    def _etcd_call(self, endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(
            f"{self.etcd_url}/v3/{endpoint}",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30, context=self._etcd_ssl) as response:
            result: dict[str, Any] = json.load(response)
        return result

    def etcd_revision(self) -> int:
        """etcd's current revision (what apiserver resourceVersions are made of)."""
        header = self._etcd_call("kv/range", {"key": base64.b64encode(b"/").decode()})
        return int(header["header"]["revision"])

    def compact_etcd(self) -> None:
        """Compact etcd history up to its current revision, physically.

        Afterwards a watch from an older resourceVersion that reaches etcd is answered
        ``410 Gone`` (``Expired``), as it is in a cluster after the apiserver's periodic
        compaction.
        """
        self._etcd_call("kv/compaction", {"revision": self.etcd_revision(), "physical": True})

    # -- kube-apiserver -----------------------------------------------------------------

    def _prepare_pki(self) -> None:
        ca = _pki.CertificateAuthority(self.work_dir / "pki")
        self._serving = ca.issue(
            name="apiserver",
            common_name="kube-apiserver",
            dns_names=[
                "localhost",
                "kubernetes",
                "kubernetes.default",
                "kubernetes.default.svc",
                "kubernetes.default.svc.cluster.local",
            ],
            ip_addresses=["127.0.0.1", "10.0.0.1"],
            server=True,
        )
        self._admin = ca.issue(
            name="admin", common_name="glimmer-admin", organizations=["system:masters"], client=True
        )
        self._kubelet_client = ca.issue(
            name="apiserver-kubelet-client",
            common_name="kube-apiserver-kubelet-client",
            organizations=["system:masters"],
            client=True,
        )
        # Every simulated kubelet and KWOK listens on 127.0.0.1 (their nodes' InternalIP).
        self._kubelet_serving = ca.issue(
            name="kubelet-serving",
            common_name="glimmer-sim-kubelet",
            dns_names=["localhost"],
            ip_addresses=["127.0.0.1"],
            server=True,
        )
        self._sa_key = self.work_dir / "pki" / "service-account.key"
        _pki.write_service_account_key(self._sa_key)
        context = ssl.create_default_context(cafile=str(ca.cert_path))
        context.load_cert_chain(str(self._admin.cert), str(self._admin.key))
        self._ssl = context
        etcd_ca = _pki.CertificateAuthority(self.etcd_ca_path.parent, common_name="glimmer-etcd-ca")
        self._etcd_server = etcd_ca.issue(
            name="server",
            common_name="glimmer-etcd",
            dns_names=["localhost"],
            ip_addresses=["127.0.0.1"],
            server=True,
            client=True,  # also its peer certificate, which is both
        )
        # The apiserver's etcd credential; this class uses it too (revision, compaction).
        self._etcd_client = etcd_ca.issue(
            name="apiserver-etcd-client", common_name="kube-apiserver-etcd-client", client=True
        )
        etcd_context = ssl.create_default_context(cafile=str(etcd_ca.cert_path))
        etcd_context.load_cert_chain(str(self._etcd_client.cert), str(self._etcd_client.key))
        self._etcd_ssl = etcd_context

    def _apiserver_args(self, assets: Assets) -> list[str]:
        port = _process.free_port()
        self.server = f"https://127.0.0.1:{port}"
        return [
            str(assets.kube_apiserver),
            "--advertise-address=127.0.0.1",
            "--bind-address=127.0.0.1",
            f"--secure-port={port}",
            f"--etcd-servers={self.etcd_url}",
            f"--etcd-cafile={self.etcd_ca_path}",
            f"--etcd-certfile={self._etcd_client.cert}",
            f"--etcd-keyfile={self._etcd_client.key}",
            f"--cert-dir={self.work_dir / 'apiserver-certs'}",
            f"--tls-cert-file={self._serving.cert}",
            f"--tls-private-key-file={self._serving.key}",
            f"--client-ca-file={self.ca_path}",
            "--authorization-mode=RBAC",
            f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
            f"--service-account-issuer={SERVICE_ACCOUNT_ISSUER}",
            f"--service-account-key-file={self._sa_key}",
            f"--service-account-signing-key-file={self._sa_key}",
            # Without a controller-manager no "default" ServiceAccount is ever created, and
            # the admission plugin would reject every pod for lacking it (as envtest does).
            *(
                ()
                if self._with_controller_manager
                else ("--disable-admission-plugins=ServiceAccount",)
            ),
            "--allow-privileged=true",
            f"--kubelet-client-certificate={self._kubelet_client.cert}",
            f"--kubelet-client-key={self._kubelet_client.key}",
            # Verify the kubelet's serving certificate: a process that took over a
            # kubelet's port cannot serve the apiserver (and so the operator) a log.
            f"--kubelet-certificate-authority={self.ca_path}",
            # Simulated kubelets are all reachable on their node's loopback InternalIP.
            "--kubelet-preferred-address-types=InternalIP",
            "--profiling=false",
            f"--watch-cache={str(self._watch_cache).lower()}",
            *self._extra_apiserver_args,
        ]

    def _start_apiserver(self) -> None:
        log = self.work_dir / "kube-apiserver.log"
        self._apiserver = _process.spawn(self._apiserver_argv, log_path=log)
        _process.wait_for(
            "kube-apiserver /readyz",
            lambda: self._get_ok("/readyz"),
            timeout=self._start_timeout,
            process=self._apiserver,
            log_path=log,
        )
        # /readyz can pass a moment before the bootstrap controller creates "default".
        _process.wait_for(
            "namespace default",
            lambda: self._get_ok("/api/v1/namespaces/default"),
            timeout=self._start_timeout,
            process=self._apiserver,
            log_path=log,
        )
        write_kubeconfig(
            self.kubeconfig_path,
            server=self.server,
            ca_cert=self.ca_path,
            user="glimmer-admin",
            client_cert=self._admin.cert,
            client_key=self._admin.key,
        )

    def _start_controller_manager(self, assets: Assets) -> None:
        """kube-controller-manager as cluster admin, its default controllers on.

        ``--root-ca-file`` is what it publishes as every namespace's ``kube-root-ca.crt``
        (the CA pods trust the apiserver with); the service-account key lets its token
        controller run. It is ready once ``default`` has both its ServiceAccount and that
        ConfigMap, which is what a pod's in-cluster identity needs.
        """
        binary = require_controller_manager(assets)
        log = self.work_dir / "kube-controller-manager.log"
        argv = [
            str(binary),
            f"--kubeconfig={self.kubeconfig_path}",
            # No port at all: nothing on this machine can reach it, which keeps the
            # harness private (see the module docstring).
            "--secure-port=0",
            "--leader-elect=false",
            f"--root-ca-file={self.ca_path}",
            f"--service-account-private-key-file={self._sa_key}",
            "--use-service-account-credentials=false",
            f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
            "--profiling=false",
        ]
        self._controller_manager = _process.spawn(argv, log_path=log)
        for what, path in (
            (
                "ServiceAccount default/default",
                "/api/v1/namespaces/default/serviceaccounts/default",
            ),
            (
                "ConfigMap default/kube-root-ca.crt",
                "/api/v1/namespaces/default/configmaps/kube-root-ca.crt",
            ),
        ):
            _process.wait_for(
                what,
                functools.partial(self._get_ok, path),
                timeout=self._start_timeout,
                process=self._controller_manager,
                log_path=log,
            )

    def _get_ok(self, path: str) -> bool:
        return _http_ok(f"{self.server}{path}", context=self._ssl)

    # -- clients ------------------------------------------------------------------------

    def request(self, method: str, path: str, *, body: object = None) -> Any:
        """One admin HTTP request (JSON in, JSON out); an error status raises HTTPError."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.server}{path}",
            data=data,
            method=method,
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=60, context=self._ssl) as response:
            text = response.read()
        return json.loads(text) if text else None

    def _namespaced_collections(self) -> list[str]:
        """API paths (with ``{namespace}``) of every namespaced resource one can
        delete by collection, from one aggregated-discovery request per API root."""
        accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
        paths = []
        for root in ("/api", "/apis"):
            request = urllib.request.Request(f"{self.server}{root}", headers={"Accept": accept})
            with urllib.request.urlopen(request, timeout=60, context=self._ssl) as response:
                discovery = json.load(response)
            for group in discovery.get("items") or []:
                name = group.get("metadata", {}).get("name", "")
                versions = group.get("versions") or []
                if not versions:
                    continue
                version = versions[0]
                prefix = f"/apis/{name}/{version['version']}" if name else "/api/v1"
                for resource in version.get("resources") or []:
                    if resource.get("scope") == "Namespaced" and "deletecollection" in (
                        resource.get("verbs") or []
                    ):
                        paths.append(f"{prefix}/namespaces/{{namespace}}/{resource['resource']}")
        return paths

    def delete_namespace(self, name: str) -> None:
        """Delete a namespace *and everything in it*, pods at once.

        With no namespace controller a deleted namespace stays ``Terminating`` with its
        objects, which cluster-wide lists would keep seeing; so each namespaced
        collection is deleted first (pods with grace period 0: their nodes may be gone).
        """
        for template in self._namespaced_collections():
            path = template.format(namespace=name)
            body: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions"}
            if path.endswith("/pods"):
                body["gracePeriodSeconds"] = 0
            try:
                self.request("DELETE", path, body=body)
            except urllib.error.HTTPError as error:
                # 404/405: gone, or no collection delete for this resource after all.
                if error.code not in (404, 405):
                    raise
        try:
            self.request("DELETE", f"/api/v1/namespaces/{name}")
        except urllib.error.HTTPError as error:
            if error.code != 404:
                raise

    def kubectl(
        self, *args: str, input: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run kubectl as cluster admin; with ``check`` a failure raises :class:`KubectlError`."""
        return self._kubectl(self.kubeconfig_path, *args, input=input, check=check)

    def wait_established(self, *crds: str, timeout_seconds: float = 60.0) -> None:
        """``kubectl wait --for=condition=Established`` on ``crds`` ("crd/NAME" each).

        A CRD read before the apiserver wrote its first status has no
        ``status.conditions``, and kubectl gives up at once on it ("accessor error: <nil>")
        instead of waiting: that one answer is asked again, every other failure raised."""
        deadline = time.monotonic() + timeout_seconds
        while True:
            result = self.kubectl(
                "wait", "--for=condition=Established", f"--timeout={timeout_seconds:.0f}s",
                *crds, check=False,
            )  # fmt: skip
            if result.returncode == 0:
                return
            if "accessor error" not in result.stderr or time.monotonic() > deadline:
                raise KubectlError(result.returncode, result.args, result.stdout, result.stderr)
            time.sleep(0.2)

    def _kubectl(
        self, kubeconfig: Path, *args: str, input: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        argv = [str(self.assets.kubectl), f"--kubeconfig={kubeconfig}", *args]
        result = subprocess.run(
            argv, input=input, capture_output=True, text=True, timeout=120, check=False
        )
        if check and result.returncode != 0:
            raise KubectlError(result.returncode, argv, result.stdout, result.stderr)
        return result

    def mint_service_account_kubeconfig(self, *, namespace: str, name: str) -> Path:
        """A kubeconfig acting as ServiceAccount ``namespace/name`` via a TokenRequest token.

        The ServiceAccount is created if it does not exist (the namespace must). Requests
        made with it are authorised by RBAC exactly as the deployed operator's would be.
        """
        account = {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": name, "namespace": namespace},
        }
        self.kubectl("apply", "-f", "-", input=yaml.safe_dump(account))
        token = self.kubectl(
            "create", "token", name, f"--namespace={namespace}", f"--duration={_TOKEN_SECONDS}s"
        ).stdout.strip()
        return write_kubeconfig(
            self.work_dir / "serviceaccounts" / f"{namespace}.{name}.kubeconfig",
            server=self.server,
            ca_cert=self.ca_path,
            user=f"system:serviceaccount:{namespace}:{name}",
            token=token,
            namespace=namespace,
        )


def _retry_port_races(start: Callable[[], None], *, attempts: int = 3) -> None:
    """Run ``start`` again (it picks new ports) if a port was taken between choosing and
    binding it, which happens when many control planes start side by side."""
    for attempt in range(attempts):
        try:
            start()
            return
        except ChildProcessError as error:
            if "address already in use" not in str(error) or attempt == attempts - 1:
                raise


def _http_ok(url: str, *, context: ssl.SSLContext | None = None) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5, context=context) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False
