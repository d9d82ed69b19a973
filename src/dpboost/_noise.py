"""Noise sources: how noise is drawn. :class:`SecureNoise` (``random_state=None``, the default)
draws with exact samplers on a lattice (``_samplers``) from the operating system's randomness,
safe against the floating-point attacks of Mironov (2012); :class:`NumpyNoise` (an int or
Generator ``random_state``) draws floating-point noise from a numpy Generator: reproducible,
hence predictable, and for experiments only. The mechanisms (``_mechanisms``) say what is
released at which scale; a source draws it."""

import functools
import math
import os
from fractions import Fraction

import numpy as np
from numba import njit

from ._mechanisms import noise_scale
from ._records import RecordCoins
from ._releases import RELEASES
from ._samplers import (
    MAX_MAGNITUDE,
    START,
    discrete_gaussian_noise,
    discrete_laplace_noise,
    exponential_rows,
)


class NoiseSource:
    """Interface of the noise sources: the draws every mechanism of this module needs.

    Subclasses implement ``exponential(utilities, scale, sensitivity)``,
    ``laplace(values, scale, sensitivity)``, ``gaussian(values, scale, sensitivity)`` (the
    scale from :func:`noise_scale`, the sensitivity of one row of the release; the shape of
    ``values`` tells how many coordinates of a row one record moves, :func:`moved_coordinates`)
    and ``uniform(n)``. An instance may be passed as ``random_state`` to the estimators.
    """

    #: Whether nobody can predict the draws: only :class:`SecureNoise` on the operating
    #: system's randomness says so; any other source (a seed's Generator, a seeded word
    #: stream, a user's own class) makes ``fit`` warn with ``ReproducibleNoiseWarning``.
    unpredictable = False

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

    def coins(self):
        """The fit's record coins (:class:`~dpboost._records.RecordCoins`), keyed with four
        uniforms of this source (212 random bits): drawn once per fit, before any record is
        read. Record ``i``'s coins decide record ``i``'s fate alone (record partition, Poisson
        sampling)."""
        return RecordCoins(np.asarray(self.uniform(4), dtype=np.float64).tobytes())


class NumpyNoise(NoiseSource):
    """Reproducible floating-point noise from one ``numpy.random.Generator`` (experiments only).

    Parameters
    ----------
    generator : numpy.random.Generator
    """

    def __init__(self, generator):
        self.generator = generator

    def exponential(self, utilities, scale, sensitivity):
        """Row-wise index drawn with probability proportional to ``exp(u / scale)``
        (``sensitivity`` is not needed by floating-point noise).

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

    def laplace(self, values, scale, sensitivity):
        """``values + Laplace(scale)``, independently per element."""
        return values + self.generator.laplace(scale=scale, size=values.shape)

    def gaussian(self, values, scale, sensitivity):
        """``values + N(0, scale^2)``, independently per element."""
        return values + self.generator.normal(scale=scale, size=values.shape)

    def uniform(self, n):
        """``n`` independent uniform floats in [0, 1)."""
        return self.generator.random(n)


class SecureNoise(NoiseSource):
    """Exact samplers on a lattice (:mod:`dpboost._samplers`) fed by the operating system's
    randomness: safe against the floating-point attacks of Mironov (2012).

    A release of ``values`` (one row per node; ``sensitivity`` bounds the change of one row) with
    noise scale ``scale`` (docs/privacy.md, Secure noise):

    1. **Lattice.** The step is the power of two ``g`` with ``scale / g`` in
       ``[2**b, 2**(b + 1))`` (``b`` = 24 for the discrete Gaussian, 40 for the discrete Laplace,
       36 for the exponential mechanism). Every value is rounded to ``g Z`` without a clip
       (:func:`lattice_round`). Rounding moves a coordinate by at most half a step, and only the
       coordinates one record moves change, so on the lattice one record moves a row by at most
       ``sensitivity / g + c`` steps, ``c`` the rounding allowance: ``k`` (L1, Laplace) or
       ``ceil(sqrt(k))`` (L2, Gaussian) for a row of which one record moves ``k`` coordinates
       (:func:`moved_coordinates`), 1 per utility (exponential).
    2. **Integer scale** ``ceil(scale / g + c * scale / sensitivity) + 1``: the planned ratio of
       noise to sensitivity holds on the lattice, so the planned epsilon (Laplace, exponential)
       or Renyi curve (Gaussian; Canonne, Kamath & Steinke 2020, Prop. 5 and Thm. 14) is an
       upper bound; the final ``+ 1`` absorbs the rounding of the float ``scale``. It must be
       below :attr:`LIMIT` (Laplace, exponential) or :attr:`GAUSSIAN_LIMIT`; the planner
       refuses a plan beyond (:meth:`check`), before any data is read.
    3. **Output.** Laplace and Gaussian: the integer noise ``Y`` is drawn alone and added to the
       lattice point ``n = rounded value / g`` exactly; the release is ``(n + Y) g`` rounded once
       to float64 (:func:`lattice_sum`), a function of the noisy lattice point ``n + Y`` alone
       (post-processing), at any magnitude of the value. Every released value is a multiple of
       ``g``, whatever the data: below ``2**53 g`` it is ``(n + Y) g`` itself, and a float64
       beyond is a multiple of ``g`` anyway. Exponential: the exact gaps of the lattice points
       below their row's largest (:func:`lattice_gaps`), see :meth:`exponential`.

    Parameters
    ----------
    words : callable, default=None
        ``words(n)`` returns ``n`` independent uniform 64-bit words as a writable uint64 array;
        None: the operating system's CSPRNG (``os.urandom``). The tests pass a seeded source to
        check the samplers' laws; a release is only as private as its words are unpredictable.
    """

    #: Bits of the integer noise scale (see above): a lattice step of ``scale / 2**b``.
    GAUSSIAN_BITS, LAPLACE_BITS, EXPONENTIAL_BITS = 24, 40, 36
    #: Integer scales the kernels take. Gaussian: its acceptance test multiplies two of them
    #: (``_samplers._discrete_gaussian``). Laplace and exponential: ``2**62 / 2**48 = 2**14``
    #: scales of headroom in int64, so that a Laplace draw saturates, and a gap is capped, only
    #: where the probability is below ``exp(2 - 2**14)`` (:meth:`exponential`).
    GAUSSIAN_LIMIT, LIMIT = 2**26, 2**48
    #: Words a first buffer holds per element (a little above the mean use measured on the
    #: kernels: about 15 per discrete Gaussian, 9 per discrete Laplace, 10 to a few hundred per
    #: exponential-mechanism row); the stream is extended when a release needs more.
    WORDS = {discrete_gaussian_noise: 16, discrete_laplace_noise: 10, exponential_rows: 64}

    def __init__(self, words=None):
        self.words = _os_words if words is None else words
        self.unpredictable = words is None

    @staticmethod
    @functools.lru_cache(maxsize=1024)
    def lattice(scale, sensitivity, bits, inflation, limit):
        """The lattice step ``g`` and the integer noise scale of a release (class docstring),
        which must be below ``limit``. Memoised (public scalars): the planner checks every
        release of a plan, most of them alike.

        Parameters
        ----------
        scale, sensitivity : float
            Positive.
        bits : int
            ``b``: the step is ``scale / 2**b`` rounded down to a power of two.
        inflation : int
            The rounding allowance ``c``, in steps.
        limit : int

        Returns
        -------
        step : float
            A power of two.
        integer_scale : int

        Raises
        ------
        ValueError
            ``scale`` is not positive, or the integer scale reaches ``limit`` (for the Gaussian,
            a noise multiplier times ``ceil(sqrt(k))`` above about ``2**25``; for the Laplace,
            ``k / epsilon`` above about ``2**47.9``): decided by the plan, not the data.
        """
        if not scale > 0:
            raise ValueError(f"a secure release needs a positive noise scale, got {scale!r}")
        step = math.ldexp(1.0, math.frexp(scale)[1] - 1 - bits)
        ratio = Fraction(scale) / Fraction(sensitivity)
        integer_scale = math.ceil(Fraction(scale) / Fraction(step) + inflation * ratio) + 1
        if integer_scale >= limit:
            raise ValueError(
                f"noise scale {scale!r} over sensitivity {sensitivity!r} is too large for the "
                f"exact samplers (integer scale {integer_scale} with a rounding allowance of "
                f"{inflation}, limit {limit}): lower the noise (epsilon, delta) or the number "
                "of releases.")
        return step, integer_scale

    @classmethod
    def _lattice_of(cls, kind, scale, sensitivity, moved):
        """:meth:`lattice` of a ``kind`` of release (``"exponential"``, ``"laplace"`` or
        ``"gaussian"``) whose rows one record moves in ``moved`` coordinates."""
        if kind == "exponential":
            return cls.lattice(scale, sensitivity, cls.EXPONENTIAL_BITS, 1, cls.LIMIT)
        if kind == "laplace":
            return cls.lattice(scale, sensitivity, cls.LAPLACE_BITS, moved, cls.LIMIT)
        return cls.lattice(scale, sensitivity, cls.GAUSSIAN_BITS, math.isqrt(moved - 1) + 1,
                           cls.GAUSSIAN_LIMIT)

    @classmethod
    def check(cls, entry, moved):
        """Refuse a planned release that the exact samplers cannot draw: its integer noise
        scale (class docstring) at or above the kernels' limit.

        Called by the planner (``BudgetPlan.check_scales``) for every release, before any
        record is read, with the ``moved`` its caller will show in the values' shape; the
        plan does not depend on the noise source, so a plan the default source cannot draw is
        refused for every source.

        Parameters
        ----------
        entry : LedgerEntry
            A planned release; entries that draw no noise (``"argmax"``, ``"exact"``,
            ``"uniform"``, sensitivity 0) and the Renyi filter's budget pass.
        moved : int
            ``k``: coordinates of one row of the release that one record moves (ignored by the
            exponential mechanism).

        Raises
        ------
        ValueError
            Names the release, its integer scale and the limit.
        """
        scale = noise_scale(entry)
        kind = RELEASES[entry.mechanism].draws
        if kind is None or not (scale > 0 and entry.sensitivity > 0):
            return
        try:
            cls._lattice_of(kind, scale, entry.sensitivity, moved)
        except ValueError as error:
            raise ValueError(f"the {entry.mechanism} release of tree {entry.tree}, level "
                             f"{entry.level}: {error}") from None

    def _stream(self, kernel, arguments, out):
        """Run ``kernel(*arguments, words, state, start, out)`` over all of ``out``, extending
        its word stream whenever it runs out (the protocol of :mod:`dpboost._samplers`)."""
        words = self.words(self.WORDS[kernel] * out.shape[0] + 64)
        state = np.zeros(3, dtype=np.int64)
        done = kernel(*arguments, words, state, 0, out)
        while done < out.shape[0]:
            more = self.words(max(words.size // 8, 1024))
            words = np.concatenate([words[state[START]:], more])
            state[:] = 0
            done = kernel(*arguments, words, state, done, out)
        return out

    def _add(self, kernel, values, lattice):
        step, integer_scale = lattice
        values = np.asarray(values, dtype=np.float64)
        noise = self._stream(kernel, (integer_scale,), np.empty(values.size, dtype=np.int64))
        return lattice_sum(lattice_round(values, step).ravel(), noise, step).reshape(values.shape)

    def exponential(self, utilities, scale, sensitivity):
        """Row-wise index drawn exactly with probability proportional to ``exp(u / scale)`` on
        the lattice (:func:`dpboost._samplers.exponential_rows`).

        Only differences matter: each utility's lattice point ``n_j`` is compared with its
        row's largest ``m`` as the exact integer gap ``m - n_j``, capped at ``2**62`` steps
        (:func:`lattice_gaps`), whatever the utilities' magnitude. The draw is then exactly the
        exponential mechanism of the utilities ``max(n_j, m - 2**62)``, which one record moves
        by no more than it moves ``n`` (a maximum of such functions, in the sup norm): the
        privacy argument holds unchanged. Its law differs from that of ``n`` only for candidates
        more than ``2**62`` steps, hence ``2**62 / LIMIT = 2**14`` integer scales, below the
        best, each of probability below ``exp(-2**14)`` times the best's under either law.
        """
        step, integer_scale = self._lattice_of("exponential", scale, sensitivity, 1)
        gaps = lattice_gaps(utilities, step)
        out = np.empty(gaps.shape[0], dtype=np.int64)
        return self._stream(exponential_rows, (-gaps, integer_scale), out)

    def laplace(self, values, scale, sensitivity):
        """``values + Laplace(scale)`` as an exact discrete Laplace on the lattice.

        ``values`` of shape (n_nodes,), (n_nodes, n_statistics) or (n_nodes, n_groups,
        n_cells), one row per node (:func:`moved_coordinates`); ``sensitivity`` an L1 bound
        per row."""
        return self._add(discrete_laplace_noise, values,
                         self._lattice_of("laplace", scale, sensitivity,
                                          moved_coordinates(values)))

    def gaussian(self, values, scale, sensitivity):
        """``values + N(0, scale^2)`` as an exact discrete Gaussian on the lattice.

        ``values`` as :meth:`laplace`'s; ``sensitivity`` an L2 bound per row."""
        return self._add(discrete_gaussian_noise, values,
                         self._lattice_of("gaussian", scale, sensitivity,
                                          moved_coordinates(values)))

    def uniform(self, n):
        """``n`` independent uniform floats in [0, 1) on a 2**-53 grid."""
        return (self.words(n) >> np.uint64(11)) * 2.0**-53


def moved_coordinates(values):
    """``k``, how many coordinates of one row of ``values`` one record moves, read from the
    shape: 1 for shape (n_nodes,) (a value per node); ``n_statistics`` for (n_nodes,
    n_statistics) (any coordinate of the row); ``n_groups`` for (n_nodes, n_groups, n_cells),
    a histogram per group of which one record moves one cell (the sketches: a group per
    feature).

    Returns
    -------
    k : int
    """
    return 1 if np.ndim(values) < 2 else np.shape(values)[1]


def lattice_round(values, step):
    """``values`` rounded to the nearest multiples of ``step`` (ties to even), exactly and
    without a clip: ``step * rint(values / step)``.

    Dividing or multiplying by the power of two ``step`` is exact in float64, and so is
    ``rint``. From ``2**52`` steps on, a float64 is already a multiple of ``step`` (its last
    bit is worth a step or more), so such values are returned as they are (their quotient may
    overflow). NaN is rounded as 0 and ±inf as the largest finite floats (``numpy.nan_to_num``).

    Parameters
    ----------
    values : array_like of float
    step : float
        A power of two.

    Returns
    -------
    rounded : ndarray of the shape of ``values``, dtype=float64
    """
    values = np.nan_to_num(np.asarray(values, dtype=np.float64))
    with np.errstate(over="ignore"):
        rounded = np.rint(values / step) * step
    return np.where(np.abs(values) < 2.0**52 * step, rounded, values)


def lattice_sum(rounded, noise, step):
    """``rounded + noise * step`` rounded once to float64 (to nearest, ties to even): a function
    of the exact noisy lattice point ``rounded / step + noise`` alone.

    ``noise * step`` is exact for ``|noise| <= 2**53`` (an integer times a power of two), and
    an IEEE 754 addition rounds the exact sum once. A larger ``noise`` (a discrete Laplace draw
    beyond ``2**53`` has probability below ``exp(-32)``, about ``10**-14``, at the largest
    integer scale) is added in rational arithmetic and rounded once by Python's correctly
    rounded integer division: the same function of the exact sum.

    Parameters
    ----------
    rounded : ndarray of shape (n,), dtype=float64
        Multiples of ``step`` (:func:`lattice_round`).
    noise : ndarray of shape (n,), dtype=int64
    step : float
        A power of two.

    Returns
    -------
    released : ndarray of shape (n,), dtype=float64
    """
    released = rounded + noise * step
    for i in np.flatnonzero(np.abs(noise) > 2**53):
        released[i] = float(Fraction(rounded[i]) + int(noise[i]) * Fraction(step))
    return released


def lattice_gaps(utilities, step):
    """How many lattice steps each utility's lattice point lies below the largest of its row,
    exactly, capped at ``2**62``.

    The lattice points ``n = rint(u / step)`` are float64 integers, exact at any magnitude
    (:func:`lattice_round`; NaN as 0, ±inf as the largest finite floats). A float64
    subtraction ``high = m - n`` from the row's largest ``m`` rounds, and Knuth's TwoSum (The
    Art of Computer Programming, vol. 2, 4.2.2, Theorem B) recovers its error exactly:
    ``high + low == m - n``, ``|low|`` at most half a unit in the last place of ``high``
    (``2**9`` below ``2**62``), so both convert to int64 exactly. A gap whose rounded value
    exceeds ``2**62`` exceeds it exactly (rounding is monotone), also when the subtraction
    overflows.

    Parameters
    ----------
    utilities : ndarray of shape (n_rows, n), dtype=float64
    step : float
        A power of two.

    Returns
    -------
    gaps : ndarray of shape (n_rows, n), dtype=int64
        In ``[0, 2**62]``; 0 at each row's largest.
    """
    utilities = np.ascontiguousarray(utilities, dtype=np.float64)
    gaps = np.empty(utilities.shape, dtype=np.int64)
    # One pass per row in a kernel: the exponential mechanism computes this at every level of
    # every tree with split selection (a tenth of a 30,000-row fit as NumPy passes).
    _lattice_gap_rows(utilities, float(step), gaps)
    return gaps


@njit(cache=True)
def _lattice_gap_rows(utilities, step, gaps):
    """:func:`lattice_gaps` into ``gaps``: IEEE operations in the order NumPy's would run them
    (no fast-math), a row at a time."""
    largest = np.finfo(np.float64).max
    points = np.empty(utilities.shape[1])  # one row's lattice points, until its largest is known
    for i in range(utilities.shape[0]):
        top = -np.inf
        for j in range(utilities.shape[1]):
            value = utilities[i, j] / step
            if np.isnan(value):
                value = 0.0
            elif np.isinf(value):
                value = largest if value > 0 else -largest
            point = np.rint(value)
            points[j] = point
            top = max(top, point)
        for j in range(utilities.shape[1]):
            point = points[j]
            high = top - point
            if high <= MAX_MAGNITUDE:
                back = high - top
                low = (top - (high - back)) - (point + back)
                gaps[i, j] = min(np.int64(high) + np.int64(low), MAX_MAGNITUDE)
            else:  # beyond the cap, or an overflow to inf
                gaps[i, j] = MAX_MAGNITUDE


def _os_words(n):
    """``n`` uniform 64-bit words from the operating system's CSPRNG (a writable array)."""
    return np.frombuffer(bytearray(os.urandom(8 * n)), dtype=np.uint64)


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
