"""Infrastructure checks: the device, the raw helpers and the screendump channel."""

import numpy as np
import pytest

pytestmark = pytest.mark.kernel


def test_raw_write_reaches_monitor(kernel):
    """Bytes written to /dev/fb0 with os.pwrite show up in the monitor's screendump."""
    if kernel.setup not in ("bochs",):
        pytest.skip("smoke test for bochs only")
    var, fix = kernel.var(), kernel.fix()
    w, h, stride = var["xres"], var["yres"], fix["line_length"]
    rng = np.random.default_rng(1)
    rgb = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    px = np.zeros((h, stride // 4, 4), np.uint8)
    px[:, :w, 0], px[:, :w, 1], px[:, :w, 2] = rgb[..., 2], rgb[..., 1], rgb[..., 0]
    kernel.write(0, px.tobytes())
    shot = kernel.screendump()
    assert shot.shape == (h, w, 3)
    assert np.array_equal(shot, rgb)
