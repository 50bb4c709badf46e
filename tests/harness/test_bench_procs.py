"""The bench's /proc readers that need no cluster: finding the process behind a listening port."""

from __future__ import annotations

import os
import socket

from harness.bench import procs


def test_listener_pid_finds_the_process_listening_on_a_port() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        assert procs.listener_pid(port) == os.getpid()
    # Closed: nobody listens there any more.
    assert procs.listener_pid(port) is None


def test_a_connected_socket_is_not_a_listener() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname()) as client:
            assert procs.listener_pid(client.getsockname()[1]) is None


def test_spysplit_charges_the_innermost_frame_and_drops_the_selector_wait(tmp_path) -> None:
    from harness.bench import spysplit

    profile = tmp_path / "raw.txt"
    profile.write_text(
        "<module> (kubeloop/cli/main.py:47);Transport.request (kubeloop/client/transport.py:273) 3\n"
        "run (asyncio/runners.py:1);ClientSession._request (aiohttp/client.py:819) 5\n"
        "run (asyncio/runners.py:1);Controller._process (kubeloop/controller/controller.py:260) 2\n"
        "run (asyncio/runners.py:1);EpollSelector.select (selectors.py:468) 7\n"
        "run (asyncio/runners.py:1);SSLObject.read (ssl.py:921) 1\n")
    parts, waited = spysplit.split(str(profile))
    assert waited == 7
    assert parts == {"JSON decode (orjson.loads call sites)": 3, "aiohttp (HTTP)": 5, "kubeloop": 2,
                     "TLS (ssl, asyncio sslproto)": 1}


def test_bytecode_is_compiled_before_the_runs_as_an_installed_package_has_it(tmp_path) -> None:
    """Contestants read bytecode even where Python may not write it (PYTHONDONTWRITEBYTECODE=1)."""
    import importlib.util
    from pathlib import Path

    import pytest

    from harness.bench.runner import compile_bytecode

    (tmp_path / "pkg").mkdir()
    source = tmp_path / "pkg" / "mod.py"
    source.write_text("VALUE = 1\n")
    cached = Path(importlib.util.cache_from_source(str(source)))
    assert not cached.exists()
    assert compile_bytecode([tmp_path / "pkg"]) == [str(tmp_path / "pkg")]
    assert cached.exists()
    (tmp_path / "pkg" / "broken.py").write_text("def (:\n")
    with pytest.raises(SystemExit, match="byte-compiling .*pkg failed"):
        compile_bytecode([tmp_path / "pkg"])
