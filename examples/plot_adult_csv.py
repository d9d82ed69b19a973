"""
Adult from a CSV file
=====================

Train the default classifier on UCI Adult read with pandas, as the file comes (string columns,
missing values), with nothing but public inputs: the bounds and category lists of the data's
documentation (``dpboost.datasets``). Then see what privacy costs over a range of epsilon.

All 32,561 training rows and 200 trees (the default) per fit; three fits in all.
"""

import os
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from dpboost import DPGBClassifier
from dpboost.datasets import estimator_params, read_csv
from dpboost.plotting import plot_privacy_utility

DATA = Path(os.environ.get("DPBOOST_DATASETS", "../shared/datasets"))
if not (DATA / "adult_train.csv.gz").exists():
    raise SystemExit(f"skipped: this example reads Adult from {DATA} (set DPBOOST_DATASETS)")

# %%
# Read the files
# --------------
# ``read_csv`` reads empty fields and ``?`` as missing values and nothing else (Adult's
# original files write ``?``).
X_train, y_train = read_csv(DATA / "adult_train.csv.gz")
X_test, y_test = read_csv(DATA / "adult_test.csv.gz")
print(X_train.dtypes.value_counts().to_dict())

# %%
# The public inputs
# -----------------
# Every bound and category list comes from Adult's documentation, with its source written beside
# it in ``dpboost.datasets`` (e.g. the census top-codes age at 90); none is read from the rows.
public = estimator_params("adult", X_train.columns)
print(public["feature_bounds"][:3])
print(public["categorical_features"])

# %%
# Fit and evaluate
# ----------------
clf = DPGBClassifier(epsilon=1.0, **public).fit(X_train, y_train)
proba = clf.predict_proba(X_test)[:, 1]
print(f"test ROC AUC {roc_auc_score(y_test, proba):.3f}, "
      f"error {np.mean(clf.predict(X_test) != y_test):.3f}, "
      f"epsilon spent {clf.privacy_spent_:.3f} at delta {clf.delta}")
print(clf.privacy_report())

# %%
# What privacy costs
# ------------------
# The same fit at a tenth of the budget, and at ``epsilon=np.inf``: the same code without noise.
rows = []
for epsilon in (0.1, 1.0, np.inf):
    model = clf if epsilon == 1.0 else DPGBClassifier(epsilon=epsilon, **public).fit(X_train,
                                                                                     y_train)
    auc = roc_auc_score(y_test, model.predict_proba(X_test)[:, 1])
    rows.append({"epsilon": epsilon, "ROC AUC": auc, "method": "default"})
    print(f"epsilon {epsilon}: ROC AUC {auc:.3f}")
plot_privacy_utility(rows, y="ROC AUC", hue="method")
