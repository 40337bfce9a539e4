"""Screen's internals: what changed (``region``), how a frame reaches the device
(``transfer``: conversion and rotation), which page it goes to (``buffering``), and the
count of frames shown for waiting tests (``frames``)."""
