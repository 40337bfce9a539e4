"""The tests of counter.py, as the Test your own app guide shows them."""

import sys
from pathlib import Path

import pytest

import fbgfx

APP = Path(__file__).with_name("counter.py")


def test_counts_taps(fbgfx_display):
    """A tap on the button counts one."""
    fbgfx_display.start_app([sys.executable, str(APP)])  # stopped when the test ends
    fbgfx_display.wait_for_frame()  # its first frame
    fbgfx_display.assert_matches("zero")  # screens/test_counter/test_counts_taps/zero.png
    fbgfx_display.tap(160, 120)  # panel pixels, on the button
    fbgfx_display.wait_for_frame()  # the frame that shows it
    fbgfx_display.assert_matches("one")


@pytest.mark.fbgfx_display(width=480, height=320, format="RGB565")
def test_status_bar(fbgfx_display):
    """The status bar is drawn, whatever the clock says."""
    with fbgfx.open() as fb, fb.screen() as screen:  # an app in the test's process
        with screen.frame() as s:
            s.clear("white")
            s.rectangle((0, 0, 479, 23), fill="darkgreen")
            s.text((400, 4), "12:34", fill="white")  # a clock that changes
        fbgfx_display.assert_matches("status", ignore=[(380, 0, 480, 24)])
