"""
Training on Dask
================

``dpboost.dask`` fits on Dask collections that need not fit in one machine's memory: each worker
bins its partitions on the public grid and returns sums of its records' statistics; the client
adds them and adds the noise once. The released model is the one the in-memory fit would give.

A local cluster of in-process workers on 20,000 made-up records, 50 trees; on a real cluster,
``Client("scheduler-address:8786")`` and ``dask.dataframe.read_parquet``.
"""

import dask.array as da
import numpy as np
from distributed import Client, LocalCluster

from dpboost.dask import DaskDPGBClassifier

rng = np.random.default_rng(0)
X = rng.uniform(-1, 1, size=(20_000, 5))
y = (X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(0, 0.3, 20_000) > 0.2).astype(int)

# %%
# Fit on the cluster
# ------------------
# The public inputs are required: reading bounds or classes off a distributed data set would be
# a non-private pass over it.
with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                  dashboard_address=":0") as cluster, Client(cluster) as client:
    X_dask = da.from_array(X, chunks=(5_000, -1))   # 4 partitions
    y_dask = da.from_array(y, chunks=5_000)
    clf = DaskDPGBClassifier(epsilon=1.0, n_estimators=50, feature_bounds=(-1, 1),
                             classes=[0, 1]).fit(X_dask, y_dask)
    proba = clf.predict_proba(X_dask).compute()     # collections in, collections out
    print(f"accuracy on the training records {np.mean((proba[:, 1] > 0.5) == y):.3f}")

# %%
# Serve without Dask
# ------------------
local = clf.to_local()   # a DPGBClassifier: pickle it, export it, predict on numpy
assert (local.predict_proba(X) == proba).all()
print(local.privacy_report().splitlines()[0])
