"""The rendezvous store attacked while a job runs: clients with a wrong or
an empty secret, garbage, a frame header announcing an oversized payload,
silent connections that never say hello, and a bounded connection flood.
The job must finish, each attacker be turned away, and kolorun print a
bounded number of lines about it. The attacker speaks the store's wire
format (src/rendezvous/store_wire.h): a 40-byte hello each way, then
frames of a 28-byte header, payload and HMAC-SHA256 under a key derived
from the job's secret and both nonces."""

import hashlib
import hmac
import os
import socket
import struct
import sys
import threading
import time

from trial import (WORKER, Outcome, environ_of, finish, judge_success, new_marker, rank_pids,
                   start_job)

HELLO_MAGIC, FRAME_MAGIC, VERSION, PING = 0x4B4F4C48, 0x4B4F4C46, 1, 1
CLIENT_TO_SERVER = b"kolo-store-v1 client-to-server"
ATTACKS = ["wrong secret", "empty secret", "garbage", "oversized frame", "silent peers",
           "connection flood"]


def _hello(nonce):
    return struct.pack(">IBBBB", HELLO_MAGIC, VERSION, ord("C"), 0, 0) + nonce


def _frame(secret, server_nonce, client_nonce, payload_bytes=0, payload=b""):
    key = hmac.new(secret.encode(), CLIENT_TO_SERVER + server_nonce + client_nonce,
                   hashlib.sha256).digest()
    header = struct.pack(">IBBBBQQI", FRAME_MAGIC, VERSION, PING, 0, 0, 0, 0, payload_bytes)
    return header + payload + hmac.new(key, header + payload, hashlib.sha256).digest()


def _connect(address):
    s = socket.create_connection(address, timeout=5)
    s.settimeout(5)
    return s


def _closed_by_server(s, limit=10.0):
    """True once the server closed the connection (EOF or reset)."""
    s.settimeout(limit)
    try:
        while s.recv(4096):
            pass
        return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False
    finally:
        s.close()


def _ping_with(address, secret):
    s = _connect(address)
    nonce = os.urandom(32)
    s.sendall(_hello(nonce))
    server_hello = b""
    while len(server_hello) < 40:
        chunk = s.recv(40 - len(server_hello))
        if not chunk:
            return True
        server_hello += chunk
    s.sendall(_frame(secret, server_hello[8:], nonce))
    return _closed_by_server(s)


def _attack(kind, address, rng):
    """Runs one attack; returns a list of what went wrong (empty: turned away)."""
    wrong = []
    if kind in ("wrong secret", "empty secret"):
        secret = "" if kind == "empty secret" else os.urandom(32).hex()
        if not _ping_with(address, secret):
            wrong.append(f"{kind}: connection kept open")
    elif kind == "garbage":
        s = _connect(address)
        s.sendall(os.urandom(rng.randint(1, 8192)))
        if not _closed_by_server(s):
            wrong.append("garbage: connection kept open")
    elif kind == "oversized frame":
        s = _connect(address)
        nonce = os.urandom(32)
        s.sendall(_hello(nonce) + struct.pack(">IBBBBQQI", FRAME_MAGIC, VERSION, PING, 0, 0, 0,
                                              0, 0xFFFFFFF0))
        if not _closed_by_server(s):
            wrong.append("oversized frame: connection kept open")
    elif kind == "silent peers":
        sockets = [_connect(address) for _ in range(rng.randint(1, 50))]
        time.sleep(rng.uniform(1, 3))
        for s in sockets:
            s.close()
    elif kind == "connection flood":
        def churn(count):
            for _ in range(count):
                try:
                    _connect(address).close()
                except OSError:
                    pass
        threads = [threading.Thread(target=churn, args=(500,)) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    return wrong


def store_attack(rng, workdir):
    kind = rng.choice(ATTACKS)
    np_ = rng.choice([2, 3])
    marker = new_marker()
    job = start_job(workdir, ["-np", np_, sys.executable, WORKER, workdir, "--marker", marker,
                              "--steps", 150, "--step-sleep", 0.02], marker=marker)
    try:
        pid = None
        deadline = time.monotonic() + 30
        while pid is None and time.monotonic() < deadline and job.process.poll() is None:
            pid = rank_pids(job).get(0)
            time.sleep(0.02)
        env = environ_of(pid) if pid else {}
        if "KOLO_RENDEZVOUS_PORT" not in env:
            return Outcome("unclear error", None, f"{kind}: no rank 0 to learn the store from\n"
                                                  + job.report())
        address = (env["KOLO_RENDEZVOUS_ADDR"], int(env["KOLO_RENDEZVOUS_PORT"]))
        fault_at = time.monotonic()
        try:
            wrong = _attack(kind, address, rng)
        except OSError as e:
            wrong = [f"{kind}: {e}"] if job.process.poll() is None else []
        outcome = judge_success(job, finish(job, 120), fault_at, max_lines=10)
        if wrong and outcome.kind == "ok":
            outcome = Outcome("unclear error", outcome.seconds, "; ".join(wrong))
        outcome.detail = f"{kind}: {outcome.detail}"
        return outcome
    finally:
        job.stop()


CASES = {"store attacked": store_attack}
