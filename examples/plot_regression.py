"""
Regression
==========

Median house values of California's census block groups (1990). The regressor needs the
target's public range, ``target_bounds``: targets are clipped to it, its width sets every
sensitivity, and predictions stay inside it.

The default 100 trees, on all 16,512 training rows.
"""

import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.metrics import mean_absolute_error
from sklearn.model_selection import train_test_split

from dpboost import DPGBRegressor

DATA = Path(os.environ.get("DPBOOST_DATASETS", "../shared/datasets"))
if not (DATA / "california_housing.csv.gz").exists():
    raise SystemExit(f"skipped: this example reads California housing from {DATA} "
                     "(set DPBOOST_DATASETS)")

frame = pd.read_csv(DATA / "california_housing.csv.gz")
y = frame.pop("target").to_numpy()

# %%
# Public bounds
# -------------
# Counts per block group (rooms, bedrooms, people, households) span orders of magnitude: on an
# equal-width grid a generous bound would put nearly every record in the first bin. A public
# transform, ``log1p``, applied to each record alone, fixes that before any bound is chosen.
counts = ["total_rooms", "total_bedrooms", "population", "households"]
X = frame.assign(**{c: np.log1p(frame[c]) for c in counts})
bounds = {"longitude": (-124.5, -114.0), "latitude": (32.5, 42.0),  # California's extent
          "housing_median_age": (0, 100),                           # years
          "median_income": (0, 16)}                                 # tens of thousands of USD
bounds.update({c: (0, np.log1p(100_000)) for c in counts})          # up to 100,000 per group
target_bounds = (0, 500_001)   # values are top-coded at 500,001 USD

X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)

# %%
# Fit and evaluate
# ----------------
for epsilon in (0.5, 2.0, np.inf):
    reg = DPGBRegressor(epsilon=epsilon, feature_bounds=bounds,
                        target_bounds=target_bounds).fit(X_train, y_train)
    mae = mean_absolute_error(y_test, reg.predict(X_test))
    print(f"epsilon {epsilon}: test MAE {mae:,.0f} USD")
print(f"predicting the middle of the target's range: MAE "
      f"{mean_absolute_error(y_test, np.full_like(y_test, 250_000.5)):,.0f} USD")

# %%
# Predictions against the truth (epsilon 2)
# -----------------------------------------
reg = DPGBRegressor(epsilon=2.0, feature_bounds=bounds,
                    target_bounds=target_bounds).fit(X_train, y_train)
plt.scatter(y_test, reg.predict(X_test), s=2, alpha=0.3)
plt.plot(target_bounds, target_bounds, color="black", linewidth=1)
plt.xlabel("median house value (USD)")
plt.ylabel("prediction at epsilon 2 (USD)")
