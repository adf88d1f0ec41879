"""The caller <-> worker connection of kolo.run: both sides must prove the
job's secret before any pickle is exchanged, and frames cannot be altered."""

import socket
import struct
import threading

import pytest

from kolo import _run_protocol as protocol


def _pair(caller_secret, worker_secret, rank=3):
    """Runs both handshakes over a real TCP connection; returns what each
    side got (a channel or rank, or the exception it raised)."""
    server = socket.create_server(("127.0.0.1", 0))
    address = protocol.format_address("127.0.0.1", server.getsockname()[1])
    outcome = {}

    def caller():
        sock, _ = server.accept()
        try:
            outcome["caller"] = protocol.accept_worker(sock, caller_secret, timeout=5)
        except Exception as error:  # noqa: BLE001 - the test inspects it
            outcome["caller"] = error
            sock.close()

    thread = threading.Thread(target=caller)
    thread.start()
    try:
        outcome["worker"] = protocol.connect_to_caller(address, worker_secret, rank, timeout=5)
    except Exception as error:  # noqa: BLE001
        outcome["worker"] = error
    thread.join(10)
    server.close()
    return outcome


def test_matching_secrets_connect_and_exchange_frames():
    secret = protocol.new_secret()
    outcome = _pair(secret, secret, rank=3)
    caller_channel, rank = outcome["caller"]
    worker_channel = outcome["worker"]
    assert rank == 3
    caller_channel.send(b"function")
    assert worker_channel.recv() == b"function"
    worker_channel.send(b"")  # empty frames are frames too
    worker_channel.send(b"result" * 1000)
    assert caller_channel.recv() == b""
    assert caller_channel.recv() == b"result" * 1000
    caller_channel.close()
    worker_channel.close()


def test_a_worker_without_the_secret_is_refused():
    outcome = _pair(protocol.new_secret(), protocol.new_secret())
    assert isinstance(outcome["caller"], protocol.ProtocolError)
    assert "did not prove the job's secret" in str(outcome["caller"])
    assert isinstance(outcome["worker"], (ConnectionError, protocol.ProtocolError))


def test_an_altered_frame_is_rejected():
    secret = protocol.new_secret()
    outcome = _pair(secret, secret)
    caller_channel, _ = outcome["caller"]
    worker_channel = outcome["worker"]
    body = b"payload"
    # A frame with the right layout but a body changed on the way.
    forged = struct.pack(">Q", len(body)) + b"PAYLOAD" + b"\0" * protocol.MAC_BYTES
    caller_channel.sock.sendall(forged)
    with pytest.raises(protocol.ProtocolError, match="failed authentication"):
        worker_channel.recv()
    caller_channel.close()
    worker_channel.close()


def test_a_frame_cannot_be_reflected_back_to_its_sender():
    secret = protocol.new_secret()
    outcome = _pair(secret, secret)
    caller_channel, _ = outcome["caller"]
    worker_channel = outcome["worker"]
    # Capture what the caller sends and play it back to the caller.
    body = b"to the worker"
    caller_channel.send(body)
    raw = protocol._recv_exactly(worker_channel.sock, 8 + len(body) + protocol.MAC_BYTES)
    worker_channel.sock.sendall(raw)
    with pytest.raises(protocol.ProtocolError):
        caller_channel.recv()
    caller_channel.close()
    worker_channel.close()


def test_not_a_caller():
    server = socket.create_server(("127.0.0.1", 0))

    def answer():
        sock, _ = server.accept()
        sock.sendall(b"SSH-2.0-OpenSSH\r\n" + b"\0" * 64)
        sock.close()

    thread = threading.Thread(target=answer)
    thread.start()
    address = protocol.format_address("127.0.0.1", server.getsockname()[1])
    with pytest.raises(protocol.ProtocolError, match="not a kolo.run caller"):
        protocol.connect_to_caller(address, protocol.new_secret(), 0, timeout=5)
    thread.join(10)
    server.close()


def test_addresses_round_trip():
    assert protocol.parse_address(protocol.format_address("10.0.0.1", 80)) == ("10.0.0.1", 80)
    assert protocol.format_address("fe80::1", 80) == "[fe80::1]:80"
    assert protocol.parse_address("[fe80::1]:80") == ("fe80::1", 80)
    with pytest.raises(ValueError, match="host:port"):
        protocol.parse_address("10.0.0.1")
