"""The command line: train -> predict -> report on CSV files, the schema file, the record
boundary (each line one record, each cell read by its column's type in the schema), one-line
errors, and the record-and-replay harness on D and D' as CSV files.

Commands run in-process through ``dpboost.__main__.main`` (stdout and stderr from capsys); one
test runs ``python -m dpboost`` and the console script as subprocesses.
"""

import contextlib
import gzip
import io
import json
import math
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from replay_harness import _wrapped, replay

import dpboost
from dpboost import DPGBClassifier, DPGBRegressor, PrivacyLeakWarning, ReproducibleNoiseWarning
from dpboost.__main__ import main
from dpboost._cli import exact_floats, load_model, read_schema
from dpboost._csv import NUMBER, TEXT, cell_reader, read_records, typed_columns
from dpboost.datasets import SCHEMAS, estimator_params
from dpboost.datasets import read_csv as read_shared_csv

pd = pytest.importorskip("pandas")

SHARED = Path(__file__).parents[1].parent / "shared" / "datasets"

#: Few small trees: the tests check plumbing, not accuracy.
FAST = ["--n-estimators", "4", "--max-depth", "2", "--random-state", "0"]
COLORS = ["red", "green", "blue"]
BOUNDS = {"age": [17, 90], "hours": [1, 99]}
# The CSV holds both targets; each task's schema bounds the other one as a feature.
CLASSIFICATION = {"bounds": {**BOUNDS, "income": [0, 200]}, "categories": {"color": COLORS},
                  "classes": [0, 1]}
REGRESSION = {"bounds": {**BOUNDS, "label": [0, 1]}, "categories": {"color": COLORS},
              "target_bounds": [0, 100]}


def _frame(n=300, seed=0):
    """Two numeric columns, a categorical one with missing cells, a 0/1 label and a target."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"age": rng.integers(17, 91, n), "hours": rng.uniform(1, 99, n),
                          "color": rng.choice(COLORS, n).astype(object)})
    frame["label"] = ((frame["age"] > 40) | (frame["color"] == "red")).astype(int)
    frame["income"] = frame["age"] + rng.normal(0, 5, n)
    frame.loc[::9, "color"] = np.nan
    return frame


def _write_json(path, doc):
    path.write_text(json.dumps(doc))
    return str(path)


def _run(capsys, *argv):
    """``main(argv)`` -> (status, stdout, stderr)."""
    status = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _library_params(schema):
    """The estimator's public inputs a schema file stands for."""
    params = {"feature_bounds": schema["bounds"], "categorical_features": ["color"],
              "categories": schema["categories"]}
    return {**params, **{k: schema[k] for k in ("classes", "target_bounds") if k in schema}}


@pytest.fixture
def files(tmp_path):
    """data.csv (features, label, income) and the two schema files, as paths (str)."""
    _frame().to_csv(tmp_path / "data.csv", index=False)
    return {"data": str(tmp_path / "data.csv"), "dir": tmp_path,
            "schema": _write_json(tmp_path / "schema.json", CLASSIFICATION),
            "regression": _write_json(tmp_path / "regression.json", REGRESSION)}


def _leaks(err):
    """The inputs named by the PrivacyLeakWarning lines of stderr."""
    return [line.split("PrivacyLeakWarning: ")[1].split(" was not given")[0]
            for line in err.splitlines() if "PrivacyLeakWarning: " in line]


# --- train -> predict -> report ------------------------------------------------------------

def test_train_predict_report_round_trip(files, capsys):
    model, pred = files["dir"] / "model.json", files["dir"] / "pred.csv"
    with warnings.catch_warnings():
        # A full schema: any PrivacyLeakWarning would become an error (exit status 1).
        warnings.simplefilter("error", PrivacyLeakWarning)
        warnings.simplefilter("ignore", ReproducibleNoiseWarning)  # seeded on purpose
        status, out, err = _run(capsys, "train", files["data"], "--target", "label",
                                "--epsilon", 1, "--schema", files["schema"], *FAST,
                                "--out", model)
    assert (status, err) == (0, "")
    clf = DPGBClassifier.from_json(model.read_text())
    assert out == (f"DPGBClassifier written to {model}: epsilon spent "
                   f"{clf.privacy_spent_:.6g} of 1 (delta 1e-05); `dpboost report {model}` "
                   "lists the releases\n")
    assert list(clf.feature_names_in_) == ["age", "hours", "color", "income"]
    assert list(clf.categories_[2]) == COLORS

    status, out, err = _run(capsys, "predict", model, files["data"], "--out", pred)
    assert (status, out, err) == (0, "", "")
    labels = pd.read_csv(pred)
    assert list(labels.columns) == ["prediction"] and len(labels) == 300
    assert set(labels["prediction"]) <= {0, 1}

    status, out, err = _run(capsys, "report", model)
    assert (status, err) == (0, "")
    assert out.startswith(f"DPGBClassifier written by dpboost {dpboost.__version__}: epsilon=1, "
                          "delta=1e-05, n_estimators=4, max_depth=2\n")
    assert f"add/remove one record): {clf.privacy_spent_:.6g}\n" in out
    assert clf.privacy_report() in out


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_predictions_equal_the_library_on_the_same_data_and_seed(files, task, capsys):
    frame = _frame()
    target = "label" if task == "classification" else "income"
    schema = CLASSIFICATION if task == "classification" else REGRESSION
    cls = DPGBClassifier if task == "classification" else DPGBRegressor
    model, pred = files["dir"] / "model.json", files["dir"] / "pred.csv"
    schema_file = files["schema" if task == "classification" else "regression"]
    assert _run(capsys, "train", files["data"], "--target", target, "--epsilon", 2,
                "--schema", schema_file, *FAST, "--out", model)[0] == 0
    proba = ["--proba"] if task == "classification" else []
    assert _run(capsys, "predict", model, files["data"], *proba, "--out", pred)[0] == 0

    X, y = frame.drop(columns=target), frame[target].to_numpy()
    library = cls(epsilon=2, n_estimators=4, max_depth=2, random_state=0,
                  **_library_params(schema)).fit(X, y)
    cli = pd.read_csv(pred, **exact_floats(pd))
    expected = (library.predict_proba(X) if task == "classification"
                else library.predict(X)[:, None])
    np.testing.assert_array_equal(cli.to_numpy(), expected)
    if task == "classification":
        assert list(cli.columns) == ["proba_0", "proba_1"]
    assert cls.from_json(model.read_text()).privacy_spent_ == library.privacy_spent_


def test_predict_writes_labels_to_stdout_and_ignores_extra_columns(files, capsys):
    model = files["dir"] / "model.json"
    assert _run(capsys, "train", files["data"], "--target", "label", "--epsilon", 1,
                "--schema", files["schema"], *FAST, "--out", model)[0] == 0
    shuffled = _frame()[["label", "color", "income", "hours", "age"]].assign(extra="x")
    shuffled.to_csv(files["dir"] / "other.csv", index=False)
    status, out, err = _run(capsys, "predict", model, files["dir"] / "other.csv")
    assert (status, err) == (0, "")
    clf = DPGBClassifier.from_json(model.read_text())
    expected = clf.predict(_frame().drop(columns="label"))
    assert out.splitlines() == ["prediction", *map(str, expected)]


def test_predict_with_a_model_fitted_on_an_array_reads_columns_by_position(tmp_path, capsys):
    frame = _frame()
    X = frame[["age", "hours"]].to_numpy()
    clf = DPGBClassifier(epsilon=1, feature_bounds=[(17, 90), (1, 99)], classes=[0, 1],
                         n_estimators=3, max_depth=2, random_state=0).fit(X, frame["label"])
    (tmp_path / "model.json").write_text(clf.to_json())
    frame[["age", "hours"]].to_csv(tmp_path / "x.csv", index=False)
    status, out, err = _run(capsys, "predict", tmp_path / "model.json", tmp_path / "x.csv",
                            "--proba")
    assert (status, err) == (0, "")
    np.testing.assert_array_equal(pd.read_csv(io.StringIO(out),
                                              **exact_floats(pd)).to_numpy(),
                                  clf.predict_proba(X))


def test_verbose_prints_progress_and_params_reach_the_estimator(files, capsys):
    model = files["dir"] / "model.json"
    status, out, _ = _run(capsys, "train", files["data"], "--target", "label", "--epsilon", 1,
                          "--schema", files["schema"], *FAST, "--verbose", "--param",
                          "loss=logistic", "--param", "learning_rate=0.2", "--out", model)
    assert status == 0
    assert "4/4 trees, epsilon spent" in out
    clf = DPGBClassifier.from_json(model.read_text())
    assert (clf.loss, clf.learning_rate, clf.n_estimators) == ("logistic", 0.2, 4)


# --- the schema file -----------------------------------------------------------------------

def test_without_a_schema_every_leak_warns_once_on_one_line(files, capsys):
    status, _, err = _run(capsys, "train", files["data"], "--target", "label", "--epsilon", 1,
                          *FAST, "--out", files["dir"] / "model.json")
    assert status == 0 and "Traceback" not in err
    assert sorted(_leaks(err)) == ["categories (of color)", "classes", "feature_bounds"]
    assert all(line.startswith("dpboost train: warning: ") for line in err.splitlines())
    # The string column was categorical (from its dtype), its list read from the data.
    clf = DPGBClassifier.from_json((files["dir"] / "model.json").read_text())
    assert sorted(clf.categories_[2]) == sorted(COLORS)


def test_a_partial_schema_warns_for_what_it_leaves_out(files, capsys):
    schema = _write_json(files["dir"] / "partial.json",
                         {"categorical_features": ["color"], "classes": [0, 1]})
    status, _, err = _run(capsys, "train", files["data"], "--target", "label", "--epsilon", 1,
                          "--schema", schema, *FAST, "--out", files["dir"] / "model.json")
    assert status == 0
    assert sorted(_leaks(err)) == ["categories (of color)", "feature_bounds"]


def test_a_regression_schema_picks_the_task(files, capsys):
    model = files["dir"] / "model.json"
    status, out, err = _run(capsys, "train", files["data"], "--target", "income", "--epsilon",
                            1, "--schema", files["regression"], *FAST, "--out", model)
    assert (status, _leaks(err)) == (0, [])
    assert out.startswith("DPGBRegressor written to")
    assert DPGBRegressor.from_json(model.read_text()).target_bounds_ == (0.0, 100.0)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_schema_command_writes_the_shipped_schema(name, tmp_path, capsys):
    assert _run(capsys, "schema", name, "--out", tmp_path / "s.json") == (0, "", "")
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["bounds"] == {c: list(b) for c, b in SCHEMAS[name].bounds.items()}
    assert doc["categories"] == SCHEMAS[name].categories
    assert doc["classes"] == [0, 1]
    assert read_schema(tmp_path / "s.json")["categories"] == SCHEMAS[name].categories
    status, out, _ = _run(capsys, "schema", name)
    assert status == 0 and json.loads(out) == doc


@pytest.mark.skipif(not all((SHARED / f).exists() for f in SCHEMAS["adult"].files),
                    reason=f"the shared Adult files are not in {SHARED}")
def test_adult_with_the_shipped_schema_trains_as_the_library(tmp_path, capsys):
    X, y = read_shared_csv(SHARED / "adult_train.csv.gz")
    X.iloc[:2000].assign(target=y[:2000]).to_csv(tmp_path / "adult.csv", index=False)
    X, y = read_shared_csv(tmp_path / "adult.csv")  # as the library's users read it
    assert _run(capsys, "schema", "adult", "--out", tmp_path / "adult.json")[0] == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        warnings.simplefilter("ignore", ReproducibleNoiseWarning)
        status, _, err = _run(capsys, "train", tmp_path / "adult.csv", "--target", "target",
                              "--epsilon", 1, "--schema", tmp_path / "adult.json", *FAST,
                              "--out", tmp_path / "model.json")
    assert (status, err) == (0, "")
    assert _run(capsys, "predict", tmp_path / "model.json", tmp_path / "adult.csv", "--proba",
                "--out", tmp_path / "pred.csv")[0] == 0
    library = DPGBClassifier(epsilon=1, n_estimators=4, max_depth=2, random_state=0,
                             **estimator_params("adult", X.columns)).fit(X, y)
    np.testing.assert_array_equal(
        pd.read_csv(tmp_path / "pred.csv", **exact_floats(pd)).to_numpy(),
        library.predict_proba(X))


def test_cells_match_public_values_by_text_or_number_each_on_its_own():
    cells = ["1", "2.0", " 3", "x", "", "?", "2"]
    assert list(map(cell_reader([1, 2, 3]), cells)) == [1, 2, 3, None, None, None, 2]
    assert list(map(cell_reader([True, False]), ["True", "true", "1", "False"])) == [
        True, True, None, False]
    assert list(map(cell_reader(["a", "b", "1"]), ["a", "A", "", "1"])) == ["a", None, None, "1"]
    assert list(map(cell_reader(TEXT), ["a", " b", "", "?"])) == ["a", " b", None, None]
    numbers = list(map(cell_reader(NUMBER), ["1.5", " 2", "1e400", "-0.0", "nan", "", "?",
                                             "unknown", "True", "false", "TRUE", "yes"]))
    np.testing.assert_array_equal(numbers, [1.5, 2.0, np.inf, -0.0, np.nan, np.nan, np.nan,
                                            np.nan, 1.0, 0.0, 1.0, np.nan])
    assert math.copysign(1.0, numbers[3]) == -1.0


def test_a_numeric_column_with_one_word_stays_numeric(tmp_path):
    # pandas reads a column with one word as text, every cell of it; the record boundary
    # reads each cell on its own.
    columns, records = ["code", "x", "flag"], [["1", "0.5", "True"], ["2", "0.25", "False"],
                                               ["oops", "1", "maybe"], ["?", "2", "true"]]
    typed = typed_columns(columns, records, {"code": [1, 2], "x": NUMBER, "flag": NUMBER})
    assert list(typed["code"]) == [1, 2, None, None]
    np.testing.assert_array_equal(typed["x"], [0.5, 0.25, 1.0, 2.0])
    np.testing.assert_array_equal(typed["flag"], [1.0, 0.0, np.nan, 1.0])
    assert typed["x"].dtype == np.float64 and typed["code"].dtype == object


def test_a_record_of_the_wrong_width_has_every_cell_missing():
    typed = typed_columns(["a", "b", "c"], [["1", "x", "2"], ["1", "x"], ["1", "x", "2", "3"],
                                            []], {"c": NUMBER, "a": TEXT})
    assert list(typed) == ["c", "a"]
    np.testing.assert_array_equal(typed["c"], [2.0, np.nan, np.nan, np.nan])
    assert list(typed["a"]) == ["1", None, None, None]


def test_each_line_is_one_record(tmp_path):
    huge = b"9" * 200_000  # over csv.field_size_limit()
    (tmp_path / "d.csv").write_bytes(b'\xef\xbb\xbfa,b\r\n1,"x,y"\r\n\r\n"2,\n3,"open\n4,"z\n'
                                     + huge + b",w\n5,caf\xe9\n")
    columns, records = read_records(tmp_path / "d.csv")
    assert columns == ["a", "b"]  # the byte-order mark dropped
    # A blank line is skipped; an unclosed quote ends with its line; a field too large for
    # csv makes a record of no field; a byte that is not UTF-8 is replaced.
    assert list(records) == [["1", "x,y"], ["2,"], ["3", "open"], ["4", "z"], [],
                             ["5", "caf\ufffd"]]
    with gzip.open(tmp_path / "d.csv.gz", "wt") as file:
        file.write("a,b\n1,2\n")
    columns, records = read_records(tmp_path / "d.csv.gz")
    assert (columns, list(records)) == (["a", "b"], [["1", "2"]])


# --- with a schema, the schema types every column, cell by cell ----------------------------

NUMERIC = {"bounds": {**BOUNDS, "flag": [0, 1], "income": [0, 200]}, "classes": [0, 1]}


def _numeric_frame():
    """_frame() without its categorical column, with a True/False column."""
    frame = _frame().drop(columns="color")
    frame.insert(2, "flag", frame["age"] % 3 == 0)
    return frame


def _without_fit_id(text):
    """A model's JSON without the random identifier each fit draws for its ledger."""
    return re.sub(r'"fit(_id)?": "[0-9a-f]*"', '"fit_id": "<id>"', text)


def _train_quietly(capsys, data, schema, *argv):
    """``dpboost train`` with --random-state 0 (its warning ignored) and any
    PrivacyLeakWarning an error; returns (status, stderr, the model's JSON)."""
    model = Path(data).parent / "model.json"
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        warnings.simplefilter("ignore", ReproducibleNoiseWarning)
        status, _, err = _run(capsys, "train", data, "--epsilon", 1, "--schema", schema, *FAST,
                              *argv, "--out", model)
    return status, err, model.read_text() if status == 0 else None


def _library_json(cls, X, y, **params):
    """The JSON of the model the library fits with the command's FAST settings, the public
    inputs as the command passes them (numbers as floats)."""
    floats = {"feature_bounds": {c: (float(lower), float(upper))
                                 for c, (lower, upper) in params["feature_bounds"].items()}}
    if "target_bounds" in params:
        floats["target_bounds"] = tuple(map(float, params["target_bounds"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReproducibleNoiseWarning)
        return cls(epsilon=1.0, n_estimators=4, max_depth=2, random_state=0,
                   **{**params, **floats}).fit(X, y).to_json()


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_a_schema_model_equals_the_library_model_on_the_same_typed_data(files, task, capsys):
    target = "label" if task == "classification" else "income"
    schema = CLASSIFICATION if task == "classification" else REGRESSION
    cls = DPGBClassifier if task == "classification" else DPGBRegressor
    status, err, text = _train_quietly(capsys, files["data"], files[
        "schema" if task == "classification" else "regression"], "--target", target)
    assert (status, err) == (0, "")
    # As the schema types them: numbers as float64, the categories (None where missing).
    frame = _frame()
    X = frame.drop(columns=target)
    X = X.astype({c: float for c in X.columns if c != "color"})
    X["color"] = np.array([None if pd.isna(c) else c for c in X["color"]], dtype=object)
    expected = _library_json(cls, X, frame[target].to_numpy(), **_library_params(schema))
    assert _without_fit_id(text) == _without_fit_id(expected)


@pytest.mark.parametrize("odd", [("age", "unknown"), ("flag", "maybe"), ("income", "1e400"),
                                 ("flag", "-0.0"), ("hours", "nan")])
def test_one_odd_cell_is_read_alone(odd, tmp_path, capsys):
    """A schema that bounds every column: a word in a numeric column (pandas would make the
    column text, hence categorical with its values as a list), a word in a True/False column
    (which pandas reads as numbers only while every cell is boolean): the column stays numeric
    and the odd cell alone is read as what it is (missing, infinite, -0.0)."""
    column, cell = odd
    frame = _numeric_frame().astype({column: object})
    frame.loc[7, column] = cell
    frame.to_csv(tmp_path / "d.csv", index=False)
    schema = _write_json(tmp_path / "s.json", NUMERIC)
    status, err, text = _train_quietly(capsys, tmp_path / "d.csv", schema, "--target", "label")
    assert (status, err) == (0, "")  # no PrivacyLeakWarning: no categories read from the data
    assert DPGBClassifier.from_json(text).categories_ == {}
    typed = _numeric_frame().astype({"flag": float})
    typed.loc[7, column] = float(cell) if cell not in ("unknown", "maybe") else np.nan
    expected = _library_json(DPGBClassifier, typed.drop(columns="label"), typed["label"],
                             feature_bounds=NUMERIC["bounds"], categorical_features=[],
                             classes=[0, 1])
    assert _without_fit_id(text) == _without_fit_id(expected)


def test_without_public_classes_labels_are_text_and_a_missing_one_leaves_its_record_out(
        tmp_path, capsys):
    frame = _numeric_frame().astype({"label": object})
    frame.loc[[3, 8], "label"] = ["", "?"]
    frame.to_csv(tmp_path / "d.csv", index=False)
    schema = _write_json(tmp_path / "s.json", {"bounds": NUMERIC["bounds"]})
    model = tmp_path / "model.json"
    status, _, err = _run(capsys, "train", tmp_path / "d.csv", "--target", "label", "--epsilon",
                          1, "--schema", schema, *FAST, "--out", model)
    assert (status, _leaks(err)) == (0, ["classes"])
    assert list(DPGBClassifier.from_json(model.read_text()).classes_) == ["0", "1"]


@pytest.mark.parametrize("line", ["40,50,True,1,60,extra", "40,50,True,1", '"40,50,True,1,60'])
def test_a_line_of_the_wrong_width_is_a_record_of_missing_cells(line, tmp_path, capsys):
    frame = _numeric_frame()
    frame.to_csv(tmp_path / "d.csv", index=False)
    text = (tmp_path / "d.csv").read_text().splitlines()
    (tmp_path / "odd.csv").write_text("\n".join([*text[:3], line, *text[3:]]) + "\n")
    schema = _write_json(tmp_path / "s.json", NUMERIC)
    status, err, model = _train_quietly(capsys, tmp_path / "odd.csv", schema, "--target",
                                        "label")
    assert (status, err) == (0, "")
    # Its label is missing too: the classifier leaves it out, and the model is D's.
    assert _without_fit_id(model) == _without_fit_id(
        _train_quietly(capsys, tmp_path / "d.csv", schema, "--target", "label")[2])
    # predict writes its row: the prediction of a record with every cell missing.
    (tmp_path / "model.json").write_text(model)
    status, out, err = _run(capsys, "predict", tmp_path / "model.json", tmp_path / "odd.csv",
                            "--proba")
    assert (status, err) == (0, "")
    clf = DPGBClassifier.from_json(model)
    X = frame.drop(columns="label").astype(float)
    X = pd.concat([X.iloc[:2], X.iloc[:1] * np.nan, X.iloc[2:]], ignore_index=True)
    np.testing.assert_array_equal(pd.read_csv(io.StringIO(out), **exact_floats(pd)).to_numpy(),
                                  clf.predict_proba(X))


# --- errors: one line, the right status, no traceback, no private value ---------------------

def _bad_files(files):
    """Files for the error cases, by name."""
    d = files["dir"]
    (d / "empty.csv").write_text("")
    (d / "twice.csv").write_text("age,age,label\n1,2,0\n")
    (d / "not.json").write_text("{bounds: ")
    (d / "folder").mkdir()
    paths = {"empty": d / "empty.csv", "twice": d / "twice.csv", "notjson": d / "not.json", "folder": d / "folder",
             "out": d / "model.json", "missing": d / "nope.csv"}
    schemas = {
        "unknown_key": {**CLASSIFICATION, "bound": BOUNDS},
        "reversed": {**CLASSIFICATION, "bounds": {**CLASSIFICATION["bounds"], "age": [90, 17]}},
        "not_in_data": {**CLASSIFICATION, "categories": {"colour": COLORS}},
        "no_bound": {**CLASSIFICATION, "bounds": {"age": [17, 90]}},
        "mixed_classes": {**CLASSIFICATION, "classes": [0, "1"]},
        "both_targets": {**CLASSIFICATION, "target_bounds": [0, 1]},
    }
    paths.update({k: _write_json(d / f"{k}.json", v) for k, v in schemas.items()})
    (d / "regressor.json").write_text(
        DPGBRegressor(epsilon=1, feature_bounds=(0, 1), target_bounds=(0, 1), n_estimators=2,
                      max_depth=1, random_state=0).fit(pd.DataFrame({"x0": np.zeros(4)}),
                                                       np.zeros(4)).to_json())
    paths["regressor"] = d / "regressor.json"
    return paths


ERRORS = [
    # (argv with {placeholders}, status, a fragment of the message)
    ([], 2, "required: COMMAND"),
    (["frobnicate"], 2, "invalid choice: 'frobnicate'"),
    (["train", "{data}"], 2, "required: --target, --epsilon, --out"),
    (["train", "{data}", "--target", "label", "--epsilon", "abc", "--out", "{out}"], 2,
     "invalid float value: 'abc'"),
    (["train", "{data}", "--target", "label", "--epsilon", "1", "--task", "both", "--out",
      "{out}"], 2, "invalid choice: 'both'"),
    (["train", "{data}", "--target", "label", "--epsilon", "1", "--param", "gamma=1", "--out",
      "{out}"], 2, "--param gamma is not a parameter of DPGBClassifier"),
    (["train", "{data}", "--target", "label", "--epsilon", "1", "--param", "epsilon=2",
      "--out", "{out}"], 2, "--param epsilon is set by --epsilon"),
    (["train", "{data}", "--target", "label", "--epsilon", "1", "--out", "{data}"], 2,
     "would overwrite an input file"),
    (["train", "{missing}", "--target", "label", "--epsilon", "1", "--out", "{out}"], 1,
     "cannot read {missing}: No such file or directory"),
    (["train", "{folder}", "--target", "label", "--epsilon", "1", "--out", "{out}"], 1,
     "cannot read {folder}: Is a directory"),
    (["train", "{empty}", "--target", "label", "--epsilon", "1", "--out", "{out}"], 1,
     "the file is empty"),
    (["train", "{data}", "--target", "y", "--epsilon", "1", "--out", "{out}"], 1,
     "--target 'y' is not a column of {data}"),
    (["train", "{data}", "--target", "label", "--epsilon", "1", "--out", "{folder}/x/m.json"],
     1, "no folder"),
    (["train", "{data}", "--target", "label", "--epsilon", "-1", "--out", "{out}"], 1,
     "The 'epsilon' parameter of DPGBClassifier must be"),
    (["train", "{data}", "--target", "label", "--epsilon", "1", "--delta", "0", "--out",
      "{out}"], 1, "leaf_noise='gaussian' needs delta > 0"),
    (["train", "{data}", "--target", "label", "--epsilon", "1", "--schema", "{missing}",
      "--out", "{out}"], 1, "cannot read schema {missing}"),
    (["train", "{data}", "--target", "label", "--epsilon", "1", "--schema", "{notjson}",
      "--out", "{out}"], 1, "is not valid JSON"),
    (["train", "{data}", "--target", "label", "--epsilon", "1", "--schema", "{unknown_key}",
      "--out", "{out}"], 1, "unknown key 'bound'"),
    (["train", "{data}", "--target", "label", "--epsilon", "1", "--schema", "{reversed}",
      "--out", "{out}"], 1, "bounds['age'] = [90, 17] must be [lower, upper]"),
    (["train", "{data}", "--target", "label", "--epsilon", "1", "--schema", "{not_in_data}",
      "--out", "{out}"], 1, "the schema names column 'colour', which is not in the data"),
    (["train", "{data}", "--target", "label", "--epsilon", "1", "--schema", "{no_bound}",
      "--out", "{out}"], 1, "no bounds for column(s) ['hours', 'income']"),
    (["train", "{data}", "--target", "label", "--epsilon", "1", "--schema", "{mixed_classes}",
      "--out", "{out}"], 1, "classes must hold only strings, only numbers or only booleans"),
    (["train", "{data}", "--target", "label", "--epsilon", "1", "--schema", "{both_targets}",
      "--out", "{out}"], 1, "holds both classes (classification) and target_bounds"),
    (["train", "{data}", "--target", "income", "--epsilon", "1", "--schema", "{schema}",
      "--task", "regression", "--out", "{out}"], 1, "the schema has classes"),
    # With a schema, the file is read by read_records.
    (["train", "{missing}", "--target", "label", "--epsilon", "1", "--schema", "{schema}",
      "--out", "{out}"], 1, "cannot read {missing}: No such file or directory"),
    (["train", "{folder}", "--target", "label", "--epsilon", "1", "--schema", "{schema}",
      "--out", "{out}"], 1, "cannot read {folder}: Is a directory"),
    (["train", "{empty}", "--target", "label", "--epsilon", "1", "--schema", "{schema}",
      "--out", "{out}"], 1, "cannot read {empty}: the file is empty"),
    (["train", "{twice}", "--target", "label", "--epsilon", "1", "--schema", "{schema}",
      "--out", "{out}"], 1, "the header names column(s) ['age'] more than once"),
    (["train", "{data}", "--target", "y", "--epsilon", "1", "--schema", "{schema}", "--out",
      "{out}"], 1, "--target 'y' is not a column of {data}"),
    (["predict", "{missing}", "{data}"], 1, "cannot read {missing}"),
    (["predict", "{regressor}", "{missing}"], 1, "cannot read {missing}: No such file"),
    (["predict", "{notjson}", "{data}"], 1, "is not a dpboost model (not JSON text)"),
    (["predict", "{schema}", "{data}"], 1, "is not a dpboost model (no DPGBClassifier"),
    (["predict", "{regressor}", "{data}", "--proba"], 1, "--proba needs a classifier"),
    (["predict", "{regressor}", "{data}"], 1, "lacks the model's column(s) ['x0']"),
    (["report", "{data}"], 1, "is not a dpboost model (not JSON text)"),
]


@pytest.mark.parametrize("argv, status, fragment", ERRORS,
                         ids=[f"{i}-{' '.join(a[:1])}" for i, (a, _, _) in enumerate(ERRORS)])
def test_each_error_is_one_line_with_its_status(files, argv, status, fragment, capsys):
    paths = {**{k: v for k, v in files.items() if k != "dir"}, **_bad_files(files)}
    argv = [a.format(**paths) for a in argv]
    code, out, err = _run(capsys, *argv)
    assert code == status
    assert out == "" and "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    prog = "dpboost" + (f" {argv[0]}" if argv and argv[0] in {"train", "predict", "report"}
                        else "")
    assert lines[0].startswith(f"{prog}: error: ")
    assert fragment.format(**paths) in lines[0]


SECRET = "Zq7-SECRET"


def test_no_output_quotes_a_cell(tmp_path, capsys):
    frame = _frame()
    frame["age"] = frame["age"].astype(object)
    frame.loc[3, "age"] = SECRET + "-age"            # a word in a numeric column
    frame.loc[4, "color"] = SECRET + "-color"        # a category outside the public list
    frame["label"] = frame["label"].astype(object)
    frame.loc[5, "label"] = SECRET + "-label"        # a label outside the classes
    frame.to_csv(tmp_path / "d.csv", index=False)
    schema = _write_json(tmp_path / "s.json", CLASSIFICATION)
    no_bound = _write_json(tmp_path / "n.json", {**CLASSIFICATION, "bounds": {"age": [17, 90]}})
    (tmp_path / "broken.csv").write_text(f'age,label\n1,0\n"{SECRET},1\n2,1,{SECRET}\n')
    (tmp_path / "binary.csv").write_bytes(b"age,label\n1,0\n\xff\xfe" + SECRET.encode() + b",1\n")
    age_only = _write_json(tmp_path / "a.json", {"bounds": {"age": [0, 100]}, "classes": [0, 1]})
    model, base = tmp_path / "m.json", ["--target", "label", "--epsilon", "1", *FAST]
    runs = [["train", tmp_path / "d.csv", *base, "--out", model],  # no schema: warnings
            ["train", tmp_path / "d.csv", *base, "--schema", no_bound, "--out", model],
            ["train", tmp_path / "broken.csv", *base, "--out", model],
            ["train", tmp_path / "binary.csv", *base, "--out", model],
            # With a schema, each bad line is a record of its own, read as missing cells.
            ["train", tmp_path / "broken.csv", *base, "--schema", age_only, "--out", model],
            ["train", tmp_path / "binary.csv", *base, "--schema", age_only, "--out", model],
            ["train", tmp_path / "d.csv", *base, "--schema", schema, "--verbose", "--out", model],
            ["predict", model, tmp_path / "d.csv"], ["report", model]]
    statuses = []
    for argv in runs:
        status, out, err = _run(capsys, *argv)
        statuses.append(status)
        assert SECRET not in out + err and "Traceback" not in err
    assert statuses == [0, 1, 1, 1, 0, 0, 0, 0, 0]


# --- version, entry points -----------------------------------------------------------------

def test_version(capsys):
    assert _run(capsys, "--version") == (0, f"dpboost {dpboost.__version__}\n", "")
    assert (Path(dpboost.__file__).parent / "py.typed").exists()


def test_python_m_dpboost(tmp_path, capsys):
    done = subprocess.run([sys.executable, "-m", "dpboost", "--version"], capture_output=True,
                          text=True, check=True)
    assert done.stdout == f"dpboost {dpboost.__version__}\n"
    # Run so, the program calls itself "python -m dpboost" in its messages.
    assert main(["report", str(tmp_path / "none.json")], prog="python -m dpboost") == 1
    assert capsys.readouterr().err == (f"python -m dpboost report: error: cannot read "
                                       f"{tmp_path / 'none.json'}: No such file or directory\n")


def test_console_script():
    script = shutil.which("dpboost", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("the console script is not installed (pip install -e . installs it)")
    done = subprocess.run([script, "--version"], capture_output=True, text=True, check=True)
    assert done.stdout == f"dpboost {dpboost.__version__}\n"


# --- record and replay: D and D' as CSV files ------------------------------------------------

#: Columns of the replay's CSV files and one ordinary record of them, as text.
REPLAY_COLUMNS = ["age", "hours", "flag", "color", "label"]
ORDINARY = {"age": "40", "hours": "40.5", "flag": "True", "color": "red", "label": "1"}
#: The public schemas: one that bounds every feature (no categorical column), one with a
#: categorical column and its public list, and a regression of the 0/1 label.
REPLAY_SCHEMAS = {
    "numeric": {"bounds": {"age": [17, 90], "hours": [1, 99], "flag": [0, 1]},
                "classes": [0, 1]},
    "mixed": {"bounds": {"age": [17, 90], "hours": [1, 99], "flag": [0, 1]},
              "categories": {"color": COLORS}, "classes": [0, 1]},
    "regression": {"bounds": {"age": [17, 90], "hours": [1, 99], "flag": [0, 1]},
                   "target_bounds": [0, 1]},
}


def _line(cells, columns):
    return ",".join(cells[c] for c in columns)


#: The added record of D', as the line written into D's CSV text (given D's columns).
ADDED_LINES = {
    "unknown-age": lambda c: _line({**ORDINARY, "age": "unknown"}, c),
    "maybe-flag": lambda c: _line({**ORDINARY, "flag": "maybe"}, c),
    "empty-cell": lambda c: _line({**ORDINARY, "hours": ""}, c),
    "huge-number": lambda c: _line({**ORDINARY, "hours": "1e400"}, c),
    "nan": lambda c: _line({**ORDINARY, "age": "nan"}, c),
    "negative-zero": lambda c: _line({**ORDINARY, "flag": "-0.0"}, c),
    "quoted-comma": lambda c: _line({**ORDINARY, "hours": '"40,5"'}, c),
    "quoted-newline": lambda c: _line({**ORDINARY, "hours": '"40\n5"'}, c),
    "unknown-label": lambda c: _line({**ORDINARY, "label": "maybe"}, c),
    "huge-label": lambda c: _line({**ORDINARY, "label": "1e400"}, c),
    "extra-field": lambda c: _line(ORDINARY, c) + ",1",
    "missing-field": lambda c: _line(ORDINARY, c[:-1]),
    "unclosed-quote": lambda c: '"' + _line(ORDINARY, c),
}
#: The lines no record of D' is read from (a quoted line break makes two lines of the wrong
#: width): D' may hold them anywhere, not only last.
LEFT_OUT = ["quoted-newline", "extra-field", "missing-field", "unclosed-quote"]
REPLAY_CASES = ([(case, "mixed") for case in ADDED_LINES]
                + [(case, "numeric") for case in ("unknown-age", "maybe-flag", "nan",
                                                  "huge-number", "negative-zero", "quoted-comma")]
                + [(case, "regression") for case in ("unknown-label", "huge-label",
                                                     "maybe-flag", "extra-field")])


def _replay_files(folder, schema_name, case, position=None, n=200, seed=3):
    """D.csv, D_prime.csv (D with the case's line inserted before data line ``position``,
    default last), the schema and a probe file in ``folder``; returns the schema's path and the
    typed probe (a DataFrame, as the command reads the probe file).

    D: integer ages, decimal hours, a True/False flag, [a color with empty cells,] a 0/1 label.
    """
    rng = np.random.default_rng(seed)
    columns = [c for c in REPLAY_COLUMNS if schema_name == "mixed" or c != "color"]
    lines = []
    for _ in range(n):
        age, hours = int(rng.integers(17, 91)), round(float(rng.uniform(1, 99)), 2)
        flag, color = bool(rng.random() < 0.4), str(rng.choice(COLORS + [""]))
        cells = {"age": str(age), "hours": repr(hours), "flag": str(flag), "color": color,
                 "label": str(int(age > 40 or flag))}
        lines.append(_line(cells, columns))
    header = ",".join(columns)
    (folder / "D.csv").write_text("\n".join([header, *lines]) + "\n")
    lines.insert(n if position is None else position, ADDED_LINES[case](columns))
    (folder / "D_prime.csv").write_text("\n".join([header, *lines]) + "\n")
    features = columns[:-1]
    probe_text = {"age": ["30", "?", "17", "inf", "50"], "hours": ["1", "50", "", "99", "20"],
                  "flag": ["True", "false", "maybe", "1", "0"],
                  "color": ["red", "", "blue", "purple", "green"]}
    (folder / "probe.csv").write_text("\n".join(
        [",".join(features), *(",".join(probe_text[c][i] for c in features) for i in range(5)),
         "1,2,3,4,5,6,7"]) + "\n")
    probe = pd.DataFrame({"age": [30.0, np.nan, 17.0, np.inf, 50.0, np.nan],
                          "hours": [1.0, 50.0, np.nan, 99.0, 20.0, np.nan],
                          "flag": [1.0, 0.0, np.nan, 1.0, 0.0, np.nan],
                          "color": np.array(["red", None, "blue", None, "green", None],
                                            dtype=object)})
    return _write_json(folder / "schema.json", REPLAY_SCHEMAS[schema_name]), probe[features]


class CommandLineTrain:
    """``dpboost train`` as an estimator of the replay harness (``tests/replay_harness.py``).

    ``fit(path, None)`` runs the command in-process (``main``) on the CSV file, with the
    harness's noise source in place of the secure one (every dpboost module's ``make_noise``
    returns it), then ``dpboost predict`` of the written model on a fixed probe file. What the
    harness compares: this object's attributes (the written model, loaded; the command's
    standard error; the predictions) and, through the loaded model, its methods; the harness
    captures standard output itself.

    Parameters
    ----------
    random_state : NoiseSource
        The harness's noise (so named because the harness compares every attribute but that).
    argv : list of str
        The arguments of ``train`` but the data file and ``--out``.
    folder : pathlib.Path
        Where the model is written (the same path on D and D').
    probe : path-like
        The CSV file ``dpboost predict`` reads (``--proba`` for a classifier).
    """

    def __init__(self, random_state, argv, folder, probe):
        self.random_state = random_state
        self.argv = argv
        self.folder = folder
        self.probe = probe

    def fit(self, data, y=None):
        out, stderr, predictions = self.folder / "model.json", io.StringIO(), io.StringIO()
        with _wrapped("make_noise", lambda original: lambda random_state: self.random_state), \
                contextlib.redirect_stderr(stderr):
            status = main(["train", str(data), *self.argv, "--out", str(out)])
        if status == 0:
            self.model_, _ = load_model(out)
            proba = ["--proba"] if hasattr(self.model_, "predict_proba") else []
            with contextlib.redirect_stdout(predictions), contextlib.redirect_stderr(stderr):
                status = main(["predict", str(out), str(self.probe), *proba])
        self.stderr_, self.predictions_ = stderr.getvalue(), predictions.getvalue()
        if status != 0:
            raise RuntimeError(f"dpboost exited with status {status}: {self.stderr_}")
        return self

    def __getattr__(self, name):
        # The loaded model's methods and attributes (to_json, predict_proba, _forest, ...).
        if name == "model_":
            raise AttributeError(name)
        return getattr(self.model_, name)


def _replay_cli(folder, schema, probe, **kwargs):
    argv = ["--target", "label", "--epsilon", "1", "--schema", schema, "--n-estimators", "4",
            "--max-depth", "2", "--verbose"]
    return replay(lambda noise: CommandLineTrain(noise, argv, folder, folder / "probe.csv"),
                  (folder / "D.csv", None), (folder / "D_prime.csv", None), probe=probe,
                  **kwargs)


@pytest.mark.parametrize("case, schema_name", REPLAY_CASES,
                         ids=[f"{case}-{schema}" for case, schema in REPLAY_CASES])
def test_command_line_replays_an_adversarial_line(case, schema_name, tmp_path):
    """D' = D + one line: every released statistic moves by at most its sensitivity, and
    everything else the command writes (the model, predictions, messages) is identical."""
    schema, probe = _replay_files(tmp_path, schema_name, case)
    _replay_cli(tmp_path, schema, probe)


@pytest.mark.parametrize("case", LEFT_OUT)
def test_a_malformed_line_inside_the_file_changes_no_other_record(case, tmp_path):
    # Before the first data line: an unclosed quote read by RFC 4180 would take every
    # following line into its field.
    schema, probe = _replay_files(tmp_path, "mixed", case, position=0)
    _replay_cli(tmp_path, schema, probe)
