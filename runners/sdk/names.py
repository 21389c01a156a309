"""Metric-name grammar check (semantics B1), delegated to ``glimmer.contract``.

Why a wrapper: the SDK must refuse to print a name the controller would file under
``invalidNames`` (A7), and that must be decided in exactly one place — the contract
package the controller itself uses — including the registered-unit rule.
"""

from __future__ import annotations

from glimmer.contract import is_valid_metric_name

__all__ = ["is_valid_metric_name"]
