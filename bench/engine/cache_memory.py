"""Heap held per cached node and pod, by ingest transform, at fleet size. Prints figures.

    .venv/bin/python bench/engine/cache_memory.py [--count 5000]

Each object is decoded from its own JSON text (as the informer receives it off the
wire, so nothing is shared by accident) from samples taken from a KWOK bench fleet
(`samples/`: a KWOK node, a runner pod, both as the apiserver serves them, managedFields
included), given a unique name, passed through the transform and kept. `tracemalloc`
counts the bytes still allocated. "gpu-node" is the KWOK node plus a kubelet-style
`status.images` of 40 entries (a real GPU node's image cache: CUDA, driver, DCGM and
runner images, each with a digest and a tag), which KWOK nodes do not carry.
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from glimmer.engine import strip_managed_fields
from glimmer.engine.transforms import compact_node, compact_pod

HERE = Path(__file__).resolve().parent
Transform = Callable[[dict[str, Any]], dict[str, Any]]


def gpu_node(node: dict[str, Any]) -> dict[str, Any]:
    real = copy.deepcopy(node)
    real["status"]["images"] = [
        {
            "names": [
                f"nvcr.io/nvidia/image-{i}@sha256:{i:064x}",
                f"nvcr.io/nvidia/image-{i}:24.{i % 12:02d}-py3",
            ],
            "sizeBytes": 10_000_000_000 + i,
        }
        for i in range(40)
    ]
    return real


def measure(template: dict[str, Any], transform: Transform | None, *, count: int) -> float:
    """Bytes held per object after ``count`` objects are decoded and transformed."""
    texts = []
    for i in range(count):
        body = copy.deepcopy(template)
        body["metadata"]["name"] = f"{body['metadata']['name']}-{i}"
        body["metadata"]["uid"] = f"{i:08x}-0000-4000-8000-{i:012x}"
        texts.append(json.dumps(body))
    gc.collect()
    tracemalloc.start()
    kept = {}
    for i, text in enumerate(texts):
        obj = json.loads(text)
        kept[i] = transform(obj) if transform is not None else obj
    gc.collect()
    held, _peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del kept
    return held / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=5000)
    args = parser.parse_args()
    node = json.loads((HERE / "samples" / "kwok-node.json").read_text())
    pod = json.loads((HERE / "samples" / "kwok-runner-pod.json").read_text())
    shapes = {"kwok-node": node, "gpu-node": gpu_node(node), "runner-pod": pod}
    transforms: dict[str, dict[str, Transform | None]] = {
        "none": {"kwok-node": None, "gpu-node": None, "runner-pod": None},
        "strip-managed-fields": dict.fromkeys(shapes, strip_managed_fields),
        "compact": {"kwok-node": compact_node, "gpu-node": compact_node, "runner-pod": compact_pod},
    }
    print(f"heap per cached object (KiB), {args.count} objects of each shape")
    print("transform".ljust(22) + "".join(name.rjust(12) for name in shapes))
    for name, chosen in transforms.items():
        cells = [measure(shapes[s], chosen[s], count=args.count) / 1024 for s in shapes]
        print(name.ljust(22) + "".join(f"{c:12.2f}" for c in cells))
    wire = {s: len(json.dumps(shapes[s])) / 1024 for s in shapes}
    print("wire JSON".ljust(22) + "".join(f"{wire[s]:12.2f}" for s in shapes))


if __name__ == "__main__":
    main()
