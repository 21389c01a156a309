"""The licence gate (hack/licences): every Python distribution in the venv and every Go
module linked into the test control plane's binaries, checked against allowlist.toml.

Kept outside ``glimmer`` because it is build tooling, not part of the operator: nothing
in ``glimmer`` imports it, and it imports nothing of ``glimmer``.
"""
