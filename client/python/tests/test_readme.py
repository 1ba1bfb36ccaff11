"""The README's first example runs as written against a real host."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from panehost import sync

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_example_runs_as_written(host, tmp_path) -> None:  # type: ignore[no-untyped-def]
    text = README.read_text(encoding="utf-8")
    assert text.startswith("# panehost for Python\n")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    example = tmp_path / "example.py"
    example.write_text(blocks[0], encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["PANEHOST_SOCKET"] = host.socket
    done = subprocess.run(
        [sys.executable, str(example)], env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "hello from 42" in done.stdout.splitlines()
    assert "[the turn ended, exit code 0]" in done.stdout
    # It closed its pane.
    with sync.connect(host.socket) as client:
        assert client.list() == []


def test_the_readme_sync_example_runs_as_written(host, tmp_path) -> None:  # type: ignore[no-untyped-def]
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    # The second block is indented inside a list item.
    example = tmp_path / "sync_example.py"
    example.write_text("\n".join(line[2:] for line in blocks[1].splitlines()) + "\n", encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["PANEHOST_SOCKET"] = host.socket
    done = subprocess.run([sys.executable, str(example)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Linux" in done.stdout or "Darwin" in done.stdout
