"""The record set (``_records``): keyed record coins, and a fit over several partitions.

A fit over many partitions in this process (:class:`SplitRecords`, the shape of
``dpboost.dask.DaskRecords`` without Dask) must release the in-memory fit's model: the same
splits and ledger, leaf values to float rounding, whatever the partition sizes.
"""

from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from dpboost import DPGBClassifier, DPGBRegressor
from dpboost._coins import COIN_CHUNK
from dpboost._mechanisms import poisson_sample
from dpboost._noise import make_noise
from dpboost._parameters import DPBOOST_PAPER
from dpboost._records import (
    POISSON_STREAM,
    POSITION_STREAM,
    Partition,
    RecordCoins,
)

KEY = bytes(range(32))


@pytest.mark.parametrize("n_threads", [1, 3])
def test_coins_of_a_row_do_not_depend_on_the_range_asked_nor_the_threads(n_threads):
    coins = RecordCoins(KEY, n_threads=n_threads)
    n = 3 * COIN_CHUNK + 5
    whole = RecordCoins(KEY).uniforms((POISSON_STREAM, 0, 7), 0, n)
    for cut in (1, 15, 16, COIN_CHUNK - 3, COIN_CHUNK, 2 * COIN_CHUNK + 7):
        parts = np.concatenate([coins.uniforms((POISSON_STREAM, 0, 7), 0, cut),
                                coins.uniforms((POISSON_STREAM, 0, 7), cut, n)])
        np.testing.assert_array_equal(parts, whole)
    assert coins.uniforms((POISSON_STREAM, 0, 7), 5, 5).size == 0


def test_coins_are_uniform_on_their_grid_and_keyed_by_stream_and_key():
    n = 200_000
    u = RecordCoins(KEY).uniforms((POSITION_STREAM, 1, 0), 0, n)
    assert ((u >= 0) & (u < 1)).all() and (u * 2**32 == np.floor(u * 2**32)).all()
    assert stats.kstest(u, stats.uniform.cdf).pvalue > 1e-3
    # Negative control: the law of a square of uniforms is rejected.
    assert stats.kstest(u**2, stats.uniform.cdf).pvalue < 1e-3
    others = [RecordCoins(KEY).uniforms((POSITION_STREAM, 1, 1), 0, n),
              RecordCoins(KEY).uniforms((POISSON_STREAM, 1, 0), 0, n),
              RecordCoins(bytes(32)).uniforms((POSITION_STREAM, 1, 0), 0, n)]
    for v in others:
        # independent uniforms: correlation within 5 standard errors of 0
        assert abs(np.corrcoef(u, v)[0, 1]) < 5 / np.sqrt(n)


def test_noise_sources_key_the_coins_from_their_draws():
    assert make_noise(3).coins() == make_noise(3).coins()
    assert make_noise(3).coins() != make_noise(4).coins()
    secure = make_noise(None)
    # Two keys of 32 bytes from os.urandom: equal with probability 2**-256.
    assert secure.coins() != secure.coins() and len(secure.coins().key) == 32


def test_poisson_rate_never_exceeds_the_accounted_rate():
    rate = 0.3
    threshold = np.floor(rate * 2**32) * 2.0**-32
    edge = np.array([threshold - 2.0**-32, threshold])
    assert poisson_sample(edge, rate).tolist() == [True, False]
    assert poisson_sample(np.array([1 - 2.0**-32]), 1.0).tolist() == [True]
    n = 400_000
    kept = poisson_sample(RecordCoins(KEY).uniforms((POISSON_STREAM, 0, 0), 0, n), rate)
    assert stats.binomtest(int(kept.sum()), n, rate).pvalue > 1e-3


class SplitRecords:
    """Several partitions in this process, cut at ``cuts`` (rows), summed in order: what
    ``dpboost.dask.DaskRecords`` does on a cluster."""

    def __init__(self, partition, cuts):
        bounds = [0, *cuts, partition.X.shape[0]]
        self.parts = [Partition.of(partition.X[a:b], partition.y_rows[:, a:b].T,
                                   partition.n_threads) for a, b in zip(bounds, bounds[1:])]

    def update(self, function, *args):
        self.parts = [function(part, *args) for part in self.parts]

    def reduce(self, function, *args):
        return sum(np.asarray(function(part, *args), dtype=np.float64) for part in self.parts)

    def number_rows(self):
        first = np.cumsum([0] + [p.y_rows.shape[1] for p in self.parts[:-1]])
        self.parts = [replace(p, first_row=int(f)) for p, f in zip(self.parts, first)]


def _split(base, cuts):
    class Split(base):
        def _records(self, X, y, *args):
            records, n_outputs, inputs = super()._records(X, y, *args)
            return SplitRecords(records.partition, cuts), n_outputs, inputs
    Split.__name__ = base.__name__
    return Split


SETTINGS = {
    "default": (DPGBClassifier, {}),
    "dpboost_paper": (DPGBClassifier, {**DPBOOST_PAPER, "n_estimators": 12}),
    "softmax-private-bounds-sketch": (DPGBClassifier, {
        "classes": [0, 1, 2], "feature_bounds": "private", "split_candidates": "sketch",
        "split_selection": "exponential", "n_estimators": 6, "interaction_cst": None}),
    "regressor-hessian-gdf-private-target": (DPGBRegressor, {"target_bounds": "private",
                                                             "n_estimators": 15}),
    # the per-record budgets live in the partitions
    "default-renyi-filter": (DPGBClassifier, {"renyi_filter": 0.25, "n_estimators": 40}),
}


@pytest.mark.parametrize("setting", sorted(SETTINGS))
@pytest.mark.parametrize("cuts", [(1,), (700, 701, 1500)])
def test_a_fit_over_partitions_is_the_in_memory_fit(setting, cuts, assert_same_model):
    base, params = SETTINGS[setting]
    rng = np.random.default_rng(4)
    X = rng.normal(size=(2000, 4))
    X[::13, 1] = np.nan
    if base is DPGBRegressor:
        y, public = X[:, 0] * 2 + rng.normal(size=2000), {"feature_bounds": (-3, 3)}
    else:
        y = np.digitize(X[:, 0] + rng.normal(size=2000), [0.0] if "classes" not in params
                        else [-0.5, 0.5])
        public = {"classes": [0, 1], "feature_bounds": (-3, 3)}
    params = {**public, **params, "epsilon": 2.0, "random_state": 1}
    whole = base(**params).fit(X, y)
    split = _split(base, cuts)(**params).fit(X, y)
    assert_same_model(whole, split)
