"""Test Glimmer, or your profiles and reconcilers, against a real control plane.

- :class:`ControlPlane`: etcd + kube-apiserver with an admin kubeconfig; :class:`SimNodes`
  (simulated kubelets that run pods as local processes) and :class:`Kwok` (fake nodes at
  scale) give it nodes.
- :class:`EmbeddedOperator`: the operator's controllers inside your test process, wired
  as ``glimmer manager`` wires them; :func:`wait_for_verdict` waits for a BurnInRun.
- :class:`ManagerProcess`: ``glimmer manager`` as a child process, to SIGTERM or SIGKILL.
- ``glimmer.testing.pod_audit.PodAudit``: a pod watch proving no pod name was created
  twice across manager restarts (the chaos tests and ``bench/run/chaos.py``).
- The pytest plugin (``-p glimmer.testing.pytest_plugin``): fixtures ``control_plane``,
  ``namespace``, ``sim_nodes``, ``kwok_nodes``, ``glimmer_crds``, ``manager_process`` and
  more, and a session-end check that no child process leaked.

See docs/testing.md. Dev/test tooling only: nothing in the operator imports it.
"""

from glimmer.testing.assets import Assets, AssetsMissingError, find_assets
from glimmer.testing.control_plane import ControlPlane, KubectlError
from glimmer.testing.kwok import Kwok
from glimmer.testing.manager_process import ManagerProcess
from glimmer.testing.operator import EmbeddedOperator, OperatorFailedError, wait_for_verdict
from glimmer.testing.sim_nodes import SimNodes

__all__ = [
    "Assets",
    "AssetsMissingError",
    "ControlPlane",
    "EmbeddedOperator",
    "KubectlError",
    "Kwok",
    "ManagerProcess",
    "OperatorFailedError",
    "SimNodes",
    "find_assets",
    "wait_for_verdict",
]
