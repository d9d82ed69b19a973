"""polars and pyarrow tables (through narwhals), pandas nullable dtypes, and the categorical
rules of ``categorical_features="from_dtype"``, the default."""

import warnings

import numpy as np
import pytest

from dpboost import DPGBClassifier, PrivacyLeakWarning
from dpboost._cells import pandas_frame
from dpboost._public_inputs import planned_shape

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pl = pytest.importorskip("polars")
pytest.importorskip("narwhals")

COLOURS = ["red", "green", "blue"]


def _frames(n=400, seed=0):
    """The same records as a pandas frame of nullable dtypes and as a polars frame: a float,
    an integer, a boolean (each with a missing cell) and a string column."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, n)
    colour = rng.choice(COLOURS, n)
    frame = pd.DataFrame({"x": pd.array(x, dtype="Float64"),
                          "k": pd.array(rng.integers(0, 5, n), dtype="Int64"),
                          "flag": pd.array(rng.random(n) > 0.5, dtype="boolean"),
                          "colour": pd.array(colour, dtype="string[pyarrow]")})
    frame.loc[3, "x"], frame.loc[4, "k"], frame.loc[5, "flag"] = pd.NA, pd.NA, pd.NA
    y = ((x > 0) ^ (colour == "blue")).astype(int)
    return frame, pl.from_pandas(frame), y


def _clf(**params):
    base = dict(feature_bounds={"x": (-1, 1), "k": (0, 4), "flag": (0, 1)}, classes=[0, 1],
                categories={"colour": COLOURS}, n_estimators=8, max_depth=3,
                split_selection="exponential", random_state=0, n_jobs=1)
    return DPGBClassifier(**{**base, **params})


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="random_state is set")
        yield


@pytest.mark.parametrize("kind", ["polars", "pyarrow", "polars-categorical", "polars-enum"])
def test_a_table_of_another_library_fits_as_the_pandas_frame(kind):
    frame, polars, y = _frames()
    table = {"polars": polars, "pyarrow": polars.to_arrow(),
             "polars-categorical": polars.with_columns(pl.col("colour").cast(pl.Categorical)),
             "polars-enum": polars.with_columns(pl.col("colour").cast(pl.Enum(COLOURS)))}[kind]
    expected = _clf().fit(frame, y)
    fitted = _clf().fit(table, y)
    np.testing.assert_array_equal(fitted.feature_names_in_, ["x", "k", "flag", "colour"])
    assert {j: list(v) for j, v in fitted.categories_.items()} == {3: COLOURS}
    np.testing.assert_array_equal(fitted._forest.leaf_value, expected._forest.leaf_value)
    np.testing.assert_array_equal(fitted.predict_proba(table), expected.predict_proba(frame))
    # predictions check the columns by name, as for pandas
    with pytest.raises(ValueError, match="feature names"):
        fitted.predict(polars.rename({"x": "z"}))


def test_nullable_dtypes_are_numbers_and_missing_values():
    frame, _, y = _frames()
    fitted = _clf().fit(frame, y)
    as_floats = frame.astype({"x": float, "k": float, "flag": float}).astype(
        {"colour": object})
    expected = _clf().fit(as_floats, y)
    np.testing.assert_array_equal(fitted._forest.leaf_value, expected._forest.leaf_value)


def test_a_dtype_follows_the_schema_not_the_values():
    # A polars Boolean or Int column with a null stays numeric (numpy would make it object or
    # float, and "from_dtype" would then decide from the data).
    _, polars, _ = _frames()
    converted = pandas_frame(polars)
    assert [str(t) for t in converted.dtypes] == ["Float64", "Int64", "boolean", "string"]
    no_nulls = pandas_frame(polars.slice(10, 5))  # rows without a null
    assert list(no_nulls.dtypes) == list(converted.dtypes)
    assert list(pandas_frame(polars, schema_only=True).dtypes) == list(converted.dtypes)


@pytest.mark.parametrize("cast", [pl.String, pl.Categorical, pl.Enum(COLOURS)])
def test_from_dtype_is_the_default_and_a_dtype_list_is_not_public(cast):
    _, polars, y = _frames()
    table = polars.with_columns(pl.col("colour").cast(cast))
    clf = _clf(categories=None)
    assert clf.categorical_features == "from_dtype"
    with pytest.warns(PrivacyLeakWarning, match=r"categories \(of colour\) was not given"):
        clf.fit(table, y)
    assert list(clf.categories_) == [3]
    # the public list: no warning, its order defines the codes
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        warnings.filterwarnings("ignore", message="random_state is set")
        clf.set_params(categories={"colour": ["blue", "red", "green"]}).fit(table, y)
    assert list(clf.categories_[3]) == ["blue", "red", "green"]


def test_the_plan_reads_the_schema_of_a_table():
    _, polars, _ = _frames()
    assert planned_shape(_clf(), polars) == (1, 3, 0)  # (outputs, numeric, private lists)
    assert planned_shape(_clf(categorical_features=None, categories=None), polars) == (1, 4, 0)


def test_categories_declare_columns_under_from_dtype():
    # an integer-coded column named in categories= is categorical under "from_dtype"
    frame, _, y = _frames()
    codes = frame.assign(k=frame["k"].astype("float64"))
    clf = _clf(categories={"colour": COLOURS, "k": [0, 1, 2, 3, 4]}).fit(codes, y)
    assert sorted(clf.categories_) == [1, 3]


@pytest.mark.parametrize("categorical_features, match", [
    (["colour"], r"categories names column 'k', which categorical_features=\['colour'\] does "
                 r"not declare categorical: add it to categorical_features"),
    (None, r"categories names column 'colour', which categorical_features=None does not"),
])
def test_a_column_in_categories_must_be_declared(categorical_features, match):
    frame, _, y = _frames()
    categories = {"colour": COLOURS, "k": [0, 1, 2, 3, 4]} if categorical_features else None
    clf = _clf(categorical_features=categorical_features,
               categories=categories or {"colour": COLOURS})
    with pytest.raises(ValueError, match=match):
        clf.fit(frame, y)


@pytest.mark.parametrize("cell", ["unknown", "42", True])
def test_one_text_cell_does_not_make_a_bounded_column_categorical(cell):
    # D' = D + one record whose age is text: pandas makes the column object, which
    # categorical_features="from_dtype" read as categorical, with a category list of every
    # age in D. A column that feature_bounds bounds is numeric whatever its dtype: the cell is
    # converted on its own ('42' is 42, 'unknown' missing) and the rest of the fit replays.
    from replay_harness import append_record, replay

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"age": rng.integers(17, 91, 300).astype(float),
                      "colour": pd.Series(rng.choice(COLOURS, 300), dtype=object)})
    y = ((X["age"] > 40) ^ (X["colour"] == "blue")).astype(int).to_numpy()

    def make(noise):
        return DPGBClassifier(epsilon=4.0, feature_bounds={"age": (0, 120)}, classes=[0, 1],
                              categories={"colour": COLOURS}, n_estimators=4, max_depth=2,
                              n_jobs=1, random_state=noise)

    result = replay(make, (X, y), append_record((X, y), [cell, "red"], 1), probe=X.iloc[:10])
    assert sorted(result.estimator_dp.categories_) == [1]
