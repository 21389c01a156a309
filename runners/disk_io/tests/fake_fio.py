"""A stand-in for ``fio`` that prints recorded reports (tests only).

It answers the write invocation (``--name=glimmer-write``) with one file and the read
invocation with another, exits with the code given for each, and appends its argv to a log so a
test can see what the runner asked fio for.
"""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
WRITE = FIXTURES / "write-3.33-tmpfs.json"
READ = FIXTURES / "read-3.33-tmpfs.json"


def fake_fio(
    tmp_path: Path,
    *,
    write: Path | str = WRITE,
    read: Path | str = READ,
    write_exit: int = 0,
    read_exit: int = 0,
    stderr: str = "",
    endless: bool = False,
) -> Path:
    """An executable fio stand-in; ``write``/``read`` are fixture paths or literal text."""
    texts = {}
    for key, source in (("write", write), ("read", read)):
        texts[key] = source.read_text() if isinstance(source, Path) else source
    log = tmp_path / "fake-fio-argv.jsonl"
    script = tmp_path / "fio"
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, sys\n"
        f"texts = {texts!r}\n"
        f"with open({str(log)!r}, 'a') as log:\n"
        "    log.write(json.dumps(sys.argv[1:]) + '\\n')\n"
        f"if {endless!r}:\n"
        "    while True:\n"
        "        sys.stdout.write('x' * 65535 + '\\n')\n"
        "key = 'write' if '--name=glimmer-write' in sys.argv else 'read'\n"
        "sys.stdout.write(texts[key])\n"
        f"sys.stderr.write({stderr!r})\n"
        f"sys.exit({write_exit} if key == 'write' else {read_exit})\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def argv_log(tmp_path: Path) -> list[list[str]]:
    path = tmp_path / "fake-fio-argv.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]
