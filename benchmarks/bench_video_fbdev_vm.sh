#!/usr/bin/env bash
# `fbgfx play` against FFmpeg's own fbdev output (`ffmpeg -f fbdev`) on a real kernel
# framebuffer: bochs' DRM fbdev emulation (/dev/fb0, 1280x800 XRGB8888) under qemu (TCG).
# Both decode the same H.264 clip as fast as they can and write every frame, unscaled and
# centred by fbgfx, top-left by FFmpeg, into /dev/fb0. Prints each one's seconds and the ratio,
# also without what Python, NumPy, fbgfx and PyAV take to start (slow under TCG).
# Needs what tests/kernel needs (bash .ci/vm-deps.sh), ffmpeg and PyAV; run from anywhere.
#
#     bash benchmarks/bench_video_fbdev_vm.sh [SECONDS_OF_VIDEO]
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-4}"
work="$(mktemp -d)"
python="$(python3 -c 'import sys; print(sys.executable)')"   # the host's, with numpy and PyAV
trap 'rm -rf "$work"' EXIT
ffmpeg -loglevel error -f lavfi -i "testsrc2=size=640x360:rate=30:duration=$seconds" \
    -c:v libx264 -pix_fmt yuv420p -g 30 "$work/clip.mp4"
cat > "$work/guest.sh" <<GUEST
set -e
modprobe bochs
for i in 1 2 3 4 5 6 7 8 9 10; do [ -e /dev/fb0 ] && break; sleep 1; done
cd "$repo"
PYTHONPATH="$repo" "$python" - "$work" <<'PY'
import subprocess, sys, time
work = sys.argv[1]
runs = {
    # what fbgfx play pays before its first frame: Python, NumPy, fbgfx and PyAV imported
    "python startup": [sys.executable, "-c", "import fbgfx, fbgfx.video, av"],
    "ffmpeg -f fbdev": ["ffmpeg", "-loglevel", "error", "-nostdin", "-i", f"{work}/clip.mp4",
                        "-pix_fmt", "bgra", "-f", "fbdev", "/dev/fb0"],
    "fbgfx play": [sys.executable, "-m", "fbgfx", "play", f"{work}/clip.mp4", "--fps", "0",
                   "--no-audio", "--center", "-d", "/dev/fb0"],
}
best = {}
for _ in range(2):  # the first round also warms the page cache; each one's best is kept
    for name, cmd in runs.items():
        t0 = time.monotonic()
        subprocess.run(cmd, check=True)
        best[name] = min(best.get(name, float("inf")), time.monotonic() - t0)
with open(f"{work}/result.txt", "w") as out:
    for name, seconds in best.items():
        out.write(f"{name}: {seconds:.2f} s\n")
PY
GUEST
vng --run "$(ls /boot/vmlinuz-* | sort -V | tail -n1)" --user root --disable-kvm --cpus 2 --memory 1G \
    --rwdir "$work" --qemu-opts="-vga std" -- sh "$work/guest.sh" >"$work/vng.out" 2>"$work/vng.err" \
    || { tail -n 20 "$work/vng.err" >&2; exit 1; }
cat "$work/result.txt"
awk '/ffmpeg/ {f=$(NF-1)} /fbgfx/ {g=$(NF-1)} /startup/ {s=$(NF-1)} END {
    printf "ratio fbgfx/ffmpeg: %.2f; without Python'"'"'s startup: %.2f (%d frames of 640x360)\n", g/f, (g-s)/f, '"$seconds"'*30}' "$work/result.txt"
