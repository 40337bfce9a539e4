"""``fbgfx info``: what the framebuffer is, like ``fbset -i`` (or as JSON)."""

from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Any

from .._displays import Display, displays
from .._open import resolve
from ..device import Framebuffer
from ..drm import CardInfo, describe, find_cards, parse_spec, probe
from ..modes import Timings
from ..screeninfo import VISUAL_NAMES
from ._command import Command, Context
from ._device import drm_target, open_device

__all__ = ["COMMAND", "drm_info_dict", "info_dict", "info_text"]


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print var, fix and format as JSON")
    parser.add_argument(
        "--all",
        action="store_true",
        help="list every display: each connector of each DRM card and each /dev/fbN, with the spec that opens it",
    )


def run(args: argparse.Namespace, context: Context) -> int:
    """Print the description of ``--device``; opened read-only, so nothing changes.

    A ``drm:`` card is described without being opened as a display: its connectors
    (connected or not) and their modes, what each CRTC shows, the planes' formats;
    ``-d drm:`` with no card describes every card.
    """
    del context  # every command is run with one; this one shows no notes
    if args.all:
        found = displays()
        if args.json:
            print(json.dumps([d.asdict() for d in found], indent=2))
        else:
            print("\n".join(_display_lines(found)) if found else "no displays (no DRM card, no /dev/fbN)")
        return 0
    target = drm_target(args)
    if target is not None:
        named, _ = parse_spec(resolve(args.device))
        cards = [probe(path) for path in ([target[0]] if named else find_cards() or [target[0]])]
        if args.json:
            data = [drm_info_dict(card) for card in cards]
            print(json.dumps(data[0] if named else data, indent=2))
        else:
            print("\n".join(line for card in cards for line in describe(card)))
        return 0
    with open_device(args, readonly=True) as fb:
        print(json.dumps(info_dict(fb), indent=2) if args.json else info_text(fb))
    return 0


def _display_lines(found: list[Display]) -> list[str]:
    lines = []
    for d in found:
        lines.append(d.label)
        if d.modes:
            lines.append(
                "    modes: "
                + ", ".join(f"{m.width}x{m.height}" + (f"@{m.refresh}" if m.refresh else "") for m in d.modes)
            )
    return lines


def info_dict(fb: Framebuffer) -> dict[str, Any]:
    """var, fix and format of an open framebuffer as plain JSON-ready data."""
    fmt = fb.format
    channels = (("red", fmt.red), ("green", fmt.green), ("blue", fmt.blue), ("transp", fmt.transp))
    return {
        "device": fb.path,
        "format": {
            "name": fmt.name,
            "bpp": fmt.bpp,
            "indexed": fmt.indexed,
            "gray": fmt.gray,
            **{ch: {"offset": bf.offset, "length": bf.length, "msb_right": bf.msb_right} for ch, bf in channels},
        },
        "var": fb.var.asdict(),
        "fix": fb.fix.asdict(),
    }


def drm_info_dict(card: CardInfo) -> dict[str, Any]:
    """A DRM card's connectors, modes, CRTCs and planes as plain JSON-ready data."""
    data: dict[str, Any] = dataclasses.asdict(card)
    for conn, c in zip(data["connectors"], card.connectors):
        for mode, m in zip(conn["modes"], c.modes):
            mode["preferred"] = m.preferred
    return {"device": f"drm:{card.path}", **data}


def info_text(fb: Framebuffer) -> str:
    """The ``fbset -i`` style description of an open framebuffer."""
    var, fix, fmt = fb.var, fb.fix, fb.format
    rates = Timings.from_var(var).rates(var.xres, var.yres)
    name = f"{var.xres}x{var.yres}" + (f"-{rates.refresh:.0f}" if rates else "")
    lines = [f'mode "{name}"']
    if rates:
        lines.append(
            f"    # D: {rates.pixel_clock / 1e6:.3f} MHz, H: {rates.line_rate / 1e3:.3f} kHz, V: {rates.refresh:.3f} Hz"
        )
    lines += [
        f"    geometry {var.xres} {var.yres} {var.xres_virtual} {var.yres_virtual} {var.bits_per_pixel}",
        f"    timings {var.pixclock} {var.left_margin} {var.right_margin} {var.upper_margin} "
        f"{var.lower_margin} {var.hsync_len} {var.vsync_len}",
    ]
    if var.grayscale == 1:
        lines.append("    grayscale true")
    lines.append(f"    rgba {var.red},{var.green},{var.blue},{var.transp}")
    lines.append("endmode")
    lines.append("")
    lines.append("Frame buffer device information:")
    bitfields = "  ".join(
        f"{ch} {getattr(var, ch).length}/{getattr(var, ch).offset}" for ch in ("red", "green", "blue", "transp")
    )
    rows = [
        ("Name", fix.id),
        ("Device", fb.path),
        ("Format", f"{fmt.name} ({fmt.bpp} bpp)"),
        (
            "Geometry",
            f"{var.xres}x{var.yres}, virtual {var.xres_virtual}x{var.yres_virtual}, offset {var.xoffset},{var.yoffset}",
        ),
        ("Bitfields", bitfields),
        ("Address", f"{fix.smem_start:#x}"),
        ("Size", str(fix.smem_len)),
        ("Type", "PACKED PIXELS" if fix.type == 0 else str(fix.type)),
        ("Visual", VISUAL_NAMES.get(fix.visual, str(fix.visual))),
        ("XPanStep", str(fix.xpanstep)),
        ("YPanStep", str(fix.ypanstep)),
        ("YWrapStep", str(fix.ywrapstep)),
        ("LineLength", str(fix.line_length)),
        ("Pages", f"{fb.pages} in the virtual height"),
        ("Accelerator", "No" if not fix.accel else str(fix.accel)),
    ]
    lines += [f"    {key:<12}: {value}" for key, value in rows]
    return "\n".join(lines)


COMMAND = Command(
    name="info",
    help="show what the framebuffer is (like fbset -i)",
    description="Show the framebuffer's mode, pixel format and memory layout, like `fbset -i`.",
    add_arguments=_arguments,
    run=run,
)
