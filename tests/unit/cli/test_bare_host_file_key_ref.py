"""I24 through ``glimmer plan`` and ``glimmer run``: an ``env[].valueFrom.fileKeyRef``
(which the CRDs carry, as the reference's do) is refused before anything runs, naming
the field, never run with the variable silently unset; ``glimmer lint`` still reads the
manifest (the schema accepts it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from glimmer.cli import main

PROFILE = """\
apiVersion: burnin.glimmer.ai/v1alpha1
kind: BurnInProfile
metadata: {name: env-file}
spec:
  tests:
  - inline:
      kind: custom
      runner:
        command: ["sh", "-c", "touch %(marker)s; echo ok"]
        env:
        - {name: PLAIN, value: x}
        - name: TOKEN
          valueFrom:
            fileKeyRef: {volumeName: config, path: app.env, key: TOKEN}
"""


@pytest.mark.parametrize("command", ["plan", "run"])
def test_I24_a_file_key_ref_is_refused_before_anything_runs(tmp_path: Path, command: str) -> None:
    marker = tmp_path / "ran"
    profile = tmp_path / "profile.yaml"
    profile.write_text(PROFILE % {"marker": marker})
    where = ["--report-dir", str(tmp_path / "r")] if command == "run" else []  # plan writes none
    result = CliRunner().invoke(main, [command, str(profile), *where])
    assert result.exit_code == 3, result.output
    (line,) = result.stderr.strip().splitlines()
    assert f"{profile}: plan refused: " in line
    assert "spec.tests[0].inline.runner.env[1].valueFrom.fileKeyRef: reads an env file" in line
    assert "a runner pod has none" in line
    assert not marker.exists(), "the runner started without its env file variable"
    assert not (tmp_path / "r" / "run.json").exists()


def test_a_manifest_with_a_file_key_ref_still_lints(tmp_path: Path) -> None:
    profile = tmp_path / "profile.yaml"
    profile.write_text(PROFILE % {"marker": tmp_path / "ran"})
    result = CliRunner().invoke(main, ["lint", str(profile)])
    assert result.exit_code == 0, result.output
