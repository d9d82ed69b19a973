"""
SHAP values
===========

``shap.TreeExplainer`` explains a dpboost model through its XGBoost export: pass it
``clf.to_xgboost()`` and explain ``clf.encode(X)``. Two things to know:

- **Interventional SHAP** (a background set) weighs nothing by the training data; the background
  should be data you may use, here held-out records (a background drawn from the training
  records would make the explanation a statistic of them, outside the fit's guarantee).
- **Path-dependent SHAP** (no background) weighs each branch by the export's covers, which are the
  released noisy weights of the leaves, never exact counts: it is post-processing of the model.

The default 200 trees on Adult at epsilon 1; 500 test records explained against 100 others.
"""

import os
from pathlib import Path

import numpy as np
import shap

from dpboost import DPGBClassifier
from dpboost.datasets import estimator_params, read_csv

DATA = Path(os.environ.get("DPBOOST_DATASETS", "../shared/datasets"))
if not (DATA / "adult_train.csv.gz").exists():
    raise SystemExit(f"skipped: this example reads Adult from {DATA} (set DPBOOST_DATASETS)")

X_train, y_train = read_csv(DATA / "adult_train.csv.gz")
X_test, _ = read_csv(DATA / "adult_test.csv.gz")
public = estimator_params("adult", X_train.columns)
clf = DPGBClassifier(epsilon=1.0, **public).fit(X_train, y_train)

# %%
# The model as XGBoost serves it
# ------------------------------
# ``to_xgboost`` hands out the model as an ``xgboost.Booster``; its trees split categorical
# columns on their codes (a value's position in the public list, NaN when it is not in the
# list), and ``encode`` turns records into those codes from the public lists alone.
booster = clf.to_xgboost()
explained, background = clf.encode(X_test.iloc[:500]), clf.encode(X_test.iloc[500:600])

# %%
# Interventional SHAP values
# --------------------------
explainer = shap.TreeExplainer(booster, data=background, feature_perturbation="interventional",
                               model_output="raw")
values = explainer.shap_values(explained)
margin = clf.decision_function(X_test.iloc[:500])
print("largest |sum of SHAP values + expected value - margin|:",
      np.abs(values.sum(axis=1) + explainer.expected_value - margin).max())

# %%
# The default model is additive (each tree splits on one feature), so each feature's SHAP value
# is its own term of the margin, centred on the background.
shap.summary_plot(values, explained, show=False)
