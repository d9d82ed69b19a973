"""
A private hyper-parameter search
================================

Tuning on the private data spends privacy: every fit of a grid search is a release.
``PrivateSearchCV`` (Papernot & Steinke, ICLR 2022) runs a random number of trials, each with a
random setting, and releases only the best one; the whole search, however many trials it ran,
costs its ``epsilon``. ``PrivacyAccountant`` counts that search and any other fit against one
total.

On 10,000 rows of Adult with at most 100 trees per trial, to keep the example fast.
"""

import os
from pathlib import Path

from sklearn.metrics import roc_auc_score

from dpboost import DPGBClassifier, PrivacyAccountant, PrivateSearchCV
from dpboost.datasets import estimator_params, read_csv

DATA = Path(os.environ.get("DPBOOST_DATASETS", "../shared/datasets"))
if not (DATA / "adult_train.csv.gz").exists():
    raise SystemExit(f"skipped: this example reads Adult from {DATA} (set DPBOOST_DATASETS)")

X, y = read_csv(DATA / "adult_train.csv.gz")
X_test, y_test = read_csv(DATA / "adult_test.csv.gz")
X, y = X.iloc[:10_000], y[:10_000]
public = estimator_params("adult", X.columns)

# %%
# One budget for everything
# -------------------------
budget = PrivacyAccountant(epsilon=4.0, delta=1e-5)

# %%
# The search
# ----------
# Trials must be zero-concentrated releases (Gaussian leaves, ``delta > 0``, every record in
# every tree), so one Rényi bound covers any setting the search may draw.
template = DPGBClassifier(subsample=1.0, **public)
search = PrivateSearchCV(
    template,
    {"max_depth": [3, 4, 6], "learning_rate": [0.1, 0.3], "n_estimators": [50, 100]},
    epsilon=2.0, accountant=budget,
).fit(X, y)
print("best setting:", search.best_params_)
print(f"its noisy score {search.best_score_:.3f}; the search spent {search.privacy_spent_:.3f}")
auc = roc_auc_score(y_test, search.predict_proba(X_test)[:, 1])
print(f"test ROC AUC of the released model: {auc:.3f}")

# %%
# What is left
# ------------
# The default estimator at epsilon 1 on the same records, counted in the same accountant:
default = DPGBClassifier(epsilon=1.0, accountant=budget, **public).fit(X, y)
auc = roc_auc_score(y_test, default.predict_proba(X_test)[:, 1])
print(f"default at epsilon 1: test ROC AUC {auc:.3f}")
print(budget.report())
