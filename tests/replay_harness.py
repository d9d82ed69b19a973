"""Record-and-replay harness: sensitivity checks on neighbouring datasets ("Re:cord-play", PETS 2026).

The estimator is fitted on a dataset D and on its neighbour D' = D + one adversarially chosen
record (appended as the last row). On D a :class:`RecordingNoise` draws real noise and records
every mechanism call: its ledger entry, its exact input, its scale and its output. On D' a
:class:`ReplayNoise` returns D's recorded outputs, so D' runs conditioned on D's released
transcript (adaptive composition: the k-th release of D' is compared with the k-th of D given
the same earlier releases), and records the inputs of D'. Then

(a) for every mechanism call, the inputs on D and D' differ by at most the declared sensitivity in
    the mechanism's norm (exponential: L-inf per node; Laplace: L1 per row; Gaussian: L2 per row),
    in at most one row (the rows of an entry are disjoint nodes), in at most one tree of each
    composition group (the trees of a group see disjoint records), in the releases of at most one
    part of a choice of interactions, and not at all (bit for bit, sign of zero included) when the
    declared sensitivity is 0;
(b) everything released without noise is identical: the model (``to_json``, ``export_text``,
    every attribute of the fitted estimator, bit for bit, predictions on a probe set), the
    number, kinds and shapes of the calls, the public arguments of every tree (budget, feature,
    split candidates), the warnings and their messages, the verbose output, and whether ``fit``
    raises at all;
(c) every call's noise scale is the one its ledger entry implies, the ledger equals the plan
    (``plan_budget``, whose inputs must not depend on the data) and every release is observed.
(d) with an individual Renyi filter (``renyi_filter``), the added record's own Renyi losses over
    the trees whose leaf inputs it moved stay within its budget at every order (an independent
    dp-accounting computation), every other record's participation being the same on D and D'
    (by (a): one row per release).

The coins of the record partition and of Poisson sampling (``_records.RecordCoins``: one uniform
per record, keyed once per fit) are replayed with D's key, and the added record (the row after
every row D asked coins for) gets the extra coin: 0.0 (the record joins the first position / the
sample) or 0.999999 (the last position, or unused / not sampled).

The fast suite replays a pairwise-covering set of configurations (:func:`covering_configs`) and
the cases sampling found failing (:data:`FOUND`); ``-m slow`` replays a fixed random sample of
the whole product. Records whose documented treatment was introduced when the review's leaks were closed (a
label outside the public classes, a missing, infinite or non-numeric target, a cell that is not
a number, a value outside a category list) have their own test,
:func:`test_documented_record_treatments`. Negative controls show that each check can fail.
"""

import contextlib
import io
import itertools
import math
import re
import sys
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass, field, fields, is_dataclass, replace

import numpy as np
import pytest

from dpboost import DPGBClassifier, DPGBRegressor
from dpboost._accounting import FILTER_ORDERS
from dpboost._interaction_choice import ChoicePlan
from dpboost._noise import NoiseSource, NumpyNoise
from dpboost._records import RecordCoins

pd = pytest.importorskip("pandas")

# ------------------------------------------------------------------------------------------------
# Noise sources that record and replay
# ------------------------------------------------------------------------------------------------

#: Relative tolerance on a declared sensitivity: inputs are float64 sums of float32 gradients.
SENSITIVITY_RTOL = 1e-9
#: Relative tolerance on a noise scale against the formula of its entry.
SCALE_RTOL = 1e-12
#: The draws whose number is the number of training records (partition, Poisson sampling).
COINS = "coins"
#: Releases drawn by another noise method than their own name: a thresholded release (private
#: category lists) draws Gaussian noise on its counts.
DRAWS = {"threshold": "gaussian"}


class ReplayMismatch(AssertionError):
    """D' made a call that D did not make (another kind, shape, entry or count): a release whose
    form depends on the added record."""


@dataclass
class Call:
    """One mechanism call as seen by the noise source.

    Attributes
    ----------
    kind : str
        ``"exponential"``, ``"laplace"``, ``"gaussian"``, ``"uniform"`` or ``"coins"``.
    entry : LedgerEntry or None
        The entry shown to ``observe`` just before the draw; None for a draw without one (coins).
    values : ndarray or None
        Copy of the exact input shown to ``observe`` (None for a data-independent draw).
    shape : tuple or None
        Shape of the array the draw was asked for (exponential, Laplace, Gaussian).
    scale : float or None
        Noise scale of the draw; None when nothing was drawn (a release of sensitivity 0).
    n : int or None
        Number of uniforms asked for (``uniform``, ``coins``).
    output : ndarray or None
        Copy of what the draw returned.
    drawn : bool
        Whether noise was drawn; an observed release of sensitivity 0 draws nothing.
    """

    kind: str
    entry: object = None
    values: object = None
    shape: object = None
    scale: object = None
    n: object = None
    output: object = None
    drawn: bool = False


def _copy(values):
    if values is None or isinstance(values, RecordCoins):
        return values
    return np.array(values, copy=True)


@dataclass(frozen=True)
class TapCoins(RecordCoins):
    """A fit's coins on D, remembering the largest row asked for (picklable: a Dask fit's
    workers get copies, so give ``ReplayNoise`` the added row explicitly there)."""

    seen: list = field(default_factory=list)

    def uniforms(self, stream, start, stop):
        if stop > start:
            self.seen.append(stop - 1)
        return super().uniforms(stream, start, stop)


@dataclass(frozen=True)
class ExtraCoins(RecordCoins):
    """D's coins, with ``value`` for every row from ``added_row`` on (the added record)."""

    added_row: int = 0
    value: float = 0.0

    def uniforms(self, stream, start, stop):
        coins = super().uniforms(stream, start, stop)
        coins[max(self.added_row - start, 0):] = self.value
        return coins


class _TapNoise(NoiseSource):
    """Shared bookkeeping of :class:`RecordingNoise` and :class:`ReplayNoise`.

    ``observe`` opens a call; the next draw of the same kind closes it. A draw that follows no
    open call of its kind is a call without a ledger entry (the coins, or a mechanism that skipped
    ``observe``, which the checks flag). An observed call that is never drawn is a release of
    sensitivity 0 (the constant 0).
    """

    def __init__(self):
        self.calls = []
        self._open = None

    def observe(self, entry, values):
        call = Call(kind=entry.mechanism, entry=entry, values=_copy(values))
        self.calls.append(call)
        self._open = call
        self._on_observe(len(self.calls) - 1, call)

    def _draw(self, kind, *, shape=None, scale=None, n=None, draw):
        call = self._open
        self._open = None
        if call is None or DRAWS.get(call.kind, call.kind) != kind:
            # The open call (if any) drew nothing: a release of sensitivity 0, or a mechanism
            # that observed one release and drew another (check_scales_and_ledger flags it).
            call = Call(kind=kind)
            self.calls.append(call)
        call.shape, call.scale, call.n, call.drawn = shape, scale, n, True
        output = self._output(len(self.calls) - 1, call, draw)
        call.output = _copy(output)
        return output

    def exponential(self, utilities, scale, sensitivity):
        return self._draw("exponential", shape=utilities.shape, scale=float(scale),
                          draw=lambda inner: inner.exponential(utilities, scale, sensitivity))

    def laplace(self, values, scale, sensitivity):
        return self._draw("laplace", shape=values.shape, scale=float(scale),
                          draw=lambda inner: inner.laplace(values, scale, sensitivity))

    def gaussian(self, values, scale, sensitivity):
        return self._draw("gaussian", shape=values.shape, scale=float(scale),
                          draw=lambda inner: inner.gaussian(values, scale, sensitivity))

    def uniform(self, n):
        return self._draw("uniform", n=int(n), draw=lambda inner: inner.uniform(n))

    def coins(self):
        return self._draw(COINS, draw=lambda inner: TapCoins(inner.coins().key))

    def _on_observe(self, index, call):
        pass


class RecordingNoise(_TapNoise):
    """Reproducible noise (a :class:`NumpyNoise`) that records every call (see :class:`Call`).

    Parameters
    ----------
    seed : int
    """

    def __init__(self, seed):
        super().__init__()
        self.inner = NumpyNoise(np.random.default_rng(seed))

    def _output(self, index, call, draw):
        return draw(self.inner)


class ReplayNoise(_TapNoise):
    """Returns the outputs recorded on D, call by call, and records the inputs of D'.

    The k-th call on D' must have the k-th recorded call's kind, ledger entry, input shape, scale
    and count of uniforms (all public); ``coins`` returns D's coins, and ``extra_coin`` for the
    added record (every row after those D asked for). Anything else raises
    :class:`ReplayMismatch` at once: the rest of the fit could not be conditioned on D's
    transcript.

    Parameters
    ----------
    recording : list of Call
        ``RecordingNoise.calls`` of the fit on D.
    extra_coin : float
        The added record's coin, in [0, 1).
    added_row : int or None, default=None
        The added record's row; None: the row after the largest D asked coins for.
    """

    def __init__(self, recording, extra_coin, added_row=None):
        super().__init__()
        self.recording = recording
        self.extra_coin = extra_coin
        self.added_row = added_row

    def _recorded(self, index, call):
        if index >= len(self.recording):
            raise ReplayMismatch(f"D' makes call #{index} ({call.kind}, {call.entry}); D made "
                                 f"only {len(self.recording)}")
        rec = self.recording[index]
        if rec.kind != call.kind or rec.entry != call.entry:
            raise ReplayMismatch(f"call #{index}: D made {rec.kind} ({rec.entry}), D' makes "
                                 f"{call.kind} ({call.entry})")
        return rec

    def _on_observe(self, index, call):
        rec = self._recorded(index, call)
        shape = lambda v: None if v is None else np.shape(v)  # noqa: E731
        # A thresholded release counts the values each dataset holds: D' may hold more
        # (check_threshold says which differences are legitimate).
        if call.kind != "threshold" and shape(rec.values) != shape(call.values):
            raise ReplayMismatch(f"call #{index} ({call.kind}): input of shape "
                                 f"{shape(rec.values)} on D, {shape(call.values)} on D'")

    def _output(self, index, call, draw):
        rec = self._recorded(index, call)
        if call.kind == "threshold" and rec.drawn and rec.scale == call.scale:
            return replay_threshold(rec, call)
        if not rec.drawn or rec.shape != call.shape or rec.scale != call.scale:
            raise ReplayMismatch(f"call #{index} ({call.kind}): shape {rec.shape}, scale "
                                 f"{rec.scale}, drawn {rec.drawn} on D; shape {call.shape}, "
                                 f"scale {call.scale} on D'")
        if call.kind == COINS:
            added = (self.added_row if self.added_row is not None
                     else max(rec.output.seen, default=-1) + 1)
            return ExtraCoins(rec.output.key, added_row=added, value=self.extra_coin)
        if rec.n != call.n:
            raise ReplayMismatch(f"call #{index} ({call.kind}): n={rec.n} on D, {call.n} on D'")
        return _copy(rec.output)


def replay_threshold(rec, call):
    """D's noisy counts for the values D' holds, aligned by value: D's output for every value D
    holds; for a value only D' holds (the added record's), its exact count, which must be at
    most 1 and below the threshold. That is D' on the event that no new value clears the
    threshold (probability at least ``1 - entry.delta``), whose transcript the rest of the fit
    must then reproduce (docs/privacy.md, Private category lists)."""
    noisy = dict(zip(rec.values["key"].tolist(), rec.output.ravel().tolist()))
    out = []
    for key, count in zip(call.values["key"].tolist(), call.values["count"].tolist()):
        if key not in noisy and not (count <= 1 < call.entry.threshold):
            raise ReplayMismatch(f"a value only D' holds has count {count} (threshold "
                                 f"{call.entry.threshold}): it is not the event the delta bounds")
        out.append(noisy.get(key, count))
    return np.array(out, dtype=np.float64).reshape(-1, 1)


# ------------------------------------------------------------------------------------------------
# Checks
# ------------------------------------------------------------------------------------------------

def check_threshold(k, entry, values_d, values_dp):
    """Check (a) for a thresholded release (private category lists): D' holds every value of
    D; the counts of the values both hold move by at most 1 each and ``entry.sensitivity`` in
    L2; a value only D' holds has count at most 1; and at most one value per column moves or is
    new (one record holds one value per column).

    Returns
    -------
    failures : list of str
    """
    where = f"call #{k} (threshold, {entry.n_nodes} columns)"
    a = dict(zip(values_d["key"].tolist(), values_d["count"].tolist()))
    b = dict(zip(values_dp["key"].tolist(), values_dp["count"].tolist()))
    failures = [f"{where}: value {key!r} counted on D only" for key in a if key not in b]
    moved = {key: b[key] - a[key] for key in a if key in b and b[key] != a[key]}
    new = {key: count for key, count in b.items() if key not in a}
    failures += [f"{where}: the count of {key!r} moves by {change!r}, more than 1"
                 for key, change in moved.items() if abs(change) > 1]
    failures += [f"{where}: value {key!r} only on D' has count {count!r}, more than 1"
                 for key, count in new.items() if count > 1]
    per_column = Counter(key[0] for key in [*moved, *new])
    failures += [f"{where}: {n} values of column {column} move or are new; one record holds one"
                 for column, n in per_column.items() if n > 1]
    if len(per_column) > entry.n_nodes:
        failures.append(f"{where}: {len(per_column)} columns move, {entry.n_nodes} declared")
    distance = math.sqrt(math.fsum(v * v for v in moved.values()))
    if not distance <= entry.sensitivity * (1.0 + SENSITIVITY_RTOL) + SENSITIVITY_RTOL:
        failures.append(f"{where}: the counts both hold move by {distance!r} in L2, exceeds the "
                        f"declared sensitivity {entry.sensitivity!r}")
    return failures


def _rows(values):
    """``values`` as float64 rows: a 1-d input has one row per element (one node each)."""
    a = np.asarray(values, dtype=np.float64)
    return a[:, None] if a.ndim == 1 else a.reshape(a.shape[0], -1)


def _row_distance(kind, a, b):
    """Per-row distance in the mechanism's norm; NaN (inf - inf, NaN inputs) counts as inf."""
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.abs(b - a)
    d = np.where(np.isnan(d), np.inf, d)
    if kind == "exponential":
        return d.max(axis=1)
    if kind == "gaussian":
        with np.errstate(over="ignore"):
            return np.sqrt((d * d).sum(axis=1))
    return d.sum(axis=1)


def _bitwise_same(a, b):
    """Elementwise: equal values with equal signs of zero, or both NaN."""
    return ((a == b) & (np.signbit(a) == np.signbit(b))) | (np.isnan(a) & np.isnan(b))


def check_sensitivities(calls_d, calls_dp):
    """Check (a) on two transcripts of the same length.

    Parameters
    ----------
    calls_d, calls_dp : list of Call
        The calls recorded on D and on D' (replayed).

    Returns
    -------
    failures : list of str
        One line per violation, with the offending values.
    """
    failures = []
    norm = {"exponential": "L-inf", "laplace": "L1", "gaussian": "L2"}
    changed_trees = defaultdict(set)
    for k, (c, d) in enumerate(zip(calls_d, calls_dp)):
        if c.entry is None:
            if c.kind != COINS:
                failures.append(f"call #{k}: a {c.kind} draw without a ledger entry (the "
                                "mechanism skipped observe)")
            continue
        if c.values is None or d.values is None:
            if (c.values is None) != (d.values is None):
                failures.append(f"call #{k}: input shown on one side only")
            continue
        if c.kind == "threshold":
            failures += check_threshold(k, c.entry, c.values, d.values)
            continue
        a, b = _rows(c.values), _rows(d.values)
        if a.shape != b.shape:
            failures.append(f"call #{k} {c.entry}: input shape {a.shape} on D, {b.shape} on D'")
            continue
        differ = ~_bitwise_same(a, b).all(axis=1)
        rows = np.flatnonzero(differ)
        if rows.size == 0:
            continue
        e = c.entry
        # A warm start's fits, and a choice of interactions' parts, have groups of their own.
        changed_trees[e.fit, e.part, e.group].add(e.tree)
        where = f"call #{k} ({e.mechanism}, group {e.group}, tree {e.tree}, level {e.level})"
        distance = _row_distance(e.mechanism, a[rows], b[rows])
        if rows.size > 1:
            failures.append(f"{where}: {rows.size} rows (disjoint nodes) differ, rows "
                            f"{rows[:8].tolist()} by {distance[:8].tolist()}; at most one may")
        limit = e.sensitivity * (1.0 + SENSITIVITY_RTOL) + SENSITIVITY_RTOL
        for r, dist in zip(rows, distance):
            if e.sensitivity == 0:
                failures.append(f"{where}: declared sensitivity 0 but row {r} differs: "
                                f"{_show_change(a[r], b[r])}")
            elif not dist <= limit:
                failures.append(f"{where}: row {r} moves by {float(dist)!r} in "
                                f"{norm.get(e.mechanism, '?')}, exceeds the declared sensitivity "
                                f"{e.sensitivity!r}; {_show_change(a[r], b[r])}")
    for (_, _, group), trees in sorted(changed_trees.items()):
        if len(trees) > 1:
            failures.append(f"group {group}: inputs of trees {sorted(trees)} differ; the trees of "
                            "a group must see disjoint records, so at most one may change")
    parts = sorted({part for _, part, _ in changed_trees} - {""})
    if len(parts) > 1:
        failures.append(f"inputs of releases of parts {parts} differ; a record is in one part "
                        "of a choice of interactions, so at most one may change")
    return failures


def _show_change(a, b, width=4):
    """The differing values of one row on D and on D' (all of a short row)."""
    if a.size <= width:
        return f"D {a.tolist()} vs D' {b.tolist()}"
    at = np.flatnonzero(~_bitwise_same(a, b))
    shown = ", ".join(f"[{i}] {a[i].item()!r} -> {b[i].item()!r}" for i in at[:width])
    return f"{at.size} of {a.size} values differ: {shown}" + (", ..." if at.size > width else "")


def _expected_scale(entry):
    if entry.mechanism == "exponential":
        return 2.0 * entry.sensitivity / entry.epsilon
    if entry.mechanism == "laplace":
        return entry.sensitivity / entry.epsilon
    if entry.mechanism in ("gaussian", "threshold"):
        return entry.noise_multiplier * entry.sensitivity
    return None


def check_scales_and_ledger(calls_d, calls_dp, est_d, est_dp, plans):
    """Check (c): scales against their entries, ledger == plan, every release observed.

    Parameters
    ----------
    calls_d, calls_dp : list of Call
    est_d, est_dp : fitted estimators
    plans : tuple of two lists of (kwargs, BudgetPlan)
        ``plan_budget``'s arguments and results during the fit on D and during the fit on D';
        the last plan of a fit is the one its ledger must equal.

    Returns
    -------
    failures : list of str
    """
    failures = []
    for k, c in enumerate(calls_d):
        if c.entry is not None and not c.drawn and c.entry.sensitivity != 0:
            failures.append(f"call #{k} {c.entry}: observed, then no noise was drawn")
        if c.entry is None or not c.drawn:
            continue
        if c.kind != c.entry.mechanism:
            failures.append(f"call #{k}: a {c.kind} draw for a {c.entry.mechanism} entry")
        expected = _expected_scale(c.entry)
        if expected is not None and not math.isclose(c.scale, expected, rel_tol=SCALE_RTOL):
            failures.append(f"call #{k} {c.entry}: scale {c.scale!r}, the entry implies "
                            f"{expected!r}")
    plans_d, plans_dp = plans
    arguments = [[repr(sorted(kw.items())) for kw, _ in p] for p in plans]
    ledger = Counter(est_d.privacy_ledger_)
    # An individual filter's budget is declared, not released: nothing observes it. With early
    # stopping the ledger is the whole plan (charged as planned) and the releases made are its
    # entries of the stages before n_iter_ (made_releases).
    releases = Counter(made_releases(est_d))
    if not plans_d:
        failures.append("fit did not call plan_budget")
    elif arguments[0] != arguments[1]:
        failures.append(f"plan_budget's arguments depend on the data: {arguments[0]} on D, "
                        f"{arguments[1]} on D'")
    else:
        # A warm-started model's ledger holds one fit per plan: the last plans, summed.
        n_fits = len({e.fit for e in est_d.privacy_ledger_})
        planned = sum((Counter(planned_ledger(plan, est_d)) for _, plan in plans_d[-n_fits:]),
                      Counter())
        if ledger != planned:
            failures.append("privacy_ledger_ differs from the plan: "
                            + _multiset_difference(ledger, planned))
    if est_d.privacy_ledger_ != est_dp.privacy_ledger_:
        failures.append("privacy_ledger_ differs between D and D'")
    observed = Counter(c.entry for c in calls_d if c.entry is not None)
    if observed != releases:
        failures.append("the observed releases differ from privacy_ledger_: "
                        + _multiset_difference(observed, releases))
    return failures


def planned_ledger(plan, est):
    """The ledger a fit of ``plan`` must produce: its entries, or for a private choice of
    interactions (``ChoicePlan``) the releases over every record, both plans' trees on parts A
    and B, the statistic on V and the chosen plan's trees on T (``est.interaction_cst_``)."""
    if not isinstance(plan, ChoicePlan):
        return plan.entries

    def trees(of, part):
        return [replace(e, part=part) for e in of.entries if e.tree >= 0]

    chosen = plan.unrestricted if est.interaction_cst_ is None else plan.additive
    return ([e for e in plan.additive.entries if e.tree < 0] + trees(plan.additive, "A")
            + trees(plan.unrestricted, "B") + [plan.release] + trees(chosen, "T"))


def made_releases(est):
    """The releases a fitted estimator made, from its ``privacy_ledger_``: every entry but an
    individual filter's budget; with early stopping (``validation_score_``) only those of the
    stages before ``n_iter_`` (a tree entry's stage is its tree modulo the planned stages; a
    validation entry is scoped to the last tree of its stage), the releases before anything
    else included: the prefix rule of docs/privacy.md, Early stopping."""
    entries = [e for e in est.privacy_ledger_ if e.mechanism != "renyi_filter"]
    if not hasattr(est, "validation_score_"):
        return entries
    n_planned = est.n_estimators
    return [e for e in entries if e.tree < 0 or e.tree % n_planned < est.n_iter_]


def _sampled_gaussian_curve(sampling_rate, noise_multiplier, count=1):
    """dp-accounting's Renyi curve at FILTER_ORDERS of ``count`` sampled Gaussian releases (an
    independent computation of what the filter charges)."""
    import dp_accounting
    from dp_accounting.rdp import RdpAccountant

    event = dp_accounting.GaussianDpEvent(noise_multiplier)
    if sampling_rate < 1:
        event = dp_accounting.PoissonSampledDpEvent(sampling_rate, event)
    accountant = RdpAccountant(list(FILTER_ORDERS))
    accountant.compose(event, count)
    return np.asarray(accountant._rdp)  # the curve itself; no public accessor


def check_filter(calls_d, calls_dp, est_d):
    """Check (d), with an individual Renyi filter: the added record's own losses over the
    filtered leaf releases it moved stay within its budget at every order.

    The added record's contribution to tree t is the change of that tree's Gaussian leaf input
    (check (a) allows one row, so every other record's participation is the same on D and D');
    its loss is dp-accounting's sampled Gaussian curve at noise multiplier ``sigma c* / c``,
    summed over the trees, against the curve of ``filter_trees`` worst-case trees.

    Returns
    -------
    failures : list of str
    """
    # One filter per fit (a warm start's fits each open fresh budgets, composed sequentially).
    budgets = {e.fit: e for e in est_d.privacy_ledger_ if e.mechanism == "renyi_filter"}
    spent = {fit: np.zeros(len(FILTER_ORDERS)) for fit in budgets}
    trees = defaultdict(list)
    for c, d in zip(calls_d, calls_dp):
        if c.entry is None or not c.entry.filtered or c.values is None:
            continue
        b = budgets[c.entry.fit]
        change = float(np.sqrt(((_rows(d.values) - _rows(c.values)) ** 2).sum(axis=1)).max())
        if change > 0:
            trees[c.entry.fit].append(c.entry.tree)
            spent[c.entry.fit] += _sampled_gaussian_curve(
                b.sampling_rate, b.noise_multiplier * b.sensitivity / change)
    failures = []
    for fit, b in budgets.items():
        limit = _sampled_gaussian_curve(b.sampling_rate, b.noise_multiplier, b.filter_trees)
        over = spent[fit] > limit * (1 + 1e-9)
        if over.any():
            failures.append(
                f"the added record took part in trees {trees[fit]}: its losses exceed its "
                f"budget of {b.filter_trees} worst-case trees at orders "
                f"{np.asarray(FILTER_ORDERS)[over].tolist()} (spent {spent[fit][over].tolist()}, "
                f"budget {limit[over].tolist()})")
    return failures
    b = budgets[0]
    limit = _sampled_gaussian_curve(b.sampling_rate, b.noise_multiplier, b.filter_trees)
    spent = np.zeros(len(FILTER_ORDERS))
    trees = []
    for c, d in zip(calls_d, calls_dp):
        if c.entry is None or not c.entry.filtered or c.values is None:
            continue
        change = float(np.sqrt(((_rows(d.values) - _rows(c.values)) ** 2).sum(axis=1)).max())
        if change > 0:
            trees.append(c.entry.tree)
            spent += _sampled_gaussian_curve(b.sampling_rate,
                                             b.noise_multiplier * b.sensitivity / change)
    over = spent > limit * (1 + 1e-9)
    if over.any():
        return [f"the added record took part in trees {trees}: its losses exceed its budget of "
                f"{b.filter_trees} worst-case trees at orders "
                f"{np.asarray(FILTER_ORDERS)[over].tolist()} (spent {spent[over].tolist()}, "
                f"budget {limit[over].tolist()})"]
    return []


def _multiset_difference(first, second, width=3):
    only_first = list((first - second).elements())
    only_second = list((second - first).elements())
    return (f"{len(only_first)} only in the first, e.g. {only_first[:width]}; "
            f"{len(only_second)} only in the second, e.g. {only_second[:width]}")


def differences(a, b, path="", out=None):
    """Every difference between two values, bit for bit (floats by their bits, so -0.0 != 0.0).

    Recurses into dicts, lists, tuples, dataclasses, numpy arrays and objects' ``__dict__``.

    Returns
    -------
    out : list of str
        ``"path: value on D != value on D'"`` lines.
    """
    out = [] if out is None else out
    if type(a) is not type(b):
        out.append(f"{path}: {type(a).__name__} {_brief(a)} != {type(b).__name__} {_brief(b)}")
    elif isinstance(a, np.ndarray):
        if a.dtype != b.dtype or a.shape != b.shape:
            out.append(f"{path}: {a.dtype}{a.shape} != {b.dtype}{b.shape}")
        elif a.dtype == object:
            differences(a.tolist(), b.tolist(), path, out)
        elif a.tobytes() != b.tobytes():
            flat_a, flat_b = a.ravel(), b.ravel()
            if a.dtype.kind == "f":
                bad = np.flatnonzero(~_bitwise_same(flat_a, flat_b))
            else:
                bad = np.flatnonzero(flat_a != flat_b)
            i = int(bad[0]) if bad.size else 0
            out.append(f"{path}: {bad.size} elements differ, first at flat index {i}: "
                       f"{flat_a[i].item()!r} != {flat_b[i].item()!r}")
    elif isinstance(a, dict):
        if list(a) != list(b):
            out.append(f"{path}: keys {sorted(map(str, a))} != {sorted(map(str, b))}")
        for key in a:
            if key in b:
                differences(a[key], b[key], f"{path}[{key!r}]", out)
    elif isinstance(a, (list, tuple)):
        if len(a) != len(b):
            out.append(f"{path}: length {len(a)} != {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            differences(x, y, f"{path}[{i}]", out)
    elif isinstance(a, (float, np.floating)):
        if np.float64(a).tobytes() != np.float64(b).tobytes():
            out.append(f"{path}: {float(a)!r} != {float(b)!r}")
    elif is_dataclass(a):
        # Fields outside equality are identifiers (a ledger entry's random fit id), not releases.
        for f in fields(a):
            if f.compare:
                differences(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}", out)
    elif hasattr(a, "__dict__") and not callable(a):
        differences(vars(a), vars(b), path, out)
    elif a != b:
        out.append(f"{path}: {_brief(a)} != {_brief(b)}")
    return out


def _brief(value, width=120):
    text = repr(value)
    return text if len(text) <= width else text[:width] + "..."


def _mask_times(text):
    return re.sub(r"\d+(\.\d+)? s\b", "<time> s", text)


def _outputs(est, probe):
    """Everything a user can read from a fitted estimator, as comparable values."""
    # Each fit draws a random identifier for its ledger (independent of the data): masked.
    out = {"to_json": re.sub(r'"fit(_id)?": "[0-9a-f]*"', '"fit_id": "<id>"', est.to_json()),
           "export_text": [est.export_text(t) for t in range(est._forest.split_feature.shape[0])],
           "privacy_report": est.privacy_report(),
           "feature_importances_": est.feature_importances_,
           "predict": est.predict(probe)}
    if hasattr(est, "predict_proba"):
        out["predict_proba"] = est.predict_proba(probe)
        out["decision_function"] = est.decision_function(probe)
        out["staged_predict_proba"] = list(est.staged_predict_proba(probe))
    else:
        out["staged_predict"] = list(est.staged_predict(probe))
    # The noise source and a Dask estimator's cluster handle are inputs, not outputs.
    attributes = {k: v for k, v in vars(est).items() if k not in ("random_state", "client")}
    return out, attributes


@contextlib.contextmanager
def _wrapped(name, make_wrapper):
    """Replace function ``name`` by ``make_wrapper(original)`` in every dpboost module that
    holds it, so that calls are seen wherever the function is looked up at call time."""
    patched = []
    for module_name, module in list(sys.modules.items()):
        if ((module_name == "dpboost" or module_name.startswith("dpboost."))
                and callable(getattr(module, name, None))):
            patched.append((module, getattr(module, name)))
            setattr(module, name, make_wrapper(getattr(module, name)))
    try:
        yield
    finally:
        for module, original in reversed(patched):
            setattr(module, name, original)


@contextlib.contextmanager
def plan_spy():
    """Capture ``plan_budget``'s arguments and plan (with early stopping's releases, from
    ``plan_validation``, and the plan a private row count chose, from ``choose_plan``) wherever
    a dpboost module looks them up.

    The plan is pure, so a call whose arguments equal an earlier call's reuses its plan (the
    second fit of a replay: the RDP bisection takes seconds); arguments that differ would be a
    plan that depends on the data, and are planned afresh and reported. ``plan_fit``'s own
    memo of fresh plans (``_boosting._fresh_plan``) is bypassed, so that every fit plans and
    is seen planning.

    Yields
    ------
    captured : list of (kwargs, BudgetPlan)
    """
    captured = []
    plans = {}

    def wrap(original):
        def spy(**kwargs):
            key = repr(sorted(kwargs.items()))
            if key not in plans:
                plans[key] = original(**kwargs)
            captured.append((kwargs, plans[key]))
            return plans[key]
        return spy

    def wrap_validation(original):
        # Early stopping's releases join the plan after plan_budget (``plan_fit``): the plan
        # captured is the one the fit uses, with their public arguments among its arguments.
        def spy(plan, *args):
            kwargs, _ = captured[-1]
            validated = original(plan, *args)
            captured[-1] = ({**kwargs, "plan_validation": args}, validated)
            return validated
        return spy

    def wrap_choice(original):
        # A private row count chooses among plans made before it (``choose_plan``): the chosen
        # one, with the count's release, is the fit's last plan; its regime is a released fact.
        def spy(records, options, *args):
            config, plan, count = original(records, options, *args)
            if count is not None:
                chosen = [p is plan for _, p in options].index(True)
                captured.append(({"row_count_regime": chosen}, plan))
            return config, plan, count
        return spy

    def wrap_interactions(original):
        # A private choice of interactions plans its two plans and the statistic's release
        # together (``plan_choice``): its plan is the fit's.
        def spy(*args):
            choice = original(*args)
            captured.append(({"plan_choice": args[2:]}, choice))
            return choice
        return spy

    with (_wrapped("plan_budget", wrap), _wrapped("plan_validation", wrap_validation),
          _wrapped("choose_plan", wrap_choice), _wrapped("plan_choice", wrap_interactions),
          _wrapped("_fresh_plan", lambda memoised: memoised.__wrapped__)):
        yield captured


#: The arguments of ``grow_tree`` that must not depend on the data: the tree's budget, its
#: shape, its feature (cyclical) and the split candidates it chooses from (grid, categories,
#: the released Hessian sketch).
TREE_ARGUMENTS = ("budget", "max_depth", "n_bins", "l2_regularization", "feature",
                  "min_child_weight", "candidates")


@contextlib.contextmanager
def tree_spy():
    """Capture the public arguments (:data:`TREE_ARGUMENTS`) of every ``grow_tree`` call.

    Yields
    ------
    captured : list of dict
    """
    captured = []

    def wrap(original):
        def spy(*args, **kwargs):
            captured.append({k: _copy(kwargs[k]) if isinstance(kwargs[k], np.ndarray)
                             else kwargs[k] for k in TREE_ARGUMENTS if k in kwargs})
            return original(*args, **kwargs)
        return spy

    with _wrapped("grow_tree", wrap):
        yield captured


def _fit(make_estimator, noise, *data):
    """Fit on ``data`` (X, y[, sample_weight]) with every warning and all stdout captured;
    returns (estimator, warnings, stdout)."""
    est = make_estimator(noise)
    stdout = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(stdout):
        warnings.simplefilter("always")
        est.fit(*data)
    return est, [(w.category.__name__, str(w.message)) for w in caught], stdout.getvalue()


@dataclass
class ReplayResult:
    """What :func:`replay` saw, for tests that look further."""

    estimator_d: object
    estimator_dp: object
    calls_d: list
    calls_dp: list
    failures: list
    trees_d: list = None


def replay(make_estimator, D, D_prime, *, probe, extra_coin=0.0, seed=0, check=True,
           added_row=None):
    """Fit on D (recording) and on D' (replaying D's transcript) and check (a), (b) and (c).

    Parameters
    ----------
    make_estimator : callable
        ``make_estimator(noise)`` returns an unfitted estimator with ``random_state=noise``.
    D, D_prime : tuple (X, y) or (X, y, sample_weight)
        D' is D with one record appended as its last row.
    probe : array-like
        Inputs on which the two models' predictions must be identical.
    extra_coin : float, default=0.0
        The added record's coin in every partition and Poisson sample.
    seed : int, default=0
    check : bool, default=True
        Raise an AssertionError listing every failure (otherwise only return them).
    added_row : int or None, default=None
        The added record's row among the records in the data domain, for fits whose coins are
        drawn out of this process (Dask); None: found by the recording.

    Returns
    -------
    result : ReplayResult
    """
    recording = RecordingNoise(seed)
    with plan_spy() as plans, tree_spy() as trees:
        est_d, warnings_d, stdout_d = _fit(make_estimator, recording, *D)
        n_plans_d, n_trees_d = len(plans), len(trees)
        replaying = ReplayNoise(recording.calls, extra_coin, added_row)
        try:
            est_dp, warnings_dp, stdout_dp = _fit(make_estimator, replaying, *D_prime)
        except Exception as error:  # the exception itself is a release that depends on D'
            failures = [f"(b) fit raises on D' only: {type(error).__name__}: {error}"]
            if check:
                raise AssertionError("\n".join(failures)) from error
            return ReplayResult(est_d, None, recording.calls, replaying.calls, failures)
    failures = []
    if len(replaying.calls) != len(recording.calls):
        failures.append(f"(b) D made {len(recording.calls)} calls, D' {len(replaying.calls)}")
    failures += ["(a) " + f for f in check_sensitivities(recording.calls, replaying.calls)]
    (outputs_d, attributes_d), (outputs_dp, attributes_dp) = (_outputs(est_d, probe),
                                                              _outputs(est_dp, probe))
    failures += ["(b) " + f for f in differences(outputs_d, outputs_dp, "outputs")]
    failures += ["(b) " + f for f in differences(attributes_d, attributes_dp, "estimator")]
    if differences(warnings_d, warnings_dp):
        failures.append(f"(b) warnings differ: {warnings_d} on D, {warnings_dp} on D'")
    failures += ["(b) grow_tree's public arguments " + f
                 for f in differences(trees[:n_trees_d], trees[n_trees_d:], "calls")]
    if _mask_times(stdout_d) != _mask_times(stdout_dp):
        failures.append(f"(b) verbose output differs: {stdout_d!r} vs {stdout_dp!r}")
    failures += ["(c) " + f for f in check_scales_and_ledger(
        recording.calls, replaying.calls, est_d, est_dp, (plans[:n_plans_d], plans[n_plans_d:]))]
    failures += ["(d) " + f for f in check_filter(recording.calls, replaying.calls, est_d)]
    if check and failures:
        raise AssertionError(f"{len(failures)} failures:\n" + "\n".join(failures[:40]))
    return ReplayResult(est_d, est_dp, recording.calls, replaying.calls, failures,
                        trees[:n_trees_d])


# ------------------------------------------------------------------------------------------------
# Data, adversarial records and configurations
# ------------------------------------------------------------------------------------------------

N_RECORDS = 240
NUMERIC = ["x0", "x1", "x2"]
COLOURS = ["red", "green", "blue"]
TARGET_BOUNDS = (-2.0, 2.0)

#: Classifier loss and number of classes, or the regressor.
TASKS = {"binary-square": ("square", 2), "binary-logistic": ("logistic", 2),
         "binary-softmax": ("softmax", 2), "ternary-square": ("square", 3),
         "ternary-logistic": ("logistic", 3), "ternary-softmax": ("softmax", 3),
         "regression": (None, None)}

#: Every axis of the configuration grid; the first four blocks are estimator parameters, "data"
#: is D's kind, "features", "label" and "coin" describe the added record.
AXES = {
    "task": list(TASKS),
    "split_selection": ["exponential", "cyclical", "random"],
    "leaf_noise": ["laplace", "gaussian", "average"],
    "budget_allocation": ["eoe", "sequential", "parallel"],
    "split_candidates": ["uniform", "sketch", "hessian", "log"],
    "subsample": [1.0, 0.5],
    "delta": [0.0, 1e-5],
    "learning_rate": [0.3, 1.0],
    "gradient_filtering": [True, False],
    "leaf_clipping": [True, False],
    "l2_regularization": [0.1, 0.0],
    "min_child_weight": [0.0, 3.0],
    "max_depth": [2, 3],
    "data": ["numeric", "missing", "categorical"],
    "features": ["typical", "far", "inf", "nan", "new_category"],
    "label": ["low", "mid", "high"],
    "coin": [0.0, 0.999999],
    "bounds": ["public", "private"],
    "gradient_bound": [1.0, 0.4],
    "interaction_cst": [None, "no_interactions"],
    "monotonic_cst": [None, "monotone"],
    "renyi_filter": [None, 0.5],
}


def is_valid(config):
    """Whether ``fit`` accepts the configuration (the combinations it refuses with ValueError)."""
    if config["leaf_noise"] == "gaussian" and (config["delta"] == 0
                                               or config["l2_regularization"] == 0):
        return False
    if config.get("renyi_filter") is not None and (
            config["leaf_noise"] != "gaussian" or config["budget_allocation"] != "sequential"
            or (config["subsample"] < 1 and config["split_selection"] != "random")):
        return False
    return not (config["min_child_weight"] > 0 and config["leaf_noise"] == "laplace")


#: Prefix of each axis's value in a test id (see :func:`config_id`).
_PREFIX = {"task": "", "split_selection": "-", "leaf_noise": "-", "budget_allocation": "-",
           "split_candidates": "-", "subsample": "-ss", "delta": "-d", "learning_rate": "-lr",
           "gradient_filtering": "-gdf", "leaf_clipping": "-glc", "l2_regularization": "-l2",
           "min_child_weight": "-mcw", "max_depth": "-depth", "data": "-", "features": "+",
           "label": ":", "coin": "@", "bounds": "-", "gradient_bound": "-g",
           "interaction_cst": "-ic", "monotonic_cst": "-mc", "renyi_filter": "-rf"}


def _fmt(value):
    return str(int(value)) if isinstance(value, bool) else f"{value:g}" if isinstance(
        value, float) else str(value)


def config_id(config):
    """Readable test id of a configuration, e.g. ``binary-square-exponential-laplace-eoe-...``."""
    return "".join(_PREFIX[axis] + _fmt(config[axis]) for axis in AXES)


#: Axes added after ids were recorded: an id without them has their first value.
_LATER_AXES = ("gradient_bound", "interaction_cst", "monotonic_cst", "renyi_filter")


def config_from_id(text):
    """The configuration of a test id made by :func:`config_id` (to replay a reported case)."""
    parts = []
    for axis in AXES:
        values = sorted((re.escape(_fmt(v)) for v in AXES[axis]), key=len, reverse=True)
        part = re.escape(_PREFIX[axis]) + f"(?P<{axis}>{'|'.join(values)})"
        parts.append(f"(?:{part})?" if axis in _LATER_AXES else part)
    pattern = "".join(parts)
    match = re.fullmatch(pattern, text)
    if match is None:
        raise ValueError(f"not a configuration id: {text!r}")
    return {axis: AXES[axis][0] if value is None else {_fmt(v): v for v in AXES[axis]}[value]
            for axis, value in match.groupdict().items()}


def _pairs(config, names):
    return frozenset((i, config[a], j, config[b]) for (i, a), (j, b)
                     in itertools.combinations(enumerate(names), 2))


def sampled_gaussian(config):
    """Whether every release of a tree is Gaussian on a Poisson sample: the planner's Renyi
    bisection then composes sampled Gaussian events, which takes seconds per plan."""
    return (config["subsample"] < 1 and config["delta"] > 0
            and config["split_selection"] == "random" and config["leaf_noise"] == "gaussian")


def covering_configs(seed=2026, n_pool=1500):
    """A small set of valid configurations covering every reachable pair of axis values.

    Greedy: from a fixed random pool of valid configurations, repeatedly take the one covering
    the most pairs not yet covered (pairs no valid configuration holds are not required). The
    pool leaves out the slow-to-plan :func:`sampled_gaussian` configurations (every pair they
    hold is also held by others); the sampled product of the slow test includes them.
    """
    rng = np.random.default_rng(seed)
    names = list(AXES)
    pool = []
    while len(pool) < n_pool:
        config = {a: AXES[a][rng.integers(len(AXES[a]))] for a in names}
        if is_valid(config) and not sampled_gaussian(config):
            pool.append(config)
    pairs = [_pairs(c, names) for c in pool]
    uncovered = set().union(*pairs)
    chosen = []
    while uncovered:
        best = max(range(len(pool)), key=lambda i: len(pairs[i] & uncovered))
        chosen.append(pool[best])
        uncovered -= pairs[best]
    return chosen


def sampled_configs(n, seed=7):
    """``n`` valid configurations drawn uniformly from the full product (fixed seed)."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        config = {a: AXES[a][rng.integers(len(AXES[a]))] for a in AXES}
        if is_valid(config):
            out.append(config)
    return out


def make_data(task, kind, seed=0):
    """D: ``N_RECORDS`` records, 3 numeric features in [-1, 1] (``"missing"``: 10 % NaN cells;
    ``"categorical"``: a DataFrame with an object column ``colour``, some missing or off-list)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(N_RECORDS, 3))
    score = X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=N_RECORDS)
    colour = rng.choice(COLOURS + ["purple", None], p=[0.3, 0.3, 0.3, 0.05, 0.05],
                        size=N_RECORDS).astype(object)
    if kind == "categorical":
        score += 0.8 * (colour == "blue")
    if kind == "missing":
        X[rng.random(X.shape) < 0.1] = np.nan
    loss, n_classes = TASKS[task]
    if n_classes is None:
        y = np.clip(score, *TARGET_BOUNDS)
    elif n_classes == 2:
        y = (score > 0).astype(int)
    else:
        y = np.digitize(score, [-0.4, 0.4])
    if kind == "categorical":
        frame = pd.DataFrame(X, columns=NUMERIC)
        frame["colour"] = colour
        return frame, y
    return X, y


def added_record(task, kind, features, label):
    """The adversarial record: (feature row as a list, label)."""
    numeric = {"typical": [0.3, -0.7, 0.9], "far": [1e6, -1e6, 1e300],
               "inf": [np.inf, -np.inf, np.inf], "nan": [np.nan] * 3,
               "new_category": [0.3, -0.7, 0.9]}[features]
    colour = {"far": "red", "inf": "green", "nan": None, "new_category": "purple"}.get(features,
                                                                                         "blue")
    loss, n_classes = TASKS[task]
    if n_classes is None:
        target = {"low": -1e6, "mid": 0.3, "high": 1e6}.get(label, label)
    else:
        target = {"low": 0, "mid": (n_classes - 1) // 2 + (n_classes == 2),
                  "high": n_classes - 1}.get(label, label)
    return numeric + ([colour] if kind == "categorical" else []), target


def append_record(D, row, target):
    """D' = D with the record ``(row, target)`` appended as the last row.

    A DataFrame gets the row by ``pandas.concat``, so a cell of another type changes its column's
    dtype as it would when the data is read; a numpy X becomes an object array when the row holds
    anything but floats. ``y`` keeps its dtype for a number (float for a float) and becomes an
    object array for anything else.
    """
    X, y = D
    if isinstance(X, pd.DataFrame):
        X_prime = pd.concat([X, pd.DataFrame([row], columns=list(X.columns))], ignore_index=True)
    elif all(isinstance(v, float) for v in row):
        X_prime = np.vstack([X, np.array([row], dtype=np.float64)])
    else:
        X_prime = np.empty((X.shape[0] + 1, X.shape[1]), dtype=object)
        X_prime[:-1] = X
        for j, value in enumerate(row):
            X_prime[-1, j] = value
    if isinstance(target, (float, np.floating)):
        y_prime = np.append(y.astype(np.float64), target)
    elif isinstance(target, (int, np.integer)) and not isinstance(target, bool) and (
            abs(target) < 2**53):
        y_prime = np.append(y, target)
    else:
        y_prime = np.empty(y.size + 1, dtype=object)
        y_prime[:-1], y_prime[-1] = y, target
    return X_prime, y_prime


def neighbours(task, kind, features, label):
    """(D, D') with the added record of :func:`added_record` as the last row of D'."""
    D = make_data(task, kind)
    return D, append_record(D, *added_record(task, kind, features, label))


def probe_set(kind):
    """Fixed prediction inputs: inside and outside the bounds, infinities, NaN, unknown and
    missing categories."""
    rng = np.random.default_rng(99)
    X = rng.uniform(-1.5, 1.5, size=(40, 3))
    X[:4] = [[np.nan, 0.0, 0.5], [np.inf, -np.inf, 2.0], [-5.0, np.nan, np.nan], [0.0, 0.0, 0.0]]
    if kind != "categorical":
        return X
    frame = pd.DataFrame(X, columns=NUMERIC)
    frame["colour"] = np.array((COLOURS + ["purple", None]) * 8, dtype=object)
    return frame


def estimator_factory(config):
    """``make_estimator(noise)`` for :func:`replay`: every parameter given explicitly."""
    loss, n_classes = TASKS[config["task"]]
    categorical = config["data"] == "categorical"
    params = dict(
        epsilon=config.get("epsilon", 1.0), delta=config["delta"],
        n_estimators=config.get("n_estimators", 5),
        max_depth=config["max_depth"],
        learning_rate=config["learning_rate"], l2_regularization=config["l2_regularization"],
        max_bins=8, trees_per_ensemble=2, budget_allocation=config["budget_allocation"],
        gradient_filtering=config["gradient_filtering"], leaf_clipping=config["leaf_clipping"],
        leaf_noise=config["leaf_noise"], min_child_weight=config["min_child_weight"],
        subsample=config["subsample"], split_selection=config["split_selection"],
        split_candidates=config["split_candidates"],
        gradient_bound=config.get("gradient_bound", 1.0),
        interaction_cst=config.get("interaction_cst"),
        renyi_filter=config.get("renyi_filter"),
        # "monotone": increasing in the first feature, decreasing in the second (one output only)
        monotonic_cst=([1, -1, 0] + [0] * categorical
                       if config.get("monotonic_cst") and n_classes in (None, 2) else None),
        # "log": the third feature's bounds wide and nonnegative, so that it gets the log grid
        feature_bounds=("private" if config.get("bounds") == "private"
                        else [(-1.0, 1.0)] * 2
                        + [(0.0, 2000.0) if config["split_candidates"] == "log" else (-1.0, 1.0)]
                        + ([(0.0, 1.0)] if categorical else [])),
        categorical_features=["colour"] if categorical else None,
        categories={"colour": list(COLOURS)} if categorical else None,
        init=config.get("init", "private"), verbose=1, diagnostics=False, n_jobs=1)
    if config.get("early_stopping"):
        # Three checks (stages 10, 20, 30): the fit stops at 20 when the second released loss
        # is no better than the first.
        params.update(early_stopping=True, n_estimators=30, n_iter_no_change=10,
                      validation_fraction=0.3)
    if n_classes is None:
        target_bounds = "private" if config.get("bounds") == "private" else TARGET_BOUNDS
        return lambda noise: DPGBRegressor(target_bounds=target_bounds, random_state=noise,
                                           n_samples_hint=config.get("n_samples_hint"),
                                           **params)
    return lambda noise: DPGBClassifier(loss=loss, classes=list(range(n_classes)),
                                        random_state=noise,
                                        n_samples_hint=config.get("n_samples_hint"), **params)


def run_config(config, seed=0, check=True):
    """:func:`replay` of one configuration of :data:`AXES`."""
    D, D_prime = neighbours(config["task"], config["data"], config["features"], config["label"])
    return replay(estimator_factory(config), D, D_prime, probe=probe_set(config["data"]),
                  extra_coin=config["coin"], seed=seed, check=check)


#: Cases in which sampling the product found a failure, kept in the fast set with their seed.
#: Sensitivity-0 leaves (learning_rate=1 zeroes GLC's bound after the first tree) whose input is a
#: zero whose sign depends on the added record; and the sibling of the added record's node,
#: whose histogram is built from its samples on one side and by subtraction from its parent on
#: the other when the record breaks the tie of the two sizes (rounding: logistic and softmax
#: gradients span many binades, so their float64 sums are not exact).
FOUND = [
    ("binary-softmax-random-laplace-sequential-sketch-ss1-d0-lr1-gdf0-glc1-l20.1-mcw0-depth2-"
     "categorical+typical:high@0.999999-public", 1),
    ("ternary-softmax-exponential-laplace-sequential-sketch-ss1-d1e-05-lr1-gdf0-glc1-l20-mcw0-"
     "depth3-missing+far:mid@0.999999-public", 1),
    ("ternary-softmax-exponential-laplace-sequential-sketch-ss0.5-d0-lr1-gdf1-glc0-l20-mcw0-"
     "depth3-numeric+far:low@0-public", 161),
    ("ternary-softmax-exponential-laplace-sequential-uniform-ss1-d1e-05-lr0.3-gdf1-glc1-l20-mcw0-"
     "depth3-categorical+inf:low@0-public", 892),
]
FAST = covering_configs()
SLOW = sampled_configs(400)

#: Estimator parameters among the axes (the others describe D and the added record).
_ESTIMATOR_AXES = ("split_selection", "leaf_noise", "budget_allocation", "split_candidates",
                   "subsample", "delta", "learning_rate", "gradient_filtering", "leaf_clipping",
                   "l2_regularization", "min_child_weight", "max_depth", "gradient_bound",
                   "interaction_cst")


def default_config(task, **record):
    """The replay configuration of an estimator's default preset, read from its ``__init__``
    (so the test follows the defaults when they change; values the axes do not list, such as
    ``min_child_weight="auto"``, are passed as they are), with D and the added record."""
    estimator = DPGBRegressor() if task == "regression" else DPGBClassifier()
    params = estimator.get_params()
    return {"task": task, **{axis: params[axis] for axis in _ESTIMATOR_AXES},
            "bounds": "public", "monotonic_cst": None, **record}


#: The regressor's default (its additive preset: one feature per tree, no GDF, depth 4, 200 trees, Hessian
#: sketch) holds a combination of axis values no configuration of FAST holds.
DEFAULTS = [default_config("regression", data="numeric", features="far", label="high", coin=0.0),
            default_config("regression", data="categorical", features="new_category",
                           label="low", coin=0.999999),
            default_config("regression", data="missing", features="nan", label="mid", coin=0.0)]


#: Early stopping (not an axis of the covering set: it needs 30 trees and sequential
#: allocation): the added record held out (coin 0.0) or in the trees (0.999999), on a regression,
#: a binary and a softmax task; with the private initial score (the harness's ``init``) but on
#: the softmax task, whose seeded fit stops at stage 20 with ``init="zero"``.
EARLY_STOPPING = [
    {**default_config("regression", data="numeric", features="far", label="high", coin=0.0),
     "budget_allocation": "sequential", "early_stopping": True},
    {**default_config("regression", data="numeric", features="typical", label="low",
                      coin=0.999999), "budget_allocation": "sequential", "early_stopping": True},
    {**default_config("binary-logistic", data="missing", features="nan", label="high", coin=0.0),
     "budget_allocation": "sequential", "early_stopping": True, "delta": 0.0,
     "leaf_noise": "laplace", "min_child_weight": 0.0},
    {**default_config("ternary-softmax", data="categorical", features="new_category",
                      label="low", coin=0.0), "budget_allocation": "sequential",
     "early_stopping": True, "init": "zero"},
]


#: The private initial score (``init``, not an axis: every configuration above releases it, the
#: estimators' default): the regressor's and every classifier loss's release with the added
#: record at each extreme, pure DP (Laplace) and Renyi accounting (Gaussian), private target
#: bounds before it, and ``init="zero"`` (no release).
INITIAL_SCORE = [
    {**default_config("regression", data="numeric", features="typical", label=label,
                      coin=0.0), "delta": delta, "leaf_noise": leaves, "init": "private"}
    for label, delta, leaves in (("low", 1e-5, "gaussian"), ("high", 0.0, "average"))
] + [
    {**default_config("regression", data="missing", features="far", label="high", coin=0.0),
     "bounds": "private", "init": "private"},
    {**default_config("regression", data="numeric", features="typical", label="mid",
                      coin=0.0), "init": "zero"},
] + [
    {**default_config("binary-logistic", data="numeric", features="typical", label="low",
                      coin=0.999999), "task": task, "delta": delta, "leaf_noise": leaves,
     "init": "private"}
    for task, delta, leaves in (("binary-softmax", 1e-5, "gaussian"),
                                ("ternary-softmax", 1e-5, "gaussian"),
                                ("ternary-logistic", 0.0, "laplace"),
                                ("binary-square", 0.0, "average"))
]

#: The private row count (``n_samples_hint="private"``), released first; ``init="auto"``: the
#: regime it chooses (here the small-data one) releases the initial score.
ROW_COUNT = [
    {**default_config("regression", data="numeric", features="typical", label=label,
                      coin=0.0), "delta": delta, "leaf_noise": leaves, "init": "auto",
     "n_samples_hint": "private"}
    for label, delta, leaves in (("low", 1e-5, "gaussian"), ("high", 0.0, "average"))
] + [
    {**default_config("regression", data="missing", features="far", label="high", coin=0.0),
     "bounds": "private", "init": "auto", "n_samples_hint": "private"},
] + [
    # The constant regime (``_auto.constant_model``): the private mean alone, no tree, by a
    # public hint or by the released count (a few records at epsilon 1).
    {**default_config("regression", data="numeric", features="typical", label="low",
                      coin=0.0), "delta": 1e-5, "leaf_noise": "gaussian", "init": "auto",
     "n_estimators": "auto", "n_samples_hint": hint}
    for hint in (1, "private")
] + [
    # The classifier's interaction order (``_auto.resolve_interactions``) by the released count:
    # additive random-split trees or unrestricted exponential-split ones, both planned.
    {**default_config("binary-logistic", data="numeric", features="typical", label="low",
                      coin=0.0), "delta": 1e-5, "leaf_noise": "gaussian",
     "split_selection": "auto", "interaction_cst": "auto", "n_samples_hint": "private"},
]


#: A private choice of interactions (``_interaction_choice``): the added record in part A,
#: B, V or T by its coin (0.05, 0.15, 0.23, 0.999999), by a public hint of 4,000 rows per
#: feature at epsilon 1 or by the released count at epsilon 50 (240 records: 4,000 per feature;
#: V's buckets sized from the count hold a few records each, and coin 0.23 puts the added record
#: in a slot where it moves the statistic), on numeric data, with missing cells, and with a categorical column (4 features).
INTERACTION_CHOICE = [
    {**default_config("binary-logistic", data=data, features=features, label=label,
                      coin=coin), "delta": 1e-5, "leaf_noise": "gaussian", "epsilon": epsilon,
     "split_selection": "auto", "interaction_cst": "auto", "n_samples_hint": hint,
     "init": "zero"}
    for data, features, label, coin, epsilon, hint in (
        ("numeric", "typical", "low", 0.05, 1.0, 12_000),
        ("numeric", "far", "high", 0.15, 1.0, 12_000),
        ("numeric", "typical", "high", 0.23, 50.0, "private"),
        ("numeric", "far", "low", 0.999999, 1.0, 12_000),
        ("missing", "nan", "high", 0.23, 50.0, "private"),
        ("categorical", "new_category", "low", 0.23, 50.0 * 4 / 3, "private"),
        ("categorical", "typical", "high", 0.05, 50.0 * 4 / 3, "private"))
]


def compile_code_paths():
    """Compile (or load) the Numba kernels of the first configurations' code paths, so that
    one-time effects of compilation cannot differ between the fit on D and the fit on D'."""
    for config in FAST[:3]:
        with contextlib.suppress(Exception):  # the tests themselves report failures
            run_config(config, check=False)
