"""dpboost: differentially private gradient-boosted decision trees with a scikit-learn API."""

from ._accounting import LedgerEntry
from ._estimators import DPGBClassifier, DPGBRegressor
from ._validation import PrivacyLeakWarning, ReproducibleNoiseWarning

__all__ = ["DPGBClassifier", "DPGBRegressor", "LedgerEntry", "PrivacyLeakWarning",
           "ReproducibleNoiseWarning"]
__version__ = "0.1.0"
