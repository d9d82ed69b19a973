"""Empirical privacy audits on neighbouring datasets D and D' = D + one record.

The auditor runs a mechanism many times on D and on D', maps each output to a discrete event id,
picks on a pilot split the event E (a single id, or a threshold set ``id <= t`` / ``id >= t``)
with the largest empirical ratio P_D[E] / P_D'[E] (both directions), and certifies on held-out runs
the Clopper–Pearson bound ``eps_lb = log(p_low(P_D[E]) / p_high(P_D'[E]))`` at confidence
1 - 1e-6 (each bound at 1 - 5e-7). A correct epsilon-DP mechanism gives ``eps_lb <= epsilon``
except with probability 1e-6; every audit also runs a deliberately broken variant that the auditor
must flag (``eps_lb > epsilon``), so the audits can fail. Seeds are fixed.
"""

import dataclasses
import multiprocessing
import warnings
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest
from scipy import stats

import dpboost._budget as budget_module
import dpboost._candidates as candidates_module
import dpboost._tree_mechanisms as tree_mechanisms_module
from dpboost import DPGBRegressor, ReproducibleNoiseWarning
from dpboost._accounting import (
    LedgerEntry,
    PrivacyLedger,
    compose_pure,
    compose_rdp,
    deamplify_pure,
)
from dpboost._budget import plan_budget
from dpboost._candidates import bounds_histograms, fine_histograms
from dpboost._grower import grow_tree
from dpboost._mechanisms import (
    exponential_mechanism,
    gaussian_mechanism,
    laplace_mechanism,
    poisson_sample,
)
from dpboost._noise import SecureNoise, make_noise
from dpboost._predictor import predict_binned
from dpboost._records import POISSON_STREAM, InMemoryRecords
from dpboost._sensitivities import (
    gain_sensitivity,
    gaussian_leaf_sensitivity,
    leaf_sensitivity,
    newton_hessian_scale,
)

ALPHA = 1e-6
SCOPE = {"group": 0, "tree": 0, "level": 0}


def _event_counts(ids, n_ids):
    """How many runs fall in each event: the single ids ``id == t``, then the threshold sets
    ``id <= t`` and ``id >= t``, for t = 0 .. n_ids - 1 (counted from the ids' histogram: an
    indicator matrix of events by runs took most of an audit's time)."""
    single = np.bincount(ids, minlength=n_ids)
    return np.concatenate([single, np.cumsum(single), np.cumsum(single[::-1])[::-1]])


def _eps_lower_bound(ka, na, kb, nb, alpha, delta=0.0):
    """log((CP low of ka/na - delta) / CP high of kb/nb); each Clopper-Pearson side alpha/2."""
    p_low = stats.beta.ppf(alpha / 2, ka, na - ka + 1) if ka > 0 else 0.0
    p_high = stats.beta.ppf(1 - alpha / 2, kb + 1, nb - kb) if kb < nb else 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(max(p_low - delta, 0.0) / p_high)


def _in_two_processes(function, first, second):
    """``function(*first)`` and ``function(*second)``, each in a process of its own, so that a
    long audit's runs use both cores of a 2-core machine. The processes are spawned (a fresh
    interpreter that imports this module, no state copied), and every run has its own seed, so
    the results are those of the two calls in this process."""
    with ProcessPoolExecutor(max_workers=2,
                             mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(function, *first), pool.submit(function, *second)]
        return [future.result() for future in futures]


def audit(ids_d, ids_d2, pilot_fraction=0.3, delta=0.0):
    """Certified lower bound on the privacy loss from two samples of event ids (see module doc).

    The pilot ranks events by their own (looser, alpha = 1e-2) lower bound, so that a rare event
    with a lucky ratio does not win; only the held-out runs certify.
    """
    n_ids = int(max(ids_d.max(), ids_d2.max())) + 1
    n_pilot = int(pilot_fraction * min(ids_d.size, ids_d2.size))
    best = 0.0
    for a, b in [(ids_d, ids_d2), (ids_d2, ids_d)]:
        pa = _event_counts(a[:n_pilot], n_ids)
        pb = _event_counts(b[:n_pilot], n_ids)
        e = int(np.argmax([_eps_lower_bound(x, n_pilot, y, n_pilot, 1e-2, delta)
                           for x, y in zip(pa, pb)]))
        ka = int(_event_counts(a[n_pilot:], n_ids)[e])
        kb = int(_event_counts(b[n_pilot:], n_ids)[e])
        best = max(best, float(_eps_lower_bound(ka, a.size - n_pilot, kb, b.size - n_pilot,
                                                ALPHA, delta)))
    return best


# 1. Exponential mechanism on worst-case neighbouring utilities: each utility moves by Delta, the
#    chosen candidate up and all others down, which drives the ratio towards e^eps.
EPS = 1.0
N_EM = 200_000


def _noise(seed, secure):
    """Seeded numpy noise, or the exact samplers of the default path on seeded words (their laws
    do not depend on where the words come from: tests/test_samplers.py)."""
    if not secure:
        return make_noise(seed)
    return SecureNoise(words=np.random.default_rng(seed).bit_generator.random_raw)


def _em_ids(utilities, sensitivity, seed, secure=False):
    ledger = PrivacyLedger()
    return exponential_mechanism(np.tile(utilities, (N_EM, 1)), epsilon=EPS,
                                 sensitivity=sensitivity, noise=_noise(seed, secure),
                                 ledger=ledger, scope=SCOPE)


def _em_neighbours():
    delta = gain_sensitivity()
    k = 50
    u_d = np.zeros(k + 1)
    u_d[0] = delta
    u_d2 = np.full(k + 1, delta)
    u_d2[0] = 0.0
    return u_d, u_d2, delta


@pytest.mark.parametrize("secure", [False, True])
def test_audit_exponential_mechanism(secure):
    u_d, u_d2, delta = _em_neighbours()
    eps_lb = audit(_em_ids(u_d, delta, 1, secure), _em_ids(u_d2, delta, 2, secure))
    assert 0.5 < eps_lb <= EPS  # tight enough to mean something, never above the claim


@pytest.mark.parametrize("secure", [False, True])
def test_audit_flags_exponential_mechanism_with_halved_sensitivity(secure):
    u_d, u_d2, delta = _em_neighbours()
    assert audit(_em_ids(u_d, delta / 2, 1, secure), _em_ids(u_d2, delta / 2, 2, secure)) > EPS


def test_audit_flags_a_candidate_with_probability_zero():
    # argmax gives candidate 0 probability 0 on D' and 1 on D: unbounded privacy loss.
    u_d, u_d2, _ = _em_neighbours()
    ids_d = np.argmax(np.tile(u_d, (1000, 1)), axis=1)
    ids_d2 = np.argmax(np.tile(u_d2, (1000, 1)) + np.arange(51) * 1e-9, axis=1)
    assert audit(ids_d, ids_d2) > EPS


# 2. Leaf release: neighbouring leaf values differ by exactly the leaf sensitivity.
def _leaf_ids(value, scale_sensitivity, seed, secure=False, n=200_000):
    released = laplace_mechanism(np.full(n, value), epsilon=EPS, sensitivity=scale_sensitivity,
                                 noise=_noise(seed, secure), ledger=PrivacyLedger(), scope=SCOPE)
    return np.digitize(released, np.linspace(-6, 6, 49))


@pytest.mark.parametrize("secure", [False, True])
def test_audit_laplace_leaves(secure):
    delta = leaf_sensitivity(0.1)
    eps_lb = audit(_leaf_ids(0.0, delta, 3, secure), _leaf_ids(delta, delta, 4, secure))
    assert 0.5 < eps_lb <= EPS


@pytest.mark.parametrize("secure", [False, True])
def test_audit_flags_laplace_with_halved_sensitivity(secure):
    delta = leaf_sensitivity(0.1)
    assert audit(_leaf_ids(0.0, delta / 2, 3, secure),
                 _leaf_ids(delta, delta / 2, 4, secure)) > EPS


# 2a. Weighted Laplace leaves (sample_weight, bound W = 4, lambda = 1): D holds one record of
#     weight 1 and gradient -1 in a leaf, D' adds one of weight W and gradient +1. The leaf moves
#     from 0.5 to -0.5, by exactly weighted_leaf_sensitivity(1, W=4) = 1 (its maximum over the
#     leaf's weight sum is at S = 1), twice Lemma 2's unweighted g* / (1 + lambda).
WEIGHT_BOUND = 4.0


def _weighted_leaf_pair(monkeypatch):
    import dpboost._grower as grower_module
    from dpboost import DPGBClassifier

    captured = []
    monkeypatch.setattr(grower_module, "laplace_mechanism",
                        lambda values, **kw: captured.append((values.copy(), kw)) or values)
    for y, w in (([1], [1.0]), ([1, 0], [1.0, WEIGHT_BOUND])):
        DPGBClassifier.dpboost_paper(
            epsilon=1.0, n_estimators=1, max_depth=1, l2_regularization=1.0,
            leaf_clipping=False, budget_allocation="sequential", split_selection="random",
            feature_bounds=(-1, 1), classes=[0, 1], sample_weight_bound=WEIGHT_BOUND,
            random_state=0).fit(np.zeros((len(y), 2)), y, sample_weight=w)
    (d, claimed), (d2, _) = captured
    moved = np.flatnonzero(d != d2)
    assert moved.size == 1
    return float(d[moved[0]]), float(d2[moved[0]]), claimed["sensitivity"]


def test_audit_weighted_laplace_leaves(monkeypatch):
    d, d2, sensitivity = _weighted_leaf_pair(monkeypatch)
    assert (d, d2) == (0.5, -0.5) and sensitivity == pytest.approx(1.0, rel=1e-12)
    eps_lb = audit(_leaf_ids(d, sensitivity, 3), _leaf_ids(d2, sensitivity, 4))
    assert 0.5 < eps_lb <= EPS


def test_audit_flags_weighted_leaves_at_the_unweighted_sensitivity(monkeypatch):
    # Broken variant: the sensitivity not scaled by the weight bound (Lemma 2, W = 1): the true
    # loss is 2 eps.
    d, d2, _ = _weighted_leaf_pair(monkeypatch)
    unscaled = leaf_sensitivity(1.0)
    assert audit(_leaf_ids(d, unscaled, 3), _leaf_ids(d2, unscaled, 4)) > EPS


# 2b. Gaussian release of a leaf statistic: neighbours differ by exactly the L2 sensitivity; the
#     claim is the accountant's epsilon at delta = 1e-5 (2.98 for noise multiplier 1.5).
GAUSS_DELTA = 1e-5


def _gaussian_ids(value, noise_multiplier, seed, secure=False, n=200_000):
    released = gaussian_mechanism(np.full((n, 1), value), noise_multiplier=noise_multiplier,
                                  sensitivity=1.0, noise=_noise(seed, secure),
                                  ledger=PrivacyLedger(), scope=SCOPE)
    return np.digitize(released[:, 0], np.linspace(-8, 9, 69))


def _gaussian_claim(noise_multiplier):
    entry = LedgerEntry(mechanism="gaussian", epsilon=np.inf, sensitivity=1.0, n_nodes=1,
                        noise_multiplier=noise_multiplier, **SCOPE)
    return compose_rdp([entry], GAUSS_DELTA)


@pytest.mark.parametrize("secure", [False, True])
def test_audit_gaussian_leaves(secure):
    eps_lb = audit(_gaussian_ids(0.0, 1.5, 3, secure), _gaussian_ids(1.0, 1.5, 4, secure),
                   delta=GAUSS_DELTA)
    assert 0.5 < eps_lb <= _gaussian_claim(1.5)


@pytest.mark.parametrize("secure", [False, True])
def test_audit_flags_gaussian_with_a_third_of_the_noise(secure):
    eps_lb = audit(_gaussian_ids(0.0, 0.5, 3, secure), _gaussian_ids(1.0, 0.5, 4, secure),
                   delta=GAUSS_DELTA)
    assert eps_lb > _gaussian_claim(1.5)



# 2b'. A Newton leaf's (G, c H), c from the gradient sum's share (S-BDT's split of the budget):
#      D' adds a record with g = g* and h = h* (the classifier's 0.5 and 0.25) to the leaf, which
#      moves the pair by exactly its L2 sensitivity; the event is the joint bucket of the two
#      released coordinates. Share 0.1 makes c = 6: a sensitivity that forgot c (c = 1) claims
#      2.8 times too little.
def _newton_ids(added, share, seed, declared_scale=None, n=200_000):
    scale = newton_hessian_scale(share, 0.5, 0.25)
    sensitivity = gaussian_leaf_sensitivity(
        0.25, 0.5, hessian_scale=scale if declared_scale is None else declared_scale)
    pair = np.array([0.5, scale * 0.25]) * added
    released = gaussian_mechanism(np.tile(pair, (n, 1)), noise_multiplier=1.5,
                                  sensitivity=sensitivity, noise=make_noise(seed),
                                  ledger=PrivacyLedger(), scope=SCOPE)
    edges = np.linspace(-3, 4, 15)
    return (np.digitize(released[:, 0] / sensitivity, edges) * 16
            + np.digitize(released[:, 1] / sensitivity, edges))


@pytest.mark.parametrize("share", [0.8, 0.1, 0.96])
def test_audit_newton_leaves_at_any_gradient_share(share):
    eps_lb = audit(_newton_ids(0, share, 3), _newton_ids(1, share, 4), delta=GAUSS_DELTA)
    assert 0.5 < eps_lb <= _gaussian_claim(1.5)


def test_audit_flags_newton_leaves_whose_sensitivity_forgets_the_hessian_scale():
    eps_lb = audit(_newton_ids(0, 0.1, 3, declared_scale=1.0),
                   _newton_ids(1, 0.1, 4, declared_scale=1.0), delta=GAUSS_DELTA)
    assert eps_lb > _gaussian_claim(1.5)


def test_grower_releases_the_scaled_newton_pair(monkeypatch):
    # The audit above covers the Newton leaves only if the grower hands the mechanism
    # (sum g, c sum h) of every leaf at the planned sensitivity and divides c out afterwards.
    import dpboost._grower as grower_module

    monkeypatch.setattr(tree_mechanisms_module, "NEWTON_GRADIENT_SHARE", 0.96)
    plan_budget.cache_clear()
    released = []

    def spy(values, **kwargs):
        released.append((values.copy(), kwargs["sensitivity"]))
        return gaussian_mechanism(values, **kwargs)

    monkeypatch.setattr(grower_module, "gaussian_mechanism", spy)
    try:
        plan = plan_budget(epsilon=2.0, delta=1e-5, n_estimators=1, max_depth=1,
                           learning_rate=1.0, l2_regularization=0.1,
                           budget_allocation="sequential", trees_per_ensemble=1,
                           leaf_clipping=False, leaf_noise="gaussian", gradient_bound=0.5,
                           hessian_bound=0.25)
    finally:
        plan_budget.cache_clear()
    tb = plan.trees[0]
    scale = newton_hessian_scale(0.96, 0.5, 0.25)
    assert tb.leaf_hessian_scale == scale
    assert tb.leaf_sensitivity == gaussian_leaf_sensitivity(0.25, 0.5, hessian_scale=scale)
    g = np.linspace(-0.5, 0.5, 20).astype(np.float32)
    h = np.linspace(0.0, 0.25, 20).astype(np.float32)
    X_binned = np.asfortranarray(np.repeat([[0, 0], [3, 3]], 10, axis=0).astype(np.uint8))
    records = InMemoryRecords.of_tree(X_binned, np.arange(20, dtype=np.int32), g, h)
    tree = grow_tree(records, budget=tb, n_features=2, max_depth=1, n_bins=4,
                     l2_regularization=0.1, noise=make_noise(0), ledger=PrivacyLedger(),
                     n_threads=1)
    f, b = tree.split_feature, tree.split_bin
    ((values, sensitivity),) = released
    assert sensitivity == tb.leaf_sensitivity
    left = X_binned[:, f[0]] <= b[0]
    np.testing.assert_allclose(values, [[g[left].sum(), scale * h[left].sum()],
                                        [g[~left].sum(), scale * h[~left].sum()]], rtol=1e-6)


# 2c. Releases of several statistics that one record moves together, with Laplace noise of the
#     summed (L1) change: the event is the joint bucket of the two moved coordinates.
def _joint_ids(statistics, sensitivity, seed, n=200_000):
    released = laplace_mechanism(np.tile(statistics, (n, 1)), epsilon=EPS, sensitivity=sensitivity,
                                 noise=make_noise(seed), ledger=PrivacyLedger(), scope=SCOPE)
    edges = np.linspace(-5, 5, 11)
    return np.digitize(released[:, 0], edges) * 12 + np.digitize(released[:, 1], edges)


# Noisy-average leaves: (sum g, count) at L1 sensitivity g* + 1; the added record has g = -1.
AVERAGE_SENSITIVITY = 2.0


def test_audit_average_leaves():
    eps_lb = audit(_joint_ids([0.0, 0.0], AVERAGE_SENSITIVITY, 3),
                   _joint_ids([-1.0, 1.0], AVERAGE_SENSITIVITY, 4))
    assert 0.5 < eps_lb <= EPS


def test_audit_flags_average_leaves_that_forget_the_count():
    # sensitivity g* alone (the count's change left out): the true loss is 2 eps
    assert audit(_joint_ids([0.0, 0.0], 1.0, 3), _joint_ids([-1.0, 1.0], 1.0, 4)) > EPS


# Count histograms released once for two columns: the quantile sketch's fine grid and the private
# bounds' log grid. D and D' (one more record) as the library computes them, released at the
# sensitivity the planner claims for two columns; one record moves one bin of each column.
HISTOGRAMS = {
    "sketch": (lambda X: fine_histograms(X, np.zeros(2), np.ones(2), 4), [1.0, 1.0],
               {"sketch_features": 2}, "sketch"),
    "bounds": (bounds_histograms, [5.0, -5.0], {"bounds_features": 2}, "bounds"),
}


def _histogram_statistics(kind):
    histograms, record, planned, release = HISTOGRAMS[kind]
    X = np.zeros((20, 2))
    d = histograms(X).ravel()
    d2 = histograms(np.vstack([X, [record]])).ravel()
    moved = np.flatnonzero(d != d2)
    assert moved.size == 2  # one bin per column, from 0 to 1 records
    claimed = getattr(plan_budget(epsilon=1.0, n_estimators=1, max_depth=1, learning_rate=0.1,
                                  l2_regularization=0.1, budget_allocation="sequential",
                                  trees_per_ensemble=1, leaf_clipping=True, **planned), release)
    return d[moved], d2[moved], claimed.sensitivity


@pytest.mark.parametrize("kind", list(HISTOGRAMS))
def test_audit_histogram_releases(kind):
    d, d2, sensitivity = _histogram_statistics(kind)
    eps_lb = audit(_joint_ids(d, sensitivity, 3), _joint_ids(d2, sensitivity, 4))
    assert 0.5 < eps_lb <= EPS


@pytest.mark.parametrize("kind", list(HISTOGRAMS))
def test_audit_flags_histograms_with_per_column_sensitivity(kind):
    # sensitivity 1, as if a record touched one column's histogram only: the true loss is 2 eps
    d, d2, _ = _histogram_statistics(kind)
    assert audit(_joint_ids(d, 1.0, 3), _joint_ids(d2, 1.0, 4)) > EPS


# The adaptive Hessian sketch: the Hessian sums of D and D' (one more record, h = 1 under the
# square loss) exactly as the estimator hands them to the Gaussian mechanism, with the L2
# sensitivity it claims. One record moves one fine bin of each of the k features by h*, so the
# sum of the moved coordinates over sqrt(k) is a Gaussian shifted by the sensitivity.
def _hessian_sketch_pair(monkeypatch, n_features=8):
    captured = []
    monkeypatch.setattr(candidates_module, "gaussian_mechanism",
                        lambda values, **kw: captured.append((values.ravel().copy(), kw)) or values)
    X = np.full((20, n_features), 0.25)
    for data in (X, np.vstack([X, np.full((1, n_features), 0.75)])):
        DPGBRegressor.dpboost_paper(epsilon=1.0, delta=GAUSS_DELTA, leaf_noise="gaussian",
                                    split_candidates="hessian", n_estimators=1, max_depth=1,
                                    budget_allocation="sequential", feature_bounds=(0, 1),
                                    target_bounds=(0, 1),
                                    random_state=0).fit(data, np.zeros(len(data)))
    (d, claimed), (d2, _) = captured
    moved = np.flatnonzero(d != d2)
    assert moved.size == n_features and (d2[moved] - d[moved] == 1.0).all()
    return d, moved, claimed["sensitivity"]


def _hessian_sketch_ids(d, moved, sensitivity, shift, seed, n=200_000):
    released = gaussian_mechanism(np.tile(d[moved] + shift, (n, 1)), noise_multiplier=1.5,
                                  sensitivity=sensitivity, noise=make_noise(seed),
                                  ledger=PrivacyLedger(), scope=SCOPE)
    statistic = (released - d[moved]).sum(axis=1) / np.sqrt(moved.size) / sensitivity
    return np.digitize(statistic, np.linspace(-8, 9, 69))


def test_audit_hessian_sketch(monkeypatch):
    d, moved, sensitivity = _hessian_sketch_pair(monkeypatch)
    assert sensitivity == np.sqrt(moved.size)
    eps_lb = audit(_hessian_sketch_ids(d, moved, sensitivity, 0.0, 3),
                   _hessian_sketch_ids(d, moved, sensitivity, 1.0, 4), delta=GAUSS_DELTA)
    assert 0.5 < eps_lb <= _gaussian_claim(1.5)


def test_audit_flags_hessian_sketch_with_per_feature_sensitivity(monkeypatch):
    # sensitivity h* = 1, as if a record touched one feature's histogram only
    d, moved, _ = _hessian_sketch_pair(monkeypatch)
    eps_lb = audit(_hessian_sketch_ids(d, moved, 1.0, 0.0, 3),
                   _hessian_sketch_ids(d, moved, 1.0, 1.0, 4), delta=GAUSS_DELTA)
    assert eps_lb > _gaussian_claim(1.5)


def test_grower_releases_exactly_the_audited_pair(monkeypatch):
    # The audit above covers the tree's leaves only if the grower hands that mechanism the
    # (sum g, count) of every leaf with sensitivity g* + 1, and releases nothing else about them.
    import dpboost._grower as grower_module

    released = []

    def spy(values, **kwargs):
        released.append((values.copy(), kwargs["sensitivity"]))
        return laplace_mechanism(values, **kwargs)

    monkeypatch.setattr(grower_module, "laplace_mechanism", spy)
    plan = plan_budget(epsilon=2.0, n_estimators=1, max_depth=1, learning_rate=1.0,
                       l2_regularization=0.1, budget_allocation="sequential",
                       trees_per_ensemble=1, leaf_clipping=False, leaf_noise="average")
    g = np.linspace(-1, 1, 20).astype(np.float32)
    X_binned = np.asfortranarray(np.repeat([[0, 0], [3, 3]], 10, axis=0).astype(np.uint8))
    tree = grow_tree(InMemoryRecords.of_tree(X_binned, np.arange(20, dtype=np.int32), g),
                     budget=plan.trees[0], n_features=2, max_depth=1, n_bins=4,
                     l2_regularization=0.1, noise=make_noise(0), ledger=PrivacyLedger(),
                     n_threads=1)
    f, b = tree.split_feature, tree.split_bin
    ((values, sensitivity),) = released
    assert sensitivity == AVERAGE_SENSITIVITY
    left = X_binned[:, f[0]] <= b[0]
    np.testing.assert_allclose(values, [[g[left].sum(), left.sum()],
                                        [g[~left].sum(), (~left).sum()]],
                               rtol=1e-6)


# 2d. Amplification by Poisson subsampling: a count released with Laplace noise at the epsilon that
#     a rate-gamma sample may spend (deamplify_pure) is EPS-DP when the added record is kept with
#     probability gamma, and is not when the sample is skipped.
GAMMA = 0.25


def _sampled_count_ids(added, seed, sample=True, n=400_000):
    noise = make_noise(seed)
    coins = noise.coins().uniforms((POISSON_STREAM, 0, 0), 0, n)
    kept = poisson_sample(coins, GAMMA if sample else 1.0) if added else np.zeros(n, bool)
    released = laplace_mechanism(kept.astype(np.float64), epsilon=deamplify_pure(EPS, GAMMA),
                                 sensitivity=1.0, noise=noise, ledger=PrivacyLedger(),
                                 scope=SCOPE)
    return np.digitize(released, np.linspace(-3, 4, 57))


def test_audit_subsampling_amplification():
    eps_lb = audit(_sampled_count_ids(False, 3), _sampled_count_ids(True, 4))
    assert 0.5 < eps_lb <= EPS


def test_audit_flags_amplification_claimed_without_sampling():
    # deamplify_pure(1, 0.25) = 2.06 is spent on every record
    assert audit(_sampled_count_ids(False, 3), _sampled_count_ids(True, 4, sample=False)) > EPS


# 3. A whole tree on tiny data (n = 20, 2 features, 4 bins). Worst case for the leaves: D holds 20
#    records with gradient 0 in bin (0, 0); D' adds one with gradient -1 in bin (3, 3), alone in its
#    leaf whatever the splits, so that leaf moves by exactly the leaf sensitivity. The event is the
#    root's (feature, bin, missing direction) with the bucketised value of the added record's leaf.
TREE_EPS = 2.0
N_TREE = 60_000


def _tiny():
    X = np.zeros((20, 2), dtype=np.uint8, order="F")
    X2 = np.asfortranarray(np.vstack([X, [[3, 3]]]).astype(np.uint8))
    return ((X, np.zeros(20, dtype=np.float32)),
            (X2, np.append(np.zeros(20), -1.0).astype(np.float32)))


def _tree_ids(dataset, max_depth, seed, sensitivity_factor=1.0):
    X_binned, g = dataset
    plan = plan_budget(epsilon=TREE_EPS, n_estimators=1, max_depth=max_depth, learning_rate=1.0,
                       l2_regularization=0.1, budget_allocation="sequential",
                       trees_per_ensemble=1, leaf_clipping=False)
    tb = plan.trees[0]
    tb = type(tb)(**{**vars(tb),
                     "gain_sensitivity": tb.gain_sensitivity * sensitivity_factor,
                     "leaf_sensitivity": tb.leaf_sensitivity * sensitivity_factor})
    noise = make_noise(seed)
    idx = np.arange(len(g), dtype=np.int32)
    point = np.array([[3, 3]], dtype=np.uint8)
    ids = np.empty(N_TREE, dtype=np.int64)
    for r in range(N_TREE):
        tree = grow_tree(InMemoryRecords.of_tree(X_binned, idx, g), budget=tb, n_features=2,
                         max_depth=max_depth, n_bins=4, l2_regularization=0.1, noise=noise,
                         ledger=PrivacyLedger(), n_threads=1)
        f, b, m, v = tree.split_feature, tree.split_bin, tree.missing_left, tree.leaf_value
        value = np.zeros(1)
        predict_binned(point, f[None], b[None], m[None], 4, v[None], 1, value)
        split = (f[0] * 3 + b[0]) * 2 + int(m[0])
        ids[r] = split * 8 + np.digitize(value[0], [-2, -1, -0.5, 0, 0.5, 1, 2])
    return ids


@pytest.mark.slow
@pytest.mark.parametrize("max_depth", [1, 2])
def test_audit_whole_tree(max_depth):
    d, d2 = _tiny()
    eps_lb = audit(*_in_two_processes(_tree_ids, (d, max_depth, 6), (d2, max_depth, 7)))
    assert 0.3 < eps_lb <= TREE_EPS


@pytest.mark.slow
@pytest.mark.parametrize("max_depth", [1, 2])
def test_audit_flags_whole_tree_with_quartered_sensitivities(max_depth):
    d, d2 = _tiny()
    eps_lb = audit(*_in_two_processes(_tree_ids, (d, max_depth, 6, 0.25),
                                      (d2, max_depth, 7, 0.25)))
    assert eps_lb > TREE_EPS


# 4. The whole fit of a 3-tree model (GDF and GLC on): D holds 20 records with label 0 at (0, 0),
#    D' adds one with label 1 at (1, 1); the statistic is the bucketised prediction there.
N_FIT = 20_000


def _fit_ids(X, y, seed, leaf_sensitivity_divisor=1):
    """The bucketised predictions of ``N_FIT`` fits; the planner's leaf sensitivity divided by
    ``leaf_sensitivity_divisor`` for their time (1: the library's plan)."""
    real = tree_mechanisms_module.leaf_sensitivity
    if leaf_sensitivity_divisor != 1:
        tree_mechanisms_module.leaf_sensitivity = lambda *a, **k: real(*a, **k) / leaf_sensitivity_divisor
    plan_budget.cache_clear()  # no plan made before (or after) the change is recalled
    out = np.empty(N_FIT, dtype=np.int64)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ReproducibleNoiseWarning)  # seeded on purpose
            for r in range(N_FIT):
                reg = DPGBRegressor.dpboost_paper(
                    epsilon=1.0, n_estimators=3, max_depth=1, learning_rate=1.0,
                    budget_allocation="sequential", feature_bounds=(0, 1),
                    target_bounds=(-1, 1), max_bins=4, random_state=seed * 1_000_003 + r)
                out[r] = np.digitize(reg.fit(X, y).predict([[1.0, 1.0]])[0],
                                     np.linspace(-3, 3, 13))
    finally:
        tree_mechanisms_module.leaf_sensitivity = real
        plan_budget.cache_clear()
    return out


def _fit_audit(leaf_sensitivity_divisor=1):
    X, y = np.zeros((20, 2)), np.zeros(20)
    X2, y2 = np.vstack([X, [[1.0, 1.0]]]), np.append(y, 1.0)
    return audit(*_in_two_processes(_fit_ids, (X, y, 1, leaf_sensitivity_divisor),
                                    (X2, y2, 2, leaf_sensitivity_divisor)))


@pytest.mark.slow
def test_audit_whole_fit():
    assert _fit_audit() <= 1.0


@pytest.mark.slow
def test_audit_flags_whole_fit_with_tenfold_smaller_leaf_sensitivity():
    assert _fit_audit(leaf_sensitivity_divisor=10) > 1.0


# 5. Private category lists (docs/privacy.md, Private category lists): D' adds a record whose
#    value in each of the c columns no record of D holds (count 1 on D', absent from D). On D
#    such a value is never released; on D' it may be, and that probability is the release's
#    delta: the audit estimates P_D'[a new value is released] and certifies, by Clopper-Pearson
#    at confidence 1 - 1e-6, that it is not above the planned ``entry.delta``. A delta of 0.2
#    makes the event frequent enough to estimate. Broken variants (a threshold without the
#    count's 1, a per-value delta not divided by the columns) must be flagged.
N_COLUMNS, CATEGORIES_DELTA, N_NEW = 3, 0.2, 100_000


def _new_value_rate(entry, seed, secure):
    """Fraction of ``N_NEW`` runs of the threshold release on D' where one of the added
    record's new values (count 1 in each column) clears the threshold; the runs are independent
    rows of one release (the values' noise is independent)."""
    from dpboost._mechanisms import threshold_mechanism

    keys = np.empty(N_NEW * N_COLUMNS, dtype=object)
    keys[:] = [(j, r) for r in range(N_NEW) for j in range(N_COLUMNS)]
    kept = threshold_mechanism(keys, np.ones(keys.size), release=entry,
                               noise=_noise(seed, secure), ledger=PrivacyLedger())
    return int(kept.reshape(N_NEW, N_COLUMNS).any(axis=1).sum())


def _new_value_bounds(k, n=N_NEW):
    low = stats.beta.ppf(ALPHA / 2, k, n - k + 1) if k > 0 else 0.0
    high = stats.beta.ppf(1 - ALPHA / 2, k + 1, n - k) if k < n else 1.0
    return low, high


def _categories_entry(epsilon=1.0):
    from dpboost._thresholds import categories_release

    return categories_release(N_COLUMNS, epsilon, CATEGORIES_DELTA)


@pytest.mark.parametrize("secure", [False, True])
def test_audit_new_category_release_probability(secure):
    entry = _categories_entry()
    low, high = _new_value_bounds(_new_value_rate(entry, 11, secure))
    assert low <= entry.delta  # never certified above the planned delta
    assert high >= 0.8 * entry.delta  # and the plan is not vacuous: the bound is nearly tight


@pytest.mark.parametrize("secure", [False, True])
@pytest.mark.parametrize("broken", ["without_the_count", "delta_not_per_column"])
def test_audit_flags_a_broken_threshold(secure, broken):
    from dataclasses import replace

    from dpboost._thresholds import category_threshold

    entry = _categories_entry()
    s = entry.noise_multiplier * entry.sensitivity
    if broken == "without_the_count":  # threshold 1 too low: a new value's count forgotten
        threshold = entry.threshold - 1.0
    else:  # the whole delta to each of the c values (no union bound)
        threshold = category_threshold(s, entry.noise_multiplier,
                                       entry.delta * (1 - 1e-9))
    low, _ = _new_value_bounds(_new_value_rate(replace(entry, threshold=threshold), 12, secure))
    assert low > entry.delta


def _fit_new_category_released(seed, fits, epsilon, threshold_shift=0.0):
    """Fits on D' (D: 200 records of categories "a"/"b" in 3 columns; the added record "new"
    in each) that release a "new" value, of the fits numbered ``fits`` (a range); the planned
    threshold moved by ``threshold_shift`` for their time (0: the library's plan)."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({f"c{j}": rng.choice(["a", "b"], size=200).astype(object)
                          for j in range(N_COLUMNS)})
    frame.loc[200] = ["new"] * N_COLUMNS
    frame["x"] = np.linspace(0, 1, 201)
    y = np.arange(201) % 2
    real = budget_module.categories_release
    if threshold_shift:
        budget_module.categories_release = lambda *a: dataclasses.replace(
            real(*a), threshold=real(*a).threshold + threshold_shift)
    plan_budget.cache_clear()  # no plan made before (or after) the change is recalled
    released = 0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ReproducibleNoiseWarning)  # seeded on purpose
            for r in fits:
                reg = DPGBRegressor(epsilon=epsilon, delta=CATEGORIES_DELTA, n_estimators=1,
                                    max_depth=1, feature_bounds={"x": (0, 1)},
                                    target_bounds=(0, 1),
                                    categorical_features=[f"c{j}" for j in range(N_COLUMNS)],
                                    categories="private", random_state=seed * 1_000_003 + r)
                reg.fit(frame, y)
                released += any("new" in list(v) for v in reg.categories_.values())
    finally:
        budget_module.categories_release = real
        plan_budget.cache_clear()
    return released


def _fits_new_category_released(seed, n_fits, epsilon, threshold_shift=0.0):
    """:func:`_fit_new_category_released` of fits 0 .. n_fits - 1, half in each of two
    processes."""
    half = n_fits // 2
    return sum(_in_two_processes(_fit_new_category_released,
                                 (seed, range(half), epsilon, threshold_shift),
                                 (seed, range(half, n_fits), epsilon, threshold_shift)))


#: Epsilon of the whole-fit audits: small noise (std about 2), where a count of 1 matters.
FIT_EPSILON = 20.0


@pytest.mark.slow
def test_audit_new_category_through_the_whole_fit():
    n_fits = 3000
    k = _fits_new_category_released(5, n_fits, FIT_EPSILON)
    low, high = _new_value_bounds(k, n_fits)
    assert low <= _categories_entry(FIT_EPSILON).delta < high * 2


@pytest.mark.slow
def test_audit_flags_the_whole_fit_with_a_threshold_without_the_count():
    # The threshold lowered by the count's 1 while the ledger states the planned delta.
    n_fits = 3000
    low, _ = _new_value_bounds(
        _fits_new_category_released(6, n_fits, FIT_EPSILON, threshold_shift=-1.0), n_fits)
    assert low > _categories_entry(FIT_EPSILON).delta
# 6. The individual Renyi filter: the added record has a worst-case contribution (g* = 0.5,
#    h* = 1/4) in each of 9 trees of Gaussian leaf releases; its budget is one worst-case tree.
#    Which trees it joins is decided by the real filter (``select_records``); the event is the
#    bucket of the sum of the 9 releases projected on its contribution. Broken filters: one that
#    never drops the record, and one that charges it the loss of a typical record (a third of the
#    worst-case norm): both let it into more trees than its budget.
FILTER_SIGMA, FILTER_TREES = 2.0, 9


def _filter_budget(broken=None):
    from dpboost._filter import FILTER_SCOPE, FilterBudget

    c_star = np.hypot(0.5, 0.25)
    renyi = FilterBudget.of(LedgerEntry(mechanism="renyi_filter", epsilon=np.inf,
                                        sensitivity=c_star, noise_multiplier=FILTER_SIGMA,
                                        filter_trees=1, **FILTER_SCOPE))
    if broken == "never drops":
        return dataclasses.replace(renyi, budget=2**40)
    if broken == "typical record":
        return dataclasses.replace(renyi, sensitivity=3 * c_star)
    return renyi


def _filter_participation(renyi):
    from dpboost._boosting import open_budgets, select_records
    from dpboost._records import Partition, RecordCoins

    partition = open_budgets(Partition(None, np.zeros((1, 1)), gradients=np.full((1, 1), 0.5,
                                                                                  np.float32),
                                       hessians=np.full((1, 1), 0.25, np.float32)), renyi)
    taken = []
    for t in range(FILTER_TREES):
        partition = select_records(partition, RecordCoins(b"0" * 32), 0, t, None, 1.0,
                                   np.float32(0.5), False, renyi)
        taken.append(partition.tree.selected.size == 1)
    return np.array(taken)


def _filter_ids(taken, seed, n=200_000):
    noise, c_star = make_noise(seed), np.hypot(0.5, 0.25)
    contribution = np.array([0.5, 0.25])
    total = np.zeros(n)
    for joined in taken:
        released = gaussian_mechanism(np.tile(contribution * joined, (n, 1)),
                                      noise_multiplier=FILTER_SIGMA, sensitivity=c_star,
                                      noise=noise, ledger=PrivacyLedger(), scope=SCOPE)
        total += released @ (contribution / c_star)
    return np.digitize(total / (FILTER_SIGMA * c_star * np.sqrt(FILTER_TREES)),
                       np.linspace(-8, 9, 69))


def _filter_claim():
    entry = LedgerEntry(mechanism="renyi_filter", epsilon=np.inf, sensitivity=1.0,
                        noise_multiplier=FILTER_SIGMA, filter_trees=1, group=-1, tree=-1,
                        level=-2, n_nodes=0)
    return compose_rdp([entry], GAUSS_DELTA)


def test_audit_individual_filter():
    taken = _filter_participation(_filter_budget())
    assert taken.tolist() == [True] + [False] * (FILTER_TREES - 1)
    eps_lb = audit(_filter_ids(np.zeros(FILTER_TREES, bool), 5), _filter_ids(taken, 6),
                   delta=GAUSS_DELTA)
    assert eps_lb <= _filter_claim()


@pytest.mark.parametrize("broken", ["never drops", "typical record"])
def test_audit_flags_a_broken_individual_filter(broken):
    taken = _filter_participation(_filter_budget(broken))
    assert taken.sum() >= 8
    eps_lb = audit(_filter_ids(np.zeros(FILTER_TREES, bool), 5), _filter_ids(taken, 6),
                   delta=GAUSS_DELTA)
    assert eps_lb > _filter_claim()


# The domain report's counts: D and D' (one more record: a missing cell, a value above its
# bounds, a label outside the classes) as the library counts them, released by the Laplace
# mechanism at the L1 sensitivity the planner claims (delta = 0). The record moves one count of
# every group (2 columns, the target, the records): the event is a bucket of the moved counts'
# sum.
def _domain_statistics():
    from dpboost._domain import domain_counts, domain_layout

    layout = domain_layout(2, {}, {}, False, False, False)
    bounds = np.array([[-1.0, 1.0], [-1.0, 1.0]])

    def counts(X, y):
        return domain_counts(X, X, y, np.isin(y, [0, 1]), layout, bounds, None).ravel()

    X, y = np.zeros((20, 2)), np.zeros(20)
    d = counts(X, y)
    d2 = counts(np.vstack([X, [np.nan, 5.0]]), np.append(y, 7.0))
    moved = np.flatnonzero(d != d2)
    assert moved.size == len(layout)  # one count of each group, from 0 (or 20) by 1
    claimed = plan_budget(epsilon=1.0, n_estimators=1, max_depth=1, learning_rate=0.1,
                          l2_regularization=0.1, budget_allocation="sequential",
                          trees_per_ensemble=1, leaf_clipping=True,
                          domain_groups=len(layout)).domain
    assert claimed.mechanism == "laplace"
    return d[moved], d2[moved], claimed.sensitivity


def _sum_ids(statistics, reference, sensitivity, seed, n=200_000):
    released = laplace_mechanism(np.tile(statistics, (n, 1)), epsilon=EPS,
                                 sensitivity=sensitivity, noise=make_noise(seed),
                                 ledger=PrivacyLedger(), scope=SCOPE)
    total = released.sum(axis=1) - np.sum(reference)
    return np.digitize(total, np.linspace(-16, 20, 37))


def test_audit_domain_report():
    d, d2, sensitivity = _domain_statistics()
    eps_lb = audit(_sum_ids(d, d, sensitivity, 3), _sum_ids(d2, d, sensitivity, 4))
    assert 0.2 < eps_lb <= EPS


def test_audit_flags_a_domain_report_with_per_group_sensitivity():
    # sensitivity 1, as if a record moved one count of the whole report: the true loss is 4 eps
    d, d2, _ = _domain_statistics()
    assert audit(_sum_ids(d, d, 1.0, 3), _sum_ids(d2, d, 1.0, 4)) > EPS


# The private bounds' Gaussian release (delta > 0): the weighted counts of D and D' (one more
# record) exactly as the fit hands them to the mechanism, with the L2 sensitivity it claims.
# The record moves one bin of each feature by 1 and one of the target by its weight; the
# projection of the release on that shift, over the shift's norm, is a Gaussian shifted by
# the norm. Audited at noise multiplier 1.5 (the claim of _gaussian_claim).
def _bounds_pair(monkeypatch, n_features=3):
    captured = []
    monkeypatch.setattr(candidates_module, "gaussian_mechanism",
                        lambda values, **kw: captured.append((values.ravel().copy(), kw)) or values)
    X = np.full((20, n_features), 0.5)
    for data, y in ((X, np.full(20, 2.0)), (np.vstack([X, np.full((1, n_features), 50.0)]),
                                            np.append(np.full(20, 2.0), 300.0))):
        DPGBRegressor(epsilon=1.0, delta=GAUSS_DELTA, feature_bounds="private",
                      target_bounds="private", n_estimators=1, max_depth=1,
                      random_state=0).fit(data, y)
    (d, claimed), (d2, _) = [c for c in captured if c[1]["scope"]["level"] == -1]
    shift = d2 - d
    assert np.count_nonzero(shift) == n_features + 1
    return d, shift, claimed["sensitivity"]


def _bounds_ids(d, shift, sensitivity, moved, seed, n=200_000):
    direction = shift / np.linalg.norm(shift)
    nonzero = np.flatnonzero(shift)
    released = gaussian_mechanism(np.tile((d + moved * shift)[nonzero], (n, 1)),
                                  noise_multiplier=1.5, sensitivity=sensitivity,
                                  noise=make_noise(seed), ledger=PrivacyLedger(), scope=SCOPE)
    statistic = (released - d[nonzero]) @ direction[nonzero] / sensitivity
    return np.digitize(statistic, np.linspace(-8, 9, 69))


def test_audit_gaussian_private_bounds(monkeypatch):
    d, shift, sensitivity = _bounds_pair(monkeypatch)
    assert sensitivity == pytest.approx(np.linalg.norm(shift))  # weights 1, 1, 1, sqrt(3)
    eps_lb = audit(_bounds_ids(d, shift, sensitivity, 0.0, 3),
                   _bounds_ids(d, shift, sensitivity, 1.0, 4), delta=GAUSS_DELTA)
    assert 0.5 < eps_lb <= _gaussian_claim(1.5)


def test_audit_flags_private_bounds_with_per_column_sensitivity(monkeypatch):
    # sensitivity 1, as if a record moved one column's histogram only (the weight's own error,
    # sqrt(4) for sqrt(6), is below what the audit resolves: the exact check above holds it)
    d, shift, _ = _bounds_pair(monkeypatch)
    eps_lb = audit(_bounds_ids(d, shift, 1.0, 0.0, 3), _bounds_ids(d, shift, 1.0, 1.0, 4),
                   delta=GAUSS_DELTA)
    assert eps_lb > _gaussian_claim(1.5)


# Early stopping's validation releases (docs/privacy.md, Early stopping), pure DP: D and D'
# differ in one record that its coin held out, whose loss is the clip C (the worst case). The
# record's only effect is on the validation sums (the trees never read it), released at every
# check with the plan's Laplace epsilon; the claim is the trees' epsilon, which bounds the
# checks together. The event is a bucket of the sum of the checks' releases.
def _validation_pair():
    from dpboost._early_stopping import (
        draw_held_out,
        plan_validation,
        validation_loss,
    )
    from dpboost._loss import SquareLoss
    from dpboost._records import Partition, RecordCoins

    plan = plan_validation(
        plan_budget(epsilon=EPS, delta=0.0, n_estimators=20, max_depth=2, learning_rate=0.1,
                    l2_regularization=1.0, budget_allocation="sequential",
                    trees_per_ensemble=1, leaf_clipping=True), SquareLoss.validation_clip(1), 1, 0.0)
    rng = np.random.default_rng(0)
    y, raw = rng.uniform(-1, 1, size=(1, 30)), rng.uniform(-1, 1, size=(1, 30))
    d = draw_held_out(Partition(None, y, raw=raw), RecordCoins(bytes(32)), 0.5)
    held = np.append(d.held_out, True)  # the added record's coin held it out
    d2 = dataclasses.replace(d, y_rows=np.append(y, [[1.0]], axis=1),
                             raw=np.append(raw, [[-5.0]], axis=1), held_out=held)
    clip = plan.validation[0].sensitivity
    sums = [validation_loss(p, SquareLoss(), clip)[0] for p in (d, d2)]
    assert sums[1] - sums[0] == pytest.approx(clip)  # the bound is attained
    trees = [e for e in plan.entries if not e.held_out and e.tree >= 0]
    return sums, plan.validation, compose_pure(trees)


def _validation_ids(total, reference, releases, seed, divisor=1.0, n=200_000):
    noisy = sum(laplace_mechanism(np.full((n, 1), total), epsilon=e.epsilon * divisor,
                                  sensitivity=e.sensitivity, noise=make_noise(seed + 10 * i),
                                  ledger=PrivacyLedger(), scope=SCOPE)[:, 0]
                for i, e in enumerate(releases))
    return np.digitize(noisy - len(releases) * reference, np.linspace(-30, 30, 61))


def test_audit_early_stopping_validation_releases():
    (s, s2), releases, claim = _validation_pair()
    assert len(releases) == 2
    eps_lb = audit(_validation_ids(s, s, releases, 3), _validation_ids(s2, s, releases, 4))
    assert 0.2 < eps_lb <= claim


def test_audit_flags_early_stopping_with_quartered_validation_noise():
    # the validation noise divided by 4 (each check's epsilon times 4): the held-out record's
    # loss is then 4 times the trees' epsilon
    (s, s2), releases, claim = _validation_pair()
    assert audit(_validation_ids(s, s, releases, 3, 4.0),
                 _validation_ids(s2, s, releases, 4, 4.0)) > claim


# The private initial score: its statistics on D and D' (one more record, a target at the
# upper bound: u = 1 moves one coordinate by 1) as ``_initial.initial_statistics`` computes
# them, released by the Laplace mechanism at the sensitivity the planner claims (pure DP).
def _initial_statistics_pair():
    from dpboost._initial import initial_statistics
    from dpboost._records import Partition

    y = np.linspace(-1.0, 1.0, 21)[:, None]

    def sums(rows):
        return initial_statistics(Partition.of(np.zeros((rows.shape[0], 1)), rows))

    claimed = plan_budget(epsilon=1.0, n_estimators=1, max_depth=1, learning_rate=0.1,
                          l2_regularization=0.1, budget_allocation="sequential",
                          trees_per_ensemble=1, leaf_clipping=True, initial_statistics=2)
    return sums(y), sums(np.vstack([y, [[1.0]]])), claimed.initial.sensitivity


def test_audit_initial_score():
    d, d2, sensitivity = _initial_statistics_pair()
    eps_lb = audit(_joint_ids(d - d, sensitivity, 3), _joint_ids(d2 - d, sensitivity, 4))
    assert 0.5 < eps_lb <= EPS


def test_audit_flags_an_initial_score_at_half_its_sensitivity():
    d, d2, sensitivity = _initial_statistics_pair()
    assert audit(_joint_ids(d - d, sensitivity / 2, 3),
                 _joint_ids(d2 - d, sensitivity / 2, 4)) > EPS


# The private row count: ``_row_count.count_records`` of D (20 records) and D' (one more),
# released by the Laplace mechanism with the epsilon and sensitivity the plan claims (a fit of
# epsilon EPS / ROW_COUNT_SHARE spends EPS on its count).
def _row_count_pair():
    from dpboost._records import Partition
    from dpboost._row_count import ROW_COUNT_SHARE, count_records, row_count_release

    def count(n):
        return count_records(Partition.of(np.zeros((n, 1)), np.zeros((n, 1))))[0]

    return count(20), count(21), row_count_release(EPS / ROW_COUNT_SHARE)


def _row_count_ids(total, reference, entry, seed, n=200_000):
    released = laplace_mechanism(np.full((n, 1), total), epsilon=entry.epsilon,
                                 sensitivity=entry.sensitivity, noise=make_noise(seed),
                                 ledger=PrivacyLedger(), scope=SCOPE)[:, 0]
    return np.digitize(released - reference, np.linspace(-5, 5, 21))


def test_audit_row_count():
    d, d2, entry = _row_count_pair()
    assert entry.epsilon == pytest.approx(EPS) and d2 - d == 1.0
    eps_lb = audit(_row_count_ids(d, d, entry, 3), _row_count_ids(d2, d, entry, 4))
    assert 0.5 < eps_lb <= EPS


def test_audit_flags_a_row_count_at_half_its_sensitivity():
    d, d2, entry = _row_count_pair()
    broken = dataclasses.replace(entry, sensitivity=entry.sensitivity / 2)
    assert audit(_row_count_ids(d, d, broken, 3), _row_count_ids(d2, d, broken, 4)) > EPS


# The private choice of interactions' statistic (``_interaction_choice.pairs_statistic``) on
# worst-case neighbours: D holds one counted record of V in a bucket of 16 slots (no pair: 0),
# D' adds one of the other label that the unrestricted model alone orders with it (+1, the
# sensitivity), released by the Laplace mechanism at EPS. The broken variant pairs V's records
# in the order of their coins (the first design): the added record, first in that order, shifts
# every pair of D's ten records (each scoring -1 on D, +1 on D'), released with the same claim.
def _choice_pair(broken):
    from test_interaction_choice import _coin_order_pairs, _statistic

    from dpboost._interaction_choice import PART_FRACTIONS, SLOTS_PER_BUCKET
    from dpboost._sensitivities import choice_statistic_sensitivity

    start = PART_FRACTIONS[0] + PART_FRACTIONS[1]
    if broken:
        index = np.arange(1, 11, dtype=np.float64)
        d = (start + index / 100, index % 2, -index, index)  # labels 1, 0, 1, ...; ordered
        added = ([start], [0], [0.0], [0.0])
        statistic = _coin_order_pairs
    else:
        d = ([start], [1], [1.0], [0.0])
        added = ([start + PART_FRACTIONS[2] / SLOTS_PER_BUCKET], [0], [2.0], [-1.0])
        statistic = _statistic
    d2 = [np.concatenate([a, np.asarray(b, dtype=np.float64)]) for a, b in zip(added, d)]
    values = [statistic(*(np.asarray(v, dtype=np.float64) for v in records), SLOTS_PER_BUCKET)
              for records in (d, d2)]
    return values[0], values[1], choice_statistic_sensitivity()


def _choice_ids(total, reference, sensitivity, seed, n=200_000):
    released = laplace_mechanism(np.full((n, 1), total), epsilon=EPS, sensitivity=sensitivity,
                                 noise=make_noise(seed), ledger=PrivacyLedger(), scope=SCOPE)[:, 0]
    return np.digitize(released - reference, np.linspace(-5, 5, 21))


def test_audit_choice_statistic():
    d, d2, sensitivity = _choice_pair(broken=False)
    assert abs(d2 - d) == sensitivity
    eps_lb = audit(_choice_ids(d, d, sensitivity, 3), _choice_ids(d2, d, sensitivity, 4))
    assert 0.5 < eps_lb <= EPS


def test_audit_flags_a_choice_statistic_paired_in_coin_order():
    d, d2, sensitivity = _choice_pair(broken=True)
    assert abs(d2 - d) > 2 * sensitivity
    assert audit(_choice_ids(d, d, sensitivity, 3), _choice_ids(d2, d, sensitivity, 4)) > EPS
