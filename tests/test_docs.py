"""The documentation site (docs/, examples/) says what the code does: the comparison table cites
tests that exist and marks as planned only what is not built, the API reference lists every
public name, the pages' code runs, and the README leads with the two commands and the default
estimator.

The site itself is built by .ci/run (``python -m sphinx -W``), which also runs the examples."""

import ast
import inspect
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import dpboost
from dpboost import DPGBClassifier, DPGBRegressor

ROOT = Path(__file__).parents[1]
DOCS = ROOT / "docs"


def table_rows(path):
    """The comparison table's rows as {first cell: dpboost's cell (the last)}."""
    rows = {}
    for line in path.read_text().splitlines():
        if line.startswith("| ") and not line.startswith("|---"):
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            rows[cells[0]] = cells[-1]
    return rows


CITATION = re.compile(r"`(test_\w+\.py)::(test_\w+)`")


def test_every_dpboost_cell_cites_a_test_that_exists_or_is_planned():
    rows = table_rows(DOCS / "comparison.md")
    assert len(rows) > 20
    for feature, cell in list(rows.items())[1:]:  # the header row names the libraries
        citations = CITATION.findall(cell)
        if cell.startswith("planned"):
            assert not citations, feature
            continue
        assert citations or "auto_examples/" in cell, f"{feature!r}: {cell!r} cites no test"
        for file, name in citations:
            source = (ROOT / "tests" / file).read_text()
            assert re.search(rf"^def {name}\(", source, flags=re.M), f"{file}::{name}"


#: For each feature marked planned, how to tell that it has been built (then the table must say
#: which test checks it).
BUILT = {
    "`sample_weight`": lambda: "sample_weight" in inspect.signature(DPGBClassifier.fit).parameters,
    "`class_weight`": lambda: "class_weight" in DPGBClassifier().get_params(),
    "continue training": lambda: "warm_start" in DPGBClassifier().get_params(),
}


@pytest.mark.parametrize("feature", sorted(BUILT))
def test_a_feature_marked_planned_is_not_built(feature):
    planned = table_rows(DOCS / "comparison.md")[feature].startswith("planned")
    assert not (planned and BUILT[feature]()), (
        f"{feature} is built: docs/comparison.md must name the test that checks it")


def test_api_reference_documents_every_public_name():
    text = (DOCS / "api.rst").read_text()
    documented = set(re.findall(r"^\.\. auto(?:class|exception|data|function):: (\S+)", text,
                                flags=re.M))
    documented |= {f"{module}.{name.strip()}"
                   for module, names in re.findall(
                       r"^\.\. automodule:: (\S+)\n   :members: ([^\n]+)", text, flags=re.M)
                   for name in names.split(",")}
    public = {f"dpboost.{name}" for name in dpboost.__all__} | {"dpboost.__version__"}
    for module in ("dask", "datasets", "plotting"):
        source = (ROOT / "src" / "dpboost" / f"{module}.py").read_text()
        tree = ast.parse(source)
        public |= {f"dpboost.{module}.{node.name}" for node in tree.body
                   if isinstance(node, (ast.ClassDef, ast.FunctionDef))
                   and not node.name.startswith("_")}
    # DaskRecords is the record set the Dask estimators use, not an estimator of their own.
    assert public - documented == {"dpboost.dask.DaskRecords"}


def test_version_is_the_packages():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert dpboost.__version__ == project["version"]


def python_blocks(path):
    return re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S)


@pytest.mark.parametrize("page", ["choosing_epsilon.md", "choosing_bounds.md"])
def test_pages_python_blocks_run(page, seeded_os_words):
    # The pages' fits use the default secure noise: on seeded bytes, the same run every time.
    blocks = python_blocks(DOCS / page)
    assert blocks
    for i, block in enumerate(blocks):
        exec(compile(block, f"{page} python block {i}", "exec"), {})


def test_examples_that_read_the_shared_datasets_are_the_ones_the_build_can_skip():
    # docs/conf.py runs every example; when the shared datasets are missing it skips those in
    # NEEDS_DATASETS, so an example reading them must be in that list (or the build fails).
    conf = ast.parse((DOCS / "conf.py").read_text())
    listed = next(ast.literal_eval(node.value) for node in conf.body
                  if isinstance(node, ast.Assign)
                  and getattr(node.targets[0], "id", None) == "NEEDS_DATASETS")
    examples = sorted((ROOT / "examples").glob("plot_*.py"))
    assert len(examples) >= 7
    reading = {p.stem.removeprefix("plot_") for p in examples
               if "DPBOOST_DATASETS" in p.read_text()}
    assert reading == set(listed)
    for path in examples:
        text = path.read_text()
        # a title for the gallery, and a guard that stops with a message rather than a traceback
        assert ast.get_docstring(ast.parse(text)).splitlines()[1].startswith("===")
        if path.stem.removeprefix("plot_") in reading:
            assert 'raise SystemExit(f"skipped:' in text


def test_readme_leads_with_the_two_commands_the_default_estimator_then_the_guarantee():
    readme = (ROOT / "README.md").read_text()
    headings = re.findall(r"^## (.+)$", readme, flags=re.M)
    assert headings[:3] == ["Two commands", "Quickstart", "What the guarantee covers"]
    first = python_blocks(ROOT / "README.md")[0]
    # the shipped defaults: only the public inputs and epsilon are given
    assert re.search(r"clf = DPGBClassifier\(epsilon=1\.0, feature_bounds=bounds, "
                     r"classes=\[0, 1\]\)", first)


def test_regressor_defaults_quoted_by_the_readme():
    # The README's "Defaults" describes DPGBRegressor() as "auto" trees of depth 4 (at least 200,
    # 7.5 per feature at epsilon 0.1, 18.9 at 1, 25 from 2 on), each on one feature, random
    # splits among the Hessian sketch's candidates, gradients clipped (no GDF).
    params = DPGBRegressor().get_params()
    assert (params["n_estimators"], params["max_depth"], params["split_candidates"],
            params["gradient_filtering"], params["leaf_noise"]) == (
        "auto", 4, "hessian", False, "gaussian")
    config = DPGBRegressor()._configs(n_features=8)[-1]
    assert (config.interaction_cst, config.split_selection) == ("no_interactions", "random")
    assert [DPGBRegressor(epsilon=e, n_estimators="auto")._configs(
        n_features=p)[-1].n_estimators for e, p in [(0.1, 8), (0.1, 48), (1.0, 48), (2.0, 48), (8.0, 48)]] == [
        200, 362, 909, 1200, 1200]
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert ("trees of depth 4 on every record (`n_estimators=\"auto\"`: at least 200, 7.5 per "
            "feature at epsilon 0.1, 18.9 at 1, 25 from 2 on)") in readme


@pytest.mark.parametrize("cls", ["DPGBClassifier", "DPGBRegressor", "PrivacyAccountant",
                                 "PrivateSearchCV"])
def test_public_methods_carry_type_hints_and_the_package_ships_py_typed(cls):
    import importlib.resources
    import inspect

    import dpboost

    assert importlib.resources.files("dpboost").joinpath("py.typed").is_file()
    klass = getattr(dpboost, cls)
    public = [name for name, member in inspect.getmembers(klass, inspect.isfunction)
              if not name.startswith("_") and member.__module__.startswith("dpboost")
              and name not in {"get_params", "set_params"}]
    assert public
    missing = [name for name in public
               if inspect.signature(getattr(klass, name)).return_annotation
               is inspect.Signature.empty]
    # scikit-learn's own methods (score, get_metadata_routing, ...) are not dpboost's to type
    assert missing == [], missing


def test_a_column_transformer_pipeline_keeps_the_public_lists():
    """docs/getting_started.md, "Pipelines": a ColumnTransformer passing a string column
    through (pandas output) leaves the coding to dpboost, with the public list only; a value
    that one record alone holds is not in anything the pipeline keeps."""
    pd = pytest.importorskip("pandas")
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"age": rng.integers(17, 91, 600).astype(float),
                      "city": rng.choice(["Lille", "Lyon", "Paris"], 600), "id": np.arange(600)})
    X.loc[3, "city"] = "Bastia"
    y = (X["city"] == "Paris").astype(int)
    prepare = ColumnTransformer([("keep", "passthrough", ["age", "city"])],
                                verbose_feature_names_out=False).set_output(transform="pandas")
    model = make_pipeline(prepare, DPGBClassifier(
        feature_bounds={"age": (17, 90)}, categories={"city": ["Lille", "Lyon", "Paris"]},
        classes=[0, 1], n_estimators=6, max_depth=2, random_state=0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", dpboost.PrivacyLeakWarning)
        warnings.filterwarnings("ignore", category=dpboost.ReproducibleNoiseWarning)
        model.fit(X, y)
    assert {k: list(v) for k, v in model[-1].categories_.items()} == {
        1: ["Lille", "Lyon", "Paris"]}
    assert "Bastia" not in model[-1].to_json()
