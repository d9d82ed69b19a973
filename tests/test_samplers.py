"""The exact samplers of ``_samplers`` and the lattice of ``SecureNoise``.

The kernels are deterministic functions of their word stream, so their laws are tested on seeded
words against the exact probability mass functions, and against OpenDP's samplers (the maintained
reference) by a two-sample test. Significance level 1e-4 (fixed seeds: deterministic tests); every
law test has a negative control, the law at a 15 % larger scale, that the same test rejects.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpboost._noise import SecureNoise, lattice_gaps, lattice_round, lattice_sum
from dpboost._samplers import discrete_gaussian_noise, discrete_laplace_noise, exponential_rows

N = 200_000
ALPHA = 1e-4


def _words(seed, n):
    return np.random.default_rng(seed).bit_generator.random_raw(n)


def _run(kernel, scale, n, seed):
    """``n`` draws of a noise kernel at integer scale ``scale`` from seeded words."""
    out = np.empty(n, dtype=np.int64)
    state = np.zeros(3, dtype=np.int64)
    assert kernel(scale, _words(seed, 400 * n), state, 0, out) == out.size
    return out


def _choose(utilities, scale, seed):
    """The exponential mechanism's choice in every row of ``utilities`` from seeded words."""
    out = np.empty(utilities.shape[0], dtype=np.int64)
    state = np.zeros(3, dtype=np.int64)
    words = _words(seed, 400 * utilities.shape[0])
    assert exponential_rows(utilities, scale, words, state, 0, out) == out.size
    return out


def _pvalue(samples, support, weights):
    """Chi-square p-value of ``samples`` against the law ``weights`` (unnormalised) on
    ``support``; cells expecting fewer than 5 draws, and every value off the support, pooled."""
    expected = samples.size * weights / weights.sum()
    counts = np.array([np.count_nonzero(samples == v) for v in support])
    small = expected < 5
    pooled_count = samples.size - counts[~small].sum()
    pooled_expected = samples.size - expected[~small].sum()
    if pooled_expected < 1e-9:  # nothing to pool: a draw off the support is impossible
        pooled_expected = pooled_count = 0
        small[:] = False
    observed = np.append(counts[~small], pooled_count)
    expected = np.append(expected[~small], pooled_expected)
    keep = expected > 0
    if (observed[~keep] > 0).any():
        return 0.0
    return stats.chisquare(observed[keep], expected[keep] * observed.sum() / expected.sum()
                           ).pvalue


#: kernel, unnormalised law at scale s, support half-width in scales
LAWS = {"gaussian": (discrete_gaussian_noise,
                     lambda y, s: np.exp(-y.astype(float) ** 2 / (2 * s * s)), 12),
        "laplace": (discrete_laplace_noise, lambda y, t: np.exp(-np.abs(y) / t), 25)}


@pytest.mark.parametrize("law, scale", [("gaussian", 1), ("gaussian", 3), ("gaussian", 40),
                                        ("laplace", 1), ("laplace", 4), ("laplace", 100)])
def test_discrete_law(law, scale):
    kernel, weights, width = LAWS[law]
    y = _run(kernel, scale, N, seed=scale)
    support = np.arange(-width * scale, width * scale + 1)
    assert _pvalue(y, support, weights(support, scale)) > ALPHA
    assert _pvalue(y, support, weights(support, 1.15 * scale)) < ALPHA


@pytest.mark.parametrize("scale", [1, 7, 2**40])
def test_exponential_rows_law(scale):
    # Flat, spread and sharply peaked utilities in one call; gaps of whole and fractional scales.
    gaps = np.array([[0, 0, 0, 0], [0, 1, 2, 3], [0, 5, 20, 60]], dtype=np.int64)
    utilities = -(gaps * scale) // 3
    n = N // 4
    choice = _choose(np.tile(utilities, (n, 1)), scale, seed=scale).reshape(n, 3)
    for column, u in zip(choice.T, utilities):
        weights = np.exp((u - u.max()) / scale)
        assert _pvalue(column, np.arange(4), weights) > ALPHA
        if np.ptp(u) > 0:
            assert _pvalue(column, np.arange(4), np.exp((u - u.max()) / (2 * scale))) < ALPHA


def test_discrete_gaussian_at_the_largest_scale():
    # s just below 2**26: the products of the acceptance test stay below 2**62.
    s = 2**26 - 1
    y = _run(discrete_gaussian_noise, s, 20_000, seed=1)
    assert abs(y.std() / s - 1) < 6 / math.sqrt(2 * y.size)
    assert stats.kstest(y / s, stats.norm.cdf).pvalue > ALPHA


def _opendp_samples(kind, scale, n):
    import opendp.prelude as dp

    dp.enable_features("contrib")
    domain = dp.vector_domain(dp.atom_domain(T=int), size=n)
    if kind == "gaussian":
        m = dp.m.make_gaussian(domain, dp.l2_distance(T=int), scale=float(scale))
    else:
        m = dp.m.make_laplace(domain, dp.l1_distance(T=int), scale=float(scale))
    return np.array(m([0] * n))


@pytest.mark.parametrize("kind, kernel, scale", [("gaussian", discrete_gaussian_noise, 3),
                                                 ("laplace", discrete_laplace_noise, 4)])
def test_samplers_agree_with_opendp(kind, kernel, scale):
    n = 20_000
    ours = _run(kernel, scale, n, seed=11)
    theirs = _opendp_samples(kind, scale, n)
    support = np.arange(-10 * scale, 10 * scale + 1)
    table = np.array([[np.count_nonzero(x == v) for v in support] for x in (ours, theirs)])
    table = table[:, table.sum(axis=0) >= 10]
    assert stats.chi2_contingency(table).pvalue > ALPHA
    # Negative control: OpenDP at a 30 % larger scale is told apart.
    wider = _opendp_samples(kind, 1.3 * scale, n)
    table = np.array([[np.count_nonzero(x == v) for v in support] for x in (ours, wider)])
    assert stats.chi2_contingency(table[:, table.sum(axis=0) >= 10]).pvalue < ALPHA


class _Stream:
    """One fixed word stream served in the pieces asked for."""

    def __init__(self, seed):
        self.words, self.pos = _words(seed, 2_000_000), 0

    def __call__(self, n):
        out = self.words[self.pos:self.pos + n].copy()
        self.pos += n
        assert out.size == n, "test stream exhausted"
        return out


@pytest.mark.parametrize("kind", ["gaussian", "laplace"])
def test_releases_add_their_noise_to_the_values(kind):
    centers = np.arange(-5, 5) * 1000.0
    values = np.repeat(centers, 2000).reshape(-1, 1)
    released = getattr(SecureNoise(words=_Stream(7)), kind)(values, 3.0, 1.0).reshape(10, 2000)
    assert (np.abs(np.median(released, axis=1) - centers) <= 2).all()


@pytest.mark.parametrize("release", [
    lambda noise, v: noise.gaussian(v.reshape(-1, 2), 2.0, 1.0),
    lambda noise, v: noise.laplace(v, 2.0, 1.0),
    lambda noise, v: noise.exponential(v.reshape(-1, 50) * 30, 2.0, 1.0),
])
def test_extending_the_stream_gives_the_draws_of_an_endless_one(release, monkeypatch):
    # SecureNoise starts with a buffer sized for the mean use; a release that runs past it is
    # resumed from the unfinished element's first word. With a buffer of one word per element
    # the releases resume hundreds of times and must equal a run that never ran out.
    values = np.random.default_rng(0).normal(size=5000)
    whole = release(SecureNoise(words=_Stream(3)), values)
    monkeypatch.setattr(SecureNoise, "WORDS", dict.fromkeys(SecureNoise.WORDS, 1))
    pieces = release(SecureNoise(words=_Stream(3)), values)
    np.testing.assert_array_equal(whole, pieces)


@pytest.mark.parametrize("release, bits", [
    (lambda noise, v: noise.gaussian(v, 1.5, 0.5), SecureNoise.GAUSSIAN_BITS),
    (lambda noise, v: noise.laplace(v, 1.5, 0.5), SecureNoise.LAPLACE_BITS),
])
def test_a_release_depends_on_the_values_only_through_their_lattice_point(release, bits):
    # Mironov (2012): floating-point noise leaks the low bits of its input. Here values that
    # round to the same lattice point give identical releases from identical words, and every
    # released value is a multiple of the lattice step.
    step = SecureNoise.lattice(1.5, 0.5, bits, 1, SecureNoise.LIMIT)[0]
    values = np.rint(np.array([[0.3, -7.25]]) / step) * step
    nearby = values + np.array([[0.49, -0.3]]) * step
    a = release(SecureNoise(words=_Stream(5)), values)
    b = release(SecureNoise(words=_Stream(5)), nearby)
    np.testing.assert_array_equal(a, b)
    assert (np.mod(a, step) == 0).all()
    # Negative control: a whole step apart is a different release.
    assert not np.array_equal(a, release(SecureNoise(words=_Stream(5)), values + step))


@settings(max_examples=200, deadline=None)
@given(scale=st.floats(1e-6, 1e6), ratio=st.floats(0.05, 1e4),
       bits=st.sampled_from([24, 36, 40]), inflation=st.integers(1, 5100))
def test_lattice_keeps_the_planned_noise_to_sensitivity_ratio(scale, ratio, bits, inflation):
    # On the lattice one record moves a row by sensitivity / g + inflation steps; the integer
    # scale must be at least that times the planned scale / sensitivity, and not much more.
    sensitivity = scale / ratio
    limit = SecureNoise.GAUSSIAN_LIMIT if bits == 24 else SecureNoise.LIMIT
    step = math.ldexp(1.0, math.frexp(scale)[1] - 1 - bits)
    assert 2**bits <= scale / step < 2 ** (bits + 1)
    needed = (Fraction(sensitivity) / Fraction(step) + inflation) * (
        Fraction(scale) / Fraction(sensitivity))
    if math.ceil(needed) + 1 >= limit:
        with pytest.raises(ValueError, match="too large for the exact samplers"):
            SecureNoise.lattice(scale, sensitivity, bits, inflation, limit)
        return
    assert SecureNoise.lattice(scale, sensitivity, bits, inflation, limit)[0] == step
    integer_scale = SecureNoise.lattice(scale, sensitivity, bits, inflation, limit)[1]
    assert needed <= integer_scale <= needed + 2
    assert integer_scale * step <= scale * (1 + 2.0**-bits * (inflation * ratio + 2))


def test_lattice_refuses_scales_outside_the_samplers_range():
    with pytest.raises(ValueError, match="positive noise scale"):
        SecureNoise.lattice(0.0, 1.0, 24, 1, 2**26)
    with pytest.raises(ValueError, match="too large for the exact samplers"):
        SecureNoise.lattice(1.0, 1e-9, 24, 1, 2**26)


def test_discrete_laplace_at_the_largest_scale():
    # t just below SecureNoise.LIMIT: the saturation at 2**62 lies beyond 2**14 scales (a
    # probability below 10**-7114) and the law is the Laplace's.
    t = SecureNoise.LIMIT - 1
    y = _run(discrete_laplace_noise, t, 20_000, seed=2)
    assert np.abs(y).max() < 2**62
    assert stats.kstest(y / t, stats.laplace.cdf).pvalue > ALPHA
    assert stats.kstest(y / t, stats.laplace(scale=1.15).cdf).pvalue < ALPHA


# The arithmetic around the samplers: exact at every magnitude, no clip.
@settings(max_examples=300, deadline=None)
@given(value=st.floats(allow_nan=False, allow_infinity=False), exponent=st.integers(-60, 60))
def test_lattice_round_is_exact_at_every_magnitude(value, exponent):
    step = 2.0**exponent
    rounded = lattice_round(np.array([value]), step)[0]
    # Python's round of a Fraction is to the nearest integer, ties to even, as numpy's rint.
    assert Fraction(rounded) == round(Fraction(value) / Fraction(step)) * Fraction(step)


@settings(max_examples=300, deadline=None)
@given(value=st.floats(-1e30, 1e30), noise=st.integers(-(2**62), 2**62),
       exponent=st.integers(-60, 20))
def test_lattice_sum_rounds_the_exact_noisy_lattice_point_once(value, noise, exponent):
    step = 2.0**exponent
    rounded = lattice_round(np.array([value]), step)
    released = lattice_sum(rounded, np.array([noise], dtype=np.int64), step)[0]
    assert released == float(Fraction(rounded[0]) + noise * Fraction(step))


def test_a_released_value_is_a_function_of_the_noisy_lattice_point():
    # Three (lattice point, draw) pairs of the same exact sum 2**60 + 2**54 + 1, beyond 2**53
    # steps where the float result is rounded: one goes through the rational path (a draw
    # above 2**53), two through the float addition; all give the same float, so the release is
    # post-processing of the noisy lattice point n + Y, not of n and Y apart.
    step = 2.0**-10
    points = np.array([2.0**60, 2.0**60 + 2.0**54, 2.0**60 + 2.0**54 + 256])
    draws = np.array([2**54 + 1, 1, -255], dtype=np.int64)
    released = lattice_sum(points * step, draws, step)
    assert (released == float(2**60 + 2**54 + 1) * step).all()


@settings(max_examples=300, deadline=None)
@given(base=st.floats(-1e200, 1e200), offsets=st.lists(st.integers(-(2**20), 2**20), min_size=1,
                                                       max_size=6),
       spread=st.sampled_from([0, 1, 8, 30, 60]), exponent=st.integers(-40, 40))
def test_lattice_gaps_are_exact(base, offsets, spread, exponent):
    # Utilities a few units in the last place of a large base apart, or far apart: the gaps of
    # their lattice points below the row's largest are the exact integers, capped at 2**62.
    step = 2.0**exponent
    utilities = base + np.array(offsets) * np.spacing(base) * 2.0**spread
    points = [round(Fraction(u) / Fraction(step)) for u in utilities]
    expected = [min(max(points) - p, 2**62) for p in points]
    assert lattice_gaps(utilities.reshape(1, -1), step)[0].tolist() == expected


def test_lattice_gaps_of_many_rows_are_exact_row_by_row():
    # Every row against its own largest, whatever the others hold: random rows at magnitudes
    # from 1e-300 to 1e300 with infinities, NaN and ties, against exact rational arithmetic
    # (NaN as 0, +-inf as the largest floats, rint's ties to even as Python's round).
    rng = np.random.default_rng(0)
    largest = np.finfo(np.float64).max
    utilities = rng.normal(size=(40, 25)) * 10.0 ** rng.integers(-300, 300, size=(40, 1))
    utilities[rng.random(utilities.shape) < 0.05] = np.nan
    utilities[rng.random(utilities.shape) < 0.05] = np.inf
    utilities[rng.random(utilities.shape) < 0.05] = -np.inf
    utilities[-1] = [0.5, 1.5, 2.5, -0.5] * 6 + [3.5]
    step = 2.0**-3
    gaps = lattice_gaps(utilities, step)
    for row, got in zip(utilities, gaps):
        finite = np.nan_to_num(row, nan=0.0, posinf=largest, neginf=-largest)
        points = [round(Fraction(u) / Fraction(step)) for u in finite]
        assert got.tolist() == [min(max(points) - p, 2**62) for p in points]


def test_lattice_gaps_of_opposite_extremes_are_capped():
    # The largest floats of both signs: the subtraction overflows, the gap is capped.
    utilities = np.array([[np.finfo(np.float64).max, -np.finfo(np.float64).max, 0.0, np.nan]])
    assert lattice_gaps(utilities, 2.0**-10).tolist() == [[0, 2**62, 2**62, 2**62]]
