"""One open card shared by every ``drm:`` display of this process on it.

DRM master belongs to a file descriptor, and a second descriptor of the same process
cannot become master while the first is: so every :class:`~fbgfx.drm.DrmDevice` on a
card uses one :class:`SharedCard`, which opens the card once, becomes master once,
keeps which CRTCs and connectors each display holds, and reads the card's events
(page flips of every display arrive on the one descriptor) for all of them. The last
display to close drops master and closes the card.

The card keeps no display alive: it counts each display by a claim the display owns
(:class:`Claim`), so a display nobody refers to is collected, and closed as it goes
(:mod:`fbgfx._closing`), which gives its claim back.

Threads: ioctls that change what a card shows, and the reading of its events, are
serialised by :attr:`SharedCard.lock`; a display waiting for its flip either reads the
events itself or waits while another thread reads them, so each event goes to the
display that queued the flip whichever thread reads it.
"""

from __future__ import annotations

import errno
import os
import threading
import time
from typing import Callable

from .. import _restore
from .._ffi import lib
from ..console import Console, find_vt
from ..errors import FramebufferError
from .card import Card, CardLike

__all__ = ["Claim", "SharedCard"]

#: How long one thread reads events before letting others look (seconds).
_READ_SLICE = 0.05

_registry: list[SharedCard] = []
_registry_lock = threading.Lock()
_console: Console | None = None
_console_users = 0


class Claim:
    """What a display holds on a :class:`SharedCard`: the card counts this, not the
    display (which it must not keep alive).

    Attributes:
        name: The display's spec, for messages (``drm:card0``).
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<Claim {self.name}>"


class SharedCard:
    """A card, its DRM master and its events, for the displays of this process on it.

    Use :meth:`for_path` or :meth:`for_card` and :meth:`release`, never the constructor.

    Attributes:
        card: The open card.
        path: Its device path.
        users: The claims of the displays open on it.
        crtcs: CRTC id -> the claim of the display that drives it.
        connectors: Connector id -> (its name, the claim of the display that shows on it).
        lock: Held around ioctls that change what the card shows and around reading events.
    """

    def __init__(self, card: CardLike, key: str | None) -> None:
        self.card = card
        self.path = card.path
        self.key = key
        self.users: list[Claim] = []
        self.crtcs: dict[int, Claim] = {}
        self.connectors: dict[int, tuple[str, Claim]] = {}
        self.lock = threading.RLock()
        self._done = threading.Condition(self.lock)
        self._reading = False
        self._completed: set[int] = set()
        # CRTC id -> tokens of the commits in flight on it (a display's flips and its
        # layers' plane updates: an atomic commit waits for the others on its CRTC)
        self._inflight: dict[int, set[int]] = {}
        #: Plane id -> CRTC id of the overlay planes layers of this program enabled
        #: (disabled again when a display's CRTC is put back).
        self.layer_planes: dict[int, int] = {}
        self._token = 0
        self._master = False
        self._console_taken = False

    # -- the registry ---------------------------------------------------------------------------

    def renew_locks(self) -> None:
        """New locks in a forked child, where the forking thread is the only one: another
        thread may have held the old ones at the fork."""
        self.lock = threading.RLock()
        self._done = threading.Condition(self.lock)
        self._reading = False

    @classmethod
    def for_path(cls, path: str, opener: Callable[[str], CardLike] = Card) -> SharedCard:
        """The shared card for ``path`` (opened now when no display of this process has it)."""
        key = os.path.realpath(path)
        with _restore.critical, _registry_lock:
            for shared in _registry:
                if shared.key == key and shared.card.fd >= 0:
                    return shared
            shared = cls(opener(path), key)
            _registry.append(shared)
            return shared

    @classmethod
    def for_card(cls, card: CardLike) -> SharedCard:
        """The shared card holding this open card (tests hand over fake cards)."""
        with _restore.critical, _registry_lock:
            for shared in _registry:
                if shared.card is card:
                    return shared
            shared = cls(card, None)
            _registry.append(shared)
            return shared

    @staticmethod
    def open_cards() -> list[SharedCard]:
        """The cards displays of this process have open now."""
        with _restore.critical, _registry_lock:
            return list(_registry)

    def join(self, user: Claim, *, console: bool) -> None:
        """Count ``user`` as a display on this card; the first becomes DRM master.

        Raises:
            FramebufferError: Another program is DRM master (it says which kinds do).
        """
        with self.lock:
            if not self._master:
                self._take_master()
                self._master = True
            self.users.append(user)
            if console and not self._console_taken:
                _take_console()
                self._console_taken = True

    def release(self, user: Claim) -> None:
        """Forget ``user`` and what it held; the last one drops master and closes the card."""
        with self.lock:
            if user in self.users:
                self.users.remove(user)
            self.crtcs = {k: v for k, v in self.crtcs.items() if v is not user}
            self.connectors = {k: v for k, v in self.connectors.items() if v[1] is not user}
            if self.users:
                return
            while self._reading:  # a flip waiter reads the card without the lock: let it finish
                self._done.wait(_READ_SLICE)
            with _restore.critical, _registry_lock:
                if self in _registry:
                    _registry.remove(self)
            try:
                if self._master and self.card.fd >= 0:
                    self.card.drop_master()
            except OSError:
                pass  # the fd is gone: closing drops it
            finally:
                self._master = False
                try:
                    if self._console_taken:
                        self._console_taken = False
                        _give_console()
                finally:
                    self.card.close()

    def connector_names(self) -> set[str]:
        """The connectors displays of this program show on."""
        with self.lock:
            return {name for name, _ in self.connectors.values()}

    def release_in_child(self, user: Claim) -> None:
        """:meth:`release` in a forked child: the card's master, CRTCs and console are
        the parent's; the last display closes the child's descriptor only."""
        if user in self.users:
            self.users.remove(user)
        if not self.users:
            with _restore.critical, _registry_lock:
                if self in _registry:
                    _registry.remove(self)
            try:
                if self._console_taken:
                    self._console_taken = False
                    _give_console()  # the Console restores nothing in a child
            finally:
                self.card.close()

    def _take_master(self) -> None:
        try:
            self.card.set_master()
        except FramebufferError as e:
            if e.errno in (errno.EBUSY, errno.EACCES, errno.EPERM):
                raise FramebufferError(
                    e.errno,
                    "another program owns this display (it is DRM master): a desktop (X, a Wayland compositor), "
                    "a display manager or another fbgfx program. Stop it, or switch to a text console "
                    "(Ctrl+Alt+F3) and run there; fbgfx never draws into a buffer nobody sees",
                    self.path,
                ) from None
            raise

    # -- page-flip events -------------------------------------------------------------------------

    def token(self) -> int:
        """A new user_data for a page flip, unique on this card."""
        with self.lock:
            self._token += 1
            return self._token

    def wait_flips(self, tokens: set[int], timeout: float) -> set[int]:
        """Wait until the flips with these tokens completed, or ``timeout`` passed.
        Call it without holding :attr:`lock`.

        Returns:
            The tokens still outstanding (empty: all completed).
        """
        deadline = time.monotonic() + timeout
        left_over = set(tokens)
        with self._done:
            while True:
                found = left_over & self._completed
                self._completed -= found
                left_over -= found
                if not left_over:
                    return left_over
                left = deadline - time.monotonic()
                if left <= 0 or self.card.fd < 0:  # closed: no event will come
                    return left_over
                self._await_events(left)

    def _record(self, events: list[tuple[int, int, int, int]]) -> None:
        for kind, user_data, _seq, _crtc in events:
            if kind == lib.DRM_EVENT_FLIP_COMPLETE:
                self._completed.add(user_data)
                for tokens in self._inflight.values():
                    tokens.discard(user_data)

    def note_commit(self, crtc_id: int, token: int) -> None:
        """A commit with a page-flip event (``token``) is in flight on ``crtc_id``."""
        with self.lock:
            self._inflight.setdefault(crtc_id, set()).add(token)

    def wait_idle(self, crtc_id: int, timeout: float) -> bool:
        """Wait until no commit is in flight on ``crtc_id`` (the kernel refuses a
        non-blocking commit on a CRTC with one pending: ``EBUSY``). Call it without
        holding :attr:`lock`. False when ``timeout`` passed first (the tokens are then
        forgotten: their CRTC went dark)."""
        deadline = time.monotonic() + timeout
        with self._done:
            while True:
                if not self._inflight.get(crtc_id):
                    return True
                left = deadline - time.monotonic()
                if left <= 0 or self.card.fd < 0:
                    self._inflight.pop(crtc_id, None)
                    return False
                self._await_events(left)

    def _await_events(self, left: float) -> None:
        """One slice of waiting, ``_done`` held: read the card's events when no other
        thread is reading them, else wait for the one that is to record its events."""
        if self._reading:
            self._done.wait(min(left, _READ_SLICE))
            return
        self._reading = True
        try:
            events = self._read(min(left, _READ_SLICE))
        finally:
            self._reading = False
        self._record(events)
        self._done.notify_all()

    def _read(self, timeout: float) -> list[tuple[int, int, int, int]]:
        # Read with the lock let go, so that other displays can queue flips meanwhile.
        self.lock.release()
        try:
            if self.card.fd < 0:
                return []
            return self.card.read_events(timeout)
        finally:
            self.lock.acquire()

    def cancel(self, tokens: set[int]) -> None:
        """Count these flips as done (their CRTC went dark: no event will come)."""
        with self._done:
            self._completed |= tokens
            for inflight in self._inflight.values():
                inflight -= tokens
            self._done.notify_all()


def _after_fork_in_child() -> None:
    # Another thread may have held these locks when the process forked: the child gets
    # new ones (it has only the forking thread, so nobody else holds them).
    global _registry_lock
    _registry_lock = threading.Lock()
    for shared in _registry:
        shared.renew_locks()


os.register_at_fork(after_in_child=_after_fork_in_child)


def _take_console() -> None:
    # One VT per process whatever the number of cards: graphics mode with the first
    # display, text mode again when the last one closes.
    global _console, _console_users
    with _restore.critical, _registry_lock:
        if _console_users == 0:
            console = Console(find_vt(), owns=True)
            console.graphics()
            _console = console
        _console_users += 1


def _give_console() -> None:
    global _console, _console_users
    with _restore.critical, _registry_lock:
        _console_users -= 1
        if _console_users == 0 and _console is not None:
            console, _console = _console, None
            console.restore()
