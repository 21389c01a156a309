"""Resident memory of a manager before it talks to a cluster. Prints a table.

    PYTHONPATH=$PWD .venv/bin/python bench/engine/import_rss.py

Each stage runs in a fresh interpreter (this one's, with its environment) and prints
VmRSS and VmHWM from /proc/self/status and how many modules are loaded:

* ``interpreter``: Python alone;
* ``import manager``: ``import glimmer.cli.manager``, what ``glimmer manager`` imports
  before it parses a flag;
* ``built, not connected``: what ``run_manager`` does before ``Manager.run``: the
  kubeconfig read (a throwaway one, nothing listens at its server), the webhook
  destination guard, the client, the manager and the three controllers registered;
* ``built + a verdict signed``: the same with ``--attestation-key-secret`` set, then
  one statement signed with a fresh ed25519 key: what signing adds, once it happens.

Nothing is asserted: the figures are the point (docs/performance.md, "Memory").
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

_STATUS = """
import json, sys
def _status():
    fields = {}
    for line in open("/proc/self/status"):
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) / 1024
    fields["modules"] = len(sys.modules)
    return fields
"""

_BUILD = """
import asyncio
from glimmer.cli.manager import destination_guard, run_options_of
from glimmer.controllers.operator import operator_registrations
from glimmer.engine import ApiServerClient, EngineMetrics, Manager, ManagerOptions
from glimmer.sinks import FanoutOptions

async def build(kubeconfig, secret):
    metrics = EngineMetrics()
    guard = await destination_guard(kubeconfig=kubeconfig, sink_allow=(), cluster_cidrs=())
    client = await ApiServerClient.connect(kubeconfig, metrics=metrics)
    try:
        manager = Manager(client, options=ManagerOptions(leader_elect=False), metrics=metrics)
        for registration in operator_registrations(
            manager=manager,
            options=run_options_of(served_selector=None, runner_service_account=""),
            served_namespaces=frozenset({"default"}),
            fanout_options=FanoutOptions(destinations=guard),
            attestation_key_secret=secret,
        ):
            manager.add_controller(registration)
    finally:
        await client.close()
"""

_SIGN = """
from datetime import UTC, datetime
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from glimmer.attest import load_signer, sign_statement
from glimmer.attest.statement import STATEMENT_TYPE, NODE_PREDICATE

pem = Ed25519PrivateKey.generate().private_bytes(
    serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
    serialization.NoEncryption(),
)
sign_statement(
    {"_type": STATEMENT_TYPE, "predicateType": NODE_PREDICATE,
     "subject": [{"name": "node/n", "digest": {"sha256": "0" * 64}}],
     "predicate": {"issuedAt": datetime.now(UTC).isoformat()}},
    load_signer(pem, source="bench"),
)
"""

_KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters:
- name: bench
  cluster: {server: "https://127.0.0.1:9", insecure-skip-tls-verify: true}
users:
- name: bench
  user: {token: bench}
contexts:
- name: bench
  context: {cluster: bench, user: bench}
current-context: bench
"""


def stages(kubeconfig: Path) -> dict[str, str]:
    built = f"{_BUILD}\nasyncio.run(build({str(kubeconfig)!r}, None))\n"
    signed = f"{_BUILD}\nasyncio.run(build({str(kubeconfig)!r}, ('default', 'k')))\n{_SIGN}"
    return {
        "interpreter": "",
        "import manager": "import glimmer.cli.manager\n",
        "built, not connected": built,
        "built + a verdict signed": signed,
    }


def measure(code: str) -> dict[str, float]:
    program = f"{_STATUS}\n{code}\nprint(json.dumps(_status()))\n"
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(program)],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    figures: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return figures


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = Path(tmp) / "kubeconfig"
        kubeconfig.write_text(_KUBECONFIG)
        rows = [(name, measure(code)) for name, code in stages(kubeconfig).items()]
    print(f"{'stage':26s} {'VmRSS MiB':>10s} {'VmHWM MiB':>10s} {'modules':>8s}")
    for name, f in rows:
        print(f"{name:26s} {f['VmRSS']:10.1f} {f['VmHWM']:10.1f} {int(f['modules']):8d}")


if __name__ == "__main__":
    main()
