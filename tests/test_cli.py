"""The command line: train -> predict -> report on CSV files, the schema file, one-line errors.

Commands run in-process through ``dpboost.__main__.main`` (stdout and stderr from capsys); one
test runs ``python -m dpboost`` and the console script as subprocesses.
"""

import io
import json
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import dpboost
from dpboost import DPGBClassifier, DPGBRegressor, PrivacyLeakWarning, ReproducibleNoiseWarning
from dpboost.__main__ import main
from dpboost._cli import exact_floats, match_cells, read_schema, read_table
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


def test_cells_match_public_values_by_text_or_number_each_on_its_own(tmp_path):
    assert list(match_cells(["1", "2.0", " 3", "x", np.nan, "2"], [1, 2, 3])) == [
        1, 2, 3, None, None, 2]
    assert list(match_cells(["True", "true", "1", "False"], [True, False])) == [
        True, True, None, False]
    assert list(match_cells(["a", "A", np.nan, "1"], ["a", "b", "1"])) == ["a", None, None, "1"]
    # Read as text: a stray word does not turn the other cells of its column into text.
    (tmp_path / "d.csv").write_text("code,x\n1,0.5\n2,0.25\noops,1\n?,2\n")
    table = read_table(tmp_path / "d.csv", {"code"})
    assert list(match_cells(table["code"].to_numpy(dtype=object), [1, 2])) == [1, 2, None, None]
    assert table["x"].tolist() == [0.5, 0.25, 1.0, 2.0]


# --- errors: one line, the right status, no traceback, no private value ---------------------

def _bad_files(files):
    """Files for the error cases, by name."""
    d = files["dir"]
    (d / "empty.csv").write_text("")
    (d / "not.json").write_text("{bounds: ")
    (d / "folder").mkdir()
    paths = {"empty": d / "empty.csv", "notjson": d / "not.json", "folder": d / "folder",
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
    (["predict", "{missing}", "{data}"], 1, "cannot read {missing}"),
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
    model, base = tmp_path / "m.json", ["--target", "label", "--epsilon", "1", *FAST]
    runs = [["train", tmp_path / "d.csv", *base, "--out", model],  # no schema: warnings
            ["train", tmp_path / "d.csv", *base, "--schema", no_bound, "--out", model],
            ["train", tmp_path / "broken.csv", *base, "--out", model],
            ["train", tmp_path / "binary.csv", *base, "--out", model],
            ["train", tmp_path / "d.csv", *base, "--schema", schema, "--verbose", "--out", model],
            ["predict", model, tmp_path / "d.csv"], ["report", model]]
    statuses = []
    for argv in runs:
        status, out, err = _run(capsys, *argv)
        statuses.append(status)
        assert SECRET not in out + err and "Traceback" not in err
    assert statuses == [0, 1, 1, 1, 0, 0, 0]


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
