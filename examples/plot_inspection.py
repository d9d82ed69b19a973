"""
Permutation importance and partial dependence
=============================================

dpboost's estimators work with scikit-learn's model inspection tools.
``permutation_importance`` measures how much the score drops when a feature's values are
shuffled, and ``PartialDependenceDisplay`` draws the average prediction as one feature varies.
Both compute on the data you give them: the model is private, but these statistics are of that
data, so use held-out or public records (the fit's guarantee covers the training records only).

California housing, the default regressor at epsilon 2 (100 trees), importances on 1,000 held-out
records with 5 shuffles each.
"""

import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.inspection import PartialDependenceDisplay, permutation_importance
from sklearn.model_selection import train_test_split

from dpboost import DPGBRegressor

DATA = Path(os.environ.get("DPBOOST_DATASETS", "../shared/datasets"))
if not (DATA / "california_housing.csv.gz").exists():
    raise SystemExit(f"skipped: this example reads California housing from {DATA} "
                     "(set DPBOOST_DATASETS)")

frame = pd.read_csv(DATA / "california_housing.csv.gz")
y = frame.pop("target").to_numpy()
counts = ["total_rooms", "total_bedrooms", "population", "households"]
X = frame.assign(**{c: np.log1p(frame[c]) for c in counts})   # as in the regression example
bounds = {"longitude": (-124.5, -114.0), "latitude": (32.5, 42.0),
          "housing_median_age": (0, 100), "median_income": (0, 16)}
bounds.update({c: (0, np.log1p(100_000)) for c in counts})
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
reg = DPGBRegressor(epsilon=2.0, feature_bounds=bounds,
                    target_bounds=(0, 500_001)).fit(X_train, y_train)

# %%
# Permutation importance
# ----------------------
held_out, y_held_out = X_test.iloc[:1000], y_test[:1000]
result = permutation_importance(reg, held_out, y_held_out, n_repeats=5, random_state=0)
order = np.argsort(result.importances_mean)
plt.barh(X.columns[order], result.importances_mean[order], xerr=result.importances_std[order])
plt.xlabel("drop in R² when shuffled")
plt.tight_layout()

# %%
# The model's own importances use released values only: the gain recomputed from the noisy
# leaf statistics of every split.
print(dict(zip(X.columns, reg.feature_importances_.round(3).tolist())))

# %%
# Partial dependence
# ------------------
PartialDependenceDisplay.from_estimator(reg, held_out, ["median_income", "latitude"],
                                        grid_resolution=30)
plt.tight_layout()
