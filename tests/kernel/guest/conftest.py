"""Guest side of the real-kernel tests: runs as root inside the qemu VM.

Everything here reads the device *without* fbgfx — raw ioctls through ``fcntl``,
``os.pread`` on ``/dev/fb0``, sysfs, ``fbset -i`` and the emulated monitor's
screendump — so the guest tests compare fbgfx with independent truth.
"""

import fcntl
import os
import re
import struct
import subprocess
import time
from pathlib import Path
from typing import Optional

import numpy as np
import pytest

# "bochs=/dev/fb0,vfb=/dev/fb1": the driver setups loaded in this boot, by device.
SETUPS = dict(item.split("=", 1) for item in os.environ.get("FBGFX_SETUPS", "").split(",") if item)
RWDIR = Path(os.environ.get("FBGFX_RWDIR", "/tmp"))

# <linux/fb.h> and <linux/kd.h>
FBIOGET_VSCREENINFO = 0x4600
FBIOPUT_VSCREENINFO = 0x4601
FBIOGET_FSCREENINFO = 0x4602
FBIOGETCMAP = 0x4604
FBIOPAN_DISPLAY = 0x4606
KDGETMODE = 0x4B3B
KDSETMODE = 0x4B3A
KD_TEXT, KD_GRAPHICS = 0, 1

VAR_FIELDS = (
    "xres yres xres_virtual yres_virtual xoffset yoffset bits_per_pixel grayscale "
    "red_offset red_length red_msb_right green_offset green_length green_msb_right "
    "blue_offset blue_length blue_msb_right transp_offset transp_length transp_msb_right "
    "nonstd activate height width accel_flags pixclock left_margin right_margin "
    "upper_margin lower_margin hsync_len vsync_len sync vmode rotate colorspace "
    "reserved0 reserved1 reserved2 reserved3"
).split()

# Screen setups that have an emulated display the monitor can dump.
DISPLAYS = {"bochs", "cirrus", "cirrusfb"}


def pytest_collection_modifyitems(config, items):
    """``@pytest.mark.setups("bochs", ...)``: run a test only for those driver setups."""
    keep, drop = [], []
    for item in items:
        callspec = getattr(item, "callspec", None)
        setup = callspec.params.get("kernel") if callspec else None
        wanted = [m.args for m in item.iter_markers("setups")]
        (drop if any(setup not in args for args in wanted) else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


class Kernel:
    """Independent access to the framebuffer device under test."""

    def __init__(self, setup: str, device: str) -> None:
        self.setup = setup
        self.device = device
        self.sysfs_dir = Path("/sys/class/graphics") / os.path.basename(device)

    def __repr__(self) -> str:
        return f"<Kernel {self.setup} {self.device}>"

    # -- ioctls ------------------------------------------------------------------
    def var_bytes(self) -> bytes:
        with open(self.device, "rb", buffering=0) as f:
            return bytes(fcntl.ioctl(f, FBIOGET_VSCREENINFO, bytes(160)))

    def var(self) -> dict[str, int]:
        """fb_var_screeninfo as a dict of the kernel's field names."""
        return dict(zip(VAR_FIELDS, struct.unpack("<40I", self.var_bytes())))

    def put_var(self, raw: bytes) -> None:
        with open(self.device, "rb", buffering=0) as f:
            fcntl.ioctl(f, FBIOPUT_VSCREENINFO, raw)

    def fix(self) -> dict[str, object]:
        """fb_fix_screeninfo fields that matter here."""
        with open(self.device, "rb", buffering=0) as f:
            raw = bytes(fcntl.ioctl(f, FBIOGET_FSCREENINFO, bytes(80)))
        ident = raw[:16].split(b"\0")[0].decode()
        smem_len, typ, type_aux, visual = struct.unpack_from("<4I", raw, 24)
        xpanstep, ypanstep, ywrapstep = struct.unpack_from("<3H", raw, 40)
        (line_length,) = struct.unpack_from("<I", raw, 48)
        return dict(
            id=ident,
            smem_len=smem_len,
            type=typ,
            visual=visual,
            xpanstep=xpanstep,
            ypanstep=ypanstep,
            ywrapstep=ywrapstep,
            line_length=line_length,
        )

    def cmap(self, start: int = 0, count: int = 256) -> np.ndarray:
        """The colour map via FBIOGETCMAP, as (count, 3) uint8 (top byte of 16 bits)."""
        chans = [np.zeros(count, np.uint16) for _ in range(3)]
        ptrs = [c.ctypes.data for c in chans]
        arg = struct.pack("<II4Q", start, count, *ptrs, 0)
        with open(self.device, "rb", buffering=0) as f:
            fcntl.ioctl(f, FBIOGETCMAP, arg)
        return (np.stack(chans, axis=1) >> 8).astype(np.uint8)

    # -- sysfs and fbset ---------------------------------------------------------
    def sysfs(self, name: str) -> str:
        return (self.sysfs_dir / name).read_text().strip()

    def sysfs_pair(self, name: str):
        return tuple(int(v) for v in self.sysfs(name).split(","))

    def fbset(self) -> dict[str, object]:
        """Parse ``fbset -i``: geometry, rgba, and the "Frame buffer device information"."""
        out = subprocess.run(["fbset", "-i", "-fb", self.device], check=True, capture_output=True, text=True).stdout
        info: dict[str, object] = {"text": out}
        geo = re.search(r"geometry (\d+) (\d+) (\d+) (\d+) (\d+)", out)
        info["geometry"] = tuple(int(v) for v in geo.groups())
        rgba = re.search(r"rgba (\d+)/(\d+),(\d+)/(\d+),(\d+)/(\d+),(\d+)/(\d+)", out)
        if rgba:  # fbset prints no rgba line for pseudocolour modes
            v = [int(x) for x in rgba.groups()]
            info["rgba"] = ((v[0], v[1]), (v[2], v[3]), (v[4], v[5]), (v[6], v[7]))
        for key in ("Name", "Size", "Visual", "XPanStep", "YPanStep", "LineLength"):
            m = re.search(rf"^\s*{key}\s*:\s*(.*)$", out, re.M)
            info[key] = m.group(1).strip() if m else None
        return info

    # -- raw pixels ------------------------------------------------------------------
    def read(self, offset: int, size: int) -> bytes:
        fd = os.open(self.device, os.O_RDONLY)
        try:
            data = b""
            while len(data) < size:
                chunk = os.pread(fd, size - len(data), offset + len(data))
                if not chunk:
                    break
                data += chunk
            return data
        finally:
            os.close(fd)

    def write(self, offset: int, data: bytes) -> None:
        fd = os.open(self.device, os.O_WRONLY)
        try:
            done = 0
            while done < len(data):
                done += os.pwrite(fd, data[done:], offset + done)
        finally:
            os.close(fd)

    def read_rect(self, x: int, y: int, w: int, h: int) -> np.ndarray:
        """Bytes of a w x h rectangle of the *virtual* screen, (h, w * Bpp) uint8."""
        var, fix = self.var(), self.fix()
        bpp = var["bits_per_pixel"] // 8
        stride = fix["line_length"]
        rows = [self.read((y + r) * stride + x * bpp, w * bpp) for r in range(h)]
        return np.frombuffer(b"".join(rows), np.uint8).reshape(h, w * bpp)

    def visible_rect_bytes(self, w: int, h: int) -> np.ndarray:
        """Bytes of the top-left w x h of the visible page (honours xoffset/yoffset)."""
        var = self.var()
        return self.read_rect(var["xoffset"], var["yoffset"], w, h)

    # -- the console -------------------------------------------------------------------
    def kd_mode(self, tty: str = "/dev/tty1") -> int:
        with open(tty, "rb", buffering=0) as f:
            buf = bytearray(4)
            fcntl.ioctl(f, KDGETMODE, buf)
        return struct.unpack("<i", buf)[0]

    def set_kd_mode(self, mode: int, tty: str = "/dev/tty1") -> None:
        with open(tty, "rb", buffering=0) as f:
            fcntl.ioctl(f, KDSETMODE, mode)

    def fb_vtcon(self) -> Optional[Path]:
        """The vtconsole that is the framebuffer console (vtcon0 under vng)."""
        for vt in sorted(Path("/sys/class/vtconsole").glob("vtcon*")):
            if "frame buffer" in (vt / "name").read_text():
                return vt
        return None

    # -- the emulated monitor ----------------------------------------------------------
    _count = 0

    def screendump(self, timeout: float = 60.0) -> np.ndarray:
        """What the emulated monitor shows now, as an (H, W, 3) uint8 RGB array.

        Asks the host through the shared directory: writes ``req-N``, waits for the host
        to answer ``done-N`` after running qemu's ``screendump`` into ``shot-N.ppm``.
        """
        if self.setup not in DISPLAYS:
            pytest.skip(f"{self.setup} has no emulated display to dump")
        Kernel._count += 1
        n = f"{os.getpid()}-{Kernel._count}"
        # Written aside and renamed, so the host never sees (and deletes) a half-made file.
        tmp = RWDIR / f".req-{n}"
        tmp.write_text("screendump\n")
        tmp.rename(RWDIR / f"req-{n}")
        done = RWDIR / f"done-{n}"
        deadline = time.monotonic() + timeout
        while not done.exists():
            if time.monotonic() > deadline:
                raise TimeoutError(f"host did not answer screendump request {n} in {timeout} s")
            time.sleep(0.02)
        status = done.read_text().strip()
        if status != "ok":
            raise RuntimeError(f"screendump {n} failed on the host: {status}")
        shot = RWDIR / f"shot-{n}.ppm"
        img = read_ppm(shot)
        shot.unlink()
        done.unlink()
        return img

    def settled_screendump(self, tries: int = 6, pause: float = 0.3) -> np.ndarray:
        """A screendump once the picture stops changing.

        DRM fbdev emulation copies mmap writes to the display from a worker a little
        later (deferred I/O), so take dumps until two in a row are equal.
        """
        time.sleep(pause)
        last = self.screendump()
        for _ in range(tries):
            time.sleep(pause)
            shot = self.screendump()
            if np.array_equal(shot, last):
                return shot
            last = shot
        return last

    # -- independent pixel arithmetic ---------------------------------------------------
    def channels(self, var: Optional[dict[str, int]] = None):
        """(offset, length) of red, green, blue from a raw var."""
        var = var or self.var()
        return [(var[f"{c}_offset"], var[f"{c}_length"]) for c in ("red", "green", "blue")]

    def encode(self, rgb: np.ndarray, var: Optional[dict[str, int]] = None) -> np.ndarray:
        """Pack (h, w, 3) RGB into the device's bytes from the kernel's bitfields alone:
        each channel keeps its top ``length`` bits at ``offset``, little-endian; an
        alpha field (vfb's 32 bpp) is opaque, all ones."""
        var = var or self.var()
        value = np.zeros(rgb.shape[:2], np.uint64)
        for i, (off, length) in enumerate(self.channels(var)):
            value |= (rgb[..., i].astype(np.uint64) >> (8 - length)) << off
        value |= np.uint64(((1 << var["transp_length"]) - 1) << var["transp_offset"])
        nbytes = var["bits_per_pixel"] // 8
        out = [((value >> (8 * b)) & 0xFF).astype(np.uint8) for b in range(nbytes)]
        return np.stack(out, axis=-1).reshape(rgb.shape[0], -1)

    def decode_top_bits(self, raw: np.ndarray, var: Optional[dict[str, int]] = None) -> np.ndarray:
        """Per channel, the field value (top bits of the colour) in raw device bytes."""
        var = var or self.var()
        nbytes = var["bits_per_pixel"] // 8
        raw = raw.reshape(raw.shape[0], -1, nbytes).astype(np.uint64)
        value = sum(raw[..., b] << (8 * b) for b in range(nbytes))
        return np.stack([(value >> off) & ((1 << length) - 1) for off, length in self.channels(var)], axis=-1)


def read_ppm(path: Path) -> np.ndarray:
    """Read a binary PPM (P6, maxval 255) into an (H, W, 3) uint8 array."""
    data = path.read_bytes()
    fields, pos = [], 0
    while len(fields) < 4:
        m = re.compile(rb"\s*(#[^\n]*\n\s*)*(\S+)").match(data, pos)
        fields.append(m.group(2))
        pos = m.end()
    magic, w, h, maxval = fields[0], int(fields[1]), int(fields[2]), int(fields[3])
    assert magic == b"P6" and maxval == 255, (magic, maxval)
    pixels = data[pos + 1 : pos + 1 + w * h * 3]
    return np.frombuffer(pixels, np.uint8).reshape(h, w, 3)


@pytest.fixture(scope="session", params=sorted(SETUPS))
def kernel(request) -> Kernel:
    """Independent access to one setup's device: raw ioctls, pread, sysfs, fbset, screendump.

    Parametrised over the setups of this boot, so every test runs once per device.
    """
    k = Kernel(request.param, SETUPS[request.param])
    deadline = time.monotonic() + 20
    while not os.path.exists(k.device):
        if time.monotonic() > deadline:
            pytest.fail(f"{k.device} did not appear after loading the {k.setup} driver")
        time.sleep(0.1)
    return k


@pytest.fixture(scope="session")
def original(kernel):
    """The device's var and fbset view at the start of the session."""
    return {"var_bytes": kernel.var_bytes(), "var": kernel.var(), "fbset": kernel.fbset()}


@pytest.fixture(autouse=True)
def isolated(request, record_property, kernel, original):
    """Run each test on the boot mode with the text console kept off the framebuffer.

    The console would redraw over the picture (cursor blink, mode change), so tests run
    with tty1 in KD_GRAPHICS; a test that asks for ``text_console`` starts in KD_TEXT.
    Afterwards the original mode and pan are put back with a raw FBIOPUT_VSCREENINFO,
    so one test's leftovers cannot fail the next.
    """
    record_property("setup", kernel.setup)
    text = "text_console" in request.fixturenames
    kernel.set_kd_mode(KD_TEXT if text else KD_GRAPHICS)
    yield
    if kernel.var_bytes() != original["var_bytes"]:
        kernel.put_var(original["var_bytes"])
    kernel.set_kd_mode(KD_TEXT)


@pytest.fixture
def text_console(kernel):
    """The test starts with tty1 in KD_TEXT (the default for the console tests)."""
    assert kernel.kd_mode() == KD_TEXT
    return "/dev/tty1"


@pytest.fixture
def rng():
    """A seeded random generator, so a failing picture can be reproduced."""
    return np.random.default_rng(1234)
