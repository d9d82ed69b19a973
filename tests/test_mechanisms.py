"""Statistical tests of the mechanisms: fixed seeds, tolerances derived from the number of draws.

Significance level 1e-4 throughout: with fixed seeds each test is deterministic, and a correct
mechanism fails such a test with probability 1e-4 under a new seed. Each test has a negative control
(a mis-calibrated mechanism) that the same test rejects, so none of them can pass vacuously.
"""

import math

import numpy as np
import pytest
from scipy import stats

from dpboost._accounting import LedgerEntry, PrivacyLedger
from dpboost._mechanisms import (
    exponential_mechanism,
    gaussian_mechanism,
    laplace_mechanism,
    partition_records,
    uniform_choice,
)
from dpboost._noise import NumpyNoise, SecureNoise, make_noise
from dpboost._records import POSITION_STREAM

N = 200_000
ALPHA = 1e-4
SCOPE = {"group": 0, "tree": 3, "level": 1}


def _select(utilities, epsilon, sensitivity, seed=0):
    ledger = PrivacyLedger()
    choice = exponential_mechanism(np.tile(utilities, (N, 1)), epsilon=epsilon,
                                   sensitivity=sensitivity, noise=make_noise(seed),
                                   ledger=ledger, scope=SCOPE)
    return np.bincount(choice, minlength=utilities.size), ledger


def _exp_probabilities(utilities, epsilon, sensitivity):
    w = np.exp(epsilon * (utilities - utilities.max()) / (2 * sensitivity))
    return w / w.sum()


UTILITIES = np.array([0.0, -3.0, 2.5, 2.5, 10.0, 7.0, -20.0])


def test_exponential_mechanism_frequencies():
    eps, delta = 0.8, 3.0
    counts, _ = _select(UTILITIES, eps, delta)
    p = _exp_probabilities(UTILITIES, eps, delta)
    assert stats.chisquare(counts, N * p).pvalue > ALPHA


def test_exponential_mechanism_test_rejects_halved_sensitivity():
    counts, _ = _select(UTILITIES, 0.8, 1.5)  # a mechanism calibrated to half the sensitivity
    p = _exp_probabilities(UTILITIES, 0.8, 3.0)
    assert stats.chisquare(counts, N * p).pvalue < ALPHA


def test_every_candidate_keeps_positive_probability():
    # Rule 2: a far worse candidate is still chosen, at its exact (small) probability.
    utilities = np.array([0.0, -4000.0])
    eps, delta = 0.003, 3.0
    counts, _ = _select(utilities, eps, delta)
    p = _exp_probabilities(utilities, eps, delta)[1]
    assert 0.1 < p < 0.2
    assert abs(counts[1] - N * p) < 5 * np.sqrt(N * p * (1 - p))


def _pooled_chisquare(counts, expected):
    # Cells expected below 5 are pooled into one: the chi-square approximation's condition.
    small = expected < 5
    if small.any():
        counts = np.append(counts[~small], counts[small].sum())
        expected = np.append(expected[~small], expected[small].sum())
    return stats.chisquare(counts, expected).pvalue


def test_numpy_sampler_frequencies_on_both_paths():
    # One call, two kinds of rows: flat rows are accepted by the rejection trials; geometric rows
    # (mean weight 1/25) fail all 40 trials about 20 % of the time and draw by inverse CDF. The
    # geometric row's tail, down to weight e^-39, is pooled.
    scale = 2.0
    flat = np.linspace(0.0, -2.0, 40)
    geometric = -scale * np.arange(40.0)
    n = N // 2
    choice = NumpyNoise(np.random.default_rng(4)).exponential(
        np.tile(np.stack([flat, geometric]), (n, 1)), scale, 1.0).reshape(n, 2)
    for column, u in zip(choice.T, (flat, geometric)):
        counts = np.bincount(column, minlength=u.size)
        assert _pooled_chisquare(counts, n * _exp_probabilities(u, 2.0, scale)) > ALPHA
        # Negative control: the distribution of a sampler at twice the scale is rejected.
        assert _pooled_chisquare(counts, n * _exp_probabilities(u, 1.0, scale)) < ALPHA


def test_non_private_selection_is_first_argmax():
    ledger = PrivacyLedger()
    choice = exponential_mechanism(np.array([[1.0, 5.0, 5.0, 2.0], [3.0, 0.0, 3.0, 3.0]]),
                                   epsilon=np.inf, sensitivity=3.0, noise=make_noise(0),
                                   ledger=ledger, scope=SCOPE)
    np.testing.assert_array_equal(choice, [1, 0])
    assert ledger.entries[0].mechanism == "argmax"


def test_exponential_mechanism_writes_one_entry():
    _, ledger = _select(UTILITIES, 0.8, 3.0)
    assert ledger.entries == [LedgerEntry(mechanism="exponential", epsilon=0.8, sensitivity=3.0,
                                          n_nodes=N, **SCOPE)]


def _laplace_noise(scale_factor=1.0, seed=1):
    values = np.linspace(-1, 1, N)
    ledger = PrivacyLedger()
    released = laplace_mechanism(values, epsilon=0.5 / scale_factor, sensitivity=0.9,
                                 noise=make_noise(seed), ledger=ledger, scope=SCOPE)
    return released - values, ledger


def test_laplace_noise_has_scale_sensitivity_over_epsilon():
    noise, ledger = _laplace_noise()
    scale = 0.9 / 0.5
    assert stats.kstest(noise, stats.laplace(scale=scale).cdf).pvalue > ALPHA
    # E|noise| = scale, standard deviation of |noise| = scale: 5 standard errors.
    assert abs(np.abs(noise).mean() - scale) < 5 * scale / np.sqrt(N)
    assert ledger.entries == [LedgerEntry(mechanism="laplace", epsilon=0.5, sensitivity=0.9,
                                          n_nodes=N, **SCOPE)]


def test_laplace_test_rejects_wrong_scale():
    noise, _ = _laplace_noise(scale_factor=2.0)
    assert stats.kstest(noise, stats.laplace(scale=0.9 / 0.5).cdf).pvalue < ALPHA


def test_non_private_leaves_are_exact_copies():
    values = np.array([0.25, -0.5])
    ledger = PrivacyLedger()
    released = laplace_mechanism(values, epsilon=np.inf, sensitivity=0.9,
                                 noise=make_noise(0), ledger=ledger, scope=SCOPE)
    np.testing.assert_array_equal(released, values)
    assert released is not values and ledger.entries[0].mechanism == "exact"


def _coins(noise, n):
    """The coins of rows 0 .. n - 1 in one stream of a fit drawn from ``noise``."""
    return noise.coins().uniforms((POSITION_STREAM, 0, 0), 0, n)


@pytest.mark.parametrize("shares", [np.array([0.5, 0.25, 0.125]),
                                    0.1 * 0.9 ** np.arange(5) / (1 - 0.9**5)])
def test_partition_frequencies(shares):
    position = partition_records(_coins(make_noise(2), N), shares)
    counts = np.bincount(position, minlength=shares.size + 1)
    expected = np.append(shares, max(0.0, 1.0 - shares.sum())) * N
    nonzero = expected > 0
    assert counts[~nonzero].sum() == 0
    assert stats.chisquare(counts[nonzero], expected[nonzero]).pvalue > ALPHA


def test_partition_of_a_record_ignores_the_others():
    # Parallel composition under add/remove needs each record's tree to be drawn independently:
    # adding a record must not move any other record.
    shares = np.array([0.4, 0.3, 0.2])
    a = partition_records(_coins(make_noise(3), 1000), shares)
    b = partition_records(_coins(make_noise(3), 1001), shares)
    np.testing.assert_array_equal(a, b[:1000])


def test_make_noise():
    np.testing.assert_array_equal(make_noise(5).uniform(4), make_noise(5).uniform(4))
    assert not np.array_equal(make_noise(5).uniform(4), make_noise(6).uniform(4))
    g = np.random.default_rng(0)
    assert make_noise(g).generator is g
    r1 = make_noise(np.random.RandomState(0)).uniform(3)
    assert np.array_equal(r1, make_noise(np.random.RandomState(0)).uniform(3))
    assert isinstance(make_noise(None), SecureNoise) and isinstance(make_noise(1), NumpyNoise)


# The secure path: exact samplers on a lattice (tests/test_samplers.py tests their laws word by
# word), here through the mechanisms. The words are seeded, so that each test is deterministic
# like the numpy tests above: only the word source differs from a release's, and
# test_secure_uniform_and_partition checks that source (os.urandom's bytes as uint64 words) on
# seeded bytes.
N_SECURE = 20_000


def _seeded_secure(seed):
    return SecureNoise(words=np.random.default_rng(seed).bit_generator.random_raw)


def test_secure_exponential_mechanism_frequencies():
    eps, delta = 0.8, 3.0
    utilities = UTILITIES[:4]
    choice = exponential_mechanism(np.tile(utilities, (N_SECURE, 1)), epsilon=eps,
                                   sensitivity=delta, noise=_seeded_secure(11),
                                   ledger=PrivacyLedger(), scope=SCOPE)
    counts = np.bincount(choice, minlength=utilities.size)
    assert stats.chisquare(counts, N_SECURE * _exp_probabilities(utilities, eps, delta)
                           ).pvalue > ALPHA
    # Negative control: the law at twice the epsilon is rejected.
    assert stats.chisquare(counts, N_SECURE * _exp_probabilities(utilities, 2 * eps, delta)
                           ).pvalue < ALPHA


def test_secure_laplace_scale_and_lattice():
    noise = _seeded_secure(12)
    values = np.full(N_SECURE, 0.3)
    released = laplace_mechanism(values, epsilon=0.5, sensitivity=0.9, noise=noise,
                                 ledger=PrivacyLedger(), scope=SCOPE)
    assert stats.kstest(released - 0.3, stats.laplace(scale=1.8).cdf).pvalue > ALPHA
    assert stats.kstest(released - 0.3, stats.laplace(scale=3.6).cdf).pvalue < ALPHA
    # Every released value is a multiple of the lattice step, whatever the input's low bits.
    step, _ = noise.lattice(1.8, 0.9, noise.LAPLACE_BITS, 1, noise.LIMIT)
    assert (np.mod(released, step) == 0).all()


def test_secure_uniform_and_partition(seeded_os_words):
    # SecureNoise() reads its words from os.urandom: here seeded bytes in its place, so that the
    # conversion of the bytes to words is tested and the verdict is deterministic.
    noise = SecureNoise()
    u = noise.uniform(N)
    assert seeded_os_words.reads == [8 * N]  # one 64-bit word per uniform
    assert ((u >= 0) & (u < 1)).all()
    assert stats.kstest(u, stats.uniform.cdf).pvalue > ALPHA
    assert not np.array_equal(noise.uniform(8), noise.uniform(8))
    shares = np.array([0.5, 0.25, 0.125])
    counts = np.bincount(partition_records(_coins(noise, N), shares), minlength=4)
    assert stats.chisquare(counts, N * np.array([0.5, 0.25, 0.125, 0.125])).pvalue > ALPHA


@pytest.mark.parametrize("secure", [False, True])
def test_gaussian_mechanism_scale_and_ledger(secure):
    noise = _seeded_secure(13) if secure else make_noise(3)
    n = N_SECURE if secure else N
    values = np.zeros((n // 2, 2))
    ledger = PrivacyLedger()
    released = gaussian_mechanism(values, noise_multiplier=2.0, sensitivity=1.5, noise=noise,
                                  ledger=ledger, scope=SCOPE)
    assert released.shape == values.shape
    assert stats.kstest(released.ravel(), stats.norm(scale=3.0).cdf).pvalue > ALPHA
    assert stats.kstest(released.ravel(), stats.norm(scale=4.0).cdf).pvalue < ALPHA
    assert ledger.entries == [LedgerEntry(mechanism="gaussian", epsilon=np.inf, sensitivity=1.5,
                                          n_nodes=n // 2, noise_multiplier=2.0, **SCOPE)]


@pytest.mark.parametrize("secure", [False, True])
def test_gaussian_release_of_sensitivity_zero_is_the_constant_zero(secure):
    noise = SecureNoise() if secure else make_noise(3)
    released = gaussian_mechanism(np.array([[-0.5, 2.0]]), noise_multiplier=2.0, sensitivity=0.0,
                                  noise=noise, ledger=PrivacyLedger(), scope=SCOPE)
    np.testing.assert_array_equal(released, [[0.0, 0.0]])
    assert not np.signbit(released).any()


def test_uniform_choice_frequencies_and_ledger():
    ledger = PrivacyLedger()
    choice = uniform_choice(N, 7, noise=make_noise(5), ledger=ledger, scope=SCOPE)
    counts = np.bincount(choice, minlength=7)
    assert counts.size == 7
    assert stats.chisquare(counts).pvalue > ALPHA
    assert ledger.entries == [LedgerEntry(mechanism="uniform", epsilon=0.0, sensitivity=0.0,
                                          n_nodes=N, **SCOPE)]


# The secure path far from 0 and at the edges of the samplers' range: the lattice point of a
# value is exact at any magnitude (no clip), and plans beyond the samplers' integer scales are
# refused.

@pytest.mark.parametrize("kind, law", [("laplace", stats.laplace), ("gaussian", stats.norm)])
def test_secure_release_of_a_huge_value_is_not_clipped(kind, law):
    # 10**12 noise scales: beyond 2**61 lattice steps (2**21 Laplace scales, 2**37 Gaussian
    # scales), where values used to be clipped. The noise around the exact value is the planned
    # law (the difference of two floats this close is exact).
    scale = 1.5
    value = 1e12 * scale
    released = getattr(_seeded_secure(1), kind)(np.full((N_SECURE, 1), value), scale, 0.5)
    noise = released.ravel() - value
    assert stats.kstest(noise, law(scale=scale).cdf).pvalue > ALPHA
    assert stats.kstest(noise, law(scale=1.15 * scale).cdf).pvalue < ALPHA


@pytest.mark.parametrize("epsilon", [2.0, 1e12])
def test_secure_leaves_of_a_billion_records(epsilon):
    # An average leaf's (gradient sum, count) over 10**9 records: at any epsilon the release is
    # the exact pair plus the noise, rounded once to float64 (beyond 2**53 lattice steps the
    # float's own rounding is coarser than the noise). Laplace noise beyond 40 scales has
    # probability e^-40 per value.
    values = np.tile([[-0.5e9, 1e9]], (1000, 1))
    released = laplace_mechanism(values, epsilon=epsilon, sensitivity=2.0,
                                 noise=_seeded_secure(2), ledger=PrivacyLedger(), scope=SCOPE)
    assert (np.abs(released - values) <= 40 * 2.0 / epsilon + np.abs(np.spacing(values))).all()


def _softmax(u):
    w = np.exp(u - u.max())
    return w / w.sum()


@pytest.mark.parametrize("base", [2.0**40, -(2.0**40)])
def test_secure_exponential_mechanism_far_from_zero(base):
    # Utilities about 10**12 noise scales from 0, a few scales apart: only their differences
    # matter. Clipped to 2**61 lattice steps (2**25 scales) they used to be all equal, and every
    # candidate equally likely.
    offsets = np.array([0.0, -0.5, -1.0, -2.0, -4.0])
    n = N_SECURE
    choice = _seeded_secure(3).exponential(np.tile(base + offsets, (n, 1)), 1.0, 0.5)
    counts = np.bincount(choice, minlength=offsets.size)
    assert stats.chisquare(counts, n * _softmax(offsets)).pvalue > ALPHA
    # Negative controls: the uniform law, and the law at a 15 % larger scale.
    assert stats.chisquare(counts).pvalue < ALPHA
    assert stats.chisquare(counts, n * _softmax(offsets / 1.15)).pvalue < ALPHA


def test_secure_fit_of_a_constant_target_with_large_leaf_sums():
    # 2,000 records at epsilon 1e5: the average leaf's count lies beyond 2**61 lattice steps.
    # The leaf is the exact mean up to the noise, as with numpy noise; the clip used to
    # predict 0.015 for a constant 0.25.
    from dpboost import DPGBRegressor

    X = np.random.default_rng(0).uniform(-1, 1, size=(2000, 1))
    y = np.full(2000, 0.25)
    est = DPGBRegressor(epsilon=1e5, delta=0.0, leaf_noise="average", n_estimators=1,
                        max_depth=1, learning_rate=1.0, feature_bounds=(-1.0, 1.0),
                        target_bounds=(0.0, 1.0), split_candidates="uniform",
                        random_state=_seeded_secure(4)).fit(X, y)
    np.testing.assert_allclose(est.predict(X[:5]), 0.25, atol=1e-3)


def test_secure_laplace_and_exponential_refuse_integer_scales_near_the_saturation():
    # The discrete Laplace saturates at 2**62: at an integer scale of 2**61 (a per-release
    # epsilon near 1e-18) a sixth of the draws of one centre sat at the wall, none of its
    # neighbour's. Integer scales from 2**48 on (epsilon below about 3.6e-15) are refused.
    noise = SecureNoise()
    assert SecureNoise.lattice(1.0, 1e-14, SecureNoise.LAPLACE_BITS, 1,
                               SecureNoise.LIMIT)[1] < 2**48
    with pytest.raises(ValueError, match=r"too large for the exact samplers \(integer scale "
                                         r"\d+ with a rounding allowance of 1, limit 2814"):
        noise.laplace(np.zeros(3), 1.0, 1e-15)
    with pytest.raises(ValueError, match="too large for the exact samplers"):
        noise.exponential(np.zeros((1, 3)), 1.0, 0.5e-15)


def test_gaussian_allowance_counts_the_coordinates_one_record_moves():
    # A Hessian sketch of 150 features x 255 bins at noise multiplier 2e4 (epsilon near 1e-3):
    # one record moves one bin per feature, 150 counts, so the rounding allowance is
    # ceil(sqrt(150)) = 13 steps, read from the shape (1, 150, 255). A flat row of 38,250
    # values allows ceil(sqrt(38250)) = 196 steps: 23 % more noise than planned.
    # A scale of 2**18, the worst place on the lattice: the step is 2**-24 of the scale.
    sigma, scale = 2e4, 2.0**18
    sensitivity = scale / sigma
    step, planned = SecureNoise.lattice(scale, sensitivity, SecureNoise.GAUSSIAN_BITS, 13,
                                        SecureNoise.GAUSSIAN_LIMIT)
    flat = SecureNoise.lattice(scale, sensitivity, SecureNoise.GAUSSIAN_BITS, 196,
                               SecureNoise.GAUSSIAN_LIMIT)[1]
    assert planned * step < 1.016 * scale and flat * step > 1.23 * scale
    released = _seeded_secure(5).gaussian(np.zeros((20, 150, 255)), scale, sensitivity)
    # The standard deviation's relative standard error is 1 / sqrt(2 n): 5 of them.
    assert abs(released.std() / (planned * step) - 1) < 5 / math.sqrt(2 * released.size)


def test_check_refuses_a_planned_release_the_samplers_cannot_draw():
    entry = LedgerEntry(mechanism="gaussian", epsilon=np.inf, sensitivity=1.0, group=-2,
                        tree=-1, level=0, n_nodes=1, noise_multiplier=1e6)
    SecureNoise.check(entry, 300)  # 18 steps of allowance: an integer scale below 2**26
    with pytest.raises(ValueError, match=r"the gaussian release of tree -1, level 0: noise "
                                         r"scale 1000000.0 over sensitivity 1.0 is too large"):
        SecureNoise.check(entry, 255 * 300)
    # Releases without noise pass whatever their parameters.
    SecureNoise.check(LedgerEntry(mechanism="exact", epsilon=np.inf, sensitivity=1.0, group=0,
                                  tree=0, level=1, n_nodes=2), 10**9)
