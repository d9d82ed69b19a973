"""Model files: every kind of model round trips, and a file is checked completely on load.

A model file is untrusted input and the prediction kernel has no bounds checks, so
``from_json`` either returns a model that predicts finite values or raises ``ValueError``
naming the field: targeted corruptions below, and a fuzz (hypothesis) that mutates real files.
A crash of the kernel would kill the test process, which fails the run.
"""

import datetime
import json
import subprocess
import sys
import warnings
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpboost import DPGBClassifier, DPGBRegressor

pd = pytest.importorskip("pandas")

#: Few small trees: these tests read files, not accuracy.
SMALL = {"n_estimators": 3, "max_depth": 2, "random_state": 0}
BOUNDS = {"a": (-1, 1), "b": (-1, 1), "c": (-1, 1), "d": (-1, 1)}


def _data(n=300):
    """Four numeric columns in (-1, 1), a categorical fifth, and labels of 2 and 3 classes."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.uniform(-1, 1, (n, 4)), columns=list("abcd"))
    frame["e"] = pd.Series(rng.choice(["u", "v", "w"], n), dtype=object)
    frame.loc[::7, "a"] = np.nan
    binary = (frame["a"].fillna(0) + frame["b"] > 0).astype(int).to_numpy()
    three = binary + (frame["c"] > 0.3).to_numpy()
    return frame, binary, three


def _fit_models():
    """Small models of every kind the estimators produce, each with the X it predicts on."""
    frame, binary, three = _data()
    X = frame[list("abcd")].to_numpy()
    common = {"feature_bounds": (-1, 1), **SMALL}
    categorical = {"feature_bounds": BOUNDS, "categorical_features": ["e"],
                   "categories": {"e": ["u", "v", "w"]}, **SMALL}
    decimals = frame.assign(e=frame["e"].map({"u": Decimal("1.00"), "v": Decimal("2.5"),
                                              "w": Decimal("-0")}))
    warm = DPGBClassifier(classes=[0, 1, 2], warm_start=True, **common).fit(X, three)
    warm.set_params(n_estimators=5).fit(X, three)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # categories="private" with few records: a warning
        return {
            "binary": (DPGBClassifier(classes=[0, 1], **common).fit(X, binary), X),
            "multiclass": (DPGBClassifier(classes=[0, 1, 2], **common).fit(X, three), X),
            "regressor": (DPGBRegressor(target_bounds=(-1, 1), **common).fit(X, frame["b"]), X),
            "categorical": (DPGBClassifier(classes=[0, 1], **categorical).fit(frame, binary),
                            frame),
            "categorical-regressor": (DPGBRegressor(target_bounds=(-1, 1), **categorical)
                                      .fit(frame, frame["b"]), frame),
            "private-categories": (DPGBClassifier(classes=[0, 1], **{
                **categorical, "categories": "private"}).fit(frame, binary), frame),
            "decimal-categories": (DPGBClassifier(classes=[0, 1], **{
                **categorical, "categories": {"e": [Decimal("1.00"), Decimal("2.5"),
                                                    Decimal("-0")]}}).fit(decimals, binary),
                                   decimals),
            "dpboost_paper": (DPGBClassifier.dpboost_paper(classes=[0, 1], **common)
                              .fit(X, binary), X),
            "sketch": (DPGBClassifier(classes=[0, 1], split_candidates="sketch", **common)
                       .fit(X, binary), X),
            "warm_start": (warm, X),
        }


@pytest.fixture(scope="module")
def models():
    """:func:`_fit_models`, fitted once for the module."""
    return _fit_models()


def _outputs(model, X):
    """What a model predicts on X: probabilities and labels, or predictions."""
    if isinstance(model, DPGBClassifier):
        return model.predict_proba(X), model.predict(X)
    return (model.predict(X),)


@pytest.mark.parametrize("kind", ["binary", "multiclass", "regressor", "categorical",
                                  "categorical-regressor", "private-categories",
                                  "decimal-categories", "dpboost_paper", "sketch", "warm_start"])
def test_every_kind_of_model_round_trips(models, kind):
    model, X = models[kind]
    # A trained forest passes the check a loaded one must pass.
    model._forest.check(model.n_features_in_, model._forest.n_outputs)
    text = model.to_json()
    loaded = type(model).from_json(text)
    for expected, got in zip(_outputs(model, X), _outputs(loaded, X)):
        np.testing.assert_array_equal(got, expected)
    assert loaded.to_json() == text
    assert loaded.n_estimators_ == model.n_estimators_


def test_decimal_categories_keep_type_and_text(models):
    model, frame = models["decimal-categories"]
    doc = json.loads(model.to_json())
    assert doc["fitted"]["categories_"] == [[4, [{"Decimal": "1.00"}, {"Decimal": "2.5"},
                                                 {"Decimal": "-0"}]]]
    loaded = DPGBClassifier.from_json(model.to_json())
    for values in (loaded.categories_[4], loaded.get_params()["categories"]["e"]):
        assert [(type(v), str(v)) for v in values] == [(Decimal, "1.00"), (Decimal, "2.5"),
                                                       (Decimal, "-0")]


@pytest.mark.parametrize("value", [
    Decimal("1.00"), Decimal("1E+2"), Decimal("-0"),
    pd.Timestamp("2020-01-01 00:00:00.000000001", tz="Europe/Paris"),
    datetime.datetime(2021, 5, 1, 12, 0, 0, 123456, tzinfo=datetime.timezone.utc),
    datetime.date(2022, 3, 4), np.datetime64("2020-01-01T00:00:00.000000001"),
], ids=repr)
def test_category_values_json_has_no_type_for_round_trip(models, value):
    # A public list of such values (a column's cells) is written and read back exactly.
    model = DPGBClassifier.from_json(models["binary"][0].to_json())
    model.set_params(categories={0: ["x", value]})
    model.categories_ = {0: np.array(["x", value], dtype=object)}
    model.feature_bounds_[0] = (-0.5, 1.5)
    loaded = DPGBClassifier.from_json(model.to_json())
    for back in (loaded.categories_[0][1], loaded.get_params()["categories"][0][1]):
        assert type(back) is type(value) and str(back) == str(value) and back == value


def test_a_value_no_file_can_hold_is_refused_when_writing(models):
    model, _ = models["categorical"]
    clone = DPGBClassifier.from_json(model.to_json())
    clone.categories_ = {4: np.array(["u", 1j], dtype=object)}
    with pytest.raises(TypeError, match="complex value 1j cannot be written"):
        clone.to_json()


# --- targeted corruptions --------------------------------------------------------------------

def _set(path, value):
    """An edit that sets ``doc[path[0]][path[1]]... = value``."""
    def edit(doc):
        node = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return edit


def _delete(*path):
    """An edit that deletes the key or element at ``path``."""
    def edit(doc):
        node = doc
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]
    return edit


def _apply(*path, function):
    """An edit that replaces the value at ``path`` by ``function(value)``."""
    def edit(doc):
        node = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = function(node[path[-1]])
    return edit


def _every_tree(name, function):
    """An edit that replaces every tree's row of ``fitted[name]`` by ``function(row)``."""
    return _apply("fitted", name, function=lambda trees: [function(row) for row in trees])


F = ("fitted",)
CORRUPTIONS = [
    # (kind, edit, message)
    ("binary", _set(F + ("split_feature", 1, 0), 2**30),
     r"split_feature\[1, 0\] holds 1073741824, must be in \[0, n_features=4\)"),
    ("multiclass", _set(F + ("split_feature", 4, 2), -1),
     r"split_feature\[4, 2\] holds -1, must be in \[0, n_features=4\)"),
    ("binary", _set(F + ("split_feature", 0, 0), 4), r"split_feature\[0, 0\] holds 4"),
    ("binary", _set(F + ("split_feature", 0, 0), 2**40),
     r"split_feature\[0, 0\] holds 1099511627776, must be in .* \(int32\)"),
    ("binary", _set(F + ("split_feature", 0, 0), 2**70), r"split_feature must be a 2-D array"),
    ("binary", _set(F + ("split_feature", 0, 0), 1.5), r"split_feature must be .* of integers"),
    ("binary", _set(F + ("split_feature", 0, 0), "1"), r"split_feature must be .* of integers"),
    # The children of node k are 2k + 1 and 2k + 2 (complete trees in heap order): no child
    # index is stored, so a corrupt tree is one of the wrong number of nodes.
    ("binary", _apply(*F, "split_feature", 0, function=lambda row: row[:-1]),
     r"split_feature must be a 2-D array \(lists of equal lengths\)"),
    ("binary", _every_tree("split_feature", lambda row: row[:-1]),
     r"split_feature holds trees of 2 internal nodes, must be 2\*\*max_depth - 1 = 3"),
    ("binary", _every_tree("split_feature", lambda row: row + row + row[:1]),
     r"split_feature holds trees of 7 internal nodes, must be 2\*\*max_depth - 1 = 3"),
    ("binary", _every_tree("split_bin", lambda row: row[:-1]),
     r"split_bin has shape \(3, 2\), must be \(3, 3\)"),
    ("binary", _set(F + ("split_bin", 0, 1), 31),
     r"split_bin\[0, 1\] holds 31, must be in \[0, max_bins - 1 = 31\)"),
    ("binary", _set(F + ("split_bin", 0, 1), 256), r"split_bin\[0, 1\] holds 256, .* \(uint8\)"),
    ("binary", _set(F + ("split_bin", 0, 1), -1), r"split_bin\[0, 1\] holds -1"),
    ("binary", _set(F + ("missing_left", 0, 1), 1), r"missing_left must be .* of booleans"),
    # leaf rows cut short
    ("binary", _apply(*F, "leaf_value", 2, function=lambda row: row[:-1]),
     r"leaf_value must be a 2-D array"),
    ("multiclass", _every_tree("leaf_value", lambda row: row[:-1]),
     r"leaf_value has shape \(9, 3\), must be \(9, 4\)"),
    ("binary", _set(F + ("leaf_value", 1, 3), float("nan")),
     r"leaf_value\[1, 3\] holds nan, must be finite"),
    ("binary", _set(F + ("leaf_value", 1, 3), float("inf")),
     r"leaf_value\[1, 3\] holds inf, must be finite"),
    ("binary", _set(F + ("leaf_value", 1, 3), "0.5"), r"leaf_value must be .* of numbers"),
    ("binary", _every_tree("leaf_value", lambda row: [1e308] * len(row)),
     r"leaf_value: the sum of a row's leaves over the trees overflows"),
    ("binary", _set(F + ("leaf_statistics", 0, 0, 0), float("-inf")),
     r"leaf_statistics\[0, 0, 0\] holds -inf, must be finite or NaN"),
    ("binary", _every_tree("leaf_statistics", lambda row: row[:-1]),
     r"leaf_statistics has shape \(3, 3, 2\), must be \(3, 4, 2\)"),
    ("sketch", _every_tree("bin_thresholds", lambda row: row[:-1]),
     r"bin_thresholds has shape \(4, 30\), must be \(4, 31\)"),
    ("sketch", _apply(*F, "bin_thresholds", 1, function=lambda row: row[::-1]),
     r"bin_thresholds\[1\] decreases at "),
    ("sketch", _set(F + ("bin_thresholds", 2, 30), 7.0),
     r"bin_thresholds\[2, 30\] holds 7.0, must be within feature 2's bounds"),
    ("sketch", _set(F + ("bin_thresholds", 2, 5), float("nan")),
     r"bin_thresholds\[2, 5\] holds nan, must be finite"),
    ("binary", _set(F + ("bin_codes",), 256), r"bin_codes holds 256, must be an integer in \[2, 255\]"),
    ("binary", _set(F + ("bin_codes",), "32"), r"bin_codes holds '32'"),
    ("binary", _set(F + ("bin_codes",), 8), r"split_bin\[.*\] holds .*, must be in \[0, max_bins - 1 = 7\)"),
    # wrong tree counts: one tree per class and stage
    ("multiclass", _apply(*F, "split_feature", function=lambda trees: trees[:-1]),
     r"split_bin has shape \(9, 3\), must be \(8, 3\)"),
    ("multiclass", lambda doc: [_apply(*F, name, function=lambda t: t[:-1])(doc) for name in (
        "split_feature", "split_bin", "missing_left", "leaf_value", "leaf_statistics")],
     r"8 trees, must be n_outputs \* n_stages = 3 \* 3"),
    ("binary", _set(("params", "n_estimators"), 4),
     r"3 trees, must be n_outputs \* n_stages = 1 \* 4"),
    ("binary", lambda doc: [_set(F + (name,), [])(doc) for name in (
        "split_feature", "split_bin", "missing_left", "leaf_value", "leaf_statistics")],
     r"split_feature must be a 2-D array"),
    ("binary", _set(("params", "max_depth"), 3),
     r"split_feature holds trees of 3 internal nodes, must be 2\*\*max_depth - 1 = 7"),
    ("multiclass", _set(F + ("classes_",), [0, 1]),
     r"9 trees, must be n_outputs \* n_stages = 1 \* 3"),
    # fitted attributes
    ("binary", _set(F + ("n_features_in_",), 5),
     r"feature_bounds_ has shape \(4, 2\), must be \(n_features_in_, 2\) = \(5, 2\)"),
    ("binary", _set(F + ("n_features_in_",), 0), r"n_features_in_ holds 0, must be an integer"),
    ("binary", _set(F + ("n_features_in_",), True), r"n_features_in_ holds True"),
    ("binary", _set(F + ("feature_bounds_", 1), [1.0, -1.0]),
     r"feature_bounds_\[1\] holds \[1.0, -1.0\], must be finite with lower < upper"),
    ("binary", _set(F + ("feature_bounds_", 1, 0), float("-inf")), r"feature_bounds_\[1\]"),
    ("binary", _set(F + ("feature_bounds_", 1), [-1e308, 1e308]), r"feature_bounds_\[1\]"),
    ("categorical", _set(F + ("feature_names_in_",), ["a", "b", "c", "d"]),
     r"feature_names_in_ holds .*, must be a list of n_features_in_=5 distinct strings"),
    ("categorical", _set(F + ("feature_names_in_", 1), "a"), r"feature_names_in_"),
    ("binary", _set(F + ("classes_",), [1]), r"classes_ holds \[1\], must be at least two"),
    ("binary", _set(F + ("classes_",), [1, 1]), r"classes_ holds \[1, 1\]"),
    ("binary", _set(F + ("classes_",), [[0], [1]]), r"classes_\[0\] holds \[0\]"),
    ("binary", _delete(*F, "classes_"), r"fitted has no field 'classes_'"),
    ("regressor", _set(F + ("target_bounds_",), [1, -1]),
     r"target_bounds_ holds \[1.0, -1.0\], must be \(lower, upper\)"),
    ("regressor", _set(F + ("target_bounds_",), [-1e308, 1e308]), r"target_bounds_ holds"),
    ("regressor", _delete(*F, "target_bounds_"), r"fitted has no field 'target_bounds_'"),
    ("categorical", _set(F + ("categories_", 0, 0), 5),
     r"categories_\[0\]\[0\] holds 5, must be an integer in \[0, 4\]"),
    ("categorical", _set(F + ("categories_", 0, 1), ["u", "v"]),
     r"feature_bounds_\[4\] holds \[-0.5, 2.5\], must be \[-0.5, 1.5\] for the 2 categories"),
    ("categorical", _set(F + ("categories_", 0, 1), "uvw"), r"categories_\[0\]\[1\] holds 'uvw'"),
    ("categorical", _set(F + ("categories_", 0, 1, 0), None), r"categories_\[0\]\[1\]\[0\] holds"),
    ("categorical", _set(F + ("categories_", 0, 1, 0), {"Decimal": "one"}),
     r"categories_\[0\]\[1\]\[0\] holds 'one', not the text of a Decimal"),
    ("categorical", _apply(*F, "categories_", function=lambda pairs: pairs + pairs),
     r"categories_\[1\] repeats feature 4"),
    ("binary", _set(F + ("privacy_spent_",), float("nan")), r"privacy_spent_ holds nan"),
    ("binary", _set(F + ("privacy_spent_",), -1), r"privacy_spent_ holds -1, must be a number"),
    ("binary", _set(F + ("privacy_spent_",), 10**400), r"privacy_spent_ holds 1000"),
    # the ledger: the row count's entry, then one run of the three trees' entries
    ("binary", _delete(*F, "privacy_ledger_", 0, "epsilon"),
     r"privacy_ledger_\[0\] has no field 'epsilon'"),
    ("binary", _delete(*F, "privacy_ledger_", 1, "entries", 2, "epsilon"),
     r"privacy_ledger_\[1\].entries\[2\] has no field 'epsilon'"),
    ("binary", _set(F + ("privacy_ledger_", 1, "entries", 2, "colour"), 1),
     r"privacy_ledger_\[1\].entries\[2\] holds \['colour'\], not fields of a ledger entry"),
    ("binary", _set(F + ("privacy_ledger_", 1, "entries", 2, "epsilon"), "1"),
     r"privacy_ledger_\[1\].entries\[2\].epsilon holds '1', must be a number >= 0"),
    ("binary", _set(F + ("privacy_ledger_", 1, "entries", 2, "tree"), 0.5),
     r"privacy_ledger_\[1\].entries\[2\].tree holds 0.5, must be an integer"),
    ("binary", _set(F + ("privacy_ledger_", 1, "entries", 2, "filtered"), 0),
     r"privacy_ledger_\[1\].entries\[2\].filtered holds 0, must be a bool"),
    ("binary", _set(F + ("privacy_ledger_", 1, "entries", 2), []),
     r"privacy_ledger_\[1\].entries\[2\] holds \[\]"),
    ("binary", _set(F + ("privacy_ledger_", 1, "repeat"), 1),
     r"privacy_ledger_\[1\].repeat holds 1, must be an integer in \[2, 100000000\]"),
    ("binary", _set(F + ("privacy_ledger_", 1, "repeat"), True),
     r"privacy_ledger_\[1\].repeat holds True, must be an integer"),
    ("binary", _set(F + ("privacy_ledger_", 1, "repeat"), 10**8),
     r"privacy_ledger_ expands to more than 100000000 entries"),
    ("binary", _set(F + ("privacy_ledger_", 1, "step"), "x"),
     r"privacy_ledger_\[1\].step holds 'x', must be \[tree step, group step\]"),
    ("binary", _set(F + ("privacy_ledger_", 1, "step", 0), 0),
     r"privacy_ledger_\[1\].step\[0\] holds 0, must be an integer in \[1, inf\]"),
    ("binary", _set(F + ("privacy_ledger_", 1, "entries"), []),
     r"privacy_ledger_\[1\].entries holds \[\], must be a non-empty array of entries"),
    ("binary", _set(F + ("privacy_ledger_", 1, "colour"), 1),
     r"privacy_ledger_\[1\] holds the fields \['colour', 'entries', 'repeat', 'step'\]; a run"),
    ("binary", _set(F + ("privacy_ledger_",), {}), r"privacy_ledger_ holds \{\}"),
    ("binary", _set(F + ("fit_id",), 7), r"fit_id holds 7, must be a string"),
    # parameters
    ("binary", _set(("params", "colour"), 1), r"params holds \['colour'\], not parameters"),
    ("binary", _set(("params", "max_depth"), 99), r"params: The 'max_depth' parameter"),
    ("binary", _set(("params", "loss"), "hinge"), r"params: The 'loss' parameter"),
    ("binary", _set(("params", "n_jobs"), 0), r"params: n_jobs=0"),
    ("binary", _set(("params", "n_jobs"), "all"), r"params: The 'n_jobs' parameter"),
    ("categorical", _set(("params", "categories"), {"e": ["u"]}),
     r"params.categories holds .*, must be \{\"pairs\""),
    ("categorical", _set(("params", "categories"), {"pairs": [[["e"], ["u"]]]}),
     r"params.categories holds"),
    # missing keys, the wrong document
    ("binary", _delete(*F, "split_feature"), r"fitted has no field 'split_feature'"),
    ("binary", _delete(*F, "leaf_value"), r"fitted has no field 'leaf_value'"),
    ("binary", _delete(*F, "privacy_ledger_"), r"fitted has no field 'privacy_ledger_'"),
    ("binary", _delete(*F, "n_features_in_"), r"fitted has no field 'n_features_in_'"),
    ("binary", _delete("fitted"), r"the model has no field 'fitted'"),
    ("binary", _set(("fitted",), []), r"fitted holds \[\], must be a JSON object"),
    ("binary", _delete("params"), r"the model has no field 'params'"),
    ("binary", _delete("estimator"), r"the file holds a None, not a DPGBClassifier"),
    ("binary", _delete("version"), r"not a dpboost model of format version 1"),
]


@pytest.mark.parametrize("kind, edit, message", CORRUPTIONS,
                         ids=[f"{i}-{kind}" for i, (kind, _, _) in enumerate(CORRUPTIONS)])
def test_each_corruption_raises_a_value_error_naming_the_field(models, kind, edit, message):
    model, _ = models[kind]
    doc = json.loads(model.to_json())
    edit(doc)
    with pytest.raises(ValueError, match="^model file: " + message):
        type(model).from_json(json.dumps(doc))


@pytest.mark.parametrize("text, message", [
    ("", r"not JSON text"),
    ('{"format": "dpboost", "version": 1, "estim', r"not JSON text"),
    ("[" * 100_000, r"not JSON text"),
    ("1" * 5000, r"not JSON text"),
    ('{"a": 1}', r"not a dpboost model of format version 1: format=None, version=None"),
    ("[1, 2]", r"not a dpboost model of format version 1: a JSON list"),
    ('"model"', r"not a dpboost model of format version 1: a JSON str"),
    ("null", r"not a dpboost model of format version 1: a JSON NoneType"),
    ('{"format": "dpboost", "version": "1"}', r"not a dpboost model of format version 1"),
    ('{"format": "dpboost", "version": 2}', r"format version 2, written by a newer dpboost"),
])
def test_foreign_text_raises_a_value_error(text, message):
    with pytest.raises(ValueError, match="^model file: " + message):
        DPGBClassifier.from_json(text)


def test_truncated_files_raise_a_value_error(models):
    text = models["categorical"][0].to_json()
    for end in range(0, len(text), 97):
        with pytest.raises(ValueError, match="^model file: not JSON text"):
            DPGBClassifier.from_json(text[:end])


def test_another_estimators_file_raises_a_value_error(models):
    with pytest.raises(ValueError, match="holds a 'DPGBClassifier', not a DPGBRegressor"):
        DPGBRegressor.from_json(models["binary"][0].to_json())


def test_split_feature_out_of_range_fails_the_command_line_not_the_process(models, tmp_path):
    # Before the check, this file crashed ``dpboost predict`` (the kernel read 2**30 columns
    # past the row): a subprocess, so that a crash is a failed assertion here.
    model, X = models["binary"]
    doc = json.loads(model.to_json())
    doc["fitted"]["split_feature"][1][0] = 2**30
    (tmp_path / "model.json").write_text(json.dumps(doc))
    pd.DataFrame(X).to_csv(tmp_path / "x.csv", index=False)
    done = subprocess.run([sys.executable, "-m", "dpboost", "predict", tmp_path / "model.json",
                           tmp_path / "x.csv"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    assert "split_feature[1, 0] holds 1073741824, must be in [0, n_features=4)" in done.stderr


# --- fuzzing ---------------------------------------------------------------------------------

#: Replacement numbers: small ones (in range or just past it) and those that break index
#: arithmetic.
_NUMBERS = st.one_of(
    st.integers(-3, 300),
    st.sampled_from([2**30, 2**31, 2**31 - 1, 2**32, 2**63, 2**64, 2**100, -2**31, 1e308]),
    st.floats(allow_nan=True, allow_infinity=True))
#: Replacement values: any JSON.
_JSON = st.recursive(st.one_of(st.none(), st.booleans(), _NUMBERS, st.text(max_size=4)),
                     lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=8)


def _mutate(data, doc):
    """One drawn edit of ``doc`` in place: a path walked down from a drawn section (mostly the
    fitted attributes; None: the top), each step into a drawn key or element, stopping at a
    drawn depth; then delete, replace (by a number or any JSON), truncate, or repeat an
    element of a list."""
    section = data.draw(st.sampled_from(["fitted", "fitted", "fitted", "params", None]),
                        label="section")
    parent, key, node = None, None, doc[section] if section in doc else doc
    while (isinstance(node, (dict, list)) and node
           and (parent is None or data.draw(st.sampled_from([True, True, False]),
                                            label="deeper"))):
        key = data.draw(st.sampled_from(list(node) if isinstance(node, dict)
                                        else range(len(node))), label="key")
        parent, node = node, node[key]
    if parent is None:  # an edit replaced the section: nothing in it to edit
        return
    edit = data.draw(st.sampled_from(["delete", "number", "replace", "truncate", "repeat"]),
                     label="edit")
    if edit == "delete":
        del parent[key]
    elif edit == "truncate" and isinstance(node, (list, str)):
        parent[key] = node[:data.draw(st.integers(0, max(len(node) - 1, 0)), label="length")]
    elif edit == "repeat" and isinstance(node, list) and node:
        parent[key] = node + [data.draw(st.sampled_from(node), label="element")]
    else:
        parent[key] = data.draw(_NUMBERS if edit == "number" else _JSON, label="value")


def _schema_X(model, n=23):
    """Data of the loaded model's own schema: numeric columns within and outside its bounds
    and missing, categorical columns with its categories, an unknown value and None."""
    rng = np.random.default_rng(0)
    columns = {}
    for j, (lower, upper) in enumerate(model.feature_bounds_):
        if j in model.categories_:
            values = model.categories_[j]
            column = [values[i % values.size] if values.size and i % 5 else "unknown"
                      for i in range(n)]
            column[0] = None
        else:
            column = lower + rng.uniform(-0.1, 1.1, n) * (upper - lower)
            column[:3] = np.nan, np.inf, -np.inf
        columns[j] = pd.Series(column, dtype=object if j in model.categories_ else float)
    frame = pd.DataFrame(columns)
    names = getattr(model, "feature_names_in_", None)
    if names is None:
        return frame.to_numpy() if model.categories_ else frame.to_numpy(dtype=float)
    return frame.set_axis(list(names), axis=1)


def _loads_and_predicts_or_raises(models, data):
    """The fuzz property: a mutated file loads, predicts finite values of the right shape and
    reports, or ``from_json`` raises ValueError."""
    kind = data.draw(st.sampled_from(sorted(models)), label="kind")
    model, _ = models[kind]
    doc = json.loads(model.to_json())
    for _ in range(data.draw(st.sampled_from([1, 1, 2, 3]), label="edits")):
        _mutate(data, doc)
    text = json.dumps(doc)
    if data.draw(st.sampled_from([False] * 9 + [True]), label="cut"):
        text = text[:data.draw(st.integers(0, len(text)), label="cut at")]
    try:
        loaded = type(model).from_json(text)
    except ValueError as error:
        assert str(error).startswith("model file: ")
        return
    X = _schema_X(loaded)
    n = len(X)
    if isinstance(loaded, DPGBClassifier):
        proba, labels = _outputs(loaded, X)
        assert proba.shape == (n, loaded.classes_.size) and np.isfinite(proba).all()
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        assert np.isin(labels, loaded.classes_).all()
    else:
        (predictions,) = _outputs(loaded, X)
        lower, upper = loaded.target_bounds_
        rounding = 1e-9 * (abs(lower) + abs(upper))
        assert predictions.shape == (n,) and np.isfinite(predictions).all()
        assert ((predictions >= lower - rounding) & (predictions <= upper + rounding)).all()
    # What ``dpboost report`` and the inspection read of a model file.
    assert loaded.privacy_report() and loaded.export_text(loaded.n_estimators_ - 1)


_FUZZ = {"deadline": None, "derandomize": True, "database": None,
         "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}


@settings(max_examples=1000, **_FUZZ)
@given(data=st.data())
def test_mutated_model_files_load_and_predict_or_raise_a_value_error(models, data):
    _loads_and_predicts_or_raises(models, data)


@pytest.mark.slow
@settings(max_examples=20_000, **_FUZZ)
@given(data=st.data())
def test_mutated_model_files_long_fuzz(models, data):
    _loads_and_predicts_or_raises(models, data)


# --- save_model / load_model ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(500, 3))
    y = (X[:, 0] > 0).astype(int)
    clf = DPGBClassifier(feature_bounds=(-1, 1), classes=[0, 1], n_estimators=4, max_depth=2,
                         random_state=0).fit(X, y)
    path = tmp_path_factory.mktemp("models") / "model.json"
    clf.save_model(path)
    return clf, X, path


def test_save_and_load_model_predict_the_same(saved):
    clf, X, path = saved
    expected = clf.predict_proba(X)
    for loaded in (DPGBClassifier().load_model(path), DPGBClassifier().load_model(str(path)),
                   DPGBClassifier.from_json(path),
                   DPGBClassifier.from_json(path.read_text()),
                   DPGBClassifier.from_json(json.loads(path.read_text()))):
        np.testing.assert_array_equal(loaded.predict_proba(X), expected)
        assert loaded.max_depth == clf.max_depth and loaded.n_estimators_ == clf.n_estimators_
        assert loaded.privacy_spent_ == clf.privacy_spent_


@pytest.mark.parametrize("content, message", [
    (lambda text: text[:len(text) // 2], "not JSON text"),        # truncated
    (lambda text: text[:1], "not JSON text"),
    (lambda text: "", "not JSON text"),
    (lambda text: '{"learner": {"gradient_booster": {}}}', "not a dpboost model"),  # XGBoost's
    (lambda text: "null", "not a dpboost model"),
    (lambda text: "a,b\n1,2\n", "not JSON text"),                 # a CSV file
    (lambda text: text.replace('"version": 1', '"version": 2', 1), "written by a newer dpboost"),
])
def test_a_bad_file_is_one_clear_value_error(saved, tmp_path, content, message):
    _, _, path = saved
    bad = tmp_path / "bad.json"
    bad.write_text(content(path.read_text()))
    with pytest.raises(ValueError, match=f"model file: .*{message}"):
        DPGBClassifier().load_model(bad)
    with pytest.raises(ValueError, match=f"model file: .*{message}"):
        DPGBClassifier.from_json(bad)


def test_a_path_given_as_text_says_how_to_load_it(saved):
    _, _, path = saved
    with pytest.raises(ValueError, match="is a file: pass pathlib.Path"):
        DPGBClassifier.from_json(str(path))


def test_a_binary_file_is_a_value_error(tmp_path):
    bad = tmp_path / "model.ubj"
    bad.write_bytes(b"{\xff\xfe\x00binary")
    with pytest.raises(ValueError, match="model file: .*not UTF-8 text"):
        DPGBClassifier().load_model(bad)


def test_a_file_from_a_newer_dpboost_warns(saved):
    clf, X, path = saved
    doc = json.loads(path.read_text())
    doc["dpboost_version"] = "99.0.0"
    with pytest.warns(UserWarning, match="written by dpboost 99.0.0, newer than this dpboost"):
        loaded = DPGBClassifier.from_json(doc)
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    doc["dpboost_version"] = "0.0.1"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DPGBClassifier.from_json(doc)


def test_a_ledger_is_written_in_runs_and_read_back_entry_for_entry():
    # The trees whose entries repeat the tree before's (tree and group moved by one step) are
    # one run; anything else breaks a run, and every ledger reads back entry for entry.
    from dpboost._accounting import LedgerEntry
    from dpboost._persistence import read_ledger, written_ledger

    def tree(t, group=None, epsilon=0.5, fit="a"):
        group = t if group is None else group
        return [LedgerEntry("uniform", 0.0, sensitivity=0.0, group=group, tree=t, level=0,
                            n_nodes=1, fit=fit),
                LedgerEntry("laplace", epsilon, sensitivity=1.0, group=group, tree=t, level=1,
                            n_nodes=2, fit=fit)]

    count = LedgerEntry("laplace", 0.01, sensitivity=1.0, group=-1, tree=-1, level=-4,
                        n_nodes=1, fit="a")
    ledgers = {
        "one run": [count] + sum((tree(t) for t in range(50)), []),
        # the 11th tree's epsilon differs: two runs and its two entries between them
        "broken": sum((tree(t, epsilon=0.7 if t == 10 else 0.5) for t in range(20)), []),
        # three outputs per stage: tree moves by 1 and group by 0 within a stage (a run a stage)
        "outputs": sum((tree(t, group=t // 3) for t in range(9)), []),
        # a warm start's second fit, a release between trees, trees of several entries each
        "fits": (tree(0) + tree(1) + [count] + tree(2) + tree(3) + tree(4, fit="b")
                 + tree(5, fit="b") + tree(7, fit="b") + tree(9, fit="b")),
        "empty": [],
    }
    lengths = {"one run": 2, "broken": 4, "outputs": 3, "fits": 5, "empty": 0}
    for name, ledger in ledgers.items():
        items = written_ledger(ledger)
        assert len(items) == lengths[name], name
        read = read_ledger(json.loads(json.dumps(items)), name)
        # vars: every field, the fit's identifier too (which LedgerEntry's == leaves out)
        assert [vars(e) for e in read] == [vars(e) for e in ledger], name
    # entries stored without their fit's identifier take the one given
    plain = read_ledger(written_ledger(ledgers["one run"], keep_fit=False), "plain", "z")
    assert {e.fit for e in plain} == {"z"}
