"""The asyncio client against a real host: handshake, operations, errors
with their codes, the two kinds of timeout, cancellation and concurrency."""

from __future__ import annotations

import asyncio
import base64

import pytest

import panehost
from panehost import connection as connection_module
from support import until_busy, until_idle, within


def run(coroutine):  # type: ignore[no-untyped-def]
    return asyncio.run(coroutine)


def test_the_handshake_is_at_the_hosts_revision(host) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        async with await panehost.connect(host.socket) as client:
            welcome = client.welcome
            assert welcome.protocol == panehost.PROTOCOL_VERSION
            assert welcome.revision == panehost.PROTOCOL_REVISION
            assert welcome.encoding == "json"
            assert welcome.host.startswith("panehost ")

    run(main())


def test_a_refused_handshake_raises_with_the_code(host, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(connection_module, "PROTOCOL_VERSION", 2)

    async def main() -> None:
        with pytest.raises(panehost.RefusedError) as caught:
            await panehost.connect(host.socket)
        assert caught.value.code == "PROTOCOL_MISMATCH"
        assert caught.value.protocol == 1

    run(main())


def test_nothing_listening_is_a_lost_connection(tmp_path) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        with pytest.raises(panehost.ConnectionLost) as caught:
            await panehost.connect(str(tmp_path / "none" / "host.sock"))
        assert isinstance(caught.value.__cause__, FileNotFoundError)

    run(main())


def test_start_a_shell_ask_and_get_the_answer(host) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        async with await panehost.connect(host.socket) as client:
            pane = await client.start("shell", labels={"task": "T-1"})
            assert isinstance(pane, panehost.PaneSummary)
            assert pane.runtime == "shell" and pane.labels == {"task": "T-1"}
            assert isinstance(pane.state, panehost.PaneStateRunning)
            report = await client.ask(pane.id, "echo $((6 * 7)); (exit 3)")
            assert isinstance(report, panehost.TurnReport)
            assert "42" in report.added_text.splitlines()
            assert report.source == "shell_integration"
            assert report.exit_code == 3
            assert report.completed_offset > report.started_offset
            listed = await client.list(labels={"task": "T-1"})
            assert [p.id for p in listed] == [pane.id]
            detail = await client.inspect(pane.id)
            assert "42" in detail.screen.text
            history = await client.history(pane.id, lines=50)
            assert "42" in history.text
            sent = await client.send(pane.id, "echo", data=b" typed\r")
            assert sent.bytes == len(b"echo typed\r")
            match = await client.wait_for(pane.id, r"(?m)^typed$", wait_timeout_ms=10_000)
            assert match.matched == "typed"
            size = await client.resize(pane.id, 100, 30)
            assert (size.cols, size.rows) == (100, 30)
            closed = await client.close_pane(pane.id)
            assert closed.pane == pane.id
            assert await client.list() == []

    run(main())


def test_errors_carry_the_code_and_the_limitation(host) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        async with await panehost.connect(host.socket) as client:
            with pytest.raises(panehost.HostError) as caught:
                await client.inspect("p-none")
            assert caught.value.code == "UNKNOWN_PANE"
            assert caught.value.limitation is None
            assert caught.value.request_id is not None
            with pytest.raises(panehost.HostError) as caught:
                await client.start("shell", resume=panehost.ResumeRequestReference(value="4f9c2d1e"))
            assert caught.value.code == "OPERATION_UNSUPPORTED"
            assert caught.value.limitation == "NATIVE_RESUME_UNSUPPORTED"
            with pytest.raises(panehost.HostError) as caught:
                await client.start("emacs")
            assert caught.value.code == "UNKNOWN_RUNTIME"
            # The connection goes on after errors.
            assert await client.list() == []

    run(main())


def test_the_hosts_wait_and_the_clients_deadline_are_distinct(host) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        async with await panehost.connect(host.socket) as client:
            pane = await client.start("shell")
            await client.ask(pane.id, "true")
            # The host's wait: it answers TURN_TIMEOUT and leaves the turn running.
            with pytest.raises(panehost.HostError) as caught:
                await client.ask(pane.id, "sleep 30", turn_timeout_ms=300)
            assert caught.value.code == "TURN_TIMEOUT"
            assert not isinstance(caught.value, panehost.CallTimeout)
            await client.interrupt(pane.id)
            # The client's deadline: it stops waiting, the host goes on.
            loop = asyncio.get_running_loop()
            began = loop.time()
            with pytest.raises(panehost.CallTimeout) as timed_out:
                await client.ask(pane.id, "sleep 2; echo slept", call_timeout=0.3)
            assert loop.time() - began < 1.5
            assert timed_out.value.after == 0.3
            assert isinstance(timed_out.value, TimeoutError)
            match = await client.wait_for(pane.id, "(?m)^slept$", wait_timeout_ms=10_000)
            assert match.matched == "slept"
            assert client.connection is not None and client.connection.in_flight == 0
            with pytest.raises(panehost.HostError) as caught:
                await client.wait_for(pane.id, "never shown", wait_timeout_ms=200)
            assert caught.value.code == "WAIT_TIMEOUT"
            with pytest.raises(TypeError):
                await client.ask(pane.id, "true", timeout_ms=5000)  # type: ignore[call-arg]

    run(main())


def test_a_cancelled_call_stops_waiting_and_the_connection_goes_on(host) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        async with await panehost.connect(host.socket) as client:
            pane = await client.start("shell")
            await client.ask(pane.id, "true")
            task = asyncio.ensure_future(client.ask(pane.id, "sleep 1; echo done-sleeping"))
            await client.wait_for(pane.id, "sleep 1", wait_timeout_ms=10_000)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            connection = client.connection
            assert connection is not None and connection.in_flight == 0
            # The host finished the turn; its late answer was dropped quietly.
            await client.wait_for(pane.id, "(?m)^done-sleeping$", wait_timeout_ms=10_000)
            await until_idle(client, pane.id)
            report = await client.ask(pane.id, "echo after")
            assert "after" in report.added_text.splitlines()
            assert client.connection is connection

    run(main())


def test_concurrent_requests_on_one_connection_are_matched_by_id(host) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        async with await panehost.connect(host.socket) as client:
            panes = await asyncio.gather(*(client.start("shell", labels={"n": str(n)}) for n in range(4)))
            assert len({pane.id for pane in panes}) == 4
            slow = asyncio.ensure_future(client.ask(panes[0].id, "sleep 3; echo slow"))
            answers = await within(
                asyncio.gather(*(client.inspect(pane.id) for pane in panes for _ in range(10)))
            )
            # Every answer is the one for its own request.
            assert [detail.pane.id for detail in answers] == [pane.id for pane in panes for _ in range(10)]
            assert not slow.done(), "the quick requests waited for the slow one"
            by_label = await asyncio.gather(*(client.list(labels={"n": str(n)}) for n in range(4)))
            assert [[p.id for p in listed] for listed in by_label] == [[pane.id] for pane in panes]
            report = await within(slow)
            assert "slow" in report.added_text.splitlines()

    run(main())


def test_interrupt_stops_a_running_command(host) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        async with await panehost.connect(host.socket) as client:
            pane = await client.start("shell")
            await client.ask(pane.id, "true")
            await client.send(pane.id, "sleep 100", enter=True)
            await client.wait_for(pane.id, "sleep 100", wait_timeout_ms=10_000)
            # The command has begun (not only been echoed) before the Ctrl-C.
            await until_busy(client, pane.id)
            report = await client.interrupt(pane.id)
            assert isinstance(report, panehost.InterruptReport)
            assert report.outcome == "turn_cancelled", report
            assert [step.action for step in report.steps][0] == "keys"
            detail = await client.inspect(pane.id)
            assert detail.pane.activity == "idle"
            terminated = await client.interrupt(pane.id, terminate=True)
            assert terminated.pane == pane.id

    run(main())


def test_large_input_is_split_into_frames(host) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        async with await panehost.connect(host.socket) as client:
            pane = await client.start("shell", command=["sh", "-c", "stty -echo -icanon; echo ready; head -c 1500000 | wc -c"])
            await client.wait_for(pane.id, "ready", wait_timeout_ms=10_000)
            data = base64.b64encode(bytes(range(256)) * 4400)[:1_500_000]
            sent = await client.send(pane.id, data=data)
            assert sent.bytes == 1_500_000
            match = await client.wait_for(pane.id, "1500000", wait_timeout_ms=10_000)
            assert match.matched == "1500000"

    run(main())


def test_autostart_starts_a_host_when_none_answers(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json
    import os
    import shutil
    import signal
    import tempfile

    from conftest import panehost_bin

    directory = tempfile.mkdtemp(prefix="phpy-auto-", dir="/tmp")
    socket_path = os.path.join(directory, "run", "host.sock")
    state_dir = os.path.join(directory, "state")
    autostart = panehost.Autostart(
        program=panehost_bin(),
        args=("--state-dir", state_dir),
        env={"SHELL": "/bin/bash", "HOME": str(tmp_path)},
        log_file=os.path.join(directory, "host.log"),
    )

    async def main() -> int:
        async with await panehost.connect(socket_path, autostart=autostart) as client:
            assert client.welcome.revision == panehost.PROTOCOL_REVISION
            pane = await client.start("shell", command=["true"])
            assert pane.runtime == "shell"
        # A second connect finds the host that runs; it starts no other.
        async with await panehost.connect(socket_path, autostart=autostart) as client:
            assert [p.id for p in await client.list()] == [pane.id]
        with open(os.path.join(state_dir, "host.lock")) as lock:
            return int(json.loads(lock.read())["pid"])

    try:
        pid = asyncio.run(main())
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    os.kill(pid, signal.SIGTERM)
    import time

    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            # The started host is this process's child: reap it.
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                break
        except ChildProcessError:
            break
        time.sleep(0.02)
    else:
        os.kill(pid, signal.SIGKILL)
        raise AssertionError("the started host did not end")
    with open(os.path.join(directory, "host.log")) as log:
        started = log.read().count("host listening")
    shutil.rmtree(directory, ignore_errors=True)
    assert started == 1
