"""The accountants' conversions kept on disk between processes, as Numba's cache keeps the
kernels: the Renyi divergences and PLD epsilons that planning a fit computes (0.8 s for the
default classifier's three plans on the shared 2-core machine) are read back by later processes
(docs/privacy.md, Conversion cache).

A value is dp-accounting's output for a key of public inputs only (a dp-accounting event's
repr, the Renyi orders, delta, the discretisation): the file holds nothing of any data set. One
SQLite file per version of dpboost and of dp-accounting (whose numbers the values are), in
``DPBOOST_CACHE_DIR`` (default ``$XDG_CACHE_HOME/dpboost``, else ``~/.cache/dpboost``; an empty
value turns the cache off), the directory created for its user alone. A value read back is
checked (the numbers its kind holds, none NaN) and computed again where it fails; any error of
the directory or the file (read-only, locked, corrupt) leaves the cache out, and the conversion
is computed as without it. Whoever can write the directory chooses the noise of later fits, as
whoever can write Numba's cache or the installation chooses their code.
"""

import json
import math
import os
import threading
from pathlib import Path

#: The tables, each with the check of a value read back: Renyi divergences at the orders that
#: end the key (a tuple of floats, +inf allowed), a PLD epsilon (a float >= 0, +inf allowed).
TABLES = {
    "divergences": lambda key, value: (isinstance(value, list) and len(value) == len(key[-1])
                                       and all(_number(v) for v in value)),
    "epsilons": lambda key, value: _number(value) and value >= 0,
}

_LOCK = threading.Lock()
#: The open database of this process (None: no cache), by process id: a connection must not
#: cross a fork.
_STATE = {"pid": None, "db": None}


def _number(value):
    return isinstance(value, float) and not math.isnan(value)


def directory():
    """The cache's directory, or None where ``DPBOOST_CACHE_DIR`` is empty (no cache).

    Returns
    -------
    path : pathlib.Path or None
    """
    root = os.environ.get("DPBOOST_CACHE_DIR")
    if root is None:
        root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dpboost"
    return Path(root) if root else None


def _connection():
    """This process's database, opened on first use (None: no cache, or it cannot be used)."""
    if _STATE["pid"] != os.getpid():
        _STATE.update(pid=os.getpid(), db=_open())
    return _STATE["db"]


def _open():
    import sqlite3
    from importlib.metadata import version

    from . import __version__

    root = directory()
    if root is None:
        return None
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        name = f"conversions-{__version__}-dp_accounting-{version('dp-accounting')}.sqlite3"
        db = sqlite3.connect(root / name, timeout=1.0, isolation_level=None,
                             check_same_thread=False)
        # WAL without a sync at every commit: a conversion lost in a crash is computed again.
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        for table in TABLES:
            db.execute(f"CREATE TABLE IF NOT EXISTS {table} "
                       "(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        return db
    except (OSError, sqlite3.Error):
        return None


def lookup(table, key):
    """The value stored for ``key`` (a tuple of public scalars and strings) in ``table``, or
    None where there is none, it fails its check, or the cache cannot be read.

    Returns
    -------
    value : float, tuple of float or None
    """
    import sqlite3

    with _LOCK:
        db = _connection()
        if db is None:
            return None
        try:
            row = db.execute(f"SELECT value FROM {table} WHERE key = ?",
                             (repr(key),)).fetchone()
        except sqlite3.Error:
            return None
    if row is None:
        return None
    try:
        value = json.loads(row[0])
    except ValueError:
        return None
    if not TABLES[table](key, value):
        return None
    return tuple(value) if isinstance(value, list) else value


def store(table, key, value):
    """Keep ``value`` (a float or a tuple of floats) for ``key`` in ``table``; nothing where
    the cache cannot be written."""
    import sqlite3

    text = json.dumps(list(value) if isinstance(value, tuple) else value)
    with _LOCK:
        db = _connection()
        if db is None:
            return
        try:
            db.execute(f"INSERT OR IGNORE INTO {table} VALUES (?, ?)", (repr(key), text))
        except sqlite3.Error:
            pass


def close():
    """Close this process's database; the next lookup opens it again (reading
    ``DPBOOST_CACHE_DIR`` again)."""
    with _LOCK:
        if _STATE["db"] is not None and _STATE["pid"] == os.getpid():
            _STATE["db"].close()
        _STATE.update(pid=None, db=None)
