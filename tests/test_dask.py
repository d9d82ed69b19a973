"""``dpboost.dask`` on a real cluster: ``distributed.LocalCluster`` with 2 worker processes.

With a fixed seed a Dask fit releases the in-memory fit's model (same splits and ledger, leaf
values to float rounding) whatever the partitions; predictions on collections are collections;
public inputs are required before any task; a worker killed mid-fit is recomputed by Dask (the
partition functions are pure and the coins keyed), and a fit Dask cannot finish fails cleanly;
and the record-and-replay harness (tests/replay_harness.py) passes on the Dask path.
"""

import os
import time
import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
pd = pytest.importorskip("pandas")

from cluster_cases import RECOVERY_PARAMS, SETTINGS, recovery_case  # noqa: E402
from cluster_cases import data as _data  # noqa: E402

from dpboost import (  # noqa: E402
    BudgetExceededError,
    DPGBClassifier,
    DPGBRegressor,
    PrivacyAccountant,
)
from dpboost.dask import DaskDPGBClassifier, DaskDPGBRegressor, DaskRecords  # noqa: E402


# The tests that run tasks are in the slow suite: the workers' first tasks import dpboost and
# load its kernels (half a minute of the default suite on 2 cores). The refusals, which must
# come before any task, run on the cluster in the default suite.
@pytest.fixture(scope="module")
def client():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the cluster's own start-up warnings (ports, memory)
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.mark.slow
@pytest.mark.parametrize("setting", sorted(SETTINGS))
def test_a_dask_fit_is_the_in_memory_fit(client, setting, assert_same_model):
    local_class, params = SETTINGS[setting]
    params = {**params, "epsilon": 2.0, "random_state": 3}
    X, y = _data(regression=local_class is DPGBRegressor)
    local = local_class(**params).fit(X, y)
    dask_class = DaskDPGBRegressor if local_class is DPGBRegressor else DaskDPGBClassifier
    # uneven partitions, one of them a single row
    chunks = (1, 1200, 1799)
    on_dask = dask_class(client=client, **params).fit(da.from_array(X, chunks=(chunks, 4)),
                                                      da.from_array(y, chunks=(chunks,)))
    assert_same_model(local, on_dask)
    assert on_dask.privacy_report() == local.privacy_report()


@pytest.mark.slow
def test_partitions_do_not_change_the_model(client, assert_same_model):
    X, y = _data()
    params = {"classes": [0, 1, 2], "feature_bounds": (-4, 4), "random_state": 5,
              "n_estimators": 30}
    frame = pd.DataFrame(X, columns=list("abcd"))
    fits = [DaskDPGBClassifier(client=client, **params).fit(
        dd.from_pandas(frame, npartitions=k), dd.from_pandas(pd.Series(y), npartitions=k))
        for k in (1, 7)]
    assert_same_model(*fits)
    assert list(fits[0].feature_names_in_) == list("abcd")


@pytest.mark.slow
def test_columns_of_one_parquet_dataset_stay_aligned(client, tmp_path, assert_same_model):
    # X and y as column projections of one read_parquet: dask plans each projection on its own
    # and fuses the files of the narrow one (y) into fewer partitions; the fit must pair each
    # record's features with its own label (it raised an IndexError, or could mispair them).
    X, y = _data()
    frame = pd.DataFrame(X, columns=list("abcd")).assign(label=y)
    for i, start in enumerate(range(0, len(frame), 500)):
        frame.iloc[start:start + 500].to_parquet(tmp_path / f"part-{i}.parquet", index=False)
    params = {"classes": [0, 1, 2], "feature_bounds": (-4, 4), "random_state": 2,
              "n_estimators": 20}
    data = dd.read_parquet(str(tmp_path))
    on_dask = DaskDPGBClassifier(client=client, **params).fit(data.drop(columns="label"),
                                                              data["label"])
    assert_same_model(DPGBClassifier(**params).fit(frame.drop(columns="label"), y), on_dask)


@pytest.mark.slow
def test_predictions_on_collections_are_collections(client):
    X, y = _data()
    params = {"classes": [0, 1, 2], "feature_bounds": (-4, 4), "random_state": 1,
              "n_estimators": 20}
    model = DaskDPGBClassifier(client=client, **params).fit(da.from_array(X, chunks=1000),
                                                            da.from_array(y, chunks=1000))
    local = model.to_local()
    assert type(local) is DPGBClassifier and "client" not in local.get_params()
    Xd = da.from_array(X, chunks=700)
    proba = model.predict_proba(Xd)
    assert isinstance(proba, da.Array)
    np.testing.assert_array_equal(proba.compute(), local.predict_proba(X))
    np.testing.assert_array_equal(model.predict(Xd).compute(), local.predict(X))
    frame = dd.from_pandas(pd.DataFrame(X), npartitions=3)
    labels = model.predict(frame)
    assert isinstance(labels, dd.Series)
    np.testing.assert_array_equal(labels.compute().to_numpy(), local.predict(X))
    # the fitted model predicts on numpy without Dask
    np.testing.assert_array_equal(model.predict(X), local.predict(X))


@pytest.mark.parametrize("missing", ["feature_bounds", "classes"])
def test_public_inputs_are_required(client, missing):
    X, y = _data(300)
    params = {"classes": [0, 1, 2], "feature_bounds": (-4, 4), missing: None}
    accountant = PrivacyAccountant(epsilon=5.0, delta=1e-3)
    with pytest.raises(ValueError, match=f"{missing}=None: DaskDPGBClassifier needs public"):
        DaskDPGBClassifier(client=client, accountant=accountant, **params).fit(
            da.from_array(X, chunks=100), da.from_array(y, chunks=100))
    assert accountant.spent() == 0.0


def test_in_memory_data_is_refused_with_a_pointer(client):
    X, y = _data(300)
    with pytest.raises(TypeError, match="dask DataFrame or a dask Array.*DPGBClassifier"):
        DaskDPGBClassifier(client=client, classes=[0, 1, 2], feature_bounds=(-4, 4)).fit(X, y)


def test_budget_is_refused_before_any_record_is_read(client):
    X, y = _data(300)
    accountant = PrivacyAccountant(epsilon=0.5, delta=1e-3)
    loads = []

    def spy(*args):  # pragma: no cover - must not run
        loads.append(1)
        return args[0]

    Xd = da.from_array(X, chunks=100).map_blocks(spy, dtype=X.dtype, meta=np.empty((0, 0)))
    with pytest.raises(BudgetExceededError, match=r"DaskDPGBClassifier\(epsilon=1, "
                                                   r"delta=1e-05\) would spend"):
        DaskDPGBClassifier(client=client, accountant=accountant, classes=[0, 1, 2],
                           feature_bounds=(-4, 4)).fit(Xd, da.from_array(y, chunks=100))
    assert accountant.spent() == 0.0 and loads == []


def _after_reductions(monkeypatch, n, action):
    """At the ``n``-th reduction of the next Dask fit, once its queued partition updates have
    run and no task is running, call ``action(records, reduce, function, *args)`` in place of
    the reduction (``reduce``: the real one). Returns the list of the fit's reductions."""
    real = DaskRecords.reduce
    reductions = []

    def reduce(self, function, *args):
        reductions.append(function)
        if len(reductions) == n:
            self._run_pending()
            distributed.wait(self._parts)
            return action(self, real, function, *args)
        return real(self, function, *args)

    monkeypatch.setattr(DaskRecords, "reduce", reduce)
    return reductions


def _kill(client, worker):
    """Kill ``worker``'s process (its nanny starts a new one, which has none of its data) and
    wait until the scheduler has removed it."""
    client.run(os._exit, 1, workers=[worker], on_error="ignore")
    deadline = time.monotonic() + 60
    while worker in client.scheduler_info(n_workers=-1)["workers"]:
        assert time.monotonic() < deadline, f"{worker} was not removed"
        time.sleep(0.05)


@pytest.mark.slow
def test_a_worker_lost_mid_fit_is_recomputed_to_the_same_model(client, assert_same_model,
                                                               monkeypatch):
    # docs/privacy.md, "Training on a cluster": Dask recomputes a lost worker's partitions by
    # the same pure functions and keyed coins, so the fit releases the in-memory model. The
    # worker that holds the most partitions is killed at a fixed point of the fit (before its
    # fifth reduction, in the first trees), between tasks; the partitions only it held must be
    # recomputed from the data and the updates of the trees before.
    X, y, expected, spent = recovery_case(6000)
    accountant = PrivacyAccountant(epsilon=10.0, delta=1e-3)
    lost = []

    def kill_then_reduce(records, reduce, function, *args):
        holders = client.who_has(records._parts)
        workers = [w for held in holders.values() for w in held]
        victim = max(sorted(set(workers)), key=workers.count)
        lost.extend(key for key, held in holders.items() if tuple(held) == (victim,))
        _kill(client, victim)
        return reduce(records, function, *args)

    reductions = _after_reductions(monkeypatch, 5, kill_then_reduce)
    try:
        model = DaskDPGBClassifier(client=client, accountant=accountant,
                                   **RECOVERY_PARAMS).fit(
            da.from_array(X, chunks=1000), da.from_array(y, chunks=1000))
    finally:
        client.wait_for_workers(2, timeout=60)
    assert len(lost) >= 1 and len(reductions) > 5  # the fit went on without the partitions
    assert_same_model(expected, model)
    assert accountant.spent() == pytest.approx(spent, rel=1e-12)  # registered once


@pytest.mark.slow
def test_a_fit_dask_cannot_finish_fails_cleanly(client, monkeypatch):
    # The other documented outcome: a fit that fails anyway leaves nothing fitted and nothing
    # registered with an accountant. Each task of the fifth reduction kills its worker; with no
    # failure allowed, the scheduler gives the task up (KilledWorker) and the fit raises.
    def exit_worker(partition):
        os._exit(1)

    def fail(records, reduce, function, *args):
        return reduce(records, exit_worker)

    def set_allowed_failures(n, dask_scheduler=None):
        previous, dask_scheduler.allowed_failures = dask_scheduler.allowed_failures, n
        return previous

    X, y = _data(3000)
    accountant = PrivacyAccountant(epsilon=10.0, delta=1e-3)
    model = DaskDPGBClassifier(client=client, accountant=accountant, classes=[0, 1, 2],
                               feature_bounds=(-4, 4), random_state=7, n_estimators=10)
    _after_reductions(monkeypatch, 5, fail)
    allowed = client.run_on_scheduler(set_allowed_failures, 0)
    try:
        with pytest.raises(distributed.scheduler.KilledWorker):
            model.fit(da.from_array(X, chunks=1000), da.from_array(y, chunks=1000))
    finally:
        client.run_on_scheduler(set_allowed_failures, allowed)
        client.wait_for_workers(2, timeout=60)
    assert not hasattr(model, "_forest") and accountant.spent() == 0.0


@pytest.mark.slow
def test_record_and_replay_on_the_dask_path(client):
    import cloudpickle
    import replay_harness

    # The replay's coins (replay_harness.ExtraCoins) travel to the workers by value.
    cloudpickle.register_pickle_by_value(replay_harness)

    def on_dask(local_factory):
        def make(noise):
            local = local_factory(noise)
            on_cluster = _Regressor if isinstance(local, DPGBRegressor) else _Classifier
            return on_cluster(client=client, **local.get_params())
        return make

    for config in _REPLAY_CONFIGS:
        D, D_prime = replay_harness.neighbours(config["task"], config["data"],
                                               config["features"], config["label"])
        replay_harness.replay(on_dask(replay_harness.estimator_factory(config)), D, D_prime,
                              probe=replay_harness.probe_set(config["data"]),
                              extra_coin=config["coin"], added_row=len(D[1]))


class _FromMemory:
    """``fit`` on numpy / pandas data as Dask collections of 3 partitions (the replay harness
    holds D and D' in memory)."""

    def fit(self, X, y):
        if isinstance(X, pd.DataFrame):
            X = dd.from_pandas(X, npartitions=3)
            y = dd.from_pandas(pd.Series(y), npartitions=3)
        else:
            chunks = (-(-len(y) // 3),)
            X = da.from_array(np.asarray(X, dtype=np.float64), chunks=chunks + (-1,))
            y = da.from_array(np.asarray(y), chunks=chunks)
        return super().fit(X, y)


class _Classifier(_FromMemory, DaskDPGBClassifier):
    pass


class _Regressor(_FromMemory, DaskDPGBRegressor):
    pass


def _replay_config(**config):
    base = {"task": "binary-logistic", "split_selection": "random", "leaf_noise": "gaussian",
            "budget_allocation": "sequential", "split_candidates": "hessian", "subsample": 0.5,
            "delta": 1e-5, "learning_rate": 0.3, "gradient_filtering": False,
            "leaf_clipping": True, "l2_regularization": 0.1, "min_child_weight": 0.0,
            "max_depth": 2, "data": "missing", "features": "typical", "label": "high",
            "coin": 0.0}
    return {**base, **config}


_REPLAY_CONFIGS = [
    _replay_config(),
    _replay_config(task="ternary-square", split_selection="exponential", leaf_noise="laplace",
                   budget_allocation="eoe", split_candidates="uniform", delta=0.0,
                   gradient_filtering=True, features="far", label="low", coin=0.999999),
    _replay_config(task="regression", split_candidates="sketch", data="categorical",
                   features="new_category", label="high", bounds="private"),
    _replay_config(renyi_filter=0.5, gradient_bound=0.4),
]


def test_private_category_lists_are_refused_before_any_task(client):
    X, y = _data(300)
    accountant = PrivacyAccountant(epsilon=5.0, delta=1e-3)
    with pytest.raises(ValueError, match="categories='private' is not supported by "
                                         "DaskDPGBClassifier yet"):
        DaskDPGBClassifier(client=client, classes=[0, 1, 2], feature_bounds=(-4, 4),
                           categorical_features=[0], categories="private",
                           accountant=accountant).fit(da.from_array(X, chunks=100),
                                                      da.from_array(y, chunks=100))
    assert accountant.spent() == 0.0


def test_dask_counts_a_partition_by_its_arrays():
    # Dask spills and steals work by ``sizeof``: counted as sys.getsizeof (about 100 bytes),
    # the partitions were spilled to disk at every tree and moved between workers as if free
    # (benchmarks/README.md, "Training on a cluster").
    from dataclasses import replace

    from dask.sizeof import sizeof

    from dpboost._records import InMemoryRecords

    X_binned = np.zeros((5000, 4), dtype=np.uint8, order="F")
    rows = np.arange(0, 5000, 5, dtype=np.int32)
    partition = replace(InMemoryRecords.of_tree(X_binned, rows, np.ones(rows.size, np.float32))
                        .partition, raw=np.zeros((1, 5000)))
    arrays = X_binned.nbytes + partition.raw.nbytes + rows.nbytes + 4 * rows.size
    assert arrays <= sizeof(partition) <= arrays + 2 * rows.nbytes + 4096


def test_auto_trees_read_the_schema_of_a_collection():
    # n_estimators="auto" (the regressor's default) reads the number of columns from the
    # collection's metadata, as the in-memory fit reads it from the array: the same trees.
    from dpboost._public_inputs import schema_width

    X = np.tile(_data(n=600, regression=True)[0], 3)  # 12 columns: 25 trees each at epsilon 4
    # (the last configuration: the large regime of the private row count)
    local = DPGBRegressor(epsilon=4.0)._configs(n_features=schema_width(X))[-1]
    for data in (dd.from_pandas(pd.DataFrame(X), npartitions=3), da.from_array(X, chunks=200)):
        model = DaskDPGBRegressor(epsilon=4.0)
        assert model._configs(n_features=schema_width(model._schema(data)))[-1].n_estimators == (
            local.n_estimators) == 300
