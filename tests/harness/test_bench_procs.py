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
