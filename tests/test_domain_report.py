"""The domain report (``domain_report=True``; docs/privacy.md, Domain report) and the schema
checks of public lists against declared dtypes: a spelling mismatch between the data and a
public input is refused when the schema decides it, and reported with noise when only the
records do."""

import math
import warnings

import numpy as np
import pytest

from dpboost import DPGBClassifier, DPGBRegressor
from dpboost._domain import (
    ABOVE,
    BELOW,
    DOMAIN_SHARE,
    MISSING,
    NOT_A_NUMBER,
    NOT_IN_CLASSES,
    NOT_IN_LIST,
    RECORDS,
    domain_count_sensitivity,
    domain_counts,
    domain_layout,
)

pd = pytest.importorskip("pandas")

SMALL = dict(n_estimators=3, max_depth=2, random_state=0, n_jobs=1)


def _frame(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.uniform(0.0, 1.0, n),
                      "b": pd.Series(rng.choice(["x", "y"], n), dtype="str")})
    y = pd.Series(rng.choice(["no", "yes"], n), dtype="str")
    return X, y


# --- what the schema decides: refused before any budget is spent -----------------------------

@pytest.mark.parametrize("classes", [[0, 1], [0.0, 1.0], [False, True]])
def test_text_labels_with_classes_of_numbers_are_refused(classes):
    X, y = _frame()
    with pytest.raises(ValueError, match=r"classes holds no text value but y has a text dtype"):
        DPGBClassifier(feature_bounds={"a": (0, 1)}, categories={"b": ["x", "y"]},
                       classes=classes, **SMALL).fit(X, y)


def test_numeric_labels_with_text_classes_are_refused():
    X, y = _frame()
    with pytest.raises(ValueError, match=r"classes holds text but y has a numeric dtype"):
        DPGBClassifier(feature_bounds={"a": (0, 1)}, categories={"b": ["x", "y"]},
                       classes=["0", "1"], **SMALL).fit(X, (y == "yes").astype(int))


def test_a_text_column_with_a_list_of_numbers_is_refused_naming_the_column():
    X, y = _frame()
    with pytest.raises(ValueError, match=r"categories\['b'\] holds no text value but column "
                                         r"'b' has a text dtype"):
        DPGBClassifier(feature_bounds={"a": (0, 1)}, categories={"b": [0, 1]},
                       classes=["no", "yes"], **SMALL).fit(X, y)


def test_a_text_regression_target_is_refused():
    X, y = _frame()
    with pytest.raises(ValueError, match=r"y has a text dtype: a regression target"):
        DPGBRegressor(feature_bounds={"a": (0, 1)}, categories={"b": ["x", "y"]},
                      target_bounds=(0, 1), **SMALL).fit(X, y)


def test_the_schema_errors_quote_no_value_and_spend_nothing():
    from dpboost import PrivacyAccountant

    X, y = _frame()
    y = y.map({"no": "secret-no", "yes": "secret-yes"}).astype("str")
    accountant = PrivacyAccountant(epsilon=10.0)
    with pytest.raises(ValueError) as error:
        DPGBClassifier(feature_bounds={"a": (0, 1)}, categories={"b": ["x", "y"]},
                       classes=[0, 1], accountant=accountant, **SMALL).fit(X, y)
    assert "secret" not in str(error.value)
    assert accountant.spent() == 0.0


def test_object_labels_and_lists_are_not_judged_by_their_values():
    # An object column may hold anything: its cells are read one by one (a label outside the
    # classes leaves its record out), never an error decided by some record's value.
    X, y = _frame()
    model = DPGBClassifier(feature_bounds={"a": (0, 1)}, categories={"b": ["x", "y"]},
                           classes=[0, 1], **SMALL)
    model.fit(X, y.astype(object))
    model.fit(X, list(y))


# --- what only the records decide: the noisy report -----------------------------------------

def test_layout_is_a_function_of_the_schema_and_parameters():
    layout = domain_layout(3, {1: None, 2: None}, {2: None}, False, False, False)
    assert layout == [(MISSING, NOT_A_NUMBER, BELOW, ABOVE), (MISSING, NOT_IN_LIST),
                      (MISSING,), (NOT_IN_CLASSES,), (RECORDS,)]
    assert domain_layout(1, {}, {}, True, True, True) == [(MISSING, NOT_A_NUMBER),
                                                         (NOT_A_NUMBER,), (RECORDS,)]


def test_counts_put_each_record_in_one_kind_per_column():
    raw = pd.DataFrame({"a": pd.Series([0.5, None, "abc", -3.0, np.inf], dtype=object),
                        "b": pd.Series(["x", "Y", None, "x", "x"], dtype=object)})
    encoded = np.array([[0.5, 0.0], [np.nan, np.nan], [np.nan, np.nan], [-3.0, 0.0],
                        [np.inf, 0.0]])
    y = np.array([1, 0, 5, 1, 0])
    layout = domain_layout(2, {1: None}, {}, False, False, False)
    counts = domain_counts(raw, encoded, y, np.isin(y, [0, 1]), layout,
                           np.array([[0.0, 1.0], [-0.5, 0.5]]), None)[0]
    assert counts[0].tolist() == [1, 1, 1, 1]  # missing, not a number, below, above
    assert counts[1, :2].tolist() == [1, 1]  # missing, not in its list
    assert counts[2, 0] == 1 and counts[3, 0] == 5
    # One record moves at most one count of each group, by 1: each record left out in turn.
    for r in range(5):
        rest = np.arange(5) != r
        fewer = domain_counts(raw[rest], encoded[rest], y[rest], np.isin(y[rest], [0, 1]),
                              layout, np.array([[0.0, 1.0], [-0.5, 0.5]]), None)[0]
        assert (np.abs(counts - fewer).sum(axis=1) <= 1).all()


def test_the_report_is_planned_and_in_the_ledger():
    X, y = _frame()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = DPGBClassifier(feature_bounds={"a": (0, 1)}, categories={"b": ["x", "y"]},
                               classes=["no", "yes"], domain_report=True, **SMALL).fit(X, y)
    entries = [e for e in model.privacy_ledger_ if e.level == -3]
    assert len(entries) == 1 and entries[0].mechanism == "gaussian"
    assert entries[0].sensitivity == pytest.approx(domain_count_sensitivity(4, "l2"))
    assert model.privacy_spent_ <= 1.0
    assert set(model.domain_report_) == {"a", "b", "target", RECORDS}
    assert "gaussian" in model.privacy_report()
    pure = DPGBClassifier.dpboost_paper(feature_bounds={"a": (0, 1)},
                                        categories={"b": ["x", "y"]}, classes=["no", "yes"],
                                        domain_report=True, n_estimators=4, random_state=0)
    pure.fit(X, y)
    laplace = [e for e in pure.privacy_ledger_ if e.level == -3]
    assert laplace[0].mechanism == "laplace"
    assert laplace[0].epsilon == pytest.approx(DOMAIN_SHARE)
    assert pure.privacy_spent_ <= 1.0 + 1e-12


@pytest.mark.parametrize("case", ["classes", "categories", "bounds"])
def test_a_spelling_mismatch_warns_from_the_released_counts(case):
    X, y = _frame(3000)
    params = dict(feature_bounds={"a": (0, 1)}, categories={"b": ["x", "y"]},
                  classes=["no", "yes"], domain_report=True, **SMALL)
    if case == "classes":
        params["classes"] = ["No", "Yes"]
        expected = r"are not in classes in the target \(records left out\)"
    elif case == "categories":
        params["categories"] = {"b": ["X", "Y"]}
        expected = r"are not in its list in column 'b'"
    else:
        params["feature_bounds"] = {"a": (0, 0.3)}
        expected = r"are above bounds in column 'a'"
    with pytest.warns(UserWarning, match=expected):
        DPGBClassifier(**params).fit(X, y)


def test_no_warning_when_the_inputs_match():
    X, y = _frame(3000)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = DPGBClassifier(feature_bounds={"a": (0, 1)}, categories={"b": ["x", "y"]},
                               classes=["no", "yes"], domain_report=True, **SMALL).fit(X, y)
    assert not [w for w in caught if "domain report" in str(w.message)]
    # At epsilon 1 the counts' noise is about 64.8 sqrt(4) (a standard deviation of 130).
    assert abs(model.domain_report_["records"]["records"] - 3000) < 1000


def test_a_string_regression_target_of_object_dtype_is_reported():
    X, _ = _frame(3000)
    y = pd.Series(["n/a"] * 3000, dtype=object)
    with pytest.warns(UserWarning, match=r"are not a number in the target \(records left out"):
        DPGBRegressor(feature_bounds={"a": (0, 1)}, categories={"b": ["x", "y"]},
                      target_bounds=(0, 1), domain_report=True, **SMALL).fit(X, y)


def test_dask_refuses_the_report():
    dask = pytest.importorskip("dpboost.dask")
    dd = pytest.importorskip("dask.dataframe")
    X, y = _frame(100)
    model = dask.DaskDPGBRegressor(feature_bounds={"a": (0, 1)}, categories={"b": ["x", "y"]},
                                   target_bounds=(0, 1), domain_report=True)
    with pytest.raises(ValueError, match="domain_report=True is not supported"):
        model.fit(dd.from_pandas(X, npartitions=1),
                  dd.from_pandas(pd.Series(np.ones(100)), npartitions=1))


def test_sensitivity_counts_every_group():
    assert domain_count_sensitivity(5, "l1") == 5.0
    assert domain_count_sensitivity(5, "l2") == math.sqrt(5)


# --- delta against the number of records ----------------------------------------------------

def test_a_delta_above_1e_4_warns_from_the_parameter_alone():
    X, y = _frame(200)
    params = dict(feature_bounds={"a": (0, 1)}, categories={"b": ["x", "y"]},
                  classes=["no", "yes"], **SMALL)
    with pytest.warns(UserWarning, match=r"delta=0.001 exceeds 0.0001"):
        DPGBClassifier(delta=1e-3, **params).fit(X, y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DPGBClassifier(delta=1e-5, **params).fit(X, y)
    assert not [w for w in caught if "delta=" in str(w.message)]


def test_the_report_compares_delta_with_the_released_number_of_records():
    X, y = _frame(20_000)
    params = dict(feature_bounds={"a": (0, 1)}, categories={"b": ["x", "y"]},
                  classes=["no", "yes"], domain_report=True, **SMALL)
    with pytest.warns(UserWarning, match=r"delta=1e-05 is not well below 1 / n_samples: the "
                                         r"released number of records is about 2e\+04"):
        DPGBClassifier(delta=1e-5, **params).fit(X, y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DPGBClassifier(delta=1e-7, **params).fit(X, y)
    assert not [w for w in caught if "1 / n_samples" in str(w.message)]


@pytest.mark.parametrize("columns", [["a"], ["b"], ["b", "a"]])
def test_predict_on_other_columns_names_them(columns):
    X, y = _frame(200)
    for categories in ({"b": ["x", "y"]}, "private"):
        model = DPGBClassifier(feature_bounds={"a": (0, 1)}, categories=categories,
                               classes=["no", "yes"], **SMALL).fit(X, y)
        with pytest.raises(ValueError, match="feature names|Feature names"):
            model.predict(X[columns])
    with pytest.raises(ValueError, match="X has 1 features, but DPGBClassifier is expecting 2"):
        model.predict(X[["a"]].to_numpy())
