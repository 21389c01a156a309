"""TargetSelector: which nodes a run (or each run of a schedule) burns in (api §1.5).

``nodeNames`` is a ``set`` list: the apiserver refuses a duplicate node natively
("Duplicate value"), with no CEL cost bound and so no cap on the list's length (a
fleet may name a thousand nodes, as the reference allows). A set list keeps the order
it was written in, which matters: it decides Pair server/client and Group ranks.
"""

# field() returns attrs.field() with schema metadata; ruff cannot see that.
# ruff: noqa: RUF009

from __future__ import annotations

from typing import ClassVar

import attrs

from glimmer.api.core import Toleration
from glimmer.api.fields import Rule, field


@attrs.define(kw_only=True)
class TargetSelector:
    """Nodes to test: nodeNames verbatim and in order if set, else every node matching
    nodeSelector."""

    rules: ClassVar[tuple[Rule, ...]] = (
        Rule(
            rule="(has(self.nodeNames) && size(self.nodeNames) > 0) || "
            "(has(self.nodeSelector) && size(self.nodeSelector) > 0)",
            message="target selects no nodes: set nodeNames or a non-empty nodeSelector",
        ),
    )

    node_names: list[str] | None = field(
        json="nodeNames",
        list_type="set",
        description="Nodes to test, used verbatim and in order (order decides Pair server/client "
        "and Group ranks); wins over nodeSelector when non-empty.",
    )
    node_selector: dict[str, str] | None = field(
        json="nodeSelector",
        description="Label selector for the target nodes, used only when nodeNames is empty; "
        "must match at least one node.",
    )
    tolerations: list[Toleration] | None = field(
        json="tolerations",
        description="Tolerations copied onto every runner pod (plus the operator's own "
        "unschedulable toleration).",
    )
