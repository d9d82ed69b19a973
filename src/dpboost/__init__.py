"""dpboost: differentially private gradient-boosted decision trees with a scikit-learn API."""

# Imported for its effect: a one-line notice while Numba compiles the kernels (a cold cache).
from . import _compilation  # noqa: F401
from ._accountant import BudgetExceededError, PrivacyAccountant
from ._accounting import LedgerEntry
from ._estimators import DPGBClassifier, DPGBRegressor
from ._search import PrivateSearchCV
from ._warnings import PrivacyLeakWarning, ReproducibleNoiseWarning

__all__ = ["BudgetExceededError", "DPGBClassifier", "DPGBRegressor", "LedgerEntry",
           "PrivacyAccountant", "PrivacyLeakWarning", "PrivateSearchCV", "ReproducibleNoiseWarning"]
__version__ = "0.1.0"
