"""Sphinx configuration of dpboost's documentation site.

Build (from the repository root, after ``pip install -e ".[docs]"``)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

``-W`` turns every warning into an error, and ``nitpicky`` makes every cross-reference that
resolves to nothing a warning, so a dangling reference, a docstring numpydoc cannot parse or an
example that raises fails the build. The examples of ``examples/`` run during the
build (sphinx-gallery) and their output is shown on their pages; those that read the shared
datasets are not run, with a message, when the folder is missing.
"""

import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # document the working copy, not an installed dpboost

import dpboost  # noqa: E402

project = "dpboost"
author = "the dpboost developers"
copyright = "the dpboost developers"
version = release = dpboost.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "auto_examples/*.json", "auto_examples/*.md5",
                    "sg_execution_times.rst"]
myst_enable_extensions = ["colon_fence"]
# The pages' own headings are link targets (e.g. privacy.md#rule-4-nothing-un-noised-leaves-fit).
myst_heading_anchors = 3

# API reference: numpydoc renders the docstrings; members are listed by the autodoc directives
# of api.rst, not by numpydoc's autosummary tables (which would need stub pages).
numpydoc_show_class_members = False
numpydoc_xref_param_type = False
# scikit-learn generates set_{method}_request for methods with extra arguments (metadata routing);
# they are scikit-learn's, documented there.
autodoc_default_options = {"exclude-members": ", ".join(
    f"set_{method}_request" for method in ("fit", "predict", "predict_proba",
                                          "decision_function", "score"))}
autodoc_typehints = "none"  # the types are in the numpydoc "Parameters" sections

# Every cross-reference must resolve. numpydoc links an Attributes entry to the attribute of
# that name, and the fitted properties are documented in their class's Attributes section
# only (the class members are not listed separately).
nitpicky = True
nitpick_ignore = [("py:obj", "n_estimators_"), ("py:obj", "n_iter_")]

# No network at build time: intersphinx has no inventories (references to numpy or
# scikit-learn stay plain text).
intersphinx_mapping = {}

html_theme = "furo"
html_title = f"dpboost {release}"
html_static_path = []

# The shared datasets sit beside the repository (../shared/datasets from its root); the
# examples find them through this variable, whatever directory they run from.
DATASETS = Path(os.environ.setdefault("DPBOOST_DATASETS",
                                      str(ROOT.parent / "shared" / "datasets"))).resolve()
os.environ["DPBOOST_DATASETS"] = str(DATASETS)
#: Examples that read the shared datasets (the others make their data).
NEEDS_DATASETS = ["adult_csv", "private_search", "multiclass", "regression", "shap",
                  "inspection"]
if DATASETS.is_dir():
    run_pattern = r"/plot_"
else:
    print(f"dpboost docs: the shared datasets are not in {DATASETS} (set DPBOOST_DATASETS): "
          f"the examples {', '.join(NEEDS_DATASETS)} are shown without running them")
    run_pattern = r"/plot_(?!(" + "|".join(NEEDS_DATASETS) + r"))"

sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": run_pattern,
    # Every example that runs must succeed: a failure is an error of the build.
    "abort_on_example_error": False,
    "only_warn_on_example_error": False,
    "download_all_examples": False,
    "remove_config_comments": True,
    "min_reported_time": 1,
    "show_memory": False,
    "plot_gallery": "True",
    "within_subsection_order": "FileNameSortKey",
}


# In reStructuredText a word ending in "_" is a link ("ndarray of shape (n_features_in_,)" in a
# docstring would be a reference to a target "n_features_in"): escape such words outside inline
# literals and examples, where the docstrings mean the fitted attribute.
_TRAILING_UNDERSCORE = re.compile(r"(``.*?``|`[^`]*`)|\b([A-Za-z]\w*[A-Za-z0-9])_(?!\w)")


def _escape_trailing_underscores(app, what, name, obj, options, lines):
    for i, line in enumerate(lines):
        if not line.lstrip().startswith((">>>", "...")):
            lines[i] = _TRAILING_UNDERSCORE.sub(
                lambda m: m.group(1) or m.group(2) + "\\_", line)


def setup(app):
    app.connect("autodoc-process-docstring", _escape_trailing_underscores, priority=600)
