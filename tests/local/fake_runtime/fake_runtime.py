"""A stand-in container runtime (docker, podman, nerdctl) for ``glimmer run --runtime``.

Installed on PATH under a runtime's name by :func:`tests.local.fake_runtime.install`,
it records every invocation's argv, and ``run`` plays back the runner output and exit
code the test chose (``scenario.json``). The "container" is a process of its own
session, apart from the client, so killing the client does not stop it: only
``stop``, ``kill`` or ``rm -f`` by name does, as with a real runtime.

Stdlib only: it runs under whatever python3 the test's PATH finds.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

STATE = Path(os.environ["FAKE_RUNTIME_STATE"])

CONTAINER = r"""
import signal, sys, time
output, code, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if mode == "trap_term":
    def done(*_):
        sys.stdout.write("bw=99\n"); sys.stdout.flush(); sys.exit(0)
    signal.signal(signal.SIGTERM, done)
sys.stdout.write(output); sys.stdout.flush()
if mode in ("hang", "trap_term"):
    while True:
        time.sleep(1)
sys.exit(code)
"""


def record(argv: list[str]) -> None:
    with (STATE / "calls.jsonl").open("a") as calls:
        calls.write(json.dumps({"runtime": Path(sys.argv[1]).name, "argv": argv}) + "\n")


def scenario() -> dict[str, object]:
    path = STATE / "scenario.json"
    return json.loads(path.read_text()) if path.exists() else {}


def pid_file(name: str) -> Path:
    return STATE / "containers" / name


def container_pid(name: str) -> int | None:
    try:
        return int(pid_file(name).read_text())
    except (FileNotFoundError, ValueError):
        return None


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def signal_container(name: str, sig: int) -> bool:
    pid = container_pid(name)
    if pid is None or not alive(pid):
        return False
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        return False
    return True


def run(argv: list[str]) -> int:
    play = scenario()
    if play.get("run_exit_without_container") is not None:
        sys.stdout.write(str(play.get("client_message", "")))
        return int(str(play["run_exit_without_container"]))
    name = argv[argv.index("--name") + 1]
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            CONTAINER,
            str(play.get("output", "")),
            str(play.get("exit", 0)),
            str(play.get("mode", "")),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    pid_file(name).parent.mkdir(exist_ok=True)
    pid_file(name).write_text(str(child.pid))
    with (STATE / "started.pids").open("a") as started:
        started.write(f"{child.pid}\n")
    if play.get("client_dies"):
        os.kill(os.getpid(), signal.SIGKILL)
    out = child.stdout
    assert out is not None
    while chunk := os.read(out.fileno(), 65536):
        sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.flush()
    code = child.wait()
    if "--rm" in argv:
        pid_file(name).unlink(missing_ok=True)
    return code if code >= 0 else 128 - code


def stop(argv: list[str]) -> int:
    grace = int(argv[argv.index("-t") + 1])
    name = argv[-1]
    if not signal_container(name, signal.SIGTERM):
        return 1
    until = time.monotonic() + grace
    pid = container_pid(name)
    while pid is not None and alive(pid) and time.monotonic() < until:
        time.sleep(0.02)
    signal_container(name, signal.SIGKILL)
    return 0


def main() -> int:
    argv = sys.argv[2:]
    record(argv)
    verb = argv[0] if argv else ""
    if verb == "version":
        return int(str(scenario().get("version_exit", 0)))
    if verb == "run":
        return run(argv)
    if verb == "stop":
        return stop(argv)
    if verb == "kill":
        return 0 if signal_container(argv[-1], signal.SIGKILL) else 1
    if verb == "rm":
        signal_container(argv[-1], signal.SIGKILL)
        pid_file(argv[-1]).unlink(missing_ok=True)
        return 0
    sys.stderr.write(f"fake runtime: unknown verb {verb!r}\n")
    return 125


if __name__ == "__main__":
    sys.exit(main())
