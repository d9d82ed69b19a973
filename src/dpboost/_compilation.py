"""A one-line notice while Numba compiles dpboost's kernels (a cold cache: a fresh install).

Every kernel is ``@njit(cache=True)``: compiled at its first call, then loaded from Numba's cache
in later processes. The first fit after an install therefore spends seconds compiling; this
module says so, once per process, on the ``"dpboost"`` logger (shown on stderr when logging is
not configured), as soon as the first kernel starts compiling. Numba reports a compilation only
when a kernel is not in its cache, so the notice depends on the cache alone, never on the data.
"""

import logging

from numba.core import event

LOGGER = logging.getLogger("dpboost")

NOTICE = ("dpboost is compiling its Numba kernels, once per installation (about 10 s); "
          "later runs load them from Numba's cache")


class _CompileNotice(event.Listener):
    """Logs :data:`NOTICE` when the first dpboost kernel of the process starts compiling."""

    def __init__(self):
        self.shown = False

    def on_start(self, ev):
        if self.shown:
            return
        function = getattr(ev.data["dispatcher"], "py_func", None)
        if getattr(function, "__module__", "").startswith("dpboost."):
            self.shown = True
            LOGGER.warning(NOTICE)

    def on_end(self, ev):
        pass


# "numba:compile" is broadcast around every compilation of a jitted function (never for a
# cache hit): https://numba.readthedocs.io/en/stable/developer/event_api.html
event.register("numba:compile", _CompileNotice())
