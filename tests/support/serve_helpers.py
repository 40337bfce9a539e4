"""Helpers for the `fbgfx serve` tests (and benchmarks/bench_serve.py): a Python reader of the
update messages, the CLI server in a subprocess, a bounded wait, and headless Chromium."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np

from . import ROOT

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


def apply_update(canvas: np.ndarray, message: bytes) -> int:
    """Draw one update message onto an (h, w, 3) array as the page does; return its version."""
    kind, encoding, count, version = struct.unpack_from("<BBHI", message)
    assert kind == 1
    rects = [struct.unpack_from("<HHHH", message, 8 + 8 * i) for i in range(count)]
    payload = message[8 + 8 * count :]
    if encoding == 1:
        payload = zlib.decompress(payload)
    off = 0
    for x, y, w, h in rects:
        canvas[y : y + h, x : x + w] = np.frombuffer(payload, np.uint8, w * h * 3, off).reshape(h, w, 3)
        off += w * h * 3
    assert off == len(payload)
    return int(version)


def chromium(window: str = "900,700"):
    """(a headless Chromium driven by Selenium, its throw-away profile directory to remove after quit())."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--window-size={window}",
    ):
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="fbgfx-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    options.binary_location = CHROMIUM
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options), profile


def wait_until(condition, timeout=60.0, what="the condition"):
    """Poll ``condition()`` until it is true (returning its value) or fail after ``timeout`` seconds.

    The timeout is for a hang only: a page reconnecting after its back-off (up to 4 s), in a
    browser started on a machine with every core busy, takes many times what it does idle."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


class CliServer:
    """`python -m fbgfx serve ...` in a subprocess; ``url`` is what it printed."""

    def __init__(self, *argv: str) -> None:
        env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "fbgfx", "serve", *argv],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        line = self.proc.stdout.readline()  # the server prints its URL once it listens
        found = re.search(r"(http://\S+)", line)
        if not found:
            self.stop()
            raise AssertionError(f"serve did not start: {line!r} {self.proc.stderr.read()!r}")
        self.url = found.group(1)
        self.port = int(re.search(r":(\d+)/", self.url).group(1))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()

    def __enter__(self) -> CliServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
