"""I28: evaluate, lint and run refuse what the apiserver's strict validation refuses.

Unknown fields, duplicate keys and runaway nesting each get one line naming the file
and the field, exit 2 (evaluate, lint) or 3 (run, whose 2 means "nothing judged"),
and never a traceback.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from glimmer.cli import main
from glimmer.local.manifests import ManifestError, load_documents
from glimmer.local.strict_yaml import MAX_DEPTH

ROOT = Path(__file__).resolve().parents[3]

GATED_TEST = """\
apiVersion: burnin.glimmer.ai/v1alpha1
kind: BurnInTest
metadata: {name: bw}
spec:
  kind: custom
  runner: {command: ["sh", "-c", "echo bw=1"]}
  %s
  - {metric: bw, comparison: GreaterThanOrEqual, value: "10"}
"""


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def evaluate(test: Path, tmp_path: Path) -> Result:
    (tmp_path / "out.txt").write_text("bw=1\n")
    return invoke(
        "evaluate", "--test", str(test), "--exit-code", "0", "--stdout", str(tmp_path / "out.txt")
    )


def profile_with(test_file: Path, tmp_path: Path) -> Path:
    profile = tmp_path / "profile.yaml"
    profile.write_text(
        "kind: BurnInProfile\nmetadata: {name: p}\nspec:\n  tests:\n  - testRef: bw\n"
    )
    return profile


def refused_once(result: Result, *, code: int, needle: str) -> None:
    assert result.exit_code == code, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert needle in lines[0]
    assert "Traceback" not in result.output


def test_I28_unknown_field_is_refused(tmp_path: Path) -> None:
    test = tmp_path / "test.yaml"
    test.write_text(GATED_TEST % "treshold:")
    needle = f'{test}: BurnInTest bw: unknown field "spec.treshold"'
    # Without the check evaluate Passes (no gates) and lint says "no findings".
    refused_once(evaluate(test, tmp_path), code=2, needle=needle)
    refused_once(invoke("lint", str(test)), code=2, needle=needle)
    profile = profile_with(test, tmp_path)
    refused_once(
        invoke("run", str(profile), "--tests", str(test), "--report-dir", str(tmp_path / "r")),
        code=3,
        needle=needle,
    )
    assert not (tmp_path / "r").exists()


def test_I28_correctly_spelt_gates_still_judge(tmp_path: Path) -> None:
    test = tmp_path / "test.yaml"
    test.write_text(GATED_TEST % "thresholds:")
    assert evaluate(test, tmp_path).exit_code == 1  # bw=1 < 10: the gate is read


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (
            "spec:\n  tests:\n  - inline: {kind: custom, treshold: []}\n",
            "spec.tests[0].inline.treshold",
        ),
        (
            "spec:\n  tests:\n  - inline: {kind: custom}\n    variants:\n"
            "    - {name: v, treshold: []}\n",
            "spec.tests[0].variants[0].treshold",
        ),
        ("spec:\n  failfast: true\n  tests:\n  - testRef: x\n", "spec.failfast"),
        (
            "spec:\n  tests:\n  - testRef: x\n    requried: false\n",
            "spec.tests[0].requried",
        ),
        (
            "spec:\n  tests:\n  - inline:\n      kind: custom\n      runner:\n        env:\n"
            "        - {name: A, valuefrom: {fieldRef: {fieldPath: spec.nodeName}}}\n",
            "spec.tests[0].inline.runner.env[0].valuefrom",
        ),
    ],
    ids=["inline-test", "variant", "profile-spec", "profile-entry", "env-entry"],
)
def test_I28_unknown_fields_are_found_in_profiles_inline_tests_and_variants(
    tmp_path: Path, body: str, field: str
) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("kind: BurnInProfile\nmetadata: {name: p}\n" + body)
    with pytest.raises(ManifestError) as caught:
        load_documents(path)
    assert str(caught.value) == f'{path}: BurnInProfile p: unknown field "{field}"'
    refused_once(invoke("lint", str(path)), code=2, needle=f'unknown field "{field}"')


def test_I28_unknown_metadata_field_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("kind: BurnInTest\nmetadata: {nmae: bw}\nspec: {kind: custom}\n")
    with pytest.raises(ManifestError, match=r'unknown field "metadata\.nmae"'):
        load_documents(path)


def test_I28_every_unknown_field_is_listed_on_the_one_line(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("kind: BurnInTest\nmetadata: {name: a}\nspec: {kind: custom, x: 1, y: 2}\n")
    with pytest.raises(ManifestError) as caught:
        load_documents(path)
    assert str(caught.value).endswith('unknown field "spec.x", unknown field "spec.y"')


def test_I28_other_kinds_in_the_file_are_not_judged(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("kind: ConfigMap\ndata: {anything: goes}\n---\n" + GATED_TEST % "thresholds:")
    assert [d.kind for d in load_documents(path)] == ["ConfigMap", "BurnInTest"]


def test_I28_duplicate_key_is_refused(tmp_path: Path) -> None:
    test = tmp_path / "test.yaml"
    test.write_text(
        "kind: BurnInTest\nmetadata: {name: bw}\nspec:\n  kind: custom\n  kind: memory-bw\n"
    )
    needle = f'{test}: line 5: duplicate field "spec.kind"'
    refused_once(evaluate(test, tmp_path), code=2, needle=needle)
    refused_once(invoke("lint", str(test)), code=2, needle=needle)
    profile = profile_with(test, tmp_path)
    refused_once(
        invoke("run", str(profile), "--tests", str(test), "--report-dir", str(tmp_path / "r")),
        code=3,
        needle=needle,
    )


def test_I28_duplicate_key_in_a_flow_mapping_deep_in_a_list(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(
        textwrap.dedent("""\
        kind: BurnInTest
        metadata: {name: bw}
        spec:
          kind: custom
          thresholds:
          - {metric: a, comparison: Equal, value: "1", value: "2"}
        """)
    )
    with pytest.raises(ManifestError, match=r'duplicate field "spec\.thresholds\[0\]\.value"'):
        load_documents(path)


@pytest.mark.parametrize(
    "text",
    [
        "kind: BurnInTest\nspec: " + "[" * 20000 + "]" * 20000 + "\n",
        "kind: BurnInTest\nspec: " + "{a: " * 20000 + "1" + "}" * 20000 + "\n",
        "kind: BurnInTest\nspec:\n"
        + "".join("  " * (i + 1) + "a:\n" for i in range(MAX_DEPTH + 5))
        + "  " * (MAX_DEPTH + 6)
        + "x\n",
    ],
    ids=["flow-sequences", "flow-mappings", "block-mappings"],
)
def test_I28_deep_nesting_is_refused_without_recursion_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text(text)
    needle = f"nests deeper than {MAX_DEPTH} levels"
    refused_once(invoke("lint", str(path)), code=2, needle=needle)
    (tmp_path / "out.txt").write_text("")
    refused_once(
        invoke("evaluate", "--test", str(path), "--exit-code", "0", "--stdout", str(path)),
        code=2,
        needle=needle,
    )
    refused_once(
        invoke("run", str(path), "--report-dir", str(tmp_path / "r")), code=3, needle=needle
    )


def test_I28_nesting_within_the_bound_is_read(tmp_path: Path) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text(
        "kind: ConfigMap\ndata: " + "[" * (MAX_DEPTH - 2) + "]" * (MAX_DEPTH - 2) + "\n"
    )
    assert len(load_documents(path)) == 1


def test_I28_alias_cycles_and_alias_bombs_are_refused(tmp_path: Path) -> None:
    cycle = tmp_path / "cycle.yaml"
    cycle.write_text("kind: ConfigMap\ndata: &a [*a]\n")
    with pytest.raises(ManifestError, match="refers to itself through an alias"):
        load_documents(cycle)
    bomb = tmp_path / "bomb.yaml"
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    bomb.write_text("\n".join(lines) + "\n")
    with pytest.raises(ManifestError, match="expands to more than"):
        load_documents(bomb)
    deep = tmp_path / "deep-alias.yaml"
    lines = ["l0: &l0 " + "[" * 40 + "]" * 40]
    lines += [f"l{i}: &l{i} " + "[" * 40 + f"*l{i - 1}" + "]" * 40 for i in range(1, 4)]
    deep.write_text("\n".join(lines) + "\n")
    with pytest.raises(ManifestError, match=r"nests deeper than \d+ levels through aliases"):
        load_documents(deep)


def test_I28_aliases_and_merge_keys_within_bounds_still_work(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(
        textwrap.dedent("""\
        kind: BurnInTest
        metadata: {name: bw}
        spec:
          kind: custom
          runner: &r {command: [sh, -c, "echo bw=1"]}
          thresholds:
          - &gate {metric: bw, comparison: GreaterThanOrEqual, value: "10"}
          - {<<: *gate, metric: other}
        """)
    )
    (document,) = load_documents(path)
    assert document.body["spec"]["thresholds"][1] == {
        "metric": "other",
        "comparison": "GreaterThanOrEqual",
        "value": "10",
    }


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("!!binary aGVsbG8=", "bytes value cannot be sent"),
        ("!!set {a: null}", "set value cannot be sent"),
        (".nan", "is not a JSON number"),
        ("-.inf", "is not a JSON number"),
        ("!!timestamp 2024-01-01", "date value cannot be sent"),
    ],
)
def test_I28_values_json_cannot_carry_are_refused(tmp_path: Path, value: str, needle: str) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(f"kind: ConfigMap\ndata:\n  x: {value}\n")
    with pytest.raises(ManifestError, match=needle):
        load_documents(path)


def test_I28_plain_dates_are_read_as_strings_and_keys_must_be_strings(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("kind: ConfigMap\ndata: {when: 2024-01-01}\n")
    (document,) = load_documents(path)
    assert document.body["data"]["when"] == "2024-01-01"
    path.write_text("kind: ConfigMap\ndata: {1: x}\n")
    with pytest.raises(ManifestError, match="key '1' must be a string"):
        load_documents(path)


@pytest.mark.parametrize(
    "sample",
    sorted(
        str(p)
        for p in [
            *(ROOT / "manifests" / "samples").glob("*.yaml"),
            ROOT / "glimmer" / "examples" / "acceptance.yaml",
        ]
    ),
)
def test_I28_every_shipped_manifest_passes_the_strict_reader(sample: str) -> None:
    assert load_documents(Path(sample))


def test_I28_the_shipped_manifests_were_found() -> None:
    assert len(list((ROOT / "manifests" / "samples").glob("*.yaml"))) >= 5
