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

import math

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
    from dp_accounting.pld import pld_privacy_accountant

    from ._accounting import ledger_event, memoised

    entries = list(entries)
    if not delta <= MAX_DELTA or any(
            e.held_out or e.delta > 0 or e.filtered or e.mechanism == "renyi_filter"
            or e.sampling_rate < MIN_SAMPLING_RATE
            or (e.mechanism == "gaussian" and e.noise_multiplier < MIN_NOISE_MULTIPLIER)
            or (e.mechanism == "laplace" and e.epsilon > MAX_LAPLACE_EPSILON)
            for e in entries):
        return math.inf
    event = ledger_event(entries, repeats)
    event = None if event is None else pld_event(event)
    if event is None:
        return math.inf
    interval = DISCRETIZATION * max(1.0, min(scale, 1e3))

    def compute():
        accountant = pld_privacy_accountant.PLDAccountant(value_discretization_interval=interval)
        if not accountant.supports(event):
            return math.inf
        accountant.compose(event)
        return max(0.0, float(accountant.get_epsilon(delta)))

    return memoised(_EPSILONS, MEMO_SIZE, (repr(event), delta, interval), compute)


#: Epsilons :func:`pld_epsilon` computed, by (event, delta, discretisation): a fit's ledger is
#: the event its plan was certified with, and a memoised plan serves many fits (0.1 s each at
#: 200 sampled trees). At most :data:`MEMO_SIZE`, then cleared.
_EPSILONS = {}
MEMO_SIZE = 1024


def refine(rho, entries_at, epsilon, delta):
    """The largest per-tree zCDP parameter, from ``rho`` (the Renyi bisection's) up, whose
    plan the PLD accountant certifies within ``epsilon``, to :data:`PLD_TOLERANCE`: regula
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
    def excess(r):
        entries, repeats = entries_at(r)
        return pld_epsilon(entries, delta, repeats, scale=epsilon) - epsilon

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
