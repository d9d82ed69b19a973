"""Exact samplers on the integers, driven by a stream of uniform 64-bit words.

Canonne, Kamath & Steinke (2020), "The Discrete Gaussian for Differential Privacy" (NeurIPS),
Algorithms 1-3: Bernoulli(exp(-gamma)) for rational gamma, the discrete Laplace and the discrete
Gaussian, and the exponential mechanism over integer utilities by rejection from the uniform
proposal. No probability is ever a float: every decision compares a uniform integer with an
integer, so a sample's law is exactly the stated one (no floating-point artefact in the sense of
Mironov 2012). ``_mechanisms.SecureNoise`` rounds values to the lattice, feeds the operating
system's randomness, and adds the integer noise drawn here to the lattice points exactly; this
module does not draw randomness itself.

The stream protocol. A kernel reads ``words[state[POS]]`` and advances ``state[POS]``; at the
start of every element it stores ``state[START] = state[POS]``. A kernel that runs out of words
sets ``state[EXHAUSTED]``, from then on every uniform draw returns its largest value and every
Bernoulli draw False (so every loop ends), and it returns the index of the unfinished element
without writing it. The caller appends fresh words to ``words[state[START]:]`` and calls again
from that element: each element is a deterministic function of the words from its start, so the
result is the one an endless stream would give.

Every kernel is serial: the stream is one sequence. ``cache=True`` throughout.
"""

import numpy as np
from numba import njit

#: Indices into ``state`` (int64 array of length 3).
POS, EXHAUSTED, START = 0, 1, 2
#: Largest magnitude a sample takes, and the largest gap of a row of utilities (differences of
#: two stay in int64).
MAX_MAGNITUDE = 2**62
#: Constant arguments as typed values: a bare literal argument makes Numba compile (and cache)
#: one more version of the callee per literal value.
ONE, TWO = np.int64(1), np.int64(2)
SQUARED, NOT_SQUARED = np.bool_(True), np.bool_(False)


@njit(cache=True)
def _uniform(m, words, state):
    """Uniform integer in ``[0, m)``, ``1 <= m < 2**63``, exact: a word ``w`` is kept when
    ``w >= 2**64 mod m`` (the kept range holds a whole multiple of ``m`` words) and gives
    ``w mod m``. Once the stream is exhausted: ``m - 1``."""
    if m == 1:
        return 0
    mu = np.uint64(m)
    floor = (np.uint64(0) - mu) % mu
    while True:
        p = state[POS]
        if p >= words.size:
            state[EXHAUSTED] = 1
            return m - 1
        state[POS] = p + 1
        w = words[p]
        if w >= floor:
            return np.int64(w % mu)


@njit(cache=True)
def _bernoulli_exp(r, b, squared, words, state):
    """Bernoulli(exp(-x)) for ``x = r / b`` (``squared`` False) or ``x = (r / b)**2 / 2``
    (``squared`` True), ``0 <= r <= b < 2**63``; False once the stream is exhausted.

    CKS Algorithm 1 for ``x`` in [0, 1]: ``K = 1``; while Bernoulli(x / K): ``K += 1``; return
    ``K`` odd. Bernoulli(x / K) is the conjunction of independent draws whose probabilities
    multiply to ``x / K``: Bernoulli(r / b) [twice and Bernoulli(1/2) for the square], then
    Bernoulli(1 / K). Integers up to ``b`` only: no product of two large numbers is formed.
    """
    k = ONE
    while True:
        if _uniform(b, words, state) >= r:
            break
        if squared and (_uniform(b, words, state) >= r or _uniform(TWO, words, state) != 0):
            break
        if _uniform(k, words, state) != 0:
            break
        k += 1
    return k % 2 == 1 and state[EXHAUSTED] == 0


@njit(cache=True)
def _bernoulli_exp_integer(q, words, state):
    """Bernoulli(exp(-q)) for an integer ``q >= 0``: ``q`` independent Bernoulli(exp(-1))
    (CKS Algorithm 1, gamma > 1), stopping at the first failure."""
    for _ in range(q):
        if not _bernoulli_exp(ONE, ONE, NOT_SQUARED, words, state):
            return False
    return state[EXHAUSTED] == 0


@njit(cache=True)
def _discrete_laplace(t, x_max, words, state):
    """``Y`` with ``P(Y = y)`` proportional to ``exp(-|y| / t)``, integer ``t >= 1``, except that
    ``|Y|`` saturates at ``x_max <= 2**62``.

    CKS Algorithm 2 with ``s = 1``: ``U`` uniform in ``[0, t)`` kept with probability
    ``exp(-U / t)``, ``V`` geometric (count of Bernoulli(exp(-1)) successes), ``X = U + t V``, a
    fair sign, and ``-0`` rejected. ``|Y| >= x_max`` needs ``V >= x_max / t - 1``, of
    probability at most ``2 exp(1 - x_max / t)`` (``P(V >= k) = exp(-k)``, and the rejection of
    ``-0`` at most doubles it): below ``exp(2 - 2**14) < 10**-7114`` for ``x_max = 2**62`` and
    ``t < 2**48``, the scales ``SecureNoise`` uses. Only there does the law differ from the
    discrete Laplace's.
    """
    v_max = x_max // t
    while state[EXHAUSTED] == 0:
        u = _uniform(t, words, state)
        if not _bernoulli_exp(u, t, NOT_SQUARED, words, state):
            continue
        v = 0
        while _bernoulli_exp(ONE, ONE, NOT_SQUARED, words, state):
            if v < v_max:
                v += 1
        x = min(u + t * v, x_max)
        negative = _uniform(TWO, words, state) == 1
        if negative and x == 0:
            continue
        return -x if negative else x
    return 0


@njit(cache=True)
def _discrete_gaussian(s, words, state):
    """``Y`` with ``P(Y = y)`` proportional to ``exp(-y^2 / (2 s^2))``, integer
    ``1 <= s < 2**26``.

    CKS Algorithm 3 with ``sigma = s``: a discrete Laplace proposal of scale ``t = s + 1``,
    accepted with probability ``exp(-gamma)``, ``gamma = (|Y| - s^2/t)^2 / (2 s^2)
    = (X / b)^2 / 2`` for ``X = ||Y| t - s^2|`` and ``b = s t``. With ``X = q b + r``,
    ``gamma = q^2/2 + q r / b + (r/b)^2 / 2``, drawn as independent Bernoulli(exp(-.)) of each
    term (``exp(-q r / b)`` as ``q`` draws of ``exp(-r / b)``), all on integers below ``2**62``.
    A proposal with ``|Y| t > 2**62`` is rejected: the law is the discrete Gaussian conditioned
    on ``|Y| <= 2**62 / t``, beyond ``2**62 / (s (s + 1)) - 1 > 2**10 - 1`` standard deviations
    for ``s < 2**26``, whose missing mass is below ``exp(-2**18)`` (docs/privacy.md, Secure
    noise).
    """
    t = s + 1
    b = s * t
    y_max = MAX_MAGNITUDE // t
    while state[EXHAUSTED] == 0:
        y = _discrete_laplace(t, y_max + 1, words, state)
        a = abs(y)
        if a > y_max:
            continue
        x = abs(a * t - s * s)
        q, r = x // b, x % b
        if not _bernoulli_exp_integer(q * q // 2, words, state):
            continue
        if q % 2 == 1 and not _bernoulli_exp(ONE, TWO, NOT_SQUARED, words, state):
            continue
        accepted = True
        for _ in range(q):
            if not _bernoulli_exp(r, b, NOT_SQUARED, words, state):
                accepted = False
                break
        if accepted and _bernoulli_exp(r, b, SQUARED, words, state):
            return y
    return 0


@njit(cache=True)
def discrete_gaussian_noise(s, words, state, start, out):
    """``out[i] = Y_i``, independent discrete Gaussians of scale ``s``, for ``i >= start``;
    returns the first unfinished index (``out.size`` when done).

    The noise alone: the caller adds it to its lattice points exactly (``SecureNoise``), so no
    value to release ever enters an int64 here.

    Parameters
    ----------
    s : int
        In ``[1, 2**26)``.
    words : ndarray of shape (n_words,), dtype=uint64
    state : ndarray of shape (3,), dtype=int64
        The stream state (module docstring).
    start : int
    out : ndarray of shape (n,), dtype=int64
        Magnitudes at most ``2**62 / (s + 1)``.
    """
    for i in range(start, out.size):
        state[START] = state[POS]
        y = _discrete_gaussian(s, words, state)
        if state[EXHAUSTED]:
            return i
        out[i] = y
    return out.size


@njit(cache=True)
def discrete_laplace_noise(t, words, state, start, out):
    """``out[i] = Y_i``, independent discrete Laplace of scale ``t``, ``1 <= t < 2**48``,
    ``|Y_i|`` saturated at ``2**62`` (reached with probability below ``10**-7114``:
    :func:`_discrete_laplace`); otherwise as :func:`discrete_gaussian_noise`."""
    for i in range(start, out.size):
        state[START] = state[POS]
        y = _discrete_laplace(t, np.int64(MAX_MAGNITUDE), words, state)
        if state[EXHAUSTED]:
            return i
        out[i] = y
    return out.size


@njit(cache=True)
def exponential_rows(utilities, scale, words, state, start, out):
    """``out[i] = j`` with probability proportional to ``exp(utilities[i, j] / scale)``, exactly,
    for rows ``i >= start``; returns the first unfinished row.

    Rejection from the uniform proposal: ``j`` uniform, kept with probability
    ``exp(-(max_k u[i, k] - u[i, j]) / scale)`` (an exact Bernoulli of the integer ratio). The
    kept ``j`` has the law ``exp(u_j / scale) / sum_k exp(u_k / scale)``: the exponential
    mechanism itself (McSherry & Talwar 2007), not report-noisy-max with another noise, so its
    bounded-range accounting holds. The expected number of proposals is
    ``n / sum_k exp(-(max - u_k) / scale)``, between 1 and ``n``.

    Parameters
    ----------
    utilities : ndarray of shape (n_rows, n), dtype=int64
        Each row's largest minus its smallest at most ``2**62`` (``SecureNoise`` passes the
        gaps below each row's largest, negated).
    scale : int
        In ``[1, 2**62)``.
    words, state, start
        As :func:`discrete_gaussian_noise`.
    out : ndarray of shape (n_rows,), dtype=int64
    """
    n_rows, n = utilities.shape
    for i in range(start, n_rows):
        state[START] = state[POS]
        top = utilities[i].max()
        while state[EXHAUSTED] == 0:
            j = _uniform(n, words, state)
            gap = top - utilities[i, j]
            if (_bernoulli_exp_integer(gap // scale, words, state)
                    and _bernoulli_exp(gap % scale, scale, NOT_SQUARED, words, state)):
                break
        if state[EXHAUSTED]:
            return i
        out[i] = j
    return n_rows
