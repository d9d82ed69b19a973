"""
Pipelines and ColumnTransformer
===============================

dpboost reads string and ``category`` columns itself, so a pipeline needs no encoder in front of
it: the public category lists go to ``categories=`` and each cell is coded by its own value.
An ``OrdinalEncoder`` (or ``OneHotEncoder``) *fitted on the training data* learns its categories
from the records: its ``categories_`` are a statistic of them, released with the model and
outside the guarantee (a category held by one record shows that the record is there). A
``ColumnTransformer`` still does what it is good at, choosing and preparing columns with public
rules.

A small stand-in table: an income band from age, hours and a city, where one city is held by a
single record.
"""

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, OrdinalEncoder

from dpboost import DPGBClassifier

rng = np.random.default_rng(0)
n = 6000
cities = np.array(["Lyon", "Paris", "Nantes", "Lille"])
X = pd.DataFrame({"age": rng.integers(17, 91, n), "hours": rng.integers(1, 100, n),
                  "city": cities[rng.integers(0, 4, n)], "record_id": np.arange(n)})
X.loc[17, "city"] = "Bastia"  # one record alone holds this city
y = ((X["hours"] > 40) ^ (X["city"] == "Paris")).astype(int)
X_train, X_test, y_train, y_test = X[:5000], X[5000:], y[:5000], y[5000:]

# %%
# What an encoder fitted on the records learns
# --------------------------------------------
# ``OrdinalEncoder()`` reads its categories off the training column, so its fitted state
# names the city that one record holds: whoever sees the pipeline learns that record.
encoder = OrdinalEncoder().fit(X_train[["city"]])
print("the fitted encoder's categories:", list(encoder.categories_[0]))

# %%
# The private pipeline
# --------------------
# The city column goes to dpboost as strings with its *public* list (from the data's
# documentation, not from the column): a city outside it, "Bastia" included, shares the
# missing-value bin and nothing about it is released. The ``ColumnTransformer`` drops the
# identifier and rescales hours with a fixed, public rule (the bounds follow the rule);
# ``set_output(transform="pandas")`` keeps the names and the string column.
prepare = ColumnTransformer(
    [("hours", FunctionTransformer(lambda h: h / 10, feature_names_out="one-to-one"), ["hours"]),
     ("keep", "passthrough", ["age", "city"])],
    verbose_feature_names_out=False).set_output(transform="pandas")
model = make_pipeline(prepare, DPGBClassifier(
    epsilon=1.0, feature_bounds={"hours": (0.1, 9.9), "age": (17, 90)},
    categories={"city": ["Lille", "Lyon", "Nantes", "Paris"]}, classes=[0, 1]))
model.fit(X_train, y_train)
clf = model[-1]
print("the model's category lists:", {k: list(v) for k, v in clf.categories_.items()})
print(f"test accuracy {model.score(X_test, y_test):.3f} at epsilon {clf.privacy_spent_:.3f}")

# %%
# If the columns must be encoded before dpboost (a shared preprocessing step, say), give the
# encoder the same public lists, ``OrdinalEncoder(categories=[public_list], handle_unknown=
# "use_encoded_value", unknown_value=np.nan)``, and declare the encoded column categorical
# with the codes as its list: the encoder then learns nothing from the records.
