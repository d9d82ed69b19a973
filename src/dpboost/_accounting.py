"""The privacy ledger, pure-DP composition and Renyi-DP composition to (epsilon, delta).

Every release writes one :class:`LedgerEntry`. A mechanism applied to all nodes of one tree level
at once is one entry: those nodes hold disjoint records, so they compose in parallel.
"""

import contextlib
import logging
import math
import uuid
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from ._releases import RELEASES


@dataclass(frozen=True)
class LedgerEntry:
    """One release.

    Attributes
    ----------
    mechanism : str
        ``"exponential"`` (split selection), ``"uniform"`` (data-independent random split,
        epsilon 0), ``"laplace"`` (leaf values), ``"gaussian"`` (leaf gradient and Hessian sums),
        ``"threshold"`` (category lists: the values whose Gaussian-noised count clears
        ``threshold``), or ``"argmax"`` / ``"exact"`` for the non-private counterparts when
        ``epsilon = inf``; ``"renyi_filter"`` is not a release but the per-record budget of the
        fit's individual Renyi filter (see ``filter_trees``).
    epsilon : float
        Pure-DP cost of the release (per node: the nodes of one entry are disjoint); ``inf`` for
        ``"gaussian"``, which is not pure DP.
    sensitivity : float
        Sensitivity the noise was calibrated to, under add/remove of one record.
    group : int
        Trees of one group see disjoint records (an EoE ensemble, or all PARA trees) and compose in
        parallel; groups compose sequentially.
    tree : int
        Index of the tree in the model.
    level : int
        Depth of the split nodes, ``0 .. max_depth - 1``; ``max_depth`` for the leaves.
    n_nodes : int
        Number of disjoint nodes released together.
    noise_multiplier : float, default=0.0
        ``"gaussian"`` and ``"threshold"``: standard deviation of the noise divided by the L2
        sensitivity; 0 for the other mechanisms.
    sampling_rate : float, default=1.0
        Poisson sampling rate gamma of the records the tree saw (``subsample``); every release
        of one tree uses the same sample, so the tree is amplified as a whole.
    fit : str, default=""
        Identifier of the fit that made the release, drawn at random for each fit (independent
        of the data): releases of different fits compose sequentially even when their groups
        and trees coincide. Not part of equality or repr (those show the releases).
    threshold : float, default=0.0
        ``"threshold"``: a value is released when its noisy count exceeds it; 0 otherwise.
    delta : float, default=0.0
        The release's additive delta beyond its Renyi curve: for ``"threshold"``, a bound on the
        probability that a value held by the added record alone clears ``threshold``
        (docs/privacy.md, Private category lists); every composition converts the Renyi part
        at the total delta minus the sum of these. 0 for the other mechanisms.
    filtered : bool, default=False
        A release whose records were chosen by the fit's individual Renyi filter: its cost is
        not composed on its own but bounded by the fit's ``"renyi_filter"`` entry.
    filter_trees : int, default=0
        ``"renyi_filter"`` only: every record's Renyi budget, at each order of
        ``FILTER_ORDERS``, is the composed curve of ``filter_trees`` worst-case tree
        releases (Poisson sampled at ``sampling_rate``, Gaussian of ``noise_multiplier``);
        docs/privacy.md, Individual Renyi filter.
    held_out : bool, default=False
        Early stopping's validation loss, released from the records held out of every tree:
        its curve is at most the fit's trees' at every order and a record is in one part or the
        other, so it is not composed (docs/privacy.md, Early stopping).
    part : str, default=""
        A private choice of interactions (``_interaction_choice``): the part of the records
        the release read, ``"A"``, ``"B"``, ``"V"`` or ``"T"``; ``""``: every record. The fit
        is charged the largest of the parts' ledgers (each after the releases over every
        record), not their composition.
    """

    mechanism: str
    epsilon: float
    sensitivity: float
    group: int
    tree: int
    level: int
    n_nodes: int
    noise_multiplier: float = 0.0
    sampling_rate: float = 1.0
    fit: str = field(default="", compare=False, repr=False)
    threshold: float = 0.0
    delta: float = 0.0
    filtered: bool = False
    filter_trees: int = 0
    held_out: bool = False
    part: str = ""

    @property
    def scope(self):
        """``{"group", "tree", "level"}`` of this entry: the ``scope`` a mechanism records a
        planned release under."""
        return {"group": self.group, "tree": self.tree, "level": self.level}

    def of_fit(self, fit):
        """This entry with the identifier ``fit``: ``dataclasses.replace(self, fit=fit)``, the
        same fields, in a seventh of its time (a fit stamps every entry of every plan it could
        take, thousands; ``replace`` runs the generated ``__init__``, 10 us an entry)."""
        entry = object.__new__(LedgerEntry)
        entry.__dict__.update(self.__dict__)
        entry.__dict__["fit"] = fit
        return entry


def composed(entries):
    """The entries that every composition reads: all but early stopping's validation releases
    (``LedgerEntry.held_out``), which the trees' releases bound (docs/privacy.md, Early
    stopping)."""
    return [e for e in entries if not e.held_out]


#: The Renyi orders at which the individual filter bounds every record's loss (integers, where
#: the sampled Gaussian's divergence has the closed form of :func:`sampled_gaussian_rdp`). A
#: ledger with a filter is converted to (epsilon, delta) at these orders only: the filter
#: guarantees nothing at the others. Large orders matter at small epsilon: the conversion's
#: ``log(1 / delta) / (alpha - 1)`` alone is 0.016 at alpha = 1024 and delta = 5e-8.
FILTER_ORDERS = (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 16, 18, 20, 24, 28, 32, 40, 48, 56, 64,
                 80, 96, 128, 160, 192, 256, 320, 384, 512, 640, 768, 1024, 1536, 2048, 3072,
                 4096)


def _log_expm1(x):
    """``log(e^x - 1)`` for ``x > 0`` without overflow (``x + log(1 - e^-x)`` for large x)."""
    return math.log(math.expm1(x)) if x < 1.0 else x + math.log1p(-math.exp(-x))


def amplify_pure(epsilon, sampling_rate):
    """Epsilon of an epsilon-DP mechanism run on a Poisson sample of rate gamma.

    ``log(1 + gamma (e^eps - 1))`` under add/remove (Balle, Barthe & Gaboardi 2018, Thm. 8;
    docs/privacy.md, Amplification by subsampling), computed in log space (no overflow at any epsilon or rate).
    """
    if epsilon == 0 or sampling_rate == 1:
        return epsilon
    if not math.isfinite(epsilon):
        return math.inf
    small = math.log(sampling_rate) + _log_expm1(epsilon)
    # log(e^small + 1), stable for small of any size
    return math.log1p(math.exp(small)) if small < 30 else small + math.log1p(math.exp(-small))


def deamplify_pure(epsilon, sampling_rate):
    """Inverse of :func:`amplify_pure`: the epsilon a mechanism may spend on a Poisson sample of
    rate gamma so that it is ``epsilon``-DP on the whole data, ``log(1 + (e^eps - 1) / gamma)``,
    computed in log space (no overflow at any epsilon or rate)."""
    if epsilon == 0 or sampling_rate == 1:
        return epsilon
    if not math.isfinite(epsilon):
        return math.inf
    large = _log_expm1(epsilon) - math.log(sampling_rate)
    return math.log1p(math.exp(large)) if large < 30 else large + math.log1p(math.exp(-large))


def compose_pure(entries, repeats=None):
    """Pure-DP epsilon of a set of releases.

    Parallel composition (McSherry 2009) inside a level and across the trees of a group; sequential
    composition across the levels of a tree and across groups (Li et al. 2020, Theorems 7 and 8),
    and across fits (``LedgerEntry.fit``):
    ``eps = sum_(fit, group) max_trees sum_levels max_entries eps``. Releases outside the trees
    (``tree < 0``: the row count, the private bounds, the initial score, ...) each read every
    record and compose sequentially, whatever their scope.

    Parameters
    ----------
    entries : iterable of LedgerEntry
    repeats : dict or None, default=None
        ``{(fit, group): k}``: that group stands for ``k`` groups of the same releases (the
        exact sum counts it ``k`` times: the epsilon of the ``k`` groups, bit for bit).

    Returns
    -------
    epsilon : float
        ``0.0`` for no entries; ``inf`` if any entry is non-private.
    """
    per_level = {}
    rate = {}
    for e in composed(entries):
        key = (e.fit, e.group, e.tree, e.level)
        if e.tree < 0:
            # A release outside the trees reads every record: never parallel to another one of
            # the same scope (the initial score shares the private bounds' level).
            key += (len(per_level),)
        per_level[key] = max(per_level.get(key, 0.0), e.epsilon)
        rate[e.fit, e.group, e.tree] = e.sampling_rate
    per_tree = {}
    for (fit, group, tree, *_), eps in per_level.items():
        per_tree.setdefault((fit, group, tree), []).append(eps)
    per_group = {}
    for key, level_eps in per_tree.items():
        tree_eps = math.fsum(level_eps)
        if rate[key] < 1.0:
            tree_eps = amplify_pure(tree_eps, rate[key])
        per_group[key[:2]] = max(per_group.get(key[:2], 0.0), tree_eps)
    repeats = repeats or {}
    return math.fsum(eps for key, eps in per_group.items() for _ in range(repeats.get(key, 1)))


#: The smallest Poisson sampling rate the Renyi accounting evaluates: a sampled Gaussian of a
#: smaller rate is accounted at this one (:func:`accounted_rate`). A tree on such a sample sees
#: one record in a million, and below it the accounting stops being usable: the planner's
#: bisection runs all its steps (5 s at 1e-7, where dp-accounting's epsilon jumps from 0 to
#: above the budget as the noise shrinks), and below 5.6e-309, where ``1 / q`` overflows, every
#: fractional order runs to the series' step limit (minutes per plan).
MIN_ACCOUNTED_RATE = 1e-6


def accounted_rate(sampling_rate):
    """The Poisson sampling rate a sampled Gaussian is accounted at:
    ``max(sampling_rate, MIN_ACCOUNTED_RATE)``.

    An upper bound at every rate. The Renyi divergence of the Poisson-sampled Gaussian, in
    either direction between the neighbours' output laws, does not decrease with the rate q:
    with ``L`` the ratio of the Gaussian densities with and without the record (``E[L] = 1``
    under the law without it), the divergences are ``log E[(1 + q (L - 1))^alpha] / (alpha - 1)``
    and ``log E[(1 + q (L - 1))^(1 - alpha)] / (alpha - 1)`` (Mironov, Talwar & Zhang 2019,
    Sec. 3); each expectation is convex in q (a convex power of a function affine in q) with
    slope 0 at q = 0 (a multiple of ``E[L - 1] = 0``), hence non-decreasing on [0, 1].
    Accounting at a larger rate therefore bounds every order's divergence, and so the composed
    epsilon, from above (docs/privacy.md, Renyi accounting). The ledger keeps the rate the
    records were sampled at; only the accounting reads this one.

    Parameters
    ----------
    sampling_rate : float
        q in (0, 1].

    Returns
    -------
    rate : float
    """
    return max(sampling_rate, MIN_ACCOUNTED_RATE)


def _dp_event(entry):
    """The dp-accounting event of one entry (its kind's, :data:`~dpboost._releases.RELEASES`),
    or None for a non-private one."""
    return RELEASES[entry.mechanism].dp_event(entry)


def compose_rdp(entries, delta, repeats=None):
    """(epsilon, delta)-DP epsilon of a set of releases, by Renyi-DP composition.

    Google's ``dp-accounting`` ``RdpAccountant`` (Mironov 2017) composes the releases under
    add/remove of one record and converts to (epsilon, delta). Inside a level the nodes are
    disjoint (one entry); the trees of one group see disjoint records and compose in parallel,
    which the accountant expresses by counting a group once when all its trees release the same
    events (true of every plan); otherwise the group's trees are composed sequentially, an upper
    bound. Groups compose sequentially, and so do the releases of different fits
    (``LedgerEntry.fit``). Releases made under an individual Renyi filter
    (``LedgerEntry.filtered``) are replaced by the filter's budget (a ``"renyi_filter"`` entry),
    and the whole is converted at :data:`FILTER_ORDERS`. A tree grown on a Poisson sample whose releases are all
    Gaussian (or data-independent) is one ``PoissonSampledDpEvent`` (amplification by
    subsampling of the sampled Gaussian mechanism, Mironov, Talwar & Zhang 2019; at
    :func:`accounted_rate`); the accountant
    has no amplified form of the exponential or Laplace mechanisms, so other sampled trees count
    unamplified, which is an upper bound (a mechanism is at least as private on a subsample).

    Releases with an additive delta of their own (``LedgerEntry.delta``, the thresholds of
    private category lists) are (epsilon, delta_R + sum of theirs)-DP when their Renyi part is
    (epsilon, delta_R)-DP, so the Renyi part is converted at ``delta`` minus that sum
    (:func:`threshold_delta`).

    Parameters
    ----------
    entries : iterable of LedgerEntry
    delta : float
        In (0, 1).
    repeats : dict or None, default=None
        ``{(fit, group): k}``: that group stands for ``k`` groups of the same releases
        (:func:`ledger_event`).

    Returns
    -------
    epsilon : float
        ``0.0`` for no entries; ``inf`` if any entry is non-private or the thresholds' delta is
        not below ``delta``.
    """
    *_, (epsilon, _) = rdp_bounds(entries, delta, repeats)
    return epsilon


def rdp_bounds(entries, delta, repeats=None):
    """Bounds on :func:`compose_rdp`'s epsilon, tighter at each step, the last exact.

    A ledger with a Gaussian release on a Poisson sample (or a Renyi filter) is converted at
    integer orders, where dp-accounting's sampled Gaussian costs ``alpha + 1`` terms at order
    alpha; the orders are converted in stages (:func:`_staged_bounds`), so that a caller that
    only compares the epsilon with a number (the planner's bisection) can stop at the first
    pair that settles it. Other ledgers give their exact epsilon at once.

    Parameters
    ----------
    entries : iterable of LedgerEntry
    delta : float
        In (0, 1).
    repeats : dict or None, default=None
        As :func:`compose_rdp`'s.

    Yields
    ------
    lower, upper : float
        ``lower <= epsilon <= upper``; the last pair is ``(epsilon, epsilon)``.
    """
    entries = composed(entries)
    event = ledger_event(entries, repeats)
    renyi_delta = delta - threshold_delta(entries)
    orders = rdp_orders(entries)
    if event is None or not renyi_delta > 0:
        yield math.inf, math.inf
    elif not event.events:
        yield 0.0, 0.0
    elif orders is None:
        epsilon = rdp_epsilon(event, renyi_delta)
        yield epsilon, epsilon
    else:
        yield from _staged_bounds(event, renyi_delta, sorted(orders))


def threshold_delta(entries):
    """Sum of the releases' additive deltas (``LedgerEntry.delta``).

    On the event that no value held only by the larger neighbour clears any threshold, the
    whole transcript has the law of the one restricted to the values both hold, a Renyi-DP
    composition; the event fails with probability at most this sum (a union bound over the
    releases, each over its columns; docs/privacy.md, Private category lists).

    Returns
    -------
    delta : float
    """
    return math.fsum(e.delta for e in entries)


#: The Renyi orders of a ledger with a Gaussian release made on a Poisson sample: integers only
#: (dp-accounting's default integers and :data:`FILTER_ORDERS`). At an integer order the
#: Poisson-sampled discrete Gaussian of ``SecureNoise`` has exactly the continuous sampled
#: Gaussian's curve when the record is added and at most it when removed; at a fractional order
#: it can exceed it (docs/privacy.md, Renyi accounting, "The sampled Gaussian on the lattice").
SAMPLED_ORDERS = tuple(sorted(set(range(2, 64)) | {128, 256, 512, 1024} | set(FILTER_ORDERS)))


def rdp_orders(entries):
    """The Renyi orders a set of releases may be converted at: :data:`FILTER_ORDERS` if any
    entry is an individual filter's budget (it holds at those orders only);
    :data:`SAMPLED_ORDERS` if any Gaussian release was made on a Poisson sample (the accountant's
    sampled Gaussian bounds the sampled discrete Gaussian at integer orders only); else None
    (dp-accounting's default orders)."""
    entries = list(entries)
    filtered = any(e.mechanism == "renyi_filter" for e in entries)
    sampled = any(e.mechanism in ("gaussian", "threshold") and e.sampling_rate < 1
                  for e in entries)
    return joint_orders([FILTER_ORDERS if filtered else None, SAMPLED_ORDERS if sampled else None])


def joint_orders(orders):
    """The orders at which sets of releases converted at each of ``orders`` (values of
    :func:`rdp_orders`) are converted together: :data:`FILTER_ORDERS` where any is, else
    :data:`SAMPLED_ORDERS` where any is, else None (the precedence of :func:`rdp_orders`)."""
    found = set(orders)
    return (FILTER_ORDERS if FILTER_ORDERS in found else
            SAMPLED_ORDERS if SAMPLED_ORDERS in found else None)


def ledger_event(entries, repeats=None):
    """The dp-accounting event of a set of releases (grouped as :func:`compose_rdp` says), an
    empty ``ComposedDpEvent`` for no entries, or None if any entry is non-private.

    ``repeats``, ``{(fit, group): k}``, counts a group as ``k`` groups of its releases: the
    event of ``k`` sequentially composed groups that release the same events (a plan's trees,
    composed by the planner from one of them), equal to the event of the ``k`` groups.
    """
    import dp_accounting

    # A plan of n trees holds about n (max_depth + 1) entries of a few distinct kinds, and the
    # planner's bisection composes it dozens of times: each distinct event is built, and its
    # repr (the grouping key) computed, once per call.
    by_kind, by_tree_kind = {}, {}
    trees = {}
    for e in composed(entries):
        if e.filtered:
            continue  # bounded by the fit's "renyi_filter" entry, composed in its place
        kind = (e.mechanism, e.epsilon, e.noise_multiplier, e.sampling_rate, e.filter_trees)
        if kind not in by_kind:
            event = _dp_event(e)
            by_kind[kind] = None if event is None else (repr(event), event)
        if by_kind[kind] is None:
            return None
        trees.setdefault((e.fit, e.group, e.tree), []).append(
            (e.level, *by_kind[kind], e.sampling_rate))
    groups = {}
    for (fit, group, _), tree in trees.items():
        tree.sort(key=lambda x: x[:2])
        rate = tree[0][3]
        gaussian = [x for x in tree if isinstance(x[2], dp_accounting.GaussianDpEvent)]
        if rate < 1.0 and gaussian and all(
                isinstance(x[2], (dp_accounting.GaussianDpEvent, dp_accounting.NoOpDpEvent))
                for x in tree):
            kind = (rate, *(x[1] for x in gaussian))
            if kind not in by_tree_kind:
                event = dp_accounting.PoissonSampledDpEvent(
                    accounted_rate(rate), dp_accounting.ComposedDpEvent([x[2] for x in gaussian]))
                by_tree_kind[kind] = (repr(event), event)
            tree = [(tree[0][0], *by_tree_kind[kind])]
        groups.setdefault((fit, group), []).append(tuple(x[:3] for x in tree))
    counts = Counter()
    by_key = {}
    for fit_group, tree_events in groups.items():
        unique = {tuple(x[:2] for x in t) for t in tree_events}
        events = tree_events[0] if len(unique) == 1 else [x for t in tree_events for x in t]
        key = tuple(x[:2] for x in events)
        counts[key] += 1 if repeats is None else repeats.get(fit_group, 1)
        by_key[key] = [x[2] for x in events]
    return dp_accounting.ComposedDpEvent(
        [dp_accounting.SelfComposedDpEvent(dp_accounting.ComposedDpEvent(by_key[k]), n)
         for k, n in counts.items()])


#: Orders beyond dp-accounting's default ones (which end with 256, 512, 1024), tried when the
#: conversion's best default order is one of the two largest: at very small epsilon the conversion's
#: ``log(1 / delta) / (alpha - 1)`` needs larger orders (at epsilon 0.01 and delta 5e-8, 200
#: sampled Gaussian trees get noise multiplier 618 instead of 1,089). Any order gives a valid
#: bound, so this only tightens the conversion where the default orders end.
LARGE_ORDERS = (640, 768, 1536, 2048, 3072, 4096)


#: The orders up to which :func:`_staged_bounds` converts first, then up to the next: the
#: orders up to 64 cost an eighth of :data:`SAMPLED_ORDERS`'s terms and hold the best order
#: from epsilon about 0.3 on (200 sampled Gaussian trees at delta 1e-5).
CONVERSION_STAGES = (64, 256, 1024)


@contextlib.contextmanager
def _quiet_accountant():
    """dp-accounting's warnings silenced: for a sampled Gaussian with a large noise multiplier
    the accountant's series at fractional orders may not converge; it then warns once per order
    per call and leaves the order out, which can only raise epsilon (never under-reports). The
    planner's bisection converts hundreds of times, so the warnings are silenced rather than
    flooding the user's log."""
    absl = logging.getLogger("absl")
    level = absl.level
    absl.setLevel(logging.ERROR)
    try:
        yield
    finally:
        absl.setLevel(level)


def rdp_epsilon(event, delta, orders=None):
    """(epsilon, delta)-DP epsilon of a dp-accounting event by Renyi-DP composition, at
    ``orders`` (:func:`rdp_orders` of a ledger); None: dp-accounting's default orders, and with
    :data:`LARGE_ORDERS` added when the best of those is 512 or more (a function of the event
    only, so of public inputs)."""
    from dp_accounting.rdp import RdpAccountant
    from dp_accounting.rdp.rdp_privacy_accountant import DEFAULT_RDP_ORDERS

    with _quiet_accountant():
        accountant = RdpAccountant(None if orders is None else list(orders))
        accountant.compose(event)
        epsilon, order = accountant.get_epsilon_and_optimal_order(delta)
        if orders is None and order >= 512:
            accountant = RdpAccountant(list(DEFAULT_RDP_ORDERS) + list(LARGE_ORDERS))
            accountant.compose(event)
            epsilon = accountant.get_epsilon(delta)
    return float(epsilon)


def _staged_bounds(event, delta, orders):
    """Bounds on :func:`rdp_epsilon` of a ledger's ``event`` at its ascending ``orders``: the
    divergences at the orders up to each of :data:`CONVERSION_STAGES` in turn, the last pair
    exact (``delta`` in (0, 1)).

    dp-accounting's epsilon is ``max(0, min_alpha e_alpha)``, ``e_alpha = R_alpha +
    log(1 - 1/alpha) - log(delta alpha) / (alpha - 1)`` (0 below the KL threshold; Canonne,
    Kamath & Steinke 2020, Prop. 12), each ``e_alpha`` from its own order's divergence
    ``R_alpha``. The minimum over the orders converted so far is an upper bound. The divergence
    of a ledger event does not decrease with the order (each is a Renyi divergence between two
    fixed laws, van Erven & Harremoes 2014, Thm. 3, or the zCDP curve ``rho alpha``), so with
    ``a`` the last order converted, every later order has ``e_alpha >= R_a + log(1 - 1/alpha)
    - log(delta alpha) / (alpha - 1)`` (IEEE rounding is monotone; ``R_a`` is taken a relative
    2^-30 lower for the rounding of ``R`` itself): the lower bound. When it is at least the
    upper one (or that is 0), the orders left cannot lower the epsilon: the pair is
    dp-accounting's epsilon at every order, bit for bit, and the last. (Unless dp-accounting's
    rounding gives a later order a negative divergence, at a tiny sampling rate: it then
    returns 0, not a bound, where this conversion keeps the bound of the orders before.)

    Yields
    ------
    lower, upper : float
    """
    from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon

    done, rdp = [], []
    for stop in (*CONVERSION_STAGES, math.inf):
        stage = [a for a in orders[len(done):] if a <= stop]
        if not stage:
            continue
        with _quiet_accountant():
            divergences = rdp_curve(event, stage)
            done += stage
            rdp += list(divergences)
            upper = float(compute_epsilon(done, rdp, delta)[0])
        floor = rdp[-1] * (1.0 - 2.0**-30)
        rest = [floor + math.log1p(-1 / a) - math.log(delta * a) / (a - 1)
                for a in orders[len(done):]]
        lower = upper if upper == 0 or not rest else min(upper, max(0.0, min(rest)))
        yield lower, upper
        if lower == upper:
            return


def rdp_curve(event, orders):
    """The Renyi divergences of a dp-accounting event (:func:`ledger_event`'s, or a search's)
    at ``orders``, memoised in :data:`_DIVERGENCES` and the disk cache (``_disk_memo``); None
    for None (a non-private release).

    Parameters
    ----------
    event : dp_accounting.DpEvent or None
    orders : sequence of float

    Returns
    -------
    divergences : ndarray of shape (len(orders),) or None
    """
    if event is None:
        return None
    with _quiet_accountant():
        return np.array(memoised(_DIVERGENCES, DIVERGENCES_MEMO_SIZE, (repr(event), tuple(orders)),
                                 lambda: _divergences(list(orders), event),
                                 table="divergences"))


def curve_epsilon(orders, divergences, delta):
    """(epsilon, delta)-DP epsilon of a Renyi curve, converted at its best order
    (dp-accounting's ``compute_epsilon``).

    Returns
    -------
    epsilon : float
    """
    from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon

    with _quiet_accountant():
        return float(compute_epsilon(list(orders), list(divergences), delta)[0])


def conversion_orders(entries):
    """The orders a set of releases' Renyi curve is converted at: :func:`rdp_orders`, or
    dp-accounting's default orders with :data:`LARGE_ORDERS` where that is None."""
    from dp_accounting.rdp.rdp_privacy_accountant import DEFAULT_RDP_ORDERS

    orders = rdp_orders(entries)
    return tuple(orders) if orders is not None else (*DEFAULT_RDP_ORDERS, *LARGE_ORDERS)


def _divergences(orders, event):
    """The Renyi divergences of ``event`` at ``orders`` (dp-accounting), as a tuple."""
    from dp_accounting.rdp import RdpAccountant

    accountant = RdpAccountant(orders)
    accountant.compose(event)
    return tuple(accountant.rdp)


def memoised(memo, size, key, compute, table=None):
    """``memo[key]``, computed by ``compute()`` and stored where absent; a memo that holds
    ``size`` values is cleared first. The value is read once: another thread's fit may clear
    the memo between a check and a read. With ``table``, a value absent from ``memo`` is
    looked up in that table of the disk cache (``_disk_memo``) before it is computed, and one
    computed is stored there."""
    value = memo.get(key)
    if value is None:
        if table is not None:
            from . import _disk_memo

            value = _disk_memo.lookup(table, key)
        if value is None:
            value = compute()
            if table is not None:
                _disk_memo.store(table, key, value)
        if len(memo) >= size:
            memo.clear()
        memo[key] = value
    return value


#: Renyi divergences :func:`rdp_curve` computed, by (event, orders): the planner's
#: bisection visits the same events for every setting that shares the trees' noise, sampling
#: rate and count (a search over ``max_depth`` or ``learning_rate`` at one epsilon), whose
#: dp-accounting conversions (0.3 s a plan) are then computed once. At most
#: :data:`DIVERGENCES_MEMO_SIZE`, then cleared.
_DIVERGENCES = {}
DIVERGENCES_MEMO_SIZE = 4096


def zcdp_rho(entries):
    """rho of a set of releases that are all zero-concentrated DP, or inf.

    A Gaussian release of noise multiplier sigma is ``1 / (2 sigma^2)``-zCDP, an eps-DP
    exponential mechanism ``eps^2 / 8``-zCDP (Cesar & Rogers 2021), an eps-DP Laplace release
    ``eps^2 / 2``-zCDP (Bun & Steinke 2016, Proposition 1.4), a data-independent one 0.
    zCDP composes by adding rho sequentially and by the maximum in parallel,
    grouped as :func:`compose_pure` groups: ``sum_(fit, group) max_trees sum_entries rho``. A
    Poisson-sampled tree or a thresholded release (whose delta is not part of a Renyi curve)
    has no linear Renyi curve: inf.

    Parameters
    ----------
    entries : iterable of LedgerEntry

    Returns
    -------
    rho : float
    """
    per_tree = {}
    for e in composed(entries):
        # inf: sampled trees, thresholds, and an individual filter (bounded at
        # FILTER_ORDERS only, not at every order as zCDP needs).
        rho = RELEASES[e.mechanism].zcdp_rho(e)
        if rho == math.inf:
            return math.inf
        key = (e.fit, e.group, e.tree)
        per_tree[key] = per_tree.get(key, 0.0) + rho
    per_group = {}
    for (fit, group, _), rho in per_tree.items():
        per_group[fit, group] = max(per_group.get((fit, group), 0.0), rho)
    return math.fsum(per_group.values())


def all_pure(entries):
    """Whether every release is pure DP (``Release.pure``, no delta of its own, not under an
    individual filter): then their pure composition bounds them at any delta."""
    return all(RELEASES[e.mechanism].pure and e.delta == 0 and not e.filtered for e in entries)


def compose(entries, delta, repeats=None):
    """Composed epsilon: pure DP for ``delta = 0`` (:func:`compose_pure`), otherwise
    (epsilon, delta)-DP by Renyi composition (:func:`compose_rdp`), by the PLD accountant
    (``_pld.pld_epsilon``) or, where every release is pure DP (``Release.pure``), by pure
    composition (:func:`compose_pure`), whichever certifies less; ``repeats`` as theirs."""
    if delta == 0:
        return compose_pure(entries, repeats)
    entries = list(entries)
    renyi = compose_rdp(entries, delta, repeats)
    return tightest(entries, delta, renyi, repeats, scale=renyi)


def tightest(entries, delta, renyi, repeats=None, scale=None):
    """The least of ``renyi`` (the entries' :func:`compose_rdp` epsilon), the PLD accountant's
    epsilon (``_pld.pld_epsilon``, discretised at ``scale``) and, where every release is pure
    DP, their pure composition: each bounds the same releases at ``delta > 0``.

    Returns
    -------
    epsilon : float
    """
    from ._pld import pld_epsilon  # which imports this module

    epsilon = min(renyi, pld_epsilon(entries, delta, repeats, scale=scale))
    if all_pure(entries):
        # Pure releases compose to pure DP ((eps, 0) is (eps, delta)): at a tiny epsilon (the
        # constant regime's count and mean), or on Poisson samples (amplify_pure, which the
        # Renyi accountant lacks for these mechanisms), it certifies less than a conversion.
        epsilon = min(epsilon, compose_pure(entries, repeats))
    return epsilon


class PrivacyLedger:
    """Append-only record of every release made while fitting one model.

    Parameters
    ----------
    fit : str or None, default=None
        The fit's identifier in every entry; None draws a random one (``uuid4``, from the
        operating system: independent of the data and of the fit's noise).
    part : str, default=""
        The part of the records every release reads (``LedgerEntry.part``) unless it names
        its own.
    """

    def __init__(self, fit=None, part=""):
        self.entries = []
        self.fit = uuid.uuid4().hex if fit is None else fit
        self.part = part

    def record(self, **fields):
        """Append one :class:`LedgerEntry` built from ``fields`` and return it."""
        entry = LedgerEntry(**{"part": self.part, **fields}, fit=self.fit)
        self.entries.append(entry)
        return entry

    def declare(self, entry):
        """Append a planned entry that is no release (an individual filter's budget) with this
        fit's identifier, and return it."""
        fields = {name: getattr(entry, name) for name in entry.__dataclass_fields__
                  if name != "fit"}
        return self.record(**fields)

    def epsilon(self, delta=0.0):
        """Composed epsilon of everything recorded so far (see :func:`compose`)."""
        return compose(self.entries, delta)


def sampled_gaussian_rdp(sampling_rate, noise_multipliers, orders):
    """Renyi divergence of the Poisson-sampled Gaussian mechanism at integer orders.

    For a sum query whose differing record moves it by ``c`` in L2, with Gaussian noise of
    standard deviation ``s`` on every coordinate, on a Poisson sample of rate ``q``: with
    ``sigma = s / c`` (the noise multiplier of that record),
    ``A_alpha = sum_(j=0..alpha) C(alpha, j) (1 - q)^(alpha - j) q^j exp(j (j - 1) / (2 sigma^2))``
    and the divergence is ``log(A_alpha) / (alpha - 1)`` (Mironov, Talwar & Zhang 2019, Sec. 3.3,
    integer orders; the formula dp-accounting's ``RdpAccountant`` evaluates for a
    ``PoissonSampledDpEvent`` of a ``GaussianDpEvent``, add/remove of one record). ``q = 1`` is
    the Gaussian mechanism, ``alpha / (2 sigma^2)``; ``sigma = inf`` (a record that moves
    nothing) is 0.

    Parameters
    ----------
    sampling_rate : float
        q in (0, 1].
    noise_multipliers : ndarray of shape (m,), dtype=float64
        sigma per record, > 0 (``inf`` allowed).
    orders : sequence of int
        Integer orders alpha >= 2.

    Returns
    -------
    rdp : ndarray of shape (m, len(orders)), dtype=float64
    """
    from scipy.special import gammaln, logsumexp

    sigma = np.asarray(noise_multipliers, dtype=np.float64)
    inverse = 0.5 * (1.0 / sigma) ** 2  # 0 for sigma = inf
    out = np.empty((sigma.size, len(orders)))
    for a, alpha in enumerate(orders):
        if sampling_rate == 1.0:
            out[:, a] = alpha * inverse
            continue
        j = np.arange(alpha + 1, dtype=np.float64)
        log_coefficient = (gammaln(alpha + 1) - gammaln(j + 1) - gammaln(alpha - j + 1)
                           + (alpha - j) * math.log1p(-sampling_rate)
                           + j * math.log(sampling_rate))
        log_a = logsumexp(log_coefficient[None, :] + (j * (j - 1))[None, :] * inverse[:, None],
                          axis=1)
        # A_alpha >= 1 (Jensen); rounding may give -1e-16
        out[:, a] = np.maximum(log_a, 0.0) / (alpha - 1)
    return out
