"""Privacy-loss-distribution (PLD) accounting: Google's dp-accounting ``PLDAccountant`` on a
ledger's event, where it certifies a smaller epsilon than the Renyi conversion
(docs/privacy.md, PLD accounting).

The PLD accountant composes the privacy-loss distributions of the releases (Koskela et al.
2020; Doroshenko et al. 2022, "Connect the Dots": pessimistic discretisation, so the epsilon it
returns is an upper bound) and reads epsilon at delta off the composed distribution: no
conversion loss, 8-9 % below the Renyi conversion for the default's Poisson-sampled Gaussian
trees at epsilon 0.1-1. Both are valid bounds on the same releases, so a ledger's epsilon is
the smaller (``_accounting.compose``). It covers Gaussian and Laplace releases, Poisson-sampled
or not, and data-independent draws; a ledger with any other release (the exponential
mechanism, thresholds, an individual filter's budget) gets inf here and its Renyi epsilon.
"""

import hashlib
import math

import numpy as np

#: The PLD's discretisation of the privacy loss, times ``max(1, epsilon)`` (the epsilon the
#: caller expects: the number of points grows with the loss's range): finer is tighter and slower
#: (1e-4: 0.01-0.05 s for 200 Poisson-sampled trees at epsilon <= 1; epsilon 0.0092 where 1e-3
#: gives 0.0144 at a target of 0.01).
DISCRETIZATION = 1e-4
#: Where the PLD is computed: delta at most :data:`MAX_DELTA`, every Gaussian's noise multiplier
#: at least :data:`MIN_NOISE_MULTIPLIER`, every Laplace release's epsilon at most
#: :data:`MAX_LAPLACE_EPSILON`, every sampling rate at least :data:`MIN_SAMPLING_RATE`. Outside,
#: the distributions' supports grow past memory (epsilon 1e6: 1e10 points) or their
#: construction takes seconds (a plan at sampling rate 0.01 took 2.5 s, 0.001 4.4 s, against
#: 0.4 s at the default's 0.1; tens of seconds at 1e-7 or a delta near 1), where the Renyi
#: epsilon stands.
MAX_DELTA, MIN_NOISE_MULTIPLIER, MAX_LAPLACE_EPSILON, MIN_SAMPLING_RATE = 1e-2, 0.5, 4.0, 0.05
#: :func:`refine` stops at a plan within ``PLD_TOLERANCE * epsilon`` below epsilon (about 0.2 %
#: on the noise), or after :data:`MAX_EVALUATIONS` PLD evaluations (0.01-0.05 s each).
PLD_TOLERANCE, MAX_EVALUATIONS = 2e-3, 10


def pld_event(event):
    """``event`` (from ``_accounting.ledger_event``) in the forms the PLD accountant composes,
    or None where it has none: one-element compositions unwrapped, data-independent draws
    dropped, and the Gaussian releases of one Poisson-sampled tree merged into one Gaussian of
    multiplier ``(sum_i sigma_i^-2)^-1/2`` (Gaussian mechanisms on the same records compose
    exactly so: their privacy losses are Gaussian, ``mu^2`` adding up; Dong, Roth & Su 2022,
    Corollary 3.3).

    Returns
    -------
    event : dp_accounting.DpEvent or None
    """
    import dp_accounting as dp

    if isinstance(event, dp.ComposedDpEvent):
        parts = [pld_event(e) for e in event.events]
        if any(p is None for p in parts):
            return None
        parts = [p for p in parts if not isinstance(p, dp.NoOpDpEvent)]
        if not parts:
            return dp.NoOpDpEvent()
        return parts[0] if len(parts) == 1 else dp.ComposedDpEvent(parts)
    if isinstance(event, dp.SelfComposedDpEvent):
        inner = pld_event(event.event)
        return None if inner is None else dp.SelfComposedDpEvent(inner, event.count)
    if isinstance(event, dp.PoissonSampledDpEvent):
        inner = pld_event(event.event)
        if isinstance(inner, dp.ComposedDpEvent) and all(
                isinstance(e, dp.GaussianDpEvent) for e in inner.events):
            inner = dp.GaussianDpEvent(
                math.fsum(e.noise_multiplier**-2 for e in inner.events) ** -0.5)
        if not isinstance(inner, (dp.GaussianDpEvent, dp.LaplaceDpEvent)):
            return None
        return dp.PoissonSampledDpEvent(event.sampling_probability, inner)
    if isinstance(event, (dp.GaussianDpEvent, dp.LaplaceDpEvent, dp.NoOpDpEvent)):
        return event
    return None


def pld_epsilon(entries, delta, repeats=None, scale=1.0):
    """The PLD accountant's epsilon at ``delta`` of a set of releases (grouped and repeated as
    ``_accounting.compose_rdp``), or inf where the PLD does not apply: a release it has no
    distribution for (:func:`pld_event`), an early-stopping check (``held_out``: calibrated
    against the trees' Renyi curve), thresholds with a delta of their own, an individual
    filter's budget (bounded at some Renyi orders only), and outside the range where it is
    computed in time and memory (:data:`MAX_DELTA` and the next constants).

    Parameters
    ----------
    entries : iterable of LedgerEntry
    delta : float
        In (0, 1).
    repeats : dict or None, default=None
    scale : float, default=1.0
        The epsilon expected (e.g. the Renyi one): the discretisation is
        ``DISCRETIZATION * max(1, scale)``.

    Returns
    -------
    epsilon : float
    """
    from ._accounting import memoised

    if not delta <= MAX_DELTA:
        return math.inf
    event = _supported_event(entries, repeats)
    if event is None:
        return math.inf
    interval = discretization(scale)

    def compute():
        accountant = _accountant(event, interval)
        return math.inf if accountant is None else max(0.0, float(accountant.get_epsilon(delta)))

    return memoised(_EPSILONS, MEMO_SIZE, (repr(event), delta, interval), compute,
                    table="epsilons")


def discretization(scale):
    """The PLD's discretisation interval for an expected epsilon ``scale``:
    ``DISCRETIZATION * max(1, scale)``, ``scale`` capped at 1,000."""
    return DISCRETIZATION * max(1.0, min(scale, 1e3))


def _supported_event(entries, repeats=None):
    """The PLD form (:func:`pld_event`) of a set of releases' event, or None where
    :func:`pld_epsilon` has none (its list)."""
    from ._accounting import ledger_event

    entries = list(entries)
    if any(e.held_out or e.delta > 0 or e.filtered or e.mechanism == "renyi_filter"
           or e.sampling_rate < MIN_SAMPLING_RATE
           or (e.mechanism == "gaussian" and e.noise_multiplier < MIN_NOISE_MULTIPLIER)
           or (e.mechanism == "laplace" and e.epsilon > MAX_LAPLACE_EPSILON)
           for e in entries):
        return None
    event = ledger_event(entries, repeats)
    return None if event is None else pld_event(event)


def _accountant(event, interval):
    """dp-accounting's ``PLDAccountant`` at ``interval`` with ``event`` composed, or None where
    it does not support it."""
    from dp_accounting.pld import pld_privacy_accountant

    accountant = pld_privacy_accountant.PLDAccountant(value_discretization_interval=interval)
    if not accountant.supports(event):
        return None
    accountant.compose(event)
    return accountant


#: Epsilons :func:`pld_epsilon` computed, by (event, delta, discretisation): a fit's ledger is
#: the event its plan was certified with, and a memoised plan serves many fits (0.1 s each at
#: 200 sampled trees). At most :data:`MEMO_SIZE`, then cleared.
_EPSILONS = {}
MEMO_SIZE = 1024


def refine(rho, entries_at, epsilon, delta):
    """The largest per-tree zCDP parameter, from ``rho`` (the Renyi bisection's) up, whose
    plan the PLD accountant certifies within ``epsilon`` (discretised as ``_accounting.compose``
    discretises the plan's ledger), to :data:`PLD_TOLERANCE`: regula
    falsi on the epsilon against log rho (smooth and increasing), each step clamped inside the
    bracket, 3-5 PLD evaluations; ``rho`` itself where the PLD certifies no more.

    Parameters
    ----------
    rho : float
    entries_at : callable
        ``entries_at(rho)``: ``(entries, repeats)`` of the plan at rho (its first tree).
    epsilon, delta : float

    Returns
    -------
    rho : float
    """
    from ._accounting import compose_rdp

    def excess(r):
        # Discretised as the ledger's own epsilon is (``_accounting.compose``: at its Renyi
        # epsilon), so a plan certified here composes within epsilon there too: a PLD
        # discretised at another scale is another valid bound, which may exceed this one.
        entries, repeats = entries_at(r)
        scale = compose_rdp(entries, delta, repeats)
        return pld_epsilon(entries, delta, repeats, scale=scale) - epsilon

    low, f_low = rho, excess(rho)
    if not f_low <= 0:
        return rho
    high = f_high = None
    r = rho * 1.25
    for _ in range(MAX_EVALUATIONS):
        f = excess(r)
        if f <= 0:
            low, f_low = r, f
        else:
            high, f_high = r, f
        if -f_low <= PLD_TOLERANCE * epsilon or (high is not None and high / low < 1.001):
            break
        if high is None:
            r = low * 1.5
        else:
            t = min(0.9, max(0.1, f_low / (f_low - f_high)))
            r = low * (high / low) ** t
    return low


#: A choice's privacy profile (:func:`choice_epsilon`) is computed on ``[0, E]``, ``E`` doubled
#: from ``max(1, scale)`` until every alternative's profile at ``E`` is at most
#: ``PROFILE_TAIL * delta`` (the mass its distribution puts at an infinite loss, which only
#: raises the epsilon), or ``MAX_PROFILE_LOSS * max(1, scale)``.
PROFILE_TAIL, MAX_PROFILE_LOSS = 1e-5, 64.0


def choice_epsilon(parts, delta, scale):
    """The PLD accountant's epsilon at ``delta`` of parts composed sequentially, where each
    part releases one of its alternative ledgers, chosen by what an earlier part released (the
    plan a private row count picks; docs/privacy.md, Private row count).

    A part's alternatives, each with its dominating pair, are dominated by one pair whose
    privacy profile is their pointwise largest profile (in trade-off functions: the convex hull
    of their minimum, Dong, Roth & Su 2022, Section 2), fixed before the choice; and adaptive
    composition of mechanisms each dominated by a pair fixed in advance is dominated by the
    pairs' composition (Zhu, Dong & Wang 2022, Theorem 10). Each alternative's profile is the
    least of three valid ones (:func:`ledger_profile`) on a grid of epsilons; the largest, made
    convex in ``exp(epsilon)`` (the least convex majorant of valid points is valid: a profile is
    convex there) and reflected to a symmetric pair (both neighbour orders,
    ``delta(-e) = 1 - exp(-e) (1 - delta(e))``), becomes a distribution by pessimistic
    connect-the-dots (Doroshenko et al. 2022, Algorithm 1: dp-accounting's
    ``create_pmf_pessimistic_connect_dots``), and the parts' distributions are composed by
    dp-accounting's convolution. A part of one alternative is a fixed release.

    Parameters
    ----------
    parts : sequence of sequences of sequences of LedgerEntry
        Each part: its alternative ledgers.
    delta : float
        In (0, 1).
    scale : float
        The epsilon expected: the discretisation is :func:`discretization` of it.

    Returns
    -------
    epsilon : float
        inf above :data:`MAX_DELTA`.
    """
    if not delta <= MAX_DELTA:
        return math.inf
    composed = choice_distribution(parts, scale, PROFILE_TAIL * delta)
    return 0.0 if composed is None else max(0.0, float(composed.get_epsilon_for_delta(delta)))


def choice_distribution(parts, scale, tail):
    """The composed pessimistic privacy-loss distribution of :func:`choice_epsilon`'s parts,
    each part's profile computed until it is at most ``tail`` (the mass it puts at an
    infinite loss). The longest prefix of the parts composed before is read back (an
    accountant composes its registered fits again at each reservation).

    Returns
    -------
    pld : dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution or None
        None for no part.
    """
    from ._accounting import memoised

    interval = discretization(scale)
    digests = [part_digest(part) for part in parts]
    composed, start = None, 0
    for end in range(len(parts), 0, -1):
        composed = _PREFIXES.get((tuple(digests[:end]), interval, tail))
        if composed is not None:
            start = end
            break
    for part, digest in zip(parts[start:], digests[start:]):
        pld = memoised(_CHOICES, CHOICES_MEMO_SIZE, (digest, interval, tail),
                       lambda part=part: _choice_pld(part, interval, tail))
        composed = pld if composed is None else composed.compose(pld)
    if composed is not None:
        memoised(_PREFIXES, PREFIXES_MEMO_SIZE, (tuple(digests), interval, tail),
                 lambda: composed)
    return composed


def part_digest(part):
    """A collision-resistant key of a part's ledgers: the SHA-256 of their repr (every field
    of every entry but the fit's identifier, floats exact); a part that carries its ``digest``
    (the accountant's, computed once) gives it.

    Returns
    -------
    digest : str
    """
    digest = getattr(part, "digest", None)
    if digest is None:
        digest = hashlib.sha256(repr(tuple(tuple(ledger) for ledger in part)).encode()).hexdigest()
    return digest


#: Distributions :func:`choice_distribution` built, by (part digest, discretisation, tail), and
#: the compositions it returned, by (the parts' digests, discretisation, tail): an accountant
#: recomposes every registered fit at each reservation. At most :data:`CHOICES_MEMO_SIZE` and
#: :data:`PREFIXES_MEMO_SIZE` (a few MB each), then cleared.
_CHOICES, _PREFIXES = {}, {}
CHOICES_MEMO_SIZE, PREFIXES_MEMO_SIZE = 128, 8


def _choice_pld(ledgers, interval, tail):
    """The pessimistic privacy-loss distribution of a choice among ``ledgers``
    (:func:`choice_epsilon`)."""
    from dp_accounting.pld import pld_pmf
    from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution

    def profile(epsilons):
        return np.max([ledger_profile(ledger, epsilons, interval) for ledger in ledgers], axis=0)

    end = limit = interval / DISCRETIZATION
    limit *= MAX_PROFILE_LOSS
    while end < limit and profile(np.array([end]))[0] > tail:
        end *= 2
    steps = np.arange(math.ceil(end / interval) + 1)
    epsilons = steps * interval
    upper = profile(epsilons)
    # The other neighbour order of a symmetric pair: H_(e^-e)(P || Q) = 1 - e^-e + e^-e H_(e^e)(Q || P).
    lower = -np.expm1(-epsilons[1:]) + np.exp(-epsilons[1:]) * upper[1:]
    grid = np.concatenate([-steps[:0:-1], steps])
    deltas = convex_majorant(grid * interval, np.concatenate([lower[::-1], upper]))
    return PrivacyLossDistribution(pld_pmf.create_pmf_pessimistic_connect_dots(
        interval, grid, deltas))


def convex_majorant(epsilons, deltas):
    """The largest function convex in ``exp(epsilon)`` at most ``deltas`` at ``epsilons``
    (ascending), at those points: the lower convex hull of the points ``(exp(e), delta)``
    (Andrew's monotone chain), interpolated. Where every point bounds a mechanism's privacy
    profile (convex in ``exp(epsilon)``), so does this, tighter.

    Returns
    -------
    deltas : ndarray of the shape of ``epsilons``
    """
    s, y = np.exp(epsilons), np.asarray(deltas, dtype=np.float64)
    hull = []
    for i in range(s.size):
        while len(hull) >= 2 and ((y[hull[-1]] - y[hull[-2]]) * (s[i] - s[hull[-2]])
                                  >= (y[i] - y[hull[-2]]) * (s[hull[-1]] - s[hull[-2]])):
            hull.pop()
        hull.append(i)
    return np.interp(s, s[hull], y[hull])


def ledger_profile(entries, epsilons, interval):
    """A bound on the privacy profile ``delta(epsilon)`` (the largest hockey-stick divergence
    of the releases' outputs on neighbouring data sets) at ``epsilons`` (ascending, >= 0): the
    least of the pure-DP profile where every release is pure (randomized response's,
    ``(1 - e^(e - eps)) / (1 + e^-eps)``, Kairouz et al. 2015), the Renyi curve's conversion
    at every order (:func:`renyi_deltas`) plus the thresholds' deltas, and the PLD
    accountant's divergence where it applies (:func:`pld_epsilon`'s list). Each is a valid
    bound at every epsilon.

    Returns
    -------
    deltas : ndarray of the shape of ``epsilons``
    """
    from ._accounting import (
        all_pure,
        compose_pure,
        conversion_orders,
        ledger_event,
        memoised,
        rdp_curve,
        threshold_delta,
    )

    entries = list(entries)
    epsilons = np.asarray(epsilons, dtype=np.float64)
    deltas = np.ones_like(epsilons)
    if all_pure(entries):
        pure = compose_pure(entries)
        if math.isfinite(pure):
            deltas = np.minimum(deltas, np.maximum(0.0, -np.expm1(epsilons - pure)
                                                   / (1.0 + math.exp(-pure))))
    orders = conversion_orders(entries)
    curve = rdp_curve(ledger_event(entries), orders)
    if curve is not None:
        deltas = np.minimum(deltas, renyi_deltas(orders, curve, epsilons)
                            + threshold_delta(entries))
    event = _supported_event(entries)
    if event is not None:
        accountant = memoised(_ACCOUNTANTS, CHOICES_MEMO_SIZE, (repr(event), interval),
                              lambda: _accountant(event, interval) or False)
        if accountant:
            deltas = np.minimum(deltas, accountant.get_delta(epsilons))
    return deltas


#: PLD accountants :func:`ledger_profile` composed, by (event, discretisation).
_ACCOUNTANTS = {}


def renyi_deltas(orders, divergences, epsilons):
    """The delta at each of ``epsilons`` of a Renyi curve, converted at its best order:
    dp-accounting's ``compute_delta`` (Canonne, Kamath & Steinke 2020, Proposition 12, with the
    bound through the KL divergence, ``sqrt(1 - exp(-R))``), vectorised over epsilons. An order
    whose divergence is negative (dp-accounting's rounding at an extreme event) is left out.

    Returns
    -------
    deltas : ndarray of the shape of ``epsilons``
    """
    epsilons = np.asarray(epsilons, dtype=np.float64)
    log_delta = np.zeros_like(epsilons)
    for order, r in zip(orders, divergences):
        if r < 0:
            continue
        bound = 0.5 * math.log1p(-math.exp(-r)) if r > 0 else -math.inf
        if order > 1.01:
            bound = np.minimum(bound, (order - 1) * (r - epsilons + math.log1p(-1 / order))
                               - math.log(order))
        log_delta = np.minimum(log_delta, bound)
    return np.exp(log_delta)
