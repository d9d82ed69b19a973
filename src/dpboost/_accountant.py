"""One privacy budget over many fits: :class:`PrivacyAccountant` and :class:`BudgetExceededError`.

An estimator given ``accountant=`` reserves its planned spend before it reads any record (the
plan depends on public inputs only), and turns the reservation into a registered spend when the
fit succeeds; a fit that raises releases it. Everything registered is composed as one
computation over the same records: sequentially across fits (``LedgerEntry.fit``), with the
accountants the estimators use (docs/privacy.md, Accounting across fits).
"""

import math
import os
import threading
import uuid
from dataclasses import replace

from ._accounting import compose_pure, ledger_event, rdp_epsilon, rdp_orders, threshold_delta


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

    Raises
    ------
    ValueError
        ``epsilon`` or ``delta`` outside their ranges.

    Notes
    -----
    The accountant lives in one process. Threads may share it (``joblib`` threading backend):
    reservations are made under a lock, so concurrent fits cannot overspend together. A copy in
    another process (the default ``loky`` backend of ``n_jobs > 1``) would lose what it
    registers, so an unpickled accountant refuses to reserve: use ``n_jobs=1`` or the threading
    backend for searches that spend from an accountant. Models holding an accountant pickle and
    load as usual.
    """

    def __init__(self, epsilon, delta=0.0):
        if not (isinstance(epsilon, (int, float)) and 0 < epsilon < math.inf):
            raise ValueError(f"epsilon={epsilon!r} must be a number in (0, inf).")
        if not (isinstance(delta, (int, float)) and 0 <= delta < 1):
            raise ValueError(f"delta={delta!r} must be a number in [0, 1).")
        self.epsilon = float(epsilon)
        self.delta = float(delta)
        self._fits = {}  # fit id -> (name, entries), registered
        self._reserved = {}  # fit id -> (name, entries), in progress
        self._lock = threading.Lock()
        self._pid = os.getpid()

    def __getstate__(self):
        state = dict(self.__dict__)
        del state["_lock"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def __sklearn_clone__(self):
        # scikit-learn's clone deep-copies non-estimator parameters; a copy would spend from a
        # budget nobody reads.
        return self

    def _composed(self, fits):
        """Epsilon of ``fits``, each ``(name, ledger entries, dp-accounting event or None)``."""
        import dp_accounting

        entries = [e for _, fit_entries, _ in fits for e in fit_entries]
        events = [event for _, _, event in fits if event is not None]
        if not entries and not events:
            return 0.0
        # A search's event is not pure DP; a set of ledgers is when every release is.
        pure = math.inf if events else compose_pure(entries)
        if self.delta == 0:
            return pure
        ledger = ledger_event(entries)
        # Every fit's thresholds (private category lists) add their delta: on the event that
        # no fit releases a value held by the added record alone (probability at least 1 - their
        # sum), the transcript of all the fits is the restricted one, composed here.
        renyi_delta = self.delta - threshold_delta(entries)
        if ledger is None or not renyi_delta > 0:
            return pure
        return min(pure, rdp_epsilon(dp_accounting.ComposedDpEvent([ledger, *events]),
                                     renyi_delta, rdp_orders(entries)))

    def spent(self) -> float:
        """Composed epsilon of every registered fit, at this accountant's ``delta``.

        Returns
        -------
        epsilon : float
        """
        with self._lock:
            return self._composed(self._fits.values())

    def remaining(self) -> float:
        """``epsilon - spent()``, never below 0.

        With ``delta > 0`` it is not the largest epsilon a next fit may have: Renyi composition
        is sub-additive, so :meth:`reserve` may accept more (it composes, it does not subtract).

        Returns
        -------
        epsilon : float
        """
        return max(0.0, self.epsilon - self.spent())

    def reserve(self, entries, name: str, event=None) -> str:
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
        if os.getpid() != self._pid:
            raise RuntimeError(
                "this PrivacyAccountant is a copy in another process (joblib's loky backend, "
                "multiprocessing): what it registers would be lost. Run the fits with n_jobs=1 "
                "or inside joblib.parallel_backend('threading').")
        fit_id = uuid.uuid4().hex
        planned = tuple(replace(e, fit=fit_id) for e in entries)
        if self.delta == 0 and (event is not None or not math.isfinite(compose_pure(planned))):
            raise ValueError(f"{name} is not pure DP (delta > 0 or epsilon = inf); a "
                             "PrivacyAccountant with delta=0 registers pure-DP fits only.")
        with self._lock:
            fits = [*self._fits.values(), *self._reserved.values(), (name, planned, event)]
            total = self._composed(fits)
            # The planner calibrates within 1e-3 below a fit's epsilon; compositions of exactly
            # the budget must pass despite rounding.
            if not total <= self.epsilon * (1 + 1e-9):
                before = self._composed([*self._fits.values(), *self._reserved.values()])
                raise BudgetExceededError(
                    f"{name} would spend epsilon {self._composed([(name, planned, event)]):.6g}; with "
                    f"the {len(self._fits)} fits registered and {len(self._reserved)} in "
                    f"progress the total would be {total:.6g} > the accountant's "
                    f"{self.epsilon:.6g} (remaining {max(0.0, self.epsilon - before):.6g}, "
                    f"delta={self.delta:g}). Nothing was fitted or spent.")
            self._reserved[fit_id] = (name, planned, event)
        return fit_id

    def commit(self, fit_id: str, entries=()) -> None:
        """Register a reserved fit's ledger (its entries carry ``fit_id``; a reserved event is
        registered as it was planned)."""
        with self._lock:
            name, _, event = self._reserved.pop(fit_id)
            self._fits[fit_id] = (name, tuple(entries), event)

    def release(self, fit_id: str) -> None:
        """Drop the reservation of a fit that raised: nothing was released."""
        with self._lock:
            self._reserved.pop(fit_id, None)

    def report(self) -> str:
        """Text: the budget, what is spent and remains, and each registered fit's own spend.

        Returns
        -------
        report : str
        """
        with self._lock:
            fits = list(self._fits.values())
            spent = self._composed(fits)
        guarantee = "pure DP" if self.delta == 0 else f"delta={self.delta:g}"
        lines = [f"PrivacyAccountant: epsilon {self.epsilon:.6g} ({guarantee}), spent "
                 f"{spent:.6g} by {len(fits)} fits (composed sequentially), remaining "
                 f"{max(0.0, self.epsilon - spent):.6g}"]
        for i, (name, entries, event) in enumerate(fits):
            what = f"{len(entries)} releases" if event is None else "a repeat-and-select event"
            lines.append(f"  {i}: {name}: {what}, epsilon "
                         f"{self._composed([(name, entries, event)]):.6g} alone")
        return "\n".join(lines)

    def __repr__(self):
        return f"PrivacyAccountant(epsilon={self.epsilon!r}, delta={self.delta!r})"


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

    def reserve(self, entries=(), event=None):
        """Reserve the planned ``entries`` (or ``event``): :meth:`PrivacyAccountant.reserve`.

        Returns
        -------
        fit_id : str or None

        Raises
        ------
        BudgetExceededError
            The accountant's budget would be exceeded.
        """
        if self.accountant is not None:
            self.fit_id = self.accountant.reserve(entries, self.name, event)
        return self.fit_id

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, traceback):
        if exc_type is not None and self.fit_id is not None:
            self.accountant.release(self.fit_id)
        return False

    def commit(self, entries=()):
        """Register the reserved fit's ledger ``entries``: :meth:`PrivacyAccountant.commit`."""
        if self.fit_id is not None:
            self.accountant.commit(self.fit_id, entries)
