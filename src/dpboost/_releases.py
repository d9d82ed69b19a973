"""One room per kind of release: each ledger entry's ``mechanism`` names a :class:`Release`,
which owns the kind's noise scale, the sampler that draws it, its dp-accounting event and its
zero-concentrated DP parameter. The mechanisms (``_mechanisms``), the noise sources
(``_noise``) and the accounting (``_accounting``) dispatch on :data:`RELEASES`; a new kind of
release is one new class here plus its tests.

The kinds: ``"exponential"`` (McSherry & Talwar 2007), ``"laplace"``, ``"gaussian"``,
``"threshold"`` (Gaussian counts kept above a threshold: private category lists),
``"uniform"`` (a data-independent draw), ``"renyi_filter"`` (an individual filter's per-record
budget: not a release), and the noiseless ``"argmax"`` / ``"exact"`` of ``epsilon=inf``.
"""

import math


class Release:
    """A kind of release: the defaults are those of a release without noise."""

    #: Whether it adds no noise (its scale is 0 whatever its sensitivity).
    noiseless = True
    #: Whether it is ``entry.epsilon``-DP with no delta (its ledger epsilon is its pure-DP
    #: epsilon, which ``_accounting.compose_pure`` sums).
    pure = False
    #: The :class:`~dpboost._noise.NoiseSource` method that draws it (None: nothing drawn).
    draws = None

    def noise_scale(self, entry):
        """The noise scale of ``entry`` (``_mechanisms.noise_scale`` checks it)."""
        return 0.0

    def dp_event(self, entry):
        """Its dp-accounting event; None for a non-private release."""
        return None

    def zcdp_rho(self, entry):
        """Its zero-concentrated DP parameter (Bun & Steinke 2016); inf where it has no linear
        Renyi curve."""
        return math.inf


class Exponential(Release):
    """The exponential mechanism at ``entry.epsilon``: scale ``2 sensitivity / epsilon``
    (McSherry & Talwar 2007); eps-bounded-range, hence ``eps^2 / 8``-zCDP (Cesar & Rogers 2021,
    Lemma 3.2; docs/privacy.md, Renyi accounting)."""

    noiseless = False
    pure = True
    draws = "exponential"

    def noise_scale(self, entry):
        return 2.0 * entry.sensitivity / entry.epsilon

    def dp_event(self, entry):
        import dp_accounting

        return dp_accounting.ZCDpEvent(entry.epsilon**2 / 8.0)

    def zcdp_rho(self, entry):
        return entry.epsilon**2 / 8.0 if entry.sampling_rate == 1.0 else math.inf


class Laplace(Release):
    """The Laplace mechanism at ``entry.epsilon``: scale ``sensitivity / epsilon``."""

    noiseless = False
    pure = True
    draws = "laplace"

    def noise_scale(self, entry):
        return entry.sensitivity / entry.epsilon

    def dp_event(self, entry):
        import dp_accounting

        return dp_accounting.LaplaceDpEvent(1.0 / entry.epsilon)

    def zcdp_rho(self, entry):
        # eps-DP implies (eps^2 / 2)-zCDP (Bun & Steinke 2016, Proposition 1.4): a bound, not
        # the Laplace curve, e.g. for a private row count inside a private search's trial.
        # (a product: an epsilon past 1e154 gives inf, where a power would raise)
        return entry.epsilon * entry.epsilon / 2.0 if entry.sampling_rate == 1.0 else math.inf


class Gaussian(Release):
    """The Gaussian mechanism at noise multiplier ``entry.noise_multiplier``: scale
    ``noise_multiplier * sensitivity``, ``0.5 / noise_multiplier^2``-zCDP unsampled."""

    noiseless = False
    draws = "gaussian"

    def noise_scale(self, entry):
        return entry.noise_multiplier * entry.sensitivity

    def dp_event(self, entry):
        import dp_accounting

        return dp_accounting.GaussianDpEvent(entry.noise_multiplier)

    def zcdp_rho(self, entry):
        return 0.5 / entry.noise_multiplier**2 if entry.sampling_rate == 1.0 else math.inf


class Threshold(Gaussian):
    """Gaussian counts kept above a threshold (private category lists): the Gaussian mechanism
    on the counts of the values both neighbours hold, its new values its delta (docs/privacy.md,
    Private category lists); no linear Renyi curve (the delta is not part of one)."""

    def zcdp_rho(self, entry):
        return math.inf


class Uniform(Release):
    """A data-independent draw (random split choice): no privacy cost."""

    pure = True

    def dp_event(self, entry):
        import dp_accounting

        return dp_accounting.NoOpDpEvent()

    def zcdp_rho(self, entry):
        return 0.0


class RenyiFilter(Release):
    """An individual Renyi filter's per-record budget (not a release): the curve of
    ``filter_trees`` worst-case trees (Feldman & Zrnic 2021, Thm. 3.1 applied per record;
    docs/privacy.md, Individual Renyi filter); its scale is that of the leaves it bounds. Bounded
    at ``FILTER_ORDERS`` only, not at every order as zCDP needs."""

    noiseless = False

    def noise_scale(self, entry):
        return entry.noise_multiplier * entry.sensitivity

    def dp_event(self, entry):
        import dp_accounting

        from ._accounting import accounted_rate  # which imports this module

        tree = dp_accounting.GaussianDpEvent(entry.noise_multiplier)
        if entry.sampling_rate < 1.0:
            tree = dp_accounting.PoissonSampledDpEvent(accounted_rate(entry.sampling_rate), tree)
        return dp_accounting.SelfComposedDpEvent(tree, entry.filter_trees)


#: Every kind of release by its ledger name; ``"argmax"`` and ``"exact"`` are the noiseless
#: releases of a fit at ``epsilon=inf``.
RELEASES = {"exponential": Exponential(), "laplace": Laplace(), "gaussian": Gaussian(),
            "threshold": Threshold(), "uniform": Uniform(), "renyi_filter": RenyiFilter(),
            "argmax": Release(), "exact": Release()}
