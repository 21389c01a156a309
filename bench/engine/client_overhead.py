"""The client's own CPU per request, apart from the apiserver. Prints figures.

    .venv/bin/python bench/engine/client_overhead.py [--requests 2000]

A stub apiserver in a child process answers at once (a 4 KiB pod for a GET and for a
PATCH; the body echoed for a PUT of a 0.5 MB run status), so the CPU this process
spends (``time.process_time``) is the client's: building the request, TLS-free HTTP,
reading and decoding the answer, the rate-limit bookkeeping. Run it with another
checkout first on ``PYTHONPATH`` (and as the working directory) to compare versions.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from kubernetes_asyncio import client as k8s_client

import glimmer.engine
from glimmer.engine import NODES, PODS, ApiServerClient, ClientOptions, Resource

HERE = Path(__file__).resolve().parent
RUNS = Resource("burnin.glimmer.ai", "v1alpha1", "burninruns", namespaced=True, kind="BurnInRun")

STUB = textwrap.dedent(
    """
    import sys
    from aiohttp import web
    pod = open(sys.argv[1], "rb").read()

    async def handle(request):
        body = await request.read()
        if request.method == "PUT":
            return web.Response(body=body, content_type="application/json")
        return web.Response(body=pod, content_type="application/json")

    app = web.Application(client_max_size=64 * 2**20)
    app.router.add_route("*", "/{tail:.*}", handle)
    web.run_app(app, host="127.0.0.1", port=int(sys.argv[2]), print=lambda *a: None)
    """
)


def run_status(results: int) -> dict[str, Any]:
    return {
        "apiVersion": "burnin.glimmer.ai/v1alpha1",
        "kind": "BurnInRun",
        "metadata": {"name": "fleet", "namespace": "bench", "resourceVersion": "1"},
        "status": {
            "results": [
                {
                    "name": "instant",
                    "nodes": [f"fleet-{i}"],
                    "phase": "Passed",
                    "startedAt": "2026-12-01T12:00:00Z",
                    "finishedAt": "2026-12-01T12:00:01Z",
                    "metrics": {"elapsed_ms": "1"},
                    "attempts": [
                        {"attempt": 1, "podName": f"fleet-instant-{i}", "node": f"fleet-{i}",
                         "phase": "Passed", "exitCode": 0, "message": "exit 0"}
                    ],
                }
                for i in range(results)
            ]
        },
    }  # fmt: skip


async def measure(port: int, *, requests: int) -> dict[str, float]:
    configuration = k8s_client.Configuration(host=f"http://127.0.0.1:{port}")
    client = ApiServerClient(
        k8s_client.ApiClient(configuration), options=ClientOptions(qps=100000, burst=100000)
    )
    figures: dict[str, float] = {}
    try:
        for _ in range(50):  # warm the connection pool
            await client.get(PODS, "p", namespace="bench")
        body = run_status(1000)
        for label, call, n in (
            ("get pod", lambda: client.get(PODS, "p", namespace="bench"), requests),
            ("patch node", lambda: client.patch(NODES, "n", {"spec": {"unschedulable": True}}),
             requests),
            ("put 0.5 MB status", lambda: client.replace(RUNS, body, namespace="bench",
                                                          subresource="status"), requests // 20),
        ):  # fmt: skip
            cpu, wall = time.process_time(), time.perf_counter()
            for _ in range(n):
                await call()
            figures[label] = (time.process_time() - cpu) / n * 1000
            figures[label + " wall"] = (time.perf_counter() - wall) / n * 1000
    finally:
        await client.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--port", type=int, default=18765)
    args = parser.parse_args()
    sample = HERE / "samples" / "kwok-runner-pod.json"
    stub = subprocess.Popen([sys.executable, "-c", STUB, str(sample), str(args.port)])
    try:
        time.sleep(1.5)
        figures = asyncio.run(measure(args.port, requests=args.requests))
    finally:
        stub.terminate()
        stub.wait(timeout=10)
    print(f"engine from {Path(glimmer.engine.__file__).parent}")
    print("request              client CPU ms   wall ms")
    for label in ("get pod", "patch node", "put 0.5 MB status"):
        print(f"{label:<20} {figures[label]:>13.3f} {figures[label + ' wall']:>9.3f}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
