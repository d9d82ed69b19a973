"""Categorical features with public category lists: encoding, leaks, persistence."""

import warnings

import numpy as np
import pytest

from dpboost import DPGBClassifier, DPGBRegressor, PrivacyLeakWarning, ReproducibleNoiseWarning

pd = pytest.importorskip("pandas")

COLOURS = ["red", "green", "blue", "black"]
SIZES = ["S", "M", "L", "XL"]


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(0)
    n = 2000
    colour = rng.choice(COLOURS, size=n)
    size = pd.Categorical(rng.choice(["S", "M", "L"], size=n), categories=["S", "M", "L", "XL"])
    x = rng.uniform(0, 1, size=n)
    y = ((colour == "blue") | (x > 0.8)).astype(int)
    X = pd.DataFrame({"colour": colour, "size": size, "x": x})
    X.loc[::50, "colour"] = None  # missing values
    return X, y


def _clf(**kw):
    params = {"epsilon": np.inf, "n_estimators": 20, "max_depth": 3, "classes": [0, 1],
              "feature_bounds": [(0, 1)] * 3, "categorical_features": "from_dtype",
              "categories": {"colour": COLOURS, "size": SIZES}, "random_state": 0}
    params.update(kw)
    return DPGBClassifier.dpboost_paper(**params)


def test_public_lists_train_without_warnings_and_learn(frame):
    X, y = frame
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        warnings.simplefilter("ignore", ReproducibleNoiseWarning)  # seeded on purpose
        clf = _clf().fit(X, y)
    assert list(clf.categories_) == [0, 1]
    assert list(clf.categories_[0]) == COLOURS
    assert list(clf.categories_[1]) == ["S", "M", "L", "XL"]  # declared, not observed
    np.testing.assert_array_equal(clf.feature_bounds_[:2], [[-0.5, 3.5], [-0.5, 3.5]])
    assert clf.score(X, y) > 0.95


def test_unknown_categories_predict_as_missing(frame):
    X, y = frame
    clf = _clf().fit(X, y)
    unknown, missing = X.head(20).copy(), X.head(20).copy()
    unknown["colour"] = "purple"
    missing["colour"] = None
    np.testing.assert_array_equal(clf.predict_proba(unknown), clf.predict_proba(missing))


def test_category_lists_read_from_data_warn(frame):
    X, y = frame
    with pytest.warns(PrivacyLeakWarning, match="categories .of colour, size"):
        clf = _clf(categories=None).fit(X, y)
    assert sorted(clf.categories_[0]) == sorted(COLOURS)


def test_a_pandas_category_dtype_is_not_a_public_list(frame):
    # pandas builds a category dtype's list from the values (astype("category"),
    # read_csv(dtype="category")): one added record with a new value would show in categories_,
    # the JSON and the tree text. Only `categories` is public; the warning is decided from the
    # schema, so it is the same with or without that record.
    X, y = frame
    added = pd.concat([X, pd.DataFrame({"colour": ["red"], "size": ["HIV+ clinic"], "x": [0.5]})],
                      ignore_index=True)
    added["size"] = added["size"].astype("category")
    for data, labels in ((X, y), (added, np.append(y, 1))):
        with pytest.warns(PrivacyLeakWarning, match=r"categories \(of size\)"):
            _clf(categories={"colour": COLOURS}).fit(data, labels)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        warnings.simplefilter("ignore", ReproducibleNoiseWarning)  # seeded on purpose
        clf = _clf().fit(added, np.append(y, 1))
    assert "HIV+ clinic" not in clf.to_json()


def test_grid_and_codes_do_not_depend_on_the_data(frame):
    X, y = frame
    a = _clf(epsilon=1.0).fit(X, y)
    b = _clf(epsilon=1.0).fit(X[X["colour"] == "red"], y[(X["colour"] == "red").to_numpy()])
    np.testing.assert_array_equal(a.feature_bounds_, b.feature_bounds_)
    assert all((a.categories_[j] == b.categories_[j]).all() for j in a.categories_)


@pytest.mark.parametrize("spec", [["colour", "size"], [0, 1], [True, True, False]])
def test_indices_names_and_masks_are_equivalent(frame, spec):
    X, y = frame
    reference = _clf().fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(_clf(categorical_features=spec).fit(X, y).predict_proba(X),
                                  reference)


def test_numpy_object_input_and_regressor():
    rng = np.random.default_rng(1)
    codes = rng.choice(["a", "b", "c"], size=500)
    X = np.column_stack([codes, rng.uniform(0, 1, 500)]).astype(object)
    y = np.where(codes == "b", 5.0, 0.0)
    reg = DPGBRegressor.dpboost_paper(epsilon=np.inf, n_estimators=10, max_depth=2,
                                      feature_bounds=(0, 1),
                                      target_bounds=(0, 5), categorical_features=[0],
                                      categories={0: ["a", "b", "c"]}, random_state=0).fit(X, y)
    pred = reg.predict(X)
    assert pred[codes == "b"].min() > pred[codes != "b"].max() + 2


@pytest.mark.parametrize("spec, message", [(["nope"], "not a column"), ([7], "outside"),
                                           ([True], "mask has shape")])
def test_bad_categorical_features_raise(frame, spec, message):
    X, y = frame
    with pytest.raises(ValueError, match=message):
        _clf(categorical_features=spec).fit(X, y)


def test_json_round_trip_with_categories(frame):
    X, y = frame
    clf = _clf(epsilon=1.0, categories={"colour": COLOURS, 1: ["S", "M", "L", "XL"]}).fit(X, y)
    loaded = DPGBClassifier.from_json(clf.to_json())
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    assert loaded.get_params()["categories"] == clf.get_params()["categories"]
