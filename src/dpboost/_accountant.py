"""One privacy budget over many fits: :class:`PrivacyAccountant` and :class:`BudgetExceededError`.

An estimator given ``accountant=`` reserves its planned spend before it reads any record (the
plan depends on public inputs only), and turns the reservation into a registered spend when the
fit succeeds; a fit that raises releases it. Everything registered is composed as one
computation over the same records: sequentially across fits (``LedgerEntry.fit``), with the
accountants the estimators use (docs/privacy.md, Accounting across fits).
"""

import functools
import json
import math
import os
import threading
import uuid
from numbers import Integral

import numpy as np

from ._accounting import (
    FILTER_ORDERS,
    compose,
    compose_pure,
    conversion_orders,
    curve_epsilon,
    joint_orders,
    ledger_event,
    rdp_curve,
    rdp_epsilon,
    rdp_orders,
    threshold_delta,
)
from ._pld import choice_epsilon, part_digest, pld_epsilon


class BudgetExceededError(RuntimeError):
    """A fit's planned spend does not fit in what remains of its accountant's budget.

    Raised before any record is read; nothing is fitted and nothing is spent.
    """


class PrivacyAccountant:
    """A total (epsilon, delta) budget shared by every fit registered with it.

    Pass it as ``accountant=`` to :class:`~dpboost.DPGBClassifier` or
    :class:`~dpboost.DPGBRegressor` (also inside ``GridSearchCV``, ``cross_validate``, a
    ``Pipeline``: scikit-learn's ``clone`` keeps the same accountant). Fits on the same data, or
    on overlapping subsets of it (the training parts of cross-validation folds overlap), compose
    sequentially: the accountant assumes every registered fit saw every record, which is exact
    for overlapping data and an upper bound otherwise.

    Parameters
    ----------
    epsilon : float
        Total budget, > 0 and finite.
    delta : float, default=0.0
        In [0, 1). ``0``: pure DP; only pure-DP fits (``delta=0``) can be registered, composed
        by summing their epsilons. ``> 0``: every release of every registered fit is composed
        at once by Renyi-DP composition (Google's dp-accounting, as a single fit's ledger) and
        converted to (epsilon, ``delta``); for pure-DP fits, the sum of their epsilons if that
        is smaller. Fits that release category lists (``categories="private"``) add their
        thresholds' delta: the Renyi part is converted at ``delta`` minus its sum.
    path : str or os.PathLike or None, default=None
        None: the accountant lives in this process's memory. A path: a SQLite file (one per
        data set) holding the budget and every registered fit's ledger, created if missing;
        every process and session that opens it spends from the same total, and reopening it
        restores what was spent (recomposed from the stored ledgers).
    order : None, "auto" or int, default=None
        ``delta > 0`` only. None: the registered fits are composed as a sequence fixed in
        advance, converted at the best Renyi order (or by the PLD accountant where smaller).
        An int: a Renyi filter at that order (Feldman & Zrnic 2021, Theorem 3.1): the fits'
        curves at this one order are summed and converted at it, which stays a proven bound
        when fits, or their settings, are chosen after seeing earlier releases (a user's next
        fit, a private row count's regime); one of the orders every ledger's curve is proven at
        (``dpboost._accounting.FILTER_ORDERS``: 2 to 12, 14, 16, ..., 4096; sampled Gaussians
        and individual filters hold at those).
        ``"auto"``: ``dpboost._accountant.filter_order(epsilon, delta)``.

    Raises
    ------
    ValueError
        ``epsilon``, ``delta`` or ``order`` outside their ranges, or ``path`` names a file
        written with another total or order (or not a budget file).

    Notes
    -----
    Threads may share an accountant (``joblib`` threading backend): reservations are made under
    a lock, so concurrent fits cannot overspend together. Processes (the default ``loky``
    backend of ``n_jobs > 1``, several notebooks) need ``path``: a reservation is one SQLite
    transaction that reads every registered and reserved fit, composes, and records the new
    reservation under the file's write lock, so concurrent fits in any process cannot
    overspend together. A copy of an in-memory accountant in another process would lose what
    it registers, so it refuses to reserve. A fit whose process dies between reserve and commit
    leaves its reservation in the file, counted as spent (the safe side). Models holding an
    accountant pickle and load as usual.
    """

    #: The filter's order (None: none). A class default too, for accountants pickled before
    #: the option existed, which had none.
    order = None

    def __init__(self, epsilon, delta=0.0, path=None, order=None):
        if not (isinstance(epsilon, (int, float)) and 0 < epsilon < math.inf):
            raise ValueError(f"epsilon={epsilon!r} must be a number in (0, inf).")
        if not (isinstance(delta, (int, float)) and 0 <= delta < 1):
            raise ValueError(f"delta={delta!r} must be a number in [0, 1).")
        if order is not None and delta == 0:
            raise ValueError(f"order={order!r} needs delta > 0: a pure-DP accountant sums its "
                             "fits' epsilons, which holds for adaptively chosen fits as it is.")
        if order == "auto":
            order = filter_order(epsilon, delta)
        if order is not None and not (isinstance(order, Integral) and not isinstance(order, bool)
                                      and int(order) in FILTER_ORDERS):
            raise ValueError(f"order={order!r} must be None, 'auto' or one of the Renyi orders "
                             f"every ledger is proven at: {FILTER_ORDERS}.")
        self.epsilon = float(epsilon)
        self.delta = float(delta)
        self.order = None if order is None else int(order)
        self.path = None if path is None else os.fspath(path)
        self._store = (_MemoryStore() if path is None
                       else _FileStore(self.path, self.epsilon, self.delta, self.order))
        self._pid = os.getpid()

    def __sklearn_clone__(self):
        # scikit-learn's clone deep-copies non-estimator parameters; a copy would spend from a
        # budget nobody reads.
        return self

    def _composed(self, fits):
        """Epsilon of ``fits``, each ``(name, ledger entries or Alternatives, dp-accounting event
        or None)``: :func:`compose_fits` at this accountant's delta and order."""
        return compose_fits([(entries, event) for _, entries, event in fits], self.delta,
                            self.order, scale=self.epsilon)

    def spent(self) -> float:
        """Composed epsilon of every registered fit, at this accountant's ``delta``.

        Returns
        -------
        epsilon : float
        """
        return self._composed(self._store.fits(reserved=False))

    def remaining(self) -> float:
        """``epsilon - spent()``, never below 0.

        With ``delta > 0`` it is not the largest epsilon a next fit may have: Renyi composition
        is sub-additive, so :meth:`reserve` may accept more (it composes, it does not subtract).

        Returns
        -------
        epsilon : float
        """
        return max(0.0, self.epsilon - self.spent())

    def reserve(self, entries, name: str, event=None, alternatives=()) -> str:
        """Reserve the planned releases of a fit before it reads any record.

        Parameters
        ----------
        entries : sequence of LedgerEntry
            The fit's planned ledger (``BudgetPlan.entries``); empty with ``event``.
        name : str
            How the report names the fit.
        event : dp_accounting.DpEvent or None, default=None
            A spend that is not a ledger (a private search's repeat-and-select event); Renyi
            accountants only.
        alternatives : sequence of sequences of LedgerEntry, default=()
            Other ledgers the fit may release instead of ``entries``, chosen during the fit
            by a release of its own (a private row count's regime): each must fit in the
            budget, and until the fit commits its actual ledger, the worst of them counts
            against every other reservation.

        Returns
        -------
        fit_id : str
            The identifier the fit's ledger entries must carry (:meth:`commit`).

        Raises
        ------
        BudgetExceededError
            The spend of every registered and reserved fit and this one exceeds ``epsilon``.
        RuntimeError
            The accountant was copied into another process (see Notes).
        ValueError
            A fit that is not pure DP with a pure-DP accountant.
        """
        if self.path is None and os.getpid() != self._pid:
            raise RuntimeError(
                "this PrivacyAccountant is a copy in another process (joblib's loky backend, "
                "multiprocessing): what it registers would be lost. Give it a path= (a budget "
                "file shared by every process), or run the fits with n_jobs=1 or inside "
                "joblib.parallel_backend('threading').")
        fit_id = uuid.uuid4().hex
        ledgers = [tuple(e.of_fit(fit_id) for e in ledger)
                   for ledger in (entries, *alternatives)]
        planned = ledgers[0] if len(ledgers) == 1 else Alternatives(ledgers)
        if self.delta == 0 and (event is not None or not all(
                math.isfinite(compose_pure(ledger)) for ledger in ledgers)):
            raise ValueError(f"{name} is not pure DP (delta > 0 or epsilon = inf); a "
                             "PrivacyAccountant with delta=0 registers pure-DP fits only.")

        def check(fits):
            """Raise unless ``fits`` (registered, reserved) and this one fit in the budget."""
            total = self._composed([*fits, (name, planned, event)])
            # The planner calibrates within 1e-3 below a fit's epsilon; compositions of exactly
            # the budget must pass despite rounding.
            if not total <= self.epsilon * (1 + 1e-9):
                raise BudgetExceededError(
                    f"{name} would spend epsilon {self._composed([(name, planned, event)]):.6g}; "
                    f"with the {len(fits)} fits registered or in progress the total would be "
                    f"{total:.6g} > the accountant's {self.epsilon:.6g} (remaining "
                    f"{max(0.0, self.epsilon - self._composed(fits)):.6g}, "
                    f"delta={self.delta:g}). Nothing was fitted or spent.")

        self._store.reserve(fit_id, (name, planned, event), check)
        return fit_id

    def commit(self, fit_id: str, entries=()) -> None:
        """Register a reserved fit's ledger (its entries carry ``fit_id``), or its
        ``Alternatives`` (a private row count's choice: every plan it could take); a reserved
        event is registered as it was planned."""
        self._store.commit(fit_id, entries if isinstance(entries, Alternatives)
                           else tuple(entries))

    def release(self, fit_id: str) -> None:
        """Drop the reservation of a fit that raised: nothing was released."""
        self._store.release(fit_id)

    def report(self) -> str:
        """Text: the budget, what is spent and remains, and each registered fit's own spend.

        Returns
        -------
        report : str
        """
        fits = self._store.fits(reserved=False)
        spent = self._composed(fits)
        guarantee = "pure DP" if self.delta == 0 else f"delta={self.delta:g}"
        how = ("composed sequentially" if self.order is None
               else f"a Renyi filter at order {self.order}")
        lines = [f"PrivacyAccountant: epsilon {self.epsilon:.6g} ({guarantee}), spent "
                 f"{spent:.6g} by {len(fits)} fits ({how}), remaining "
                 f"{max(0.0, self.epsilon - spent):.6g}"]
        for i, (name, entries, event) in enumerate(fits):
            what = ("a repeat-and-select event" if event is not None
                    else f"a choice of {len(entries)} plans by its row count"
                    if isinstance(entries, Alternatives) else f"{len(entries)} releases")
            lines.append(f"  {i}: {name}: {what}, epsilon "
                         f"{self._composed([(name, entries, event)]):.6g} alone")
        return "\n".join(lines)

    def __repr__(self):
        path = "" if self.path is None else f", path={self.path!r}"
        order = "" if self.order is None else f", order={self.order!r}"
        return f"PrivacyAccountant(epsilon={self.epsilon!r}, delta={self.delta!r}{path}{order})"


def compose_fits(fits, delta, order=None, scale=1.0):
    """Epsilon of fits composed sequentially over the same records (docs/privacy.md,
    Accounting across fits).

    Parameters
    ----------
    fits : sequence of (entries, event)
        ``entries``: a fit's ledger, or :class:`Alternatives` (the ledgers a private row count
        chooses among, each with the count's release); ``event``: a dp-accounting event (a
        private search's) or None.
    delta : float
        In [0, 1). 0: pure composition (the sum of the fits' epsilons).
    order : int or None, default=None
        A Renyi filter's order (:class:`PrivacyAccountant`), or None.
    scale : float, default=1.0
        The epsilon expected, which sets the PLD's discretisation (``_pld.discretization``).

    Returns
    -------
    epsilon : float

    Notes
    -----
    Fits of one ledger each are composed at once: the least of their pure composition (where
    every release is pure), the Renyi composition at the best order, and the PLD accountant's
    epsilon (``_accounting.compose``'s three bounds on the ledgers together). A fit whose plan
    its released row count chose is composed as the count followed by a choice among the
    plans' other releases: its Renyi curve is the count's plus the pointwise largest of the
    plans' (Mironov 2017, Proposition 1, which holds for every value of the earlier output),
    its PLD the choice's (``_pld.choice_epsilon``), its pure epsilon the count's plus the
    largest plan's; one such fit alone (without ``order``) is bounded by sequential composition,
    the count's pure epsilon plus the largest of the plans' epsilons at ``delta`` (Dwork & Roth
    2014, Theorem 3.16). Each is a bound whichever plan the count chooses; composing the plan
    taken as if it had been fixed in advance is not. With ``order``, every fit's curve at that
    order alone (a choice's largest), summed and converted there.
    """
    # Alternatives of one distinct plan are that plan: nothing was chosen.
    fits = [(_distinct(entries)[0], event) if isinstance(entries, Alternatives)
            and len(_distinct(entries)) == 1 else (entries, event) for entries, event in fits]
    if not any(isinstance(entries, Alternatives) for entries, _ in fits):
        return _composed_ledgers(fits, delta, order)
    return _composed_choices(fits, delta, order, scale)


def _composed_ledgers(fits, delta, order):
    """:func:`compose_fits` of fits with one ledger each."""
    import dp_accounting

    entries = [e for fit_entries, _ in fits for e in fit_entries]
    events = [event for _, event in fits if event is not None]
    if not entries and not events:
        return 0.0
    # A search's event is not pure DP; a set of ledgers is when every release is.
    pure = math.inf if events else compose_pure(entries)
    if delta == 0:
        return pure
    ledger = ledger_event(entries)
    # Every fit's thresholds (private category lists) add their delta: on the event that
    # no fit releases a value held by the added record alone (probability at least 1 - their
    # sum), the transcript of all the fits is the restricted one, composed here.
    renyi_delta = delta - threshold_delta(entries)
    if ledger is None or not renyi_delta > 0:
        return pure
    event = dp_accounting.ComposedDpEvent([ledger, *events])
    if order is not None:
        # A filter holds at the order fixed in advance alone: no other conversion may be
        # taken where smaller, whichever fits came.
        return rdp_epsilon(event, renyi_delta, (order,))
    renyi = rdp_epsilon(event, renyi_delta, rdp_orders(entries))
    # Ledgers alone (no search's event): the PLD accountant's epsilon where smaller.
    return min(pure, renyi, math.inf if events else pld_epsilon(entries, delta, scale=renyi))


def _composed_choices(fits, delta, order, scale):
    """:func:`compose_fits` of fits of which some are :class:`Alternatives`."""
    # Parts composed sequentially: a fixed release, or a row count followed by its choice.
    parts = [part for entries, _ in fits for part in _parts(entries)]
    events = [event for _, event in fits if event is not None]
    pure = math.inf if events else math.fsum(part.pure for part in parts)
    if delta == 0:
        return pure
    if len(fits) == 1 and not events and order is None:
        # One fit: sequential composition, the count's pure epsilon plus the largest plan's.
        # Its Renyi envelope is at most a little tighter (the plans are calibrated to the rest
        # of the budget), and its sampled Gaussians at every order cost a fit 0.2 s.
        *count, rest = parts
        return min(pure, math.fsum(part.pure for part in count)
                   + max(compose(ledger, delta) for ledger in rest))
    renyi_delta = delta - math.fsum(part.thresholds for part in parts)
    if not renyi_delta > 0:
        return pure
    orders = (order,) if order is not None else _orders(parts)
    curve = np.zeros(len(orders))
    for part in parts:
        curves = [rdp_curve(event, orders) for event in part.events]
        if any(c is None for c in curves):
            return pure
        curve += np.max(curves, axis=0)
    for event in events:
        curve += rdp_curve(event, orders)
    renyi = curve_epsilon(orders, curve, renyi_delta)
    if order is not None:
        return renyi
    return min(pure, renyi, math.inf if events else choice_epsilon(parts, delta, scale))


class _Part(tuple):
    """One part of a composition, the ledgers it may release (one: a fixed release), with what
    compositions read of them computed at the first read and kept: a single fit's sequential
    bound reads ``pure`` alone."""

    @functools.cached_property
    def pure(self):
        """The largest pure-DP epsilon of the ledgers."""
        return max(compose_pure(ledger) for ledger in self)

    @functools.cached_property
    def thresholds(self):
        """The largest thresholds' delta of the ledgers."""
        return max(threshold_delta(ledger) for ledger in self)

    @functools.cached_property
    def events(self):
        """Each ledger's dp-accounting event."""
        return [ledger_event(ledger) for ledger in self]

    @functools.cached_property
    def orders(self):
        """The orders the ledgers' curves are converted at (``_accounting.rdp_orders``)."""
        return rdp_orders([e for ledger in self for e in ledger])

    @functools.cached_property
    def digest(self):
        """``_pld.part_digest`` of the ledgers, the key of their distribution."""
        return part_digest(tuple(self))


def _parts(entries):
    """The parts of one fit: none for no release, its ledger, or a row count followed by the
    choice among its plans (or that choice alone where no count was released: a choice of
    interactions on a public row count), kept on the :class:`Alternatives`, which an
    accountant recomposes at every reservation."""
    if not isinstance(entries, Alternatives):
        return (_Part((tuple(entries),)),) if entries else ()
    if "parts" not in entries.__dict__:
        from ._row_count import split_count

        counts, rests = zip(*(split_count(ledger) for ledger in _distinct(entries)))
        # Without a row count (a choice of interactions on a public hint) the choice alone.
        entries.parts = (_Part(counts), _Part(rests)) if any(counts) else (_Part(rests),)
    return entries.parts


def _distinct(alternatives):
    """The distinct ledgers of :class:`Alternatives`, in order, computed once."""
    if "distinct" not in alternatives.__dict__:
        alternatives.distinct = tuple(dict.fromkeys(alternatives))
    return alternatives.distinct


def _orders(parts):
    """The orders the parts' curves are converted at together (``_accounting.joint_orders`` of
    theirs; dp-accounting's default ones with the large orders where that is None)."""
    orders = joint_orders(part.orders for part in parts)
    return orders if orders is not None else conversion_orders(())


def filter_order(epsilon, delta):
    """The Renyi order of ``PrivacyAccountant(order="auto")``: where a zCDP mechanism that
    spends exactly ``(epsilon, delta)`` is converted best, ``1 + sqrt(log(1 / delta) / rho)``
    with ``rho`` from ``epsilon = rho + 2 sqrt(rho log(1 / delta))`` (Bun & Steinke 2016,
    Proposition 1.3, optimised over the order), rounded to the nearest of
    :data:`~dpboost._accounting.FILTER_ORDERS`. A fact of the budget alone, fixed before any
    fit, as a filter's order must be.

    Parameters
    ----------
    epsilon : float
        > 0.
    delta : float
        In (0, 1).

    Returns
    -------
    order : int
    """
    log_inverse = math.log(1.0 / delta)
    rho = (math.sqrt(log_inverse + epsilon) - math.sqrt(log_inverse)) ** 2
    best = 1.0 + math.sqrt(log_inverse / rho)
    return min(FILTER_ORDERS, key=lambda order: (abs(order - best), order))


class Alternatives(tuple):
    """The ledgers a fit may release, one of which a private row count chooses, or one of
    which reads each record (the parts of a choice of interactions): a tuple of tuples of
    LedgerEntry, each with the count's release where one was made. :func:`compose_fits`
    composes the count and then the largest."""

    def __reduce__(self):
        # The ledgers alone: what compositions cached on the object is computed again.
        return (Alternatives, (tuple(self),))


#: :func:`choices_epsilon`'s results by (the ledgers' identities, delta, scale), each with its
#: ledgers (kept alive: no identity is reused while its entry is here); cleared past
#: :data:`CHOICES_EPSILON_SIZE` entries.
_CHOICES_EPSILON = {}
CHOICES_EPSILON_SIZE = 64


def choices_epsilon(planned, delta, scale):
    """:func:`fit_epsilon` of a fit without an earlier one whose row count chose among the
    ledgers ``planned`` (``FitResult.planned``: its choices as planned, before their entries
    got the fit's identifier, which the composition of one fit's ledgers does not read), the
    same number to the last bit, memoised by the ledgers' identity: ``_boosting.plan_fit``
    memoises the plans, so every fit of a setting in a process passes the same objects, and its
    composition (0.07 s on 2,000 rows, a fifth of the fit) runs once.

    Returns
    -------
    epsilon : float
    """
    key = (tuple(map(id, planned)), delta, scale)
    kept = _CHOICES_EPSILON.get(key)
    if kept is None:
        if len(_CHOICES_EPSILON) >= CHOICES_EPSILON_SIZE:
            _CHOICES_EPSILON.clear()
        kept = _CHOICES_EPSILON[key] = (tuple(planned), compose_fits(
            [(Alternatives(planned), None)], delta, scale=scale))
    return kept[1]


def fit_epsilon(ledger, choices, delta, scale):
    """A model's ``privacy_spent_``: the composition of its fits (``ledger``: every release,
    each entry with its fit's identifier, a warm start's after its first fit's) where the
    first fit's row count chose among ``choices`` (``FitResult.choices``; None:
    ``_accounting.compose`` of the ledger).

    Returns
    -------
    epsilon : float
    """
    if choices is None:
        return compose(ledger, delta)
    fits = {}
    for e in ledger:
        fits.setdefault(e.fit, []).append(e)
    # The first fit's entries lead the ledger.
    return compose_fits([(Alternatives(choices) if k == 0 else entries, None)
                         for k, entries in enumerate(fits.values())], delta, scale=scale)


class _MemoryStore:
    """The fits of an accountant without ``path``: dicts under a lock (threads share it)."""

    def __init__(self):
        self._fits = {}  # fit id -> (name, entries, event), registered
        self._reserved = {}  # fit id -> (name, entries, event), in progress
        self._lock = threading.Lock()

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def fits(self, reserved):
        with self._lock:
            return [*self._fits.values(), *(self._reserved.values() if reserved else ())]

    def reserve(self, fit_id, fit, check):
        """Call ``check(every registered and reserved fit)``, then reserve ``fit``, atomically."""
        with self._lock:
            check([*self._fits.values(), *self._reserved.values()])
            self._reserved[fit_id] = fit

    def commit(self, fit_id, entries):
        with self._lock:
            name, _, event = self._reserved.pop(fit_id)
            self._fits[fit_id] = (name, entries, event)

    def release(self, fit_id):
        with self._lock:
            self._reserved.pop(fit_id, None)


class _FileStore:
    """The fits of an accountant with ``path``: a SQLite file (the standard library's
    ``sqlite3``), one connection per operation, so that threads and processes each hold their
    own. ``reserve`` runs in one ``BEGIN IMMEDIATE`` transaction (the database's write lock is
    taken before the fits are read), which makes check-and-reserve atomic across processes.

    Tables: ``budget`` (the one row of epsilon and delta, checked on every open) and ``fits``
    (fit id, name, state ``reserved`` / ``registered``, the ledger entries and the dp-accounting
    event as JSON). The spend is recomposed from the stored ledgers by the accountant, never
    stored, so the accounting stays in :meth:`PrivacyAccountant._composed`.
    """

    def __init__(self, path, epsilon, delta, order):
        self.path = path
        #: Registered fits read so far, by fit id: a registered row never changes, and the
        #: accountant recomposes every fit at each reservation (what it computes of a row
        #: count's choice is kept on its Alternatives).
        self._registered = {}
        with self._transaction() as db:
            db.execute("CREATE TABLE IF NOT EXISTS budget (id INTEGER PRIMARY KEY CHECK (id = 1),"
                       " epsilon REAL NOT NULL, delta REAL NOT NULL, filter_order INTEGER)")
            columns = [row[1] for row in db.execute("PRAGMA table_info(budget)")]
            if "filter_order" not in columns:  # a file written before filters: no order
                db.execute("ALTER TABLE budget ADD COLUMN filter_order INTEGER")
            db.execute("CREATE TABLE IF NOT EXISTS fits (fit_id TEXT PRIMARY KEY, name TEXT "
                       "NOT NULL, state TEXT NOT NULL, entries TEXT NOT NULL, event TEXT)")
            db.execute("INSERT OR IGNORE INTO budget VALUES (1, ?, ?, ?)",
                       (epsilon, delta, order))
            stored = db.execute("SELECT epsilon, delta, filter_order FROM budget").fetchone()
        if stored != (epsilon, delta, order):
            held, asked = ("", "") if stored[2] is None and order is None else (
                f", order={stored[2]!r}", f", order={order!r}")
            raise ValueError(f"path={path!r} holds the budget epsilon={stored[0]!r}, "
                             f"delta={stored[1]!r}{held}, not epsilon={epsilon!r}, "
                             f"delta={delta!r}{asked}: open it with its own total (one file "
                             "per data set and budget).")

    def _transaction(self):
        """A connection whose ``with`` block is one transaction, the write lock taken first."""
        # Imported here: only an accountant with a ``path`` uses it, not the default fit.
        import sqlite3

        try:
            db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.DatabaseError as error:
            raise ValueError(f"path={self.path!r} is not a budget file ({error})") from None
        return _Transaction(db)

    def fits(self, reserved):
        with self._transaction() as db:
            return self._read(db, reserved)

    def _read(self, db, reserved):
        """The fits of the file, registered ones first parsed once."""
        states = ("registered", "reserved") if reserved else ("registered",)
        known = self._registered
        rows = db.execute(f"SELECT fit_id, state FROM fits WHERE state IN "
                          f"({', '.join('?' * len(states))}) ORDER BY rowid", states).fetchall()
        fits = []
        for fit_id, state in rows:
            if state == "registered" and fit_id in known:
                fits.append(known[fit_id])
                continue
            fit = _read_fit(*db.execute("SELECT name, entries, event FROM fits WHERE fit_id = ?",
                                        (fit_id,)).fetchone())
            if state == "registered":
                known[fit_id] = fit
            fits.append(fit)
        return fits

    def __getstate__(self):
        return {**self.__dict__, "_registered": {}}

    def __setstate__(self, state):
        # A file store pickled before the cache existed has none.
        self.__dict__.update({"_registered": {}, **state})

    def reserve(self, fit_id, fit, check):
        with self._transaction() as db:
            check(self._read(db, reserved=True))
            db.execute("INSERT INTO fits VALUES (?, ?, 'reserved', ?, ?)",
                       (fit_id, *_written_fit(*fit)))

    def commit(self, fit_id, entries):
        with self._transaction() as db:
            db.execute("UPDATE fits SET state = 'registered', entries = ? WHERE fit_id = ?",
                       (_written_fit("", entries, None)[1], fit_id))

    def release(self, fit_id):
        with self._transaction() as db:
            db.execute("DELETE FROM fits WHERE fit_id = ? AND state = 'reserved'", (fit_id,))


class _Transaction:
    """``with``: commit on success, roll back on an exception, close the connection."""

    def __init__(self, db):
        self.db = db

    def __enter__(self):
        return self.db

    def __exit__(self, exc_type, exc, traceback):
        try:
            self.db.execute("ROLLBACK" if exc_type is not None else "COMMIT")
        finally:
            self.db.close()
        return False


def _written_fit(name, entries, event):
    """A fit as the text columns of the ``fits`` table: name, entries and event as JSON
    (:class:`Alternatives`: an object ``{"alternatives": [ledger, ...]}``)."""
    from ._persistence import written_ledger

    ledger = ({"alternatives": [written_ledger(ledger) for ledger in entries]}
              if isinstance(entries, Alternatives) else written_ledger(entries))
    return (name, json.dumps(ledger),
            None if event is None else json.dumps(_event_to_json(event)))


def _read_fit(name, entries, event):
    """The (name, entries, event) of a row of the ``fits`` table, each field checked."""
    from ._persistence import read_ledger

    stored = json.loads(entries)
    if isinstance(stored, dict):
        if not isinstance(stored.get("alternatives"), list):
            raise ValueError(f"budget file: fit {name!r}: entries are neither a ledger nor "
                             "alternatives")
        ledgers = Alternatives(read_ledger(items, f"fit {name!r}: alternative {k}: entries")
                               for k, items in enumerate(stored["alternatives"]))
    else:
        ledgers = read_ledger(stored, f"fit {name!r}: entries")
    return name, ledgers, None if event is None else _event_from_json(json.loads(event))


def _event_to_json(event):
    """A dp-accounting event as JSON: its class name and fields, nested events recursively."""
    import dp_accounting

    if isinstance(event, dp_accounting.DpEvent):
        fields = event.to_named_tuple()._asdict()
        del fields["module_name"]
        return {name: _event_to_json(getattr(event, name)) if name != "class_name" else value
                for name, value in fields.items()}
    if isinstance(event, (list, tuple)):
        return [_event_to_json(e) for e in event]
    return event


def _event_from_json(value):
    """Inverse of :func:`_event_to_json`; only dp-accounting's own event classes are built."""
    import dp_accounting

    if isinstance(value, list):
        return [_event_from_json(v) for v in value]
    if not isinstance(value, dict):
        return value
    fields = dict(value)
    cls = getattr(dp_accounting.dp_event, str(fields.pop("class_name", "")), None)
    if not (isinstance(cls, type) and issubclass(cls, dp_accounting.DpEvent)):
        raise ValueError(f"budget file: {value.get('class_name')!r} is not a dp-accounting "
                         "event")
    return cls(**{k: _event_from_json(v) for k, v in fields.items()})


class Reservation:
    """One fit's spend with an optional :class:`PrivacyAccountant`: reserved before any release
    (:meth:`reserve`), dropped if the fit raises (leaving the ``with`` block by an exception),
    registered when it succeeds (:meth:`commit`). Without an accountant every step does nothing.

    Parameters
    ----------
    accountant : PrivacyAccountant or None
    name : str
        How the accountant's report names the fit.
    """

    def __init__(self, accountant, name):
        self.accountant = accountant
        self.name = name
        #: The identifier the fit's ledger entries carry; None until reserved (or without an
        #: accountant).
        self.fit_id = None

    def reserve(self, entries=(), *alternatives, event=None):
        """Reserve the planned ``entries`` (or ``event``), or any of ``entries`` and the
        ``alternatives`` (the plans a private row count chooses among):
        :meth:`PrivacyAccountant.reserve`.

        Returns
        -------
        fit_id : str or None

        Raises
        ------
        BudgetExceededError
            The accountant's budget would be exceeded.
        """
        if self.accountant is not None:
            self.fit_id = self.accountant.reserve(entries, self.name, event, alternatives)
        return self.fit_id

    def reserve_plans(self, plans):
        """Reserve the ledgers of ``plans`` (:class:`~dpboost._budget.BudgetPlan` or
        ``_interaction_choice.ChoicePlan``, whose ``ledgers`` a fit may release; more than
        one: those a private row count or a choice of interactions chooses among) as
        :meth:`reserve`; a plan's ledger is built only where an accountant reads it (10^5
        entries for 10,000 trees).

        Returns
        -------
        fit_id : str or None
        """
        if self.accountant is not None:
            return self.reserve(*(ledger for plan in plans for ledger in plan.ledgers))
        return self.fit_id

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, traceback):
        if exc_type is not None and self.fit_id is not None:
            self.accountant.release(self.fit_id)
        return False

    def commit(self, entries=(), choices=None):
        """Register the reserved fit's ledger ``entries``, or with a private row count its
        ``choices`` (every plan it could take): :meth:`PrivacyAccountant.commit`."""
        if self.fit_id is not None:
            self.accountant.commit(self.fit_id,
                                   entries if choices is None else Alternatives(choices))
