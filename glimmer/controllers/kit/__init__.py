"""The controller kit: what every reconciler (run, fingerprint, schedule) needs, once.

Kind-agnostic: it imports only ``glimmer.engine``, ``glimmer.api``, ``glimmer.verdict``
and ``glimmer.plan`` (an import-linter contract keeps it so), and the three
reconcilers import it and never each other.
"""
