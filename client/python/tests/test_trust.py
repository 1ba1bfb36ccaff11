"""The checks a client makes before it sends anything (docs/SECURITY.md):
the socket's directory private to the user, and the process listening on
it running as the user."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import panehost

NOBODY = 65534


def connect(path: str) -> None:
    async def main() -> None:
        client = await panehost.connect(path)
        await client.aclose()

    asyncio.run(main())


def test_a_socket_directory_open_to_others_is_refused(host) -> None:  # type: ignore[no-untyped-def]
    directory = os.path.dirname(host.socket)
    connect(host.socket)  # The host's own directory passes.
    os.chmod(directory, 0o755)
    with pytest.raises(panehost.UntrustedHost) as caught:
        connect(host.socket)
    assert "has mode 755; it must be 0700" in caught.value.reason
    os.chmod(directory, 0o700)
    connect(host.socket)


def test_a_symbolic_link_in_place_of_the_directory_is_refused(host) -> None:  # type: ignore[no-untyped-def]
    link = host.dir / "link"
    link.symlink_to(os.path.dirname(host.socket))
    with pytest.raises(panehost.UntrustedHost) as caught:
        connect(str(link / "host.sock"))
    assert "not a directory" in caught.value.reason


@pytest.mark.skipif(os.geteuid() != 0, reason="changing a directory's owner needs root")
def test_a_socket_directory_of_another_user_is_refused(host) -> None:  # type: ignore[no-untyped-def]
    directory = os.path.dirname(host.socket)
    os.chown(directory, NOBODY, NOBODY)
    try:
        with pytest.raises(panehost.UntrustedHost) as caught:
            connect(host.socket)
        assert f"is owned by uid {NOBODY}, not by this user (uid 0)" in caught.value.reason
    finally:
        os.chown(directory, 0, 0)


LISTENER = """
import os, socket, sys
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(sys.argv[1])
server.listen(4)
print("listening", flush=True)
while True:
    connection, _ = server.accept()
    data = connection.recv(65536)
    with open(sys.argv[2], "ab") as seen:
        seen.write(data)
    connection.close()
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="running a listener as another user needs root")
def test_a_listener_of_another_user_is_refused_before_anything_is_sent() -> None:
    # Another user's socket, moved into this user's private directory
    # (chowned to this user too): only the peer's credentials tell.
    theirs = Path(tempfile.mkdtemp(prefix="phpy-theirs-", dir="/tmp"))
    ours = Path(tempfile.mkdtemp(prefix="phpy-ours-", dir="/tmp"))
    os.chmod(ours, 0o700)
    os.chown(theirs, NOBODY, NOBODY)
    seen = theirs / "seen"
    # An interpreter the other user can run (a virtualenv may sit in a
    # directory only this user can read).
    python = next((p for p in ("/usr/bin/python3", "/usr/local/bin/python3") if os.access(p, os.X_OK)), sys.executable)
    listener = None
    try:
        listener = subprocess.Popen(
            [python, "-c", LISTENER, str(theirs / "host.sock"), str(seen)],
            user=NOBODY,
            group=NOBODY,
            extra_groups=[],
            stdout=subprocess.PIPE,
        )
        assert listener.stdout is not None and listener.stdout.readline() == b"listening\n"
        os.rename(theirs / "host.sock", ours / "host.sock")
        os.chown(ours / "host.sock", 0, 0)
        with pytest.raises(panehost.UntrustedHost) as caught:
            connect(str(ours / "host.sock"))
        assert f"runs as uid {NOBODY}, not as this user (uid 0)" in caught.value.reason
        # The listener took the connection; give it a moment to write what it got.
        deadline = time.monotonic() + 5
        while not seen.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert seen.exists() and seen.read_bytes() == b"", "the client sent something to a stranger"
    finally:
        if listener is not None:
            listener.kill()
            listener.wait()
        shutil.rmtree(theirs, ignore_errors=True)
        shutil.rmtree(ours, ignore_errors=True)
