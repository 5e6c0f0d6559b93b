"""Starts a real `arbiter serve` for the tests (binary from $ARBITER_BIN,
$CARGO_TARGET_DIR/release/arbiter or <repo>/target/release/arbiter)."""

import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


def arbiter_binary():
    candidates = [os.environ.get("ARBITER_BIN")]
    if os.environ.get("CARGO_TARGET_DIR"):
        candidates.append(os.path.join(os.environ["CARGO_TARGET_DIR"], "release", "arbiter"))
    candidates.append(str(REPO / "target" / "release" / "arbiter"))
    return next((c for c in candidates if c and os.path.exists(c)), None)


@pytest.fixture(scope="session")
def server_url():
    binary = arbiter_binary()
    if not binary:
        pytest.skip("no arbiter binary built")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([binary, "serve", "--addr", f"127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 15
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"arbiter exited: {proc.stderr.read().decode()}")
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=1):
                break
        except OSError:
            if time.time() > deadline:
                proc.kill()
                raise RuntimeError("arbiter did not answer /healthz")
            time.sleep(0.05)
    yield url
    proc.terminate()
    proc.wait(timeout=10)
