"""The warnings of a fit that is not private as released: inputs read from the data
(:class:`PrivacyLeakWarning`), predictable noise (:class:`ReproducibleNoiseWarning`), and
non-private diagnostics. Every ``PrivacyLeakWarning`` of the package is raised here."""

import warnings


class PrivacyLeakWarning(UserWarning):
    """A value was computed from the private data, or a non-private diagnostic was requested.

    Raised, for instance, when ``feature_bounds`` are not given and are read from the training data:
    the fitted model is then not differentially private with respect to those bounds.
    """


class ReproducibleNoiseWarning(PrivacyLeakWarning):
    """An integer or Generator ``random_state`` makes the noise reproducible, hence predictable.

    Whoever knows the seed can subtract the noise from a released model. Fine for experiments,
    never for a release. Opt in explicitly by filtering this warning::

        warnings.filterwarnings("ignore", category=dpboost.ReproducibleNoiseWarning)
    """


def data_dependent(name, value):
    """Warn that a public input was read from the private data instead."""
    warnings.warn(
        f"{name} was not given and is computed from the training data; the model is not "
        f"differentially private with respect to it. Pass {name} from public knowledge.",
        # At the user's call of fit: fit's wrapper, fit, fit_inputs, the resolver, here.
        PrivacyLeakWarning, stacklevel=6)
    return value


def warn_reproducible_noise(random_state):
    """Warn that ``random_state`` makes the noise predictable: anything but None or a
    :class:`~dpboost._mechanisms.SecureNoise` on the operating system's randomness (a seed, a
    Generator, a :class:`~dpboost._mechanisms.NumpyNoise`, a ``SecureNoise`` fed by another
    word stream, a noise source of the user's: its words may be a seed's)."""
    if random_state is not None and not getattr(random_state, "unpredictable", False):
        warnings.warn(
            "random_state is set: the noise is reproducible by anyone who knows the seed, so the "
            "model is not differentially private as released. Use random_state=None for "
            "releases; filter ReproducibleNoiseWarning to opt in for experiments.",
            ReproducibleNoiseWarning, stacklevel=5)


def warn_diagnostics():
    """Warn that ``diagnostics=True`` stores exact statistics of the training data."""
    warnings.warn("diagnostics=True stores filtered_fraction_, an exact statistic of the training "
                  "data that is not differentially private.", PrivacyLeakWarning, stacklevel=5)
