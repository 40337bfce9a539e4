"""Boot real kernel framebuffer drivers under qemu and run tests/kernel/guest inside.

One test per driver setup; each is one boot of Debian's kernel with virtme-ng. The
test fails with the guest's failure summary when any guest test fails or errors.
"""

import pytest

# The driver setups of BOOTS in tests/kernel/conftest.py.
SETUP_NAMES = ["bochs", "cirrus", "cirrusfb", "vfb"]

pytestmark = pytest.mark.kernel


def _summary(boot, setup) -> str:
    lines = [f"{setup}: guest results in {boot.outdir}"]
    for r in boot.results_for(setup):
        if r.outcome in ("failed", "error"):
            lines.append(f"  {r.outcome.upper()} {r.nodeid}")
            lines += [f"      {ln}" for ln in r.message.splitlines()]
    return "\n".join(lines)


@pytest.mark.parametrize("setup", SETUP_NAMES)
def test_guest_suite(kernel_vms, setup):
    """All guest tests pass against the real kernel driver of this setup."""
    boot = kernel_vms(setup)
    if boot.timed_out:
        pytest.fail(
            f"{setup}: VM did not finish in {boot.seconds:.0f} s\n"
            f"guest stdout:\n{boot.tail('guest-stdout.txt')}\n"
            f"vng stderr:\n{boot.tail('vng-stderr.txt')}"
        )
    results = boot.results_for(setup)
    if not results:
        pytest.fail(
            f"{setup}: the guest wrote no test results (exit {boot.returncode}; 124: stopped at its time limit)\n"
            f"modprobe:\n{boot.tail('modprobe.txt')}\n"
            f"guest stderr:\n{boot.tail('guest-stderr.txt')}\n"
            f"guest stdout:\n{boot.tail('guest-stdout.txt')}\n"
            f"vng stderr:\n{boot.tail('vng-stderr.txt')}"
        )
    if any(r.outcome in ("failed", "error") for r in results):
        pytest.fail(_summary(boot, setup), pytrace=False)
    assert any(r.outcome == "passed" for r in results), f"{setup}: no guest test passed"
