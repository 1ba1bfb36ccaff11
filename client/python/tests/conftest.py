"""What every test needs: a real host of its own (``PANEHOST_BIN``, by
default the workspace's ``target/debug/panehost``) in a temporary
directory of its own, ended after the test."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Dict, Iterator, Optional

import pytest

REPO = Path(__file__).resolve().parents[3]

WAIT = 20.0
"""How long any single wait in a test may take before it fails, in seconds."""


def panehost_bin() -> str:
    path = os.environ.get("PANEHOST_BIN") or str(REPO / "target" / "debug" / "panehost")
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} is missing: build it (cargo build -p panehost-host) or set PANEHOST_BIN")
    return path


class TestHost:
    """``panehost --socket S --state-dir D host`` in a directory of its own,
    with a home of its own and bash as its shell."""

    __test__ = False

    def __init__(self, extra_env: Optional[Dict[str, str]] = None) -> None:
        # Short: a socket path has at most 108 bytes.
        self.dir = Path(tempfile.mkdtemp(prefix="phpy-", dir="/tmp"))
        self.socket = str(self.dir / "run" / "host.sock")
        self.state_dir = str(self.dir / "state")
        self.home = self.dir / "home"
        self.home.mkdir()
        self.log_path = self.dir / "host.log"
        self.extra_env = dict(extra_env or {})
        self.program = panehost_bin()
        self.process: Optional[subprocess.Popen] = None
        self.start()

    def env(self) -> Dict[str, str]:
        return {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.home),
            "SHELL": "/bin/bash",
            "LANG": "C.UTF-8",
            "PANEHOST_LOG": "debug",
            **self.extra_env,
        }

    def start(self) -> None:
        assert self.process is None
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [self.program, "--socket", self.socket, "--state-dir", self.state_dir, "host"],
                env=self.env(),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        deadline = time.monotonic() + WAIT
        while True:
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(self.socket)
                return
            except OSError:
                if self.process.poll() is not None:
                    pytest.fail(f"the host exited ({self.process.returncode}); log:\n{self.log()}")
                if time.monotonic() > deadline:
                    pytest.fail(f"the host did not listen within {WAIT} s; log:\n{self.log()}")
                time.sleep(0.02)
            finally:
                probe.close()

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Ends the host with ``sig`` (SIGTERM closes its panes, SIGQUIT leaves
        them to their keepers) and waits for it."""
        process, self.process = self.process, None
        if process is None:
            return
        process.send_signal(sig)
        try:
            process.wait(WAIT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def restart(self) -> None:
        """Stops the host leaving its panes to their keepers, and starts the
        next one on the same socket and state directory."""
        self.stop(signal.SIGQUIT)
        self.start()

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):  # type: ignore[no-untyped-def]
    outcome = yield
    report = outcome.get_result()
    setattr(item, "report_" + report.when, report)


@pytest.fixture
def host(request: pytest.FixtureRequest) -> Iterator[TestHost]:
    """A host of this test's own."""
    test_host = TestHost()
    yield test_host
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed:
        tail = test_host.log().splitlines()[-60:]
        print("--- the last lines of the host's log ---\n" + "\n".join(tail))
    test_host.close()
