"""I24-I26 through ``glimmer run`` as a user runs it.

I24: a spec field that would fail only at attempt time is refused before anything runs
(``--dry-run`` too), one line, exit 3, no traceback; no exception path exits 1.
I25: test names never become paths: files stay under ``--report-dir``, one per attempt.
I26: SIGINT/SIGTERM stop the runner's whole group, settle what did not finish as
Error, write run.json and exit 3.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from glimmer.cli import main
from glimmer.local import attempts, dispatcher, launch
from glimmer.local.filenames import file_stem
from glimmer.plan import SpecError

GLIMMER = [sys.executable, "-c", "from glimmer.cli import main; main()"]
#: ``glimmer run`` as a job an interactive shell starts: the stop signals at their
#: defaults. A test run from a background job (``cmd &``) inherits SIGINT ignored, and
#: glimmer run rightly keeps an inherited ignore (``nohup``).
AS_A_TERMINAL_JOB = [
    sys.executable,
    "-c",
    "import signal\n"
    "for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP): signal.signal(s, signal.SIG_DFL)\n"
    "from glimmer.cli import main; main()",
]


def glimmer(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*GLIMMER, *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


def write_profile(
    path: Path, *entries: dict[str, Any], tests: list[dict[str, Any]] | None = None
) -> Path:
    docs: list[dict[str, Any]] = [
        {"kind": "BurnInProfile", "metadata": {"name": "p"}, "spec": {"tests": list(entries)}}
    ]
    docs += [
        {"kind": "BurnInTest", "metadata": {"name": t.pop("name")}, "spec": t} for t in tests or []
    ]
    path.write_text(yaml.safe_dump_all(docs))
    return path


def sh(script: str, **spec: Any) -> dict[str, Any]:
    return {"kind": "custom", "runner": {"command": ["sh", "-c", script]}, **spec}


def run_json(report: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((report / "run.json").read_text())
    return doc


# --- I24 runner fields are checked at plan time -----------------------------------------


@pytest.mark.parametrize("dry_run", [False, True], ids=["run", "dry-run"])
def test_I24_malformed_runner_env_is_refused_before_anything_runs(
    tmp_path: Path, dry_run: bool
) -> None:
    marker = tmp_path / "ran"
    env = [{"name": "A", "value": "1"}, {"name": "B", "valueFrom": "status.hostIP"}]
    profile = write_profile(
        tmp_path / "p.yaml",
        {"inline": sh(f"touch {marker}; echo ok")},
        {"inline": sh("echo ok", runner={"command": ["true"], "env": env})},
    )
    args = ["run", str(profile), "--report-dir", str(tmp_path / "r")]
    proc = glimmer(*args, *(["--dry-run"] if dry_run else []), cwd=tmp_path)
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert f"{profile}: plan refused: spec.tests[1].inline.runner.env[1].valueFrom: must be" in line
    assert not marker.exists(), "a runner started before the spec was validated"
    assert not (tmp_path / "r" / "run.json").exists()


def test_I24_bad_args_type_is_refused_not_split_into_letters(tmp_path: Path) -> None:
    profile = write_profile(
        tmp_path / "p.yaml", {"inline": sh("echo ok", runner={"command": ["echo"], "args": "-x"})}
    )
    proc = glimmer("run", str(profile), "--dry-run", cwd=tmp_path)
    assert proc.returncode == 3
    assert "spec.tests[0].inline.runner.args: must be a list of strings" in proc.stderr


def test_I24_preflight_backstop_refuses_what_the_attempt_would_raise_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the plan ever let a bad field through, the dispatcher's preflight still refuses it."""
    profile = write_profile(tmp_path / "p.yaml", {"inline": sh("echo bw=1")})

    def broken_env(*args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        raise SpecError("spec.runner.env entries must be objects with a name: 3")

    monkeypatch.setattr(launch, "bare_host_runner_env", broken_env)
    result = CliRunner().invoke(
        main, ["run", str(profile), "--dry-run", "--report-dir", str(tmp_path / "r")]
    )
    assert result.exit_code == 3, result.output
    assert "plan refused: test 'inline-0-custom': spec.runner.env entries" in result.stderr


def test_I24_internal_error_is_exit_3_with_run_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    profile = write_profile(
        tmp_path / "p.yaml",
        {
            "inline": sh(
                "echo bw=20", thresholds=[{"metric": "bw", "comparison": "Equal", "value": "20"}]
            )
        },
        {"inline": sh("echo second")},
        {"inline": sh("echo third")},
    )
    real = attempts.run_runner
    calls: list[int] = []

    def flaky(**kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("disk on fire")
        return real(**kwargs)

    monkeypatch.setattr(attempts, "run_runner", flaky)
    report = tmp_path / "r"
    result = CliRunner().invoke(main, ["run", str(profile), "--report-dir", str(report)])
    assert result.exit_code == 3, result.output  # never 1: that would read "hardware Failed"
    assert isinstance(result.exception, SystemExit)
    doc = run_json(report)
    assert doc["stopped"] == "internal error: RuntimeError: disk on fire"
    assert doc["phase"] == "Error"
    assert [r["phase"] for r in doc["results"]] == ["Passed", "Error", "Error"]
    second, third = doc["results"][1:]
    assert second["attempts"][-1]["phase"] == "Error"
    assert "disk on fire" in second["message"]
    assert third["attempts"] == [] and "before this test ran" in third["message"]
    assert "Traceback" not in result.output


def test_I24_unexpected_error_before_the_run_is_exit_3_without_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import glimmer.cli.run as run_module

    def explode(**kwargs: Any) -> Any:
        raise ZeroDivisionError("bug")

    monkeypatch.setattr(run_module, "host_plan", explode)
    profile = write_profile(tmp_path / "p.yaml", {"inline": sh("echo ok")})
    result = CliRunner().invoke(main, ["run", str(profile), "--report-dir", str(tmp_path / "r")])
    assert result.exit_code == 3
    assert result.stderr.strip() == "glimmer: error: internal error: ZeroDivisionError: bug"


def test_I24_evaluate_and_lint_never_exit_1_on_a_bug(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import glimmer.cli.evaluate as evaluate_module
    import glimmer.cli.lint as lint_module

    def explode(*args: Any, **kwargs: Any) -> Any:
        raise ValueError("bug")

    test = tmp_path / "t.yaml"
    test.write_text("kind: BurnInTest\nmetadata: {name: t}\nspec: {kind: custom}\n")
    monkeypatch.setattr(evaluate_module, "judge_attempt", explode)
    monkeypatch.setattr(lint_module, "lint_tests", explode)
    result = CliRunner().invoke(
        main, ["evaluate", "--test", str(test), "--exit-code", "0", "--stdout", str(test)]
    )
    assert result.exit_code == 3 and "internal error: ValueError: bug" in result.stderr
    result = CliRunner().invoke(main, ["lint", str(test)])
    assert result.exit_code == 2 and "internal error: ValueError: bug" in result.stderr


# --- I25 test names never become paths --------------------------------------------------

ARTIFACT = (
    "echo '-----BEGIN BURNIN ARTIFACT ev.json application/json-----'; echo '{}'; "
    "echo '-----END BURNIN ARTIFACT-----'; echo ok"
)


def test_I25_test_names_never_escape_the_report_directory(tmp_path: Path) -> None:
    names = ["../../x", "x/y", "/abs", "..", "a b", "x-y", "ok.name"]
    profile = write_profile(
        tmp_path / "p.yaml",
        *({"testRef": n} for n in names),
        tests=[{"name": n, **sh(ARTIFACT)} for n in names],
    )
    report = tmp_path / "a" / "b" / "r"
    proc = glimmer("run", str(profile), "--report-dir", str(report), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = run_json(report)
    assert [r["phase"] for r in doc["results"]] == ["Passed"] * len(names)
    outside = [
        p for p in tmp_path.rglob("*") if p.is_file() and report not in p.parents and p != profile
    ]
    assert outside == []
    files: list[str] = []
    for result in doc["results"]:
        (artifact,) = result["artifacts"]
        files += [*result["rawLogs"], artifact["file"]]
    for relative in files:
        path = (report / relative).resolve()
        assert report.resolve() in path.parents and path.is_file(), relative
    assert len(set(files)) == len(files), "two attempts shared a file"
    assert doc["results"][-1]["rawLogs"] == ["raw/ok.name.a1.log"]  # plain names stay readable


def test_I25_file_stems_are_safe_unique_and_deterministic() -> None:
    names = ["../../x", "x/y", "x_y", "x-y", "x~y", "", ".", "..", "a" * 300, "a" * 301, "é"]
    stems = [file_stem(n) for n in names]
    assert len(set(stems)) == len(names)
    assert stems == [file_stem(n) for n in names]
    for stem in stems:
        assert "/" not in stem and "\0" not in stem and stem not in ("", ".", "..")
        assert not stem.startswith(".") and len(stem.encode()) <= 100
    assert file_stem("memory-stress") == "memory-stress"
    # a plain name that looks like a hashed one cannot collide with it (~ is never plain)
    assert file_stem("x-y") != file_stem("x/y") and "~" in file_stem("x/y")


# --- I26 an interrupted run records what it did -----------------------------------------


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def _wait_for(path: Path, *, timeout: float = 30.0) -> None:
    until = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < until, f"{path} never appeared"
        time.sleep(0.05)


@pytest.mark.parametrize(
    ("sig", "trap"),
    [
        (signal.SIGINT, ""),
        (signal.SIGTERM, ""),
        (signal.SIGHUP, ""),
        (signal.SIGINT, "trap '' TERM INT; "),
    ],
    ids=["sigint", "sigterm", "sighup", "sigint-runner-ignores-term"],
)
def test_I26_interrupt_records_error_and_writes_run_json(
    tmp_path: Path, sig: signal.Signals, trap: str
) -> None:
    pids = tmp_path / "pids"
    gate = [{"metric": "bw", "comparison": "Equal", "value": "20"}]
    sleeper = (
        f"{trap}sleep 1000 & echo $! >> {pids}; echo $$ >> {pids}; "
        f"echo bw=20; mv {pids} {pids}.ready; sleep 1000"
    )
    profile = write_profile(
        tmp_path / "p.yaml",
        {"inline": sh("echo bw=20", thresholds=gate)},
        {"inline": sh(sleeper, thresholds=gate)},
        {"inline": sh("echo bw=20", thresholds=gate)},
    )
    report = tmp_path / "r"
    proc = subprocess.Popen(
        [*AS_A_TERMINAL_JOB, "run", str(profile), "--report-dir", str(report)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own group, like a shell job: Ctrl-C reaches only it
    )
    try:
        _wait_for(tmp_path / "pids.ready")
        started = time.monotonic()
        os.killpg(proc.pid, sig)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert time.monotonic() - started < 10, "the stop was not bounded"
    assert proc.returncode == 3, stderr
    assert "Traceback" not in stderr
    runner_pids = [int(p) for p in (tmp_path / "pids.ready").read_text().split()]
    until = time.monotonic() + 3  # SIGKILL lands asynchronously
    while [pid for pid in runner_pids if _alive(pid)] and time.monotonic() < until:
        time.sleep(0.02)
    assert not [pid for pid in runner_pids if _alive(pid)], "the runner's group outlived the run"
    doc = run_json(report)
    assert doc["phase"] == "Error"
    assert doc["stopped"] == f"interrupted ({sig.name})"
    first, second, third = doc["results"]
    assert first["phase"] == "Passed"  # finished verdicts survive the interrupt
    assert second["phase"] == "Error" and second["attempts"][-1]["phase"] == "Error"
    assert f"interrupted ({sig.name})" in second["message"]
    # bw=20 was printed, but an unfinished attempt is no verdict: no metrics anywhere
    # (the codec omits an empty map, on the result and on its deciding attempt).
    assert "metrics" not in second and "metrics" not in second["attempts"][-1]
    assert third["phase"] == "Error" and third["attempts"] == []


def test_I26_interrupt_between_tests_never_leaves_a_passed_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Interrupted after test 1 passed and before test 2 started: the run is Error, not Passed."""
    profile = write_profile(
        tmp_path / "p.yaml", {"inline": sh("echo one")}, {"inline": sh("echo two")}
    )
    real = dispatcher._new_result
    made: list[int] = []

    def interrupt_on_second(test: Any, **kwargs: Any) -> Any:
        made.append(1)
        if len(made) == 2:
            raise KeyboardInterrupt
        return real(test, **kwargs)

    monkeypatch.setattr(dispatcher, "_new_result", interrupt_on_second)
    report = tmp_path / "r"
    result = CliRunner().invoke(main, ["run", str(profile), "--report-dir", str(report)])
    assert result.exit_code == 3
    doc = run_json(report)
    assert doc["phase"] == "Error"
    assert [r["phase"] for r in doc["results"]] == ["Passed", "Error"]


def test_I26_a_stale_run_json_is_removed_when_a_run_starts(tmp_path: Path) -> None:
    report = tmp_path / "r"
    report.mkdir()
    (report / "run.json").write_text('{"phase": "Passed"}')
    profile = write_profile(tmp_path / "p.yaml", {"inline": sh("kill -9 $PPID; sleep 5")})
    proc = glimmer("run", str(profile), "--report-dir", str(report), cwd=tmp_path)
    assert proc.returncode == -signal.SIGKILL
    assert not (report / "run.json").exists()


def test_I26_interrupt_is_exit_3_even_after_a_failed_test(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An interrupted run never happened in full: 3, not the 1 its one Failed test would give."""
    gate = [{"metric": "bw", "comparison": "Equal", "value": "20"}]
    profile = write_profile(
        tmp_path / "p.yaml",
        {"inline": sh("echo bw=1", thresholds=gate)},
        {"inline": sh("echo bw=20", thresholds=gate)},
    )
    real = attempts.run_runner
    calls: list[int] = []

    def interrupt_second(**kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(**kwargs)

    monkeypatch.setattr(attempts, "run_runner", interrupt_second)
    report = tmp_path / "r"
    result = CliRunner().invoke(main, ["run", str(profile), "--report-dir", str(report)])
    assert result.exit_code == 3
    doc = run_json(report)
    assert [r["phase"] for r in doc["results"]] == ["Failed", "Error"]
    assert doc["stopped"] == "interrupted (SIGINT)"


def test_I24_a_burnintest_defined_twice_is_refused_not_last_wins(tmp_path: Path) -> None:
    profile = write_profile(
        tmp_path / "p.yaml", {"testRef": "t"}, tests=[{"name": "t", **sh("echo a")}]
    )
    other = write_profile(tmp_path / "more.yaml", tests=[{"name": "t", **sh("echo b")}])
    proc = glimmer("run", str(profile), "--tests", str(other), "--dry-run", cwd=tmp_path)
    assert proc.returncode == 3
    assert "BurnInTest 't' is defined twice" in proc.stderr
    # the same file given twice is the same object, not a second definition
    proc = glimmer("run", str(profile), "--tests", str(profile), "--dry-run", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_I24_an_unparseable_image_command_is_one_line_exit_3(tmp_path: Path) -> None:
    profile = write_profile(tmp_path / "p.yaml", {"inline": sh("echo a")})
    proc = glimmer("run", str(profile), "--image-command", "custom='unclosed", cwd=tmp_path)
    assert proc.returncode == 3 and "Traceback" not in proc.stderr
    assert "--image-command" in proc.stderr and "No closing quotation" in proc.stderr
    assert "internal error" not in proc.stderr  # bad input, named as such
