"""The connection between kolo.run's caller and each of its workers.

The caller listens on TCP; each worker connects, the two prove to each other
that they know the job's secret (passed to the workers by environment, never
sent on the wire), and then exchange two messages: the pickled function to
the worker, the pickled result (or error) back. Both directions carry
pickles, which run code when loaded, so neither side loads anything from a
peer that has not proved the secret, and every frame is authenticated
(HMAC-SHA256 under a key fresh to the connection, with a sequence number and
a direction, so frames cannot be altered, replayed or reflected).

Handshake (fixed sizes, so nothing unauthenticated is buffered):
  caller -> worker  MAGIC, caller nonce
  worker -> caller  worker nonce, rank (4 bytes), HMAC(secret, "worker", both nonces, rank)
  caller -> worker  HMAC(secret, "caller", both nonces, rank)
Frames: length (8 bytes), body, HMAC(key, direction, sequence, length, body).
"""

import hashlib
import hmac
import os
import socket
import struct

MAGIC = b"KOLORUN1"
NONCE_BYTES = 32
MAC_BYTES = 32
MAX_FRAME_BYTES = 1 << 36  # a corrupted length must not make us allocate without bound

ADDRESS_ENV = "KOLO_RUN_ADDR"
SECRET_ENV = "KOLO_RUN_SECRET"
START_TIMEOUT_ENV = "KOLO_RUN_START_TIMEOUT"

_TO_WORKER = b"caller->worker"
_TO_CALLER = b"worker->caller"


class ProtocolError(Exception):
    """The peer is not part of this job or broke the protocol."""


def new_secret():
    return os.urandom(32).hex()


def format_address(host, port):
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def parse_address(text):
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"kolo.run: malformed caller address {text!r} (want host:port)")
    return host.strip("[]"), int(port)


def _mac(key, *parts):
    h = hmac.new(key, digestmod=hashlib.sha256)
    for part in parts:
        h.update(part)
    return h.digest()


def _recv_exactly(sock, n):
    chunks = []
    while n:
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            raise ConnectionError("the peer closed the connection")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


class Channel:
    """One authenticated, ordered stream of frames over a connected socket."""

    def __init__(self, sock, key, send_label, recv_label):
        self.sock = sock
        self._key = key
        self._send_label = send_label
        self._recv_label = recv_label
        self._send_seq = 0
        self._recv_seq = 0

    def send(self, body):
        header = struct.pack(">Q", len(body))
        mac = _mac(self._key, self._send_label, struct.pack(">Q", self._send_seq), header, body)
        self._send_seq += 1
        self.sock.sendall(header)
        self.sock.sendall(body)
        self.sock.sendall(mac)

    def recv(self):
        header = _recv_exactly(self.sock, 8)
        (length,) = struct.unpack(">Q", header)
        if length > MAX_FRAME_BYTES:
            raise ProtocolError(f"frame of {length} bytes announced; the limit is "
                                f"{MAX_FRAME_BYTES}")
        body = _recv_exactly(self.sock, length)
        mac = _recv_exactly(self.sock, MAC_BYTES)
        expected = _mac(self._key, self._recv_label, struct.pack(">Q", self._recv_seq), header,
                        body)
        if not hmac.compare_digest(mac, expected):
            raise ProtocolError("a frame failed authentication")
        self._recv_seq += 1
        return body

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def _session_key(secret, caller_nonce, worker_nonce):
    return _mac(secret, b"session key", caller_nonce, worker_nonce)


def accept_worker(sock, secret, timeout):
    """Caller side of the handshake on an accepted socket; returns (channel,
    rank). Raises ProtocolError for a peer without the secret, OSError or
    socket.timeout for a broken or silent one."""
    secret = secret.encode()
    sock.settimeout(timeout)
    caller_nonce = os.urandom(NONCE_BYTES)
    sock.sendall(MAGIC + caller_nonce)
    reply = _recv_exactly(sock, NONCE_BYTES + 4 + MAC_BYTES)
    worker_nonce, rank_bytes, proof = (reply[:NONCE_BYTES], reply[NONCE_BYTES:NONCE_BYTES + 4],
                                       reply[NONCE_BYTES + 4:])
    if not hmac.compare_digest(proof, _mac(secret, b"worker", caller_nonce, worker_nonce,
                                           rank_bytes)):
        raise ProtocolError("a connection did not prove the job's secret")
    sock.sendall(_mac(secret, b"caller", caller_nonce, worker_nonce, rank_bytes))
    sock.settimeout(None)
    key = _session_key(secret, caller_nonce, worker_nonce)
    (rank,) = struct.unpack(">i", rank_bytes)
    return Channel(sock, key, _TO_WORKER, _TO_CALLER), rank


def connect_to_caller(address, secret, rank, timeout):
    """Worker side: connects and authenticates both ways; returns a channel."""
    host, port = parse_address(address)
    sock = socket.create_connection((host, port), timeout=timeout)
    try:
        secret = secret.encode()
        hello = _recv_exactly(sock, len(MAGIC) + NONCE_BYTES)
        if hello[:len(MAGIC)] != MAGIC:
            raise ProtocolError(f"{address} is not a kolo.run caller")
        caller_nonce = hello[len(MAGIC):]
        worker_nonce = os.urandom(NONCE_BYTES)
        rank_bytes = struct.pack(">i", rank)
        sock.sendall(worker_nonce + rank_bytes +
                     _mac(secret, b"worker", caller_nonce, worker_nonce, rank_bytes))
        proof = _recv_exactly(sock, MAC_BYTES)
        if not hmac.compare_digest(proof, _mac(secret, b"caller", caller_nonce, worker_nonce,
                                               rank_bytes)):
            raise ProtocolError(f"{address} did not prove the job's secret")
        sock.settimeout(None)
        key = _session_key(secret, caller_nonce, worker_nonce)
        return Channel(sock, key, _TO_CALLER, _TO_WORKER)
    except BaseException:
        sock.close()
        raise
