"""Manifests the CLI tests share."""

#: The smallest runnable profile: one inline custom test that prints a line.
PROFILE = """\
kind: BurnInProfile
metadata: {name: quick}
spec:
  tests:
  - inline:
      kind: custom
      runner: {command: ["sh", "-c", "echo ok"]}
"""
