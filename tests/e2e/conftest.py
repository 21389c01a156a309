"""End-to-end tests share the run-controller fixtures (CRDs, an admin client)."""

from tests.integration.run.conftest import kube, run_crds

__all__ = ["kube", "run_crds"]
