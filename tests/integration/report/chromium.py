"""Headless Chromium as a test instrument for the HTML report.

Every run goes through a loopback HTTP proxy that records each request the browser
makes, so "the report loads nothing from the network" is observed, not assumed. The
browser's own background traffic (component updates, sign-in, network time) goes to
fixed Google endpoints unrelated to any page; those are listed in
:data:`BROWSER_OWN_HOSTS` and set aside, everything else counts as a page request.

Run as a module to regenerate the screenshot in the docs:
``python -m tests.integration.report.chromium docs/report-screenshot.png``.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

#: Hosts Chromium itself contacts whatever page it shows (never a report asset).
BROWSER_OWN_HOSTS: Final = frozenset(
    {"update.googleapis.com", "accounts.google.com", "clients2.google.com"}
)
_FLAGS: Final = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-domain-reliability",
    "--disable-features=NetworkTimeServiceQuerying,OptimizationHints,MediaRouter,Translate",
    "--no-first-run",
    "--no-pings",
    "--hide-scrollbars",
    "--enable-logging=stderr",
    "--v=0",
)
_REQUEST: Final = re.compile(rb"^(?:[A-Z]+) (?:https?://)?([^/:\s]+)")


@dataclass
class BrowserRun:
    stderr: str
    stdout: str
    requests: list[str] = field(default_factory=list)

    @property
    def page_requests(self) -> list[str]:
        return [h for h in self.requests if h not in BROWSER_OWN_HOSTS]

    @property
    def console(self) -> list[str]:
        """Every console message the page produced (errors, CSP refusals, logs)."""
        return [line for line in self.stderr.splitlines() if ":CONSOLE" in line]


class _Proxy:
    """Accepts connections on loopback and records the host each one asks for."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.hosts: list[str] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                try:
                    head = conn.recv(4096)
                except OSError:
                    head = b""
                match = _REQUEST.match(head)
                self.hosts.append(match.group(1).decode() if match else "?")

    def __enter__(self) -> _Proxy:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.close()
        self.thread.join(timeout=5)


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        raise RuntimeError("chromium is not installed (hack/prereqs installs the Debian package)")
    return path


def run_chromium(page: Path, *extra: str, timeout: float = 120) -> BrowserRun:
    with tempfile.TemporaryDirectory() as profile, _Proxy() as proxy:
        proc = subprocess.run(
            [
                chromium(),
                *_FLAGS,
                f"--proxy-server=http://127.0.0.1:{proxy.port}",
                "--proxy-bypass-list=<-loopback>",
                f"--user-data-dir={profile}",
                *extra,
                page.resolve().as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"chromium exited {proc.returncode}: {proc.stderr[-2000:]}")
        return BrowserRun(stderr=proc.stderr, stdout=proc.stdout, requests=list(proxy.hosts))


def screenshot(page: Path, png: Path, *, width: int = 1280, height: int = 2200) -> BrowserRun:
    return run_chromium(page, f"--screenshot={png}", f"--window-size={width},{height}")


def dump_dom(page: Path) -> BrowserRun:
    return run_chromium(page, "--dump-dom")


def png_size(png: Path) -> tuple[int, int]:
    data = png.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise ValueError(f"{png} is not a PNG")
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def fleet_report_html(out: Path) -> Path:
    """The fleet fixture's report as ``--run`` makes it (plan gates, fingerprints), sim."""
    from glimmer.report import render
    from glimmer.report.cluster import report_from_cluster
    from tests.unit.report import report_fleet as fleet
    from tests.unit.report.report_cluster import cluster_with_run

    async def build() -> str:
        client, _ = await cluster_with_run(provenance="sim")
        report = await report_from_cluster(client, namespace=fleet.NAMESPACE, name=fleet.RUN_NAME)
        return render(report, "html")["burn-in-report.html"]

    out.mkdir(parents=True, exist_ok=True)
    path = out / "burn-in-report.html"
    path.write_text(asyncio.run(build()), encoding="utf-8")
    return path


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/report-screenshot.png")
    with tempfile.TemporaryDirectory() as folder:
        run = screenshot(fleet_report_html(Path(folder)), target.resolve(), width=1400, height=2300)
    print(f"wrote {target} {png_size(target)}; page requests: {run.page_requests}")
