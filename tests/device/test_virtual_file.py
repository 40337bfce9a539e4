"""Framebuffer files (``virtual:...:file=PATH``): nothing lost, nothing crashed.

fbgfx creates PATH only where nothing exists, recognises its own files by the
``PATH.state.json`` beside them, refuses anything else without touching it, never
changes a file's size after creating it, and takes an existing device as it is.
"""

import errno
import json
import os
import stat
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest
from PIL import Image

import fbgfx
from fbgfx import FramebufferError, VirtualDevice

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(fbgfx.__file__)))


def contents(directory):
    """Every entry under ``directory``: name -> (kind, bytes or link target, permission bits)."""
    found = {}
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            found[name] = ("link", os.readlink(path), 0)
        elif stat.S_ISREG(st.st_mode):
            with open(path, "rb") as f:
                found[name] = ("file", f.read(), stat.S_IMODE(st.st_mode))
        else:
            found[name] = ("other", b"", stat.S_IMODE(st.st_mode))
    return found


def spec_for(path, rest="16x8:RGB565"):
    """A virtual spec backed by ``path``."""
    return f"virtual:{rest}:file={path}"


# -- 1. a file fbgfx did not create is never changed --------------------------------------------


def png_bytes():
    """A small PNG, as a user's picture."""
    import io

    out = io.BytesIO()
    Image.new("RGB", (40, 30), "red").save(out, "PNG")
    return out.getvalue()


@pytest.mark.parametrize("kind", ["text", "png", "empty", "mode-444", "big"])
@pytest.mark.parametrize("readonly", [False, True])
def test_existing_file_is_refused_and_left_as_it_was(tmp_path, kind, readonly):
    """An existing file that is not a framebuffer file: FramebufferError naming it; bytes, size and mode unchanged."""
    path = tmp_path / "user.dat"
    data = {
        "text": b"notes\n" * 160_000,
        "png": png_bytes(),
        "empty": b"",
        "mode-444": b"keep me",
        "big": os.urandom(3 * 16 * 8 * 2),
    }[kind]
    path.write_bytes(data)
    if kind == "mode-444":
        path.chmod(0o444)
    before = contents(tmp_path)
    with pytest.raises(FramebufferError) as e:
        fbgfx.open(spec_for(path), readonly=readonly)
    assert str(path) in str(e.value) and "not a framebuffer file" in str(e.value)
    assert contents(tmp_path) == before  # same bytes and mode, and no state file written beside it


def test_new_file_is_created_with_its_state(tmp_path):
    """A path where nothing exists gets the memory file (its full size) and a valid state file beside it."""
    path = tmp_path / "fb.raw"
    with fbgfx.open(spec_for(path, "16x8:RGB565:vh=16")) as fb:
        fb.pixels[0, 0] = 0xF800
        assert path.stat().st_size == fb.fix.smem_len
    state = json.loads((tmp_path / "fb.raw.state.json").read_text())
    assert state["format"] == "RGB565" and state["var"]["yres_virtual"] == 16
    assert sorted(os.listdir(tmp_path)) == ["fb.raw", "fb.raw.state.json"]  # no temporary files left


def test_read_only_open_creates_nothing(tmp_path):
    """fbgfx.open(..., readonly=True) of a missing framebuffer file is ENOENT naming it, and creates nothing."""
    path = tmp_path / "fb.raw"
    with pytest.raises(FramebufferError) as e:
        fbgfx.open(spec_for(path), readonly=True)
    assert e.value.errno == errno.ENOENT and str(path) in str(e.value)
    assert os.listdir(tmp_path) == []


def test_read_only_open_changes_nothing(tmp_path):
    """A read-only opener sees the device, cannot write its memory, pan, set a mode or palette; no byte changes."""
    path = tmp_path / "fb.raw"
    with fbgfx.open(spec_for(path, "16x8:C8:vh=16")) as fb:
        fb.pixels[...] = 9
        fb.device.put_cmap(9, np.array([[10 * 257, 20 * 257, 30 * 257, 0]]))  # stays after close
    before = contents(tmp_path)
    mtimes = {p: os.stat(tmp_path / p).st_mtime_ns for p in os.listdir(tmp_path)}
    with fbgfx.open(spec_for(path, "99x99:XRGB8888"), readonly=True) as fb:
        assert fb.size == (16, 8) and fb.format.name == "C8"
        assert fb.snapshot().getpixel((3, 3)) == (10, 20, 30)
        with pytest.raises(ValueError):
            fb.pixels[0, 0] = 1
        for change in (lambda: fb.pan(0, 8), lambda: fb.set_mode(bpp=16), lambda: fb.set_palette([[0, 0, 0]])):
            with pytest.raises(FramebufferError) as e:
                change()
            assert e.value.errno == errno.EPERM and "read-only" in str(e.value)
        assert fb.test_mode(bpp=16).bits_per_pixel == 16  # asking changes nothing
    assert contents(tmp_path) == before
    assert {p: os.stat(tmp_path / p).st_mtime_ns for p in os.listdir(tmp_path)} == mtimes


@pytest.mark.parametrize(
    "kind, words",
    [
        ("fifo", "is a FIFO"),
        ("/dev/null", "is a character device"),
        ("/dev/zero", "is a character device"),
        ("directory", "is a directory"),
        ("symlink", "is a symbolic link"),
        ("dangling", "is a symbolic link"),
    ],
)
def test_special_paths_are_refused_by_name(tmp_path, kind, words):
    """file= on a FIFO, /dev/null, /dev/zero, a directory or a symlink: an error naming the path, nothing touched."""
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.txt"
    victim.write_text("precious")
    path = tmp_path / "fb.raw"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "symlink":
        path.symlink_to(victim)
    elif kind == "dangling":
        path.symlink_to(outside / "created-through-the-link")
    else:
        path = kind
    before = contents(outside)
    for readonly in (False, True):
        with pytest.raises(FramebufferError) as e:
            fbgfx.open(spec_for(path), readonly=readonly)
        assert str(path) in str(e.value) and words in str(e.value)
    assert contents(outside) == before
    assert not os.path.lexists(f"{path}.state.json")


# -- 2. every opener takes the device as it is ----------------------------------------------------


def test_second_opener_with_another_spec_takes_the_device_as_it_is(tmp_path):
    """A second opener asking another size and format gets the existing device; the file keeps its size."""
    path = tmp_path / "fb.raw"
    with fbgfx.open(spec_for(path, "64x48:XRGB8888:vh=96:pan=0:modes=refuse")) as first:
        size = path.stat().st_size
        with fbgfx.open(spec_for(path, "8x8:C8:vh=8:memory=64")) as second:
            assert (second.size, second.format.name, second.var.yres_virtual) == ((64, 48), "XRGB8888", 96)
            assert not second.can_pan and second.fix.smem_len == size  # the device's own capabilities too
            second.pixels[47, 63] = 0x00FF00
        assert first.pixels[47, 63] == 0x00FF00
        assert path.stat().st_size == size


SIGBUS_CHILD = textwrap.dedent(
    """
    import sys
    import fbgfx
    path = sys.argv[1]
    first = fbgfx.open(f"virtual:256x256:XRGB8888:file={path}")
    first.pixels[...] = 1
    for spec in ("virtual:4x4:C8", "virtual:2x2:RGB565:memory=8", "virtual:512x512:XRGB8888"):
        try:
            fbgfx.open(f"{spec}:file={path}").close()
        except Exception as e:
            print("refused:", e)
    first.pixels[...] = 2  # all of its memory is still there
    print("sum", int(first.memory.astype("uint64").sum() > 0), flush=True)
    """
)


def test_other_openers_never_kill_the_first_with_sigbus(tmp_path):
    """Openers with smaller and larger specs leave the first process's mapping whole: it writes it all and exits 0."""
    proc = subprocess.run(
        [sys.executable, "-c", SIGBUS_CHILD, str(tmp_path / "fb.raw")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, (proc.returncode, proc.stderr)
    assert "sum 1" in proc.stdout
    assert (tmp_path / "fb.raw").stat().st_size == 256 * 256 * 4 * 2


def test_existing_framebuffer_file_is_never_shrunk(tmp_path):
    """Opening a framebuffer file with a smaller spec keeps every byte of it."""
    path = tmp_path / "fb.raw"
    with fbgfx.open(spec_for(path, "64x48:XRGB8888")) as fb:
        fb.memory[...] = 7
    before = path.read_bytes()
    fbgfx.open(spec_for(path, "4x4:C8")).close()
    assert path.read_bytes() == before


# -- 3. symlinks and temporary names ---------------------------------------------------------------


def test_planted_symlinks_at_temporary_names_are_not_followed(tmp_path):
    """Symlinks planted at the old predictable temp names do not make fbgfx write through them."""
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.txt"
    victim.write_text("precious")
    dev = tmp_path / "dev"
    dev.mkdir()
    path = dev / "fb.raw"
    for pid in range(os.getpid() - 2, os.getpid() + 3):
        os.symlink(victim, f"{path}.state.json.{pid}.tmp")
    with fbgfx.open(spec_for(path, "16x8:C8:vh=16")) as fb:
        fb.pan(0, 8)
        fb.set_palette([[1, 2, 3]])
    assert victim.read_text() == "precious"


def test_symlink_at_state_path_is_replaced_not_written_through(tmp_path):
    """Creating a device where its state path is a planted symlink replaces the link and leaves its target alone."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    path = tmp_path / "fb.raw"
    os.symlink(victim, f"{path}.state.json")
    with fbgfx.open(spec_for(path)) as fb:
        fb.pixels[0, 0] = 1
    assert victim.read_text() == "precious"
    assert not os.path.islink(f"{path}.state.json")


def test_symlink_in_place_of_state_file_is_refused(tmp_path):
    """An existing device whose state file was replaced by a symlink is refused, not read through the link."""
    path = tmp_path / "fb.raw"
    fbgfx.open(spec_for(path)).close()
    real = tmp_path / "elsewhere.json"
    os.replace(f"{path}.state.json", real)
    os.symlink(real, f"{path}.state.json")
    with pytest.raises(FramebufferError, match="symbolic link"):
        fbgfx.open(spec_for(path))


def test_two_threads_panning_one_device_1000_times(tmp_path):
    """Two threads pan one file-backed device 1000 times in all: no errors; the state file stays valid."""
    path = tmp_path / "fb.raw"
    fb = fbgfx.open(spec_for(path, "16x8:RGB565:vh=16"))
    errors = []

    def pan(offsets):
        try:
            for i in range(500):
                fb.pan(0, offsets[i % 2])
        except Exception as e:  # the test's point: there are none
            errors.append(e)

    threads = [threading.Thread(target=pan, args=(offsets,)) for offsets in ((0, 8), (8, 0))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert fb.device.pan_count >= 2  # some pans changed the offset
    state = json.loads((tmp_path / "fb.raw.state.json").read_text())
    assert state["var"]["yoffset"] in (0, 8)
    fb.close()
    assert sorted(os.listdir(tmp_path)) == ["fb.raw", "fb.raw.state.json"]


def test_two_openers_in_two_threads_pan_without_errors(tmp_path):
    """Two framebuffers over one file, each panned by its own thread 500 times: no errors."""
    path = tmp_path / "fb.raw"
    spec = spec_for(path, "16x8:RGB565:vh=24")
    fbgfx.open(spec).close()
    errors = []

    def pan(y):
        try:
            with fbgfx.open(spec) as fb:
                for i in range(500):
                    fb.pan(0, y if i % 2 else 0)
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=pan, args=(y,)) for y in (8, 16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


# -- 4. a corrupt state file: one clear error, and a way out ---------------------------------------


def _good_state(tmp_path):
    path = tmp_path / "fb.raw"
    fbgfx.open(spec_for(path, "16x8:RGB565")).close()
    return path, json.loads((tmp_path / "fb.raw.state.json").read_text())


def _with(state, change):
    state = json.loads(json.dumps(state))
    change(state)
    return json.dumps(state)


CORRUPTIONS = {
    "not JSON": lambda s: "this is not json",
    "empty": lambda s: "",
    "deeply nested": lambda s: "[" * 200_000 + "]" * 200_000,
    "nested in a field": lambda s: _with(s, lambda d: d["var"].update(xres=[[[[[[1]]]]]])),
    "a list": lambda s: "[1, 2, 3]",
    "wrong type": lambda s: _with(s, lambda d: d["var"].update(xres="wide")),
    "bool for int": lambda s: _with(s, lambda d: d["var"].update(yres=True)),
    "huge number": lambda s: _with(s, lambda d: d["var"].update(yres_virtual=10**30)),
    "huge memory": lambda s: _with(s, lambda d: d["device"].update(memory=10**18)),
    "negative": lambda s: _with(s, lambda d: d["var"].update(xoffset=-5)),
    "float": lambda s: _with(s, lambda d: d["var"].update(xres=16.5)),
    "C8 on 16 bpp": lambda s: _with(s, lambda d: d.update(format="C8")),
    "unknown format": lambda s: _with(s, lambda d: d.update(format="RGB999")),
    "offset outside": lambda s: _with(s, lambda d: d["var"].update(yoffset=100)),
    "too big for memory": lambda s: _with(s, lambda d: d["var"].update(yres_virtual=4000)),
    "short cmap": lambda s: _with(s, lambda d: d.update(cmap=[[0, 0, 0, 0]])),
    "missing var field": lambda s: _with(s, lambda d: d["var"].pop("xres")),
    "unknown version": lambda s: _with(s, lambda d: d.update(version=99)),
    "bad bitfield": lambda s: _with(s, lambda d: d["var"].update(red={"offset": "x"})),
    "modes policy": lambda s: _with(s, lambda d: d["device"].update(modes="sometimes")),
    "memory differs from file": lambda s: _with(s, lambda d: d["device"].update(memory=123)),
}


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_corrupt_state_file_is_one_clear_error_with_a_way_out(tmp_path, name):
    """A corrupt state file: one FramebufferError saying what is wrong and how to reset; deleting both files resets."""
    path, state = _good_state(tmp_path)
    state_path = tmp_path / "fb.raw.state.json"
    state_path.write_text(CORRUPTIONS[name](state))
    before = contents(tmp_path)
    for readonly in (False, True):
        with pytest.raises(FramebufferError) as e:
            fbgfx.open(spec_for(path), readonly=readonly)
        message = str(e.value)
        assert str(state_path) in message and "to reset the device, delete" in message, message
        assert len(message) < 600
    assert contents(tmp_path) == before  # a failed open changes nothing
    os.unlink(path)
    os.unlink(state_path)
    with fbgfx.open(spec_for(path)) as fb:  # the documented reset works
        assert fb.format.name == "RGB565"


def test_state_from_fbgfx_0_1_is_still_opened(tmp_path):
    """A device created by fbgfx 0.1 (state without a version) opens as it is and is upgraded on the next change."""
    path, state = _good_state(tmp_path)
    old = {
        "device": [16, 8, "RGB565", state["device"]["memory"]],
        "var": state["var"],
        "format": "RGB565",
        "visual": state["visual"],
        "cmap": state["cmap"],
    }
    (tmp_path / "fb.raw.state.json").write_text(json.dumps(old))
    with fbgfx.open(spec_for(path, "16x8:RGB565:vh=16")) as fb:
        assert fb.size == (16, 8)
        fb.set_palette([[1, 2, 3]])
    assert json.loads((tmp_path / "fb.raw.state.json").read_text())["version"] == 1


@pytest.mark.parametrize(
    "spec",
    [
        "virtual:99999999999x99999999999",
        "virtual:99999999999x10",
        "virtual:65536x65536",
        "virtual:0x10",
        "virtual:10x10:memory=99999999999999",
        "virtual:10x10:vh=99999999999",
        "virtual:10x10:stride=99999999999999",
    ],
)
def test_absurd_sizes_are_value_errors(spec):
    """Absurd sizes are a ValueError saying so, not OverflowError or MemoryError."""
    with pytest.raises(ValueError, match=r"1\.\.|1 to|at most"):
        fbgfx.open(spec)


def test_absurd_sizes_through_the_cli_are_one_error_line():
    """fbgfx info on a huge virtual size exits 2 with one error line."""
    proc = subprocess.run(
        [sys.executable, "-m", "fbgfx", "info", "-d", "virtual:99999999999x99999999999"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().startswith("fbgfx: error:") and len(proc.stderr.strip().splitlines()) == 1


# -- 5. virtual spec validation ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec, words",
    [
        ("virtual:100x10:RGB565:stride=100", "stride=100 is smaller than one row"),
        ("virtual:100x10:RGB565:stride=-4", "stride must be"),
        ("virtual:100x10:stride=0", "stride must be"),
        ("virtual:10x10:vh=5", "vh=5 is below the visible height 10"),
        ("virtual:10x10:vw=9", "vw=9 is below the visible width 10"),
        ("virtual:10x10:virtual_height=-1", "virtual_height must be"),
        ("virtual:10x10:pan=maybe", "'pan'"),
        ("virtual:10x10:vsync=2", "'vsync'"),
        ("virtual:10x10:vh=20:vh=30", "'vh' given twice"),
        ("virtual:10x10:vh=20:virtual_height=30", "'vh' and 'virtual_height'"),
        ("virtual:10x10:RGB565:XRGB8888", "two pixel formats"),
        ("virtual:10x10:RGB565:RGB565", "two pixel formats"),
        ("virtual:10x10:align=0", "align must be"),
        ("virtual:10x10:memory=-1", "memory must be"),
        ("virtual:10x10:memory=lots", "'memory'"),
        ("virtual:10x10:modes=sometimes", "modes must be one of"),
        ("virtual:10x10:file=", "file must be a path"),
    ],
)
def test_bad_virtual_spec_values_name_the_key(spec, words):
    """Out-of-range, duplicate and malformed spec values are ValueErrors naming the key."""
    with pytest.raises(ValueError) as e:
        fbgfx.open(spec)
    assert words in str(e.value)


@pytest.mark.parametrize(
    "options, words",
    [
        ({"line_length": 10}, "line_length=10 is smaller than one row"),
        ({"virtual_height": 4}, "virtual_height=4 is below"),
        ({"stride_align": 0}, "stride_align must be"),
        ({"memory": 2**40}, "memory must be"),
    ],
)
def test_bad_device_options_name_the_option(options, words):
    """VirtualDevice refuses the same values with the Python option name."""
    with pytest.raises(ValueError) as e:
        VirtualDevice(16, 8, "RGB565", **options)
    assert words in str(e.value)


def test_valid_spec_options_still_work(tmp_path, open_virtual):
    """The documented options keep working: stride, vh, align, pan=off, modes, memory, file."""
    fb = open_virtual("10x10:RGB565:stride=32:vh=20:pan=off:modes=refuse:memory=1024")
    assert (fb.stride, fb.var.yres_virtual, fb.fix.ypanstep, fb.fix.smem_len) == (32, 20, 0, 1024)
    fb = open_virtual("10x10:C8:align=16:vsync=yes:blank=on")
    assert fb.stride == 16 and fb.wait_for_vsync() and fb.blank()
    assert np.all(open_virtual(spec_for(tmp_path / "fb.raw")).memory == 0)


# -- 6. two openers of one device: each restores only what it changed itself ------------------------


def device_state(tmp_path):
    """What the device holds now, as every process sees it: its state file."""
    return json.loads((tmp_path / "fb.raw.state.json").read_text())


def test_close_leaves_a_pan_another_opener_made(tmp_path):
    """B pans, A pans elsewhere after it: B's close leaves A's page shown instead of "restoring" it."""
    spec = spec_for(tmp_path / "fb.raw", "16x8:RGB565:vh=24")
    with fbgfx.open(spec) as a:
        b = fbgfx.open(spec)
        b.pan(0, 8)
        a.pan(0, 16)
        b.close()
        assert device_state(tmp_path)["var"]["yoffset"] == 16
    assert device_state(tmp_path)["var"]["yoffset"] == 8  # A put back the page it found before its change


def test_close_still_restores_its_own_pan(tmp_path):
    """Nobody else changed it: closing restores the pan offset, mode and palette as before."""
    spec = spec_for(tmp_path / "fb.raw", "16x8:C8:vh=24")
    with fbgfx.open(spec) as a:
        before = a.get_palette()
        with fbgfx.open(spec) as b:
            b.pan(0, 8)
            b.set_palette([[1, 2, 3]])
        assert device_state(tmp_path)["var"]["yoffset"] == 0
        a.refresh()
        np.testing.assert_array_equal(a.get_palette(), before)
        with fbgfx.open(spec) as b:
            b.set_mode(bpp=16)
        assert device_state(tmp_path)["var"]["bits_per_pixel"] == 8


def test_close_leaves_a_mode_and_palette_another_opener_set(tmp_path):
    """B sets a mode and a palette, then A changes them: B's close leaves A's mode and palette alone."""
    spec = spec_for(tmp_path / "fb.raw", "16x8:C8:vh=16")
    with fbgfx.open(spec) as a:
        b = fbgfx.open(spec)
        b.set_palette([[1, 2, 3]])
        a.set_palette([[9, 9, 9]])
        b.set_mode(width=8, height=8)
        a.refresh()
        a.set_mode(width=16, height=8, bpp=16)
        b.close()
        state = device_state(tmp_path)
        assert (state["var"]["xres"], state["var"]["bits_per_pixel"]) == (16, 16)
        assert state["cmap"][0][:3] == [9 * 257] * 3


def test_close_of_a_reader_changes_nothing(tmp_path):
    """An opener that changed nothing changes nothing on close, whatever others did meanwhile."""
    spec = spec_for(tmp_path / "fb.raw", "16x8:RGB565:vh=16")
    with fbgfx.open(spec) as a:
        reader = fbgfx.open(spec, readonly=True)
        a.pan(0, 8)
        before = contents(tmp_path)
        reader.close()
        assert contents(tmp_path) == before


SCREEN_CHILD = textwrap.dedent(
    """
    import sys
    import fbgfx
    spec = sys.argv[1]
    fb = fbgfx.open(spec)
    screen = fb.screen(buffering="flip", console=False)
    for colour in ("red", "green", "blue"):  # three flips: the second page is shown
        with screen.frame() as s:
            s.clear(colour)
    print("READY", fb.var.yoffset, flush=True)
    sys.stdin.readline()  # the other process pans meanwhile
    screen.close()
    fb.close()
    print("CLOSED", flush=True)
    """
)


def test_screen_in_another_process_does_not_undo_this_ones_pan(tmp_path):
    """A Screen flipping in one process, another process pans: the Screen's close leaves that page shown."""
    spec = spec_for(tmp_path / "fb.raw", "16x8:RGB565:vh=24")
    fbgfx.open(spec).close()
    proc = subprocess.Popen(
        [sys.executable, "-c", SCREEN_CHILD, spec],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith("READY 8"), line + proc.stderr.read()
        with fbgfx.open(spec) as mine:
            mine.pan(0, 16)
            mine.view(0, 16, 16, 8)[...] = 0x07E0
            out, err = proc.communicate("go\n", timeout=60)
            assert proc.returncode == 0 and "CLOSED" in out, err
            assert device_state(tmp_path)["var"]["yoffset"] == 16  # still this process's page
            assert mine.snapshot().getpixel((0, 0)) == (0, 255, 0)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_created_files_follow_the_umask(tmp_path):
    """The memory and state files get the permissions open() would give them under the process's umask."""
    old = os.umask(0o027)
    try:
        fbgfx.open(spec_for(tmp_path / "fb.raw")).close()
    finally:
        os.umask(old)
    for name in ("fb.raw", "fb.raw.state.json"):
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == 0o640, name
