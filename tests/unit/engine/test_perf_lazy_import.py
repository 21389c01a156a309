"""The engine imports kubernetes-asyncio without its generated client, yet every name
the package exports still resolves (~33 MiB of a manager's RSS).

Each check runs in a fresh interpreter: this test process has long since imported the
full package, and what matters is what a manager's own imports load.
"""

from __future__ import annotations

from tests.unit.fresh_interpreter import run_json


def test_importing_the_engine_loads_no_generated_model_or_api() -> None:
    got = run_json(
        """
        import json, sys
        import glimmer.engine
        from glimmer.engine import ApiServerClient, load_configuration
        loaded = [m for m in sys.modules if m.startswith("kubernetes_asyncio.client.")]
        print(json.dumps({
            "models": [m for m in loaded if ".models." in m],
            "apis": [m for m in loaded if ".api." in m],
        }))
        """
    )
    assert got == {"models": [], "apis": []}


def test_every_exported_name_still_resolves_after_the_engine_import() -> None:
    got = run_json(
        """
        import json
        import glimmer.engine
        import kubernetes_asyncio
        from kubernetes_asyncio import client, config, watch
        from kubernetes_asyncio.client import ApiClient, Configuration, CoreV1Api, V1Pod
        from kubernetes_asyncio.client.models import V1Node
        from kubernetes_asyncio.client.rest import ApiException
        pod = V1Pod(metadata=client.V1ObjectMeta(name="p"))
        print(json.dumps({
            "pod": pod.metadata.name,
            "node": V1Node.__name__,
            "api": CoreV1Api.__name__,
            "same": client.ApiClient is ApiClient and kubernetes_asyncio.client is client,
            "version": kubernetes_asyncio.__version__,
            "watch": watch.Watch.__name__,
            "config": callable(config.load_kube_config),
            "exc": issubclass(ApiException, Exception),
        }))
        """
    )
    assert got["pod"] == "p" and got["node"] == "V1Node" and got["api"] == "CoreV1Api"
    assert got["same"] is True and got["watch"] == "Watch" and got["config"] is True
    assert got["exc"] is True and isinstance(got["version"], str) and got["version"]


def test_an_already_imported_package_is_left_as_it_is() -> None:
    got = run_json(
        """
        import json
        import kubernetes_asyncio.client as eager
        from glimmer.engine import _lazy_k8s
        print(json.dumps({"installed": _lazy_k8s.install(), "type": type(eager).__name__}))
        """
    )
    assert got == {"installed": False, "type": "module"}
