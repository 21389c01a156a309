"""A real Kubernetes control plane (etcd + kube-apiserver) and simulated nodes for tests.

This is what Glimmer's own integration tests run against, and what users embed to test
reconcilers: start a :class:`ControlPlane`, or use the pytest plugin
(``-p glimmer.testing.pytest_plugin``) for ``control_plane``, ``namespace``,
``api_client`` and ``sim_nodes`` fixtures. Dev/test tooling only: nothing in the
operator imports it.
"""

from glimmer.testing.assets import Assets, AssetsMissingError, find_assets
from glimmer.testing.control_plane import ControlPlane, KubectlError
from glimmer.testing.kwok import Kwok
from glimmer.testing.sim_nodes import SimNodes

__all__ = [
    "Assets",
    "AssetsMissingError",
    "ControlPlane",
    "KubectlError",
    "Kwok",
    "SimNodes",
    "find_assets",
]
