"""counter.py: counts taps on a button (the app the Test your own app guide tests)."""

import fbgfx
import fbgfx.touch

with fbgfx.open() as fb, fb.screen() as screen, fbgfx.touch.open(screen=screen) as ts:
    count, font = 0, fbgfx.font(size=40)
    while True:
        with screen.frame() as s:  # one frame per batch of touches
            s.clear("black")
            s.rectangle((60, 80, 259, 159), fill="navy", outline="white")
            s.text((160, 120), str(count), fill="white", font=font, anchor="mm")
        for ev in ts.read():  # waits for touches
            if ev.type == "down" and 60 <= ev.x <= 259 and 80 <= ev.y <= 159:
                count += 1
