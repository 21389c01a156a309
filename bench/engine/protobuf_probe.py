"""Would protobuf for core types pay for itself here? Prints figures; asserts nothing.

    .venv/bin/python bench/engine/protobuf_probe.py [--pods 1000] [--repeats 20]

client-go asks for ``application/vnd.kubernetes.protobuf`` on core types, mainly to
spare the apiserver JSON encoding and the wire bytes. This starts a control plane,
creates ``--pods`` runner-shaped pods (the KWOK sample's spec) and measures, for a full
list and for single GETs, in both encodings: bytes on the wire and the request's wall
time (the apiserver's encode plus transfer), then what our side spends decoding the
JSON answer (``json.loads``). Python has no maintained generated Kubernetes protobuf
package, so the client-side decode of protobuf is not measured: it would need one
(generated from the apiserver's .proto files), and then a conversion to the plain
dicts every reconciler reads, which costs about what ``json.loads`` does.
"""

from __future__ import annotations

import argparse
import copy
import json
import ssl
import statistics
import time
import urllib.request
from pathlib import Path
from typing import Any

from glimmer.testing.control_plane import ControlPlane

HERE = Path(__file__).resolve().parent
JSON_TYPE = "application/json"
PROTOBUF = "application/vnd.kubernetes.protobuf"


def fetch(plane: ControlPlane, context: ssl.SSLContext, path: str, accept: str) -> bytes:
    request = urllib.request.Request(f"{plane.server}{path}", headers={"Accept": accept})
    with urllib.request.urlopen(request, timeout=60, context=context) as response:
        body: bytes = response.read()
    return body


def timed(plane: ControlPlane, context: ssl.SSLContext, path: str, accept: str, n: int) -> Any:
    sizes, times = [], []
    for _ in range(n):
        began = time.perf_counter()
        body = fetch(plane, context, path, accept)
        times.append(time.perf_counter() - began)
        sizes.append(len(body))
    return statistics.median(times), statistics.median(sizes), body


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    sample = json.loads((HERE / "samples" / "kwok-runner-pod.json").read_text())
    with ControlPlane() as plane:
        plane.kubectl("create", "namespace", "probe")
        context = ssl.create_default_context(cafile=str(plane.ca_path))
        pki = plane.work_dir / "pki"
        context.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
        for i in range(args.pods):
            body = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"runner-{i}",
                    "labels": sample["metadata"]["labels"],
                    "annotations": sample["metadata"].get("annotations", {}),
                },
                "spec": copy.deepcopy(sample["spec"]),
            }
            body["spec"].pop("nodeName", None)
            plane.request("POST", "/api/v1/namespaces/probe/pods", body=body)
        rows = []
        for label, path in (
            (f"list {args.pods} pods", "/api/v1/namespaces/probe/pods"),
            ("get 1 pod", "/api/v1/namespaces/probe/pods/runner-0"),
        ):
            json_s, json_bytes, json_body = timed(plane, context, path, JSON_TYPE, args.repeats)
            pb_s, pb_bytes, _ = timed(plane, context, path, PROTOBUF, args.repeats)
            began = time.perf_counter()
            for _ in range(args.repeats):
                json.loads(json_body)
            decode_s = (time.perf_counter() - began) / args.repeats
            rows.append((label, json_bytes, pb_bytes, json_s, pb_s, decode_s))
    print("request            JSON B      proto B   JSON ms  proto ms  json.loads ms")
    for label, jb, pb, js, ps, ds in rows:
        print(
            f"{label:<18} {jb:>8} {pb:>10} {js * 1000:>9.2f} {ps * 1000:>9.2f} {ds * 1000:>13.3f}"
        )


if __name__ == "__main__":
    main()
