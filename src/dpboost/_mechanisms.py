"""The only module that draws randomness: exponential mechanism, Laplace mechanism, record partition.

Two noise sources share one interface, :class:`NoiseSource`. :class:`SecureNoise`
(``random_state=None``, the default) uses OpenDP's exact samplers and the operating system's
randomness, which are safe against the floating-point attacks of Mironov (2012).
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
import os

import numpy as np


class NoiseSource:
    """Interface of the noise sources: the draws every mechanism of this module needs.

    Subclasses implement :meth:`exponential`, :meth:`laplace`, :meth:`gaussian` and
    :meth:`uniform`. An instance may be passed as ``random_state`` to the estimators.
    """

    def observe(self, entry, values):
        """Called by every mechanism with its ledger entry and its exact input, just before it
        draws. Does nothing: the hook of the record-and-replay tests (``tests/test_replay.py``),
        which check the input's change on neighbouring datasets against ``entry.sensitivity``.

        Parameters
        ----------
        entry : LedgerEntry
        values : ndarray or None
            Utilities (exponential), values (Laplace, Gaussian); None for a data-independent
            draw (uniform split choice).
        """

    def coins(self, n_records):
        """One independent uniform float in [0, 1) per record: the only draws whose number
        depends on the data (record partition, Poisson sampling). Record ``i``'s coin decides
        record ``i``'s fate alone."""
        return self.uniform(n_records)


class NumpyNoise(NoiseSource):
    """Reproducible floating-point noise from one ``numpy.random.Generator`` (experiments only).

    Parameters
    ----------
    generator : numpy.random.Generator
    """

    def __init__(self, generator):
        self.generator = generator

    def exponential(self, utilities, scale):
        """Row-wise index drawn with probability proportional to ``exp(u / scale)``.

        Rejection sampling with an exact fallback, all rows of a level at once. The weights
        ``w = exp((u - max u) / scale)`` lie in (0, 1] (no overflow). Each of ``k`` trials per row
        proposes a uniform candidate ``i`` and accepts it with probability ``w_i``: the first
        accepted trial is distributed exactly ``∝ w``. A row whose ``k`` trials all fail draws by
        inverse CDF over all its weights with one more uniform, again exactly ``∝ w``, so the
        mixture is too. Every candidate keeps a positive probability, and the number of draws
        depends on the shape only. Why not Gumbel-max: one Gumbel variate per candidate cost
        about 35 ns here, and numpy's ``exp`` about 15 ns per candidate, while ``k`` trials cost
        a few microseconds per row; only sharply peaked rows (small ``scale``) pay for the full
        pass.
        """
        n_rows, n_candidates = utilities.shape
        top = utilities.max(axis=1, keepdims=True)
        # 256 trials all fail with probability < 1e-4 whenever the mean weight is at least 4 %.
        n_trials = min(n_candidates, 256)
        proposal = self.generator.integers(n_candidates, size=(n_rows, n_trials))
        weight = np.exp((np.take_along_axis(utilities, proposal, axis=1) - top) / scale)
        accepted = self.generator.random((n_rows, n_trials)) < weight
        fallback = self.generator.random(n_rows)
        first = accepted.argmax(axis=1)
        rows = np.arange(n_rows)
        choice = proposal[rows, first]
        rejected = ~accepted[rows, first]
        if rejected.any():
            cumulative = np.cumsum(np.exp((utilities[rejected] - top[rejected]) / scale), axis=1)
            target = fallback[rejected] * cumulative[:, -1]
            # Leaving out the last cumulative weight sends a target that rounds up to the total
            # to the last candidate instead of past the end.
            choice[rejected] = np.count_nonzero(cumulative[:, :-1] <= target[:, None], axis=1)
        return choice

    def laplace(self, values, scale):
        """``values + Laplace(scale)``, independently per element."""
        return values + self.generator.laplace(scale=scale, size=values.shape)

    def gaussian(self, values, scale):
        """``values + N(0, scale^2)``, independently per element."""
        return values + self.generator.normal(scale=scale, size=values.shape)

    def uniform(self, n):
        """``n`` independent uniform floats in [0, 1)."""
        return self.generator.random(n)


class SecureNoise(NoiseSource):
    """Exact, floating-point-safe samplers of OpenDP with the operating system's randomness.

    The exponential mechanism is OpenDP's ``make_noisy_max`` with Gumbel noise (its zCDP variant,
    which samples exactly ``P ∝ exp(u / scale)``); leaves use OpenDP's ``make_laplace`` or
    ``make_gaussian`` on float vectors; the record partition uses ``os.urandom``. Measurements are built once per shape and
    scale.
    """

    def __init__(self):
        import opendp.prelude as dp

        dp.enable_features("contrib")
        self._dp = dp
        self._measurements = {}

    def measurement(self, kind, size, scale):
        """OpenDP measurement ``kind`` ("noisy_max", "laplace", "gaussian") on float vectors."""
        key = (kind, size, scale)
        if key not in self._measurements:
            dp = self._dp
            domain = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=size)
            if kind == "noisy_max":
                m = dp.m.make_noisy_max(domain, dp.linf_distance(T=float),
                                        dp.zero_concentrated_divergence(), scale=scale)
            elif kind == "laplace":
                m = dp.m.make_laplace(domain, dp.l1_distance(T=float), scale=scale)
            else:
                m = dp.m.make_gaussian(domain, dp.l2_distance(T=float), scale=scale)
            self._measurements[key] = m
        return self._measurements[key]

    def exponential(self, utilities, scale):
        """Row-wise index drawn exactly with probability proportional to ``exp(u / scale)``."""
        m = self.measurement("noisy_max", utilities.shape[1], float(scale))
        # numpy rows convert faster than Python lists in OpenDP's bindings.
        return np.array([m(row) for row in utilities], dtype=np.int64)

    def laplace(self, values, scale):
        """``values + Laplace(scale)`` with OpenDP's exact sampler (``values`` of any shape)."""
        flat = np.ascontiguousarray(values, dtype=np.float64).ravel()
        return np.array(self.measurement("laplace", flat.size, float(scale))(flat)).reshape(
            values.shape)

    def gaussian(self, values, scale):
        """``values + N(0, scale^2)`` with OpenDP's exact sampler (``values`` of any shape)."""
        flat = np.ascontiguousarray(values, dtype=np.float64).ravel()
        return np.array(self.measurement("gaussian", flat.size, float(scale))(flat)).reshape(
            values.shape)

    def uniform(self, n):
        """``n`` independent uniform floats in [0, 1) on a 2**-53 grid, from ``os.urandom``."""
        bits = np.frombuffer(os.urandom(8 * n), dtype=np.uint64) >> np.uint64(11)
        return bits * 2.0**-53


def make_noise(random_state):
    """The noise source of ``fit``.

    Parameters
    ----------
    random_state : None, int, numpy.random.Generator, numpy.random.RandomState or NoiseSource
        None: :class:`SecureNoise`. A :class:`NoiseSource`: itself. Otherwise :class:`NumpyNoise`
        on a Generator made from it.
    """
    if random_state is None:
        return SecureNoise()
    if isinstance(random_state, NoiseSource):
        return random_state
    if isinstance(random_state, np.random.Generator):
        return NumpyNoise(random_state)
    if isinstance(random_state, np.random.RandomState):
        # scikit-learn's check_random_state convention; draw a seed from it once.
        return NumpyNoise(np.random.default_rng(random_state.randint(np.iinfo(np.int32).max)))
    return NumpyNoise(np.random.default_rng(random_state))


def noise_scale(entry):
    """The noise scale of a release: the one formula the mechanisms draw with and the planner
    checks before any data is read.

    ``2 sensitivity / epsilon`` for the exponential mechanism (McSherry & Talwar 2007),
    ``sensitivity / epsilon`` for Laplace, ``noise_multiplier * sensitivity`` for Gaussian; 0 for
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
    if entry.mechanism in ("argmax", "exact", "uniform"):
        return 0.0
    if entry.mechanism == "gaussian":
        scale = entry.noise_multiplier * entry.sensitivity
    else:
        factor = 2.0 if entry.mechanism == "exponential" else 1.0
        scale = factor * entry.sensitivity / entry.epsilon
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
    return noise.exponential(utilities, noise_scale(entry))


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
    entry = ledger.record(mechanism="uniform", epsilon=0.0, sensitivity=0.0, n_nodes=n_nodes,
                          **scope)
    noise.observe(entry, None)
    u = noise.uniform(n_nodes)
    if weights is None:
        return np.minimum((u * n_candidates).astype(np.int64), n_candidates - 1)
    cdf = np.cumsum(weights)
    return np.minimum(np.searchsorted(cdf, u * cdf[-1], side="right"), n_candidates - 1)


def laplace_mechanism(values, *, epsilon, sensitivity, noise, ledger, scope):
    """Release ``values + Laplace(sensitivity / epsilon)`` (Dwork et al. 2006; DPBoost Alg. 1, l. 14).

    Parameters
    ----------
    values : ndarray of shape (n_nodes,) or (n_nodes, n_statistics), dtype=float64
        One value (or row of statistics) per disjoint node; ``sensitivity`` bounds the L1 change
        of one row.
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
    return noise.laplace(values, scale)


def gaussian_mechanism(values, *, noise_multiplier, sensitivity, noise, ledger, scope):
    """Release ``values + N(0, (noise_multiplier * sensitivity)^2)`` per element.

    The Gaussian mechanism (Dwork & Roth 2014, Appendix A; Renyi-DP of order alpha
    ``alpha / (2 noise_multiplier^2)``, Mironov 2017, Prop. 7), used for the sufficient statistics
    of the leaves, (sum g, sum h) per leaf (DP-XGB; Maddock et al. 2022).

    Parameters
    ----------
    values : ndarray of shape (n_nodes, n_statistics), dtype=float64
        One row per disjoint node; ``sensitivity`` bounds the L2 change of one row.
    noise_multiplier : float
        Noise standard deviation over the L2 sensitivity, > 0.
    sensitivity, noise, ledger, scope
        As :func:`laplace_mechanism`'s (``sensitivity`` an L2 bound).

    Returns
    -------
    released : ndarray of shape (n_nodes, n_statistics), dtype=float64
    """
    entry = ledger.record(mechanism="gaussian", epsilon=math.inf, sensitivity=sensitivity,
                          n_nodes=values.shape[0], noise_multiplier=noise_multiplier, **scope)
    noise.observe(entry, values)
    return noise.gaussian(values, noise_scale(entry))


def poisson_sample(n_records, rate, noise):
    """Keep every record independently with probability ``rate`` (Poisson sampling).

    The sample a tree is grown on when ``subsample < 1``; its amplification is accounted in
    ``_accounting`` (Balle, Barthe & Gaboardi 2018).

    Parameters
    ----------
    n_records : int
    rate : float
        In (0, 1].
    noise : NoiseSource

    Returns
    -------
    kept : ndarray of shape (n_records,), dtype=bool
    """
    return noise.coins(n_records) < rate


def partition_records(n_records, shares, noise):
    """Assign every record independently to a position with probability ``shares[position]``.

    An independent categorical draw per record (docs/privacy.md, Record selection): a record's tree never depends on
    other records, so the trees of a group see disjoint records and compose in parallel exactly
    under add/remove.

    Parameters
    ----------
    n_records : int
    shares : ndarray of shape (n_positions,), dtype=float64
        Non-negative, summing to at most 1; the remaining mass means "unused".
    noise : NoiseSource

    Returns
    -------
    position : ndarray of shape (n_records,), dtype=int64
        Position of each record, ``n_positions`` for unused records.
    """
    return np.searchsorted(np.cumsum(shares), noise.coins(n_records), side="right")
