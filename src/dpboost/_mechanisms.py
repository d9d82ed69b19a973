"""The only module that draws randomness: exponential mechanism, Laplace mechanism, record partition.

Two noise sources share one interface, :class:`NoiseSource`. :class:`SecureNoise`
(``random_state=None``, the default) draws with exact samplers on a lattice (``_samplers``) from
the operating system's randomness, safe against the floating-point attacks of Mironov (2012).
:class:`NumpyNoise` (an int or Generator ``random_state``) draws floating-point noise from a numpy
Generator: reproducible, hence predictable, and for experiments only. Every mechanism writes one
ledger entry per release, shows the entry and its exact input to :meth:`NoiseSource.observe`
(a no-op, overridden by the record-and-replay tests), then draws.

A release whose sensitivity is 0 is the constant 0 (a leaf whose clipping bound is 0): releasing
the clipped value unchanged would show its sign (``clip(v, -0.0, 0.0)`` keeps it). A release whose
noise scale is not a positive normal float while its sensitivity is positive is refused: noise on a
subnormal scale is not the distribution it claims to be.
"""

import math

import numpy as np

from ._releases import RELEASES


def noise_scale(entry):
    """The noise scale of a release: the one formula the mechanisms draw with and the planner
    checks before any data is read.

    ``2 sensitivity / epsilon`` for the exponential mechanism (McSherry & Talwar 2007),
    ``sensitivity / epsilon`` for Laplace, ``noise_multiplier * sensitivity`` for Gaussian and
    thresholded Gaussian counts; 0 for
    the releases without noise (``"argmax"``, ``"exact"`` at epsilon = inf, ``"uniform"``).

    Parameters
    ----------
    entry : LedgerEntry

    Returns
    -------
    scale : float

    Raises
    ------
    ValueError
        The scale is not a positive normal float while the sensitivity is positive: noise on a
        vanishing (subnormal) or infinite scale is not the distribution it claims to be.
    """
    release = RELEASES[entry.mechanism]
    if release.noiseless:
        return 0.0
    scale = release.noise_scale(entry)
    if entry.sensitivity > 0 and not np.finfo(np.float64).tiny <= scale < math.inf:
        raise ValueError(
            f"the {entry.mechanism} release of tree {entry.tree}, level {entry.level} would have "
            f"noise scale {scale!r}, not a positive normal float: epsilon, delta, subsample or "
            "n_estimators are too extreme to plan.")
    return scale


def exponential_mechanism(utilities, *, epsilon, sensitivity, noise, ledger, scope):
    """Pick one candidate per row with probability proportional to ``exp(eps * u / (2 * sensitivity))``.

    McSherry & Talwar (2007); DPBoost Algorithm 1, line 8. Every candidate keeps a positive
    probability.

    Parameters
    ----------
    utilities : ndarray of shape (n_nodes, n_candidates), dtype=float64
        Utility of every candidate of every node; the nodes hold disjoint records.
    epsilon : float
        Budget of each node, in (0, inf]; ``inf`` returns the first maximiser (argmax, non-private).
    sensitivity : float
        Utility sensitivity Delta_u > 0.
    noise : NoiseSource
    ledger : PrivacyLedger
    scope : dict
        ``group``, ``tree`` and ``level`` of the release.

    Returns
    -------
    choice : ndarray of shape (n_nodes,), dtype=int64
    """
    private = math.isfinite(epsilon)
    entry = ledger.record(mechanism="exponential" if private else "argmax", epsilon=epsilon,
                          sensitivity=sensitivity, n_nodes=utilities.shape[0], **scope)
    if not private:
        return np.argmax(utilities, axis=1)
    noise.observe(entry, utilities)
    return noise.exponential(utilities, noise_scale(entry), sensitivity)


def public_uniform(n, *, noise, ledger, scope):
    """``n`` uniforms in [0, 1) independent of the data, recorded in the ledger (epsilon 0) and
    shown to ``observe``: the draws of a public random choice (a random split, a search's number
    of trials and settings), so that a fit's whole transcript is accounted.

    Returns
    -------
    u : ndarray of shape (n,), dtype=float64
    """
    entry = ledger.record(mechanism="uniform", epsilon=0.0, sensitivity=0.0, n_nodes=n, **scope)
    noise.observe(entry, None)
    return noise.uniform(n)


def uniform_choice(n_nodes, n_candidates, *, noise, ledger, scope, weights=None):
    """One candidate per node, at random and independent of the data (epsilon 0).

    DP-TR's "random boosting" split selection (Maddock et al. 2022): the split structure costs no
    budget; the ledger still records it, with epsilon 0.

    Parameters
    ----------
    n_nodes, n_candidates : int
    noise : NoiseSource
    ledger : PrivacyLedger
    scope : dict
    weights : ndarray of shape (n_candidates,), dtype=float64, default=None
        Public relative probabilities of the candidates; None: uniform.

    Returns
    -------
    choice : ndarray of shape (n_nodes,), dtype=int64
    """
    u = public_uniform(n_nodes, noise=noise, ledger=ledger, scope=scope)
    if weights is None:
        return np.minimum((u * n_candidates).astype(np.int64), n_candidates - 1)
    cdf = np.cumsum(weights)
    return np.minimum(np.searchsorted(cdf, u * cdf[-1], side="right"), n_candidates - 1)


def laplace_mechanism(values, *, epsilon, sensitivity, noise, ledger, scope):
    """Release ``values + Laplace(sensitivity / epsilon)`` (Dwork et al. 2006; DPBoost Alg. 1, l. 14).

    Parameters
    ----------
    values : ndarray of shape (n_nodes,), (n_nodes, n_statistics) or (n_nodes, n_groups, n_cells)
        float64. One value (or row of statistics, or a histogram per group of which one record
        moves one cell: :func:`moved_coordinates`) per disjoint node; ``sensitivity`` bounds the
        L1 change of one row.
    epsilon : float
        Budget in (0, inf]; ``inf`` releases ``values`` unchanged (non-private).
    sensitivity : float
    noise : NoiseSource
    ledger : PrivacyLedger
    scope : dict

    Returns
    -------
    released : ndarray of the shape of ``values``, dtype=float64
        With ``sensitivity == 0``, zeros: the only such releases are leaves whose clipping
        bound is 0, and their exact value would still show its sign.

    Raises
    ------
    ValueError
        ``sensitivity / epsilon`` is not a positive normal float while ``sensitivity > 0``.
    """
    private = math.isfinite(epsilon)
    entry = ledger.record(mechanism="laplace" if private else "exact", epsilon=epsilon,
                          sensitivity=sensitivity, n_nodes=values.shape[0], **scope)
    if not private:
        return values.copy()
    scale = noise_scale(entry)
    noise.observe(entry, values)
    if sensitivity == 0:
        return np.zeros(values.shape)
    return noise.laplace(values, scale, sensitivity)


def gaussian_mechanism(values, *, noise_multiplier, sensitivity, noise, ledger, scope):
    """Release ``values + N(0, (noise_multiplier * sensitivity)^2)`` per element.

    The Gaussian mechanism (Dwork & Roth 2014, Appendix A; Renyi-DP of order alpha
    ``alpha / (2 noise_multiplier^2)``, Mironov 2017, Prop. 7), used for the sufficient statistics
    of the leaves, (sum g, sum h) per leaf (DP-XGB; Maddock et al. 2022).

    Parameters
    ----------
    values : ndarray of shape (n_nodes, n_statistics) or (n_nodes, n_groups, n_cells)
        float64. One row per disjoint node (a histogram per group of which one record moves
        one cell: :func:`moved_coordinates`); ``sensitivity`` bounds the L2 change of one row.
    noise_multiplier : float
        Noise standard deviation over the L2 sensitivity, > 0.
    sensitivity, noise, ledger, scope
        As :func:`laplace_mechanism`'s (``sensitivity`` an L2 bound).

    Returns
    -------
    released : ndarray of the shape of ``values``, dtype=float64
        With ``sensitivity == 0``, zeros (as :func:`laplace_mechanism`).
    """
    entry = ledger.record(mechanism="gaussian", epsilon=math.inf, sensitivity=sensitivity,
                          n_nodes=values.shape[0], noise_multiplier=noise_multiplier, **scope)
    scale = noise_scale(entry)
    noise.observe(entry, values)
    if sensitivity == 0:
        return np.zeros(values.shape)
    return noise.gaussian(values, scale, sensitivity)


def planned_release(values, entry, *, noise, ledger, scope):
    """Release ``values`` by the mechanism and parameters of the planned ``entry``:
    :func:`gaussian_mechanism` at its noise multiplier for a ``"gaussian"`` entry, else
    :func:`laplace_mechanism` at its epsilon (``"exact"`` at ``epsilon = inf``), recorded under
    ``scope``.

    Returns
    -------
    released : ndarray of the shape of ``values``, dtype=float64
    """
    if entry.mechanism == "gaussian":
        return gaussian_mechanism(values, noise_multiplier=entry.noise_multiplier,
                                  sensitivity=entry.sensitivity, noise=noise, ledger=ledger,
                                  scope=scope)
    return laplace_mechanism(values, epsilon=entry.epsilon, sensitivity=entry.sensitivity,
                             noise=noise, ledger=ledger, scope=scope)


def threshold_mechanism(keys, counts, *, release, noise, ledger):
    """Which of the observed values clear the threshold: Gaussian noise on their counts,
    kept when the noisy count exceeds ``release.threshold`` (the stability-based histogram of
    Korolova et al. 2009 with Gaussian noise, Wilson et al. 2020; docs/privacy.md,
    Private category lists). Only the decisions leave: the noisy counts are dropped here.

    Parameters
    ----------
    keys : ndarray of shape (n_values,), dtype=object
        ``(column, value)`` of every counted value; shown to ``observe`` with the counts (the
        record-and-replay tests align the values two neighbours hold).
    counts : ndarray of shape (n_values,), dtype=float64
        Positive counts.
    release : LedgerEntry
        The planned entry (``BudgetPlan.categories``): ``"threshold"``, or ``"exact"`` at
        epsilon = inf (every value of positive count is kept).
    noise : NoiseSource
    ledger : PrivacyLedger

    Returns
    -------
    kept : ndarray of shape (n_values,), dtype=bool
    """
    fields = {f: getattr(release, f) for f in ("mechanism", "epsilon", "sensitivity", "group",
                                               "tree", "level", "n_nodes", "noise_multiplier",
                                               "threshold", "delta")}
    entry = ledger.record(**fields)
    if entry.mechanism == "exact":
        return counts > entry.threshold
    values = np.empty(counts.size, dtype=[("key", object), ("count", np.float64)])
    values["key"], values["count"] = keys, counts
    noise.observe(entry, values)
    # One value per row: the lattice of the secure sampler then depends on the plan only
    # (not on how many values the data holds), and the values' noise is independent.
    noisy = noise.gaussian(counts.reshape(-1, 1), noise_scale(entry), entry.sensitivity)
    return noisy.ravel() > entry.threshold


def poisson_sample(coins, rate):
    """Keep every record independently with probability at most ``rate`` (Poisson sampling).

    The sample a tree is grown on when ``subsample < 1``; its amplification is accounted in
    ``_accounting`` (Balle, Barthe & Gaboardi 2018) at ``rate``. A record is kept when its coin
    is below ``floor(rate 2**32) 2**-32``: on the coins' grid the probability is that value,
    never above ``rate`` (amplification only weakens as the rate grows).

    Parameters
    ----------
    coins : ndarray of shape (n_records,), dtype=float64
        Each record's coin (``RecordCoins.uniforms``), on the ``2**-32`` grid in [0, 1).
    rate : float
        In (0, 1].

    Returns
    -------
    kept : ndarray of shape (n_records,), dtype=bool
    """
    return coins < poisson_threshold(rate)


def poisson_threshold(rate):
    """The coin below which :func:`poisson_sample` keeps a record: ``floor(rate 2**32) 2**-32``.

    The largest value on the coins' ``2**-32`` grid that is at most ``rate``: a coin uniform on
    the grid is below it with probability exactly that value, never above ``rate``.

    Parameters
    ----------
    rate : float
        In (0, 1].

    Returns
    -------
    threshold : float
    """
    return math.floor(rate * 2**32) * 2.0**-32


def partition_records(coins, shares):
    """Assign every record independently to a position with probability ``shares[position]``
    (up to the coins' ``2**-32`` grid).

    An independent categorical draw per record (docs/privacy.md, Record selection): a record's
    tree never depends on other records, so the trees of a group see disjoint records and
    compose in parallel exactly under add/remove.

    Parameters
    ----------
    coins : ndarray of shape (n_records,), dtype=float64
        Each record's coin (``RecordCoins.uniforms``).
    shares : ndarray of shape (n_positions,), dtype=float64
        Non-negative, summing to at most 1; the remaining mass means "unused".

    Returns
    -------
    position : ndarray of shape (n_records,), dtype=int64
        Position of each record, ``n_positions`` for unused records.
    """
    return np.searchsorted(np.cumsum(shares), coins, side="right")
