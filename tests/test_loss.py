"""Losses, ``_loss``: gradients and Hessians within their bounds, links, target scaling, and the
loss objects the estimators pick by name."""

import numpy as np
import pytest

from dpboost._loss import (
    LOSSES,
    LogisticLoss,
    SoftmaxLoss,
    SquareLoss,
    logistic_loss_gradients,
    make_loss,
    scale_target,
    softmax_loss_gradients,
    square_loss_gradients,
    unscale_target,
)


def test_square_loss_gradients():
    F = np.array([-2.0, 0.0, 0.5, 1.0])
    y = np.array([1.0, -1.0, 0.5, -1.0])
    g = np.empty(4, dtype=np.float32)
    np.testing.assert_array_equal(square_loss_gradients(F, y, g), F - y)
    assert g.dtype == np.float32


def test_logistic_loss_gradients_and_probabilities(binary, make_clf):
    F = np.array([-30.0, -1.0, 0.0, 2.0, 30.0])
    y = np.array([1.0, -1.0, 1.0, 1.0, -1.0])
    g, h = np.empty(5, dtype=np.float32), np.empty(5, dtype=np.float32)
    logistic_loss_gradients(F, y, g, h)
    p = 1 / (1 + np.exp(-F))
    np.testing.assert_allclose(g, p - (y + 1) / 2, atol=1e-7)
    np.testing.assert_allclose(h, p * (1 - p), atol=1e-7)
    assert (np.abs(g) <= 1).all() and (h >= 0).all() and (h <= 0.25).all()
    X, y01 = binary
    clf = make_clf(epsilon=np.inf, loss="logistic").fit(X, y01)
    np.testing.assert_allclose(clf.predict_proba(X)[:, 1],
                               1 / (1 + np.exp(-clf.decision_function(X))))


def test_softmax_loss_gradients_and_probabilities():
    rng = np.random.default_rng(5)
    F = rng.normal(0, 20, size=(4, 50))  # large scores: no overflow
    labels = rng.integers(0, 4, size=50)
    y = np.where(np.arange(4)[:, None] == labels[None, :], 1.0, -1.0)
    g, h = np.empty((4, 50), np.float32), np.empty((4, 50), np.float32)
    softmax_loss_gradients(F, y, g, h)
    p = np.exp(F - F.max(0)) / np.exp(F - F.max(0)).sum(0)
    np.testing.assert_allclose(g, p - (y + 1) / 2, atol=1e-6)
    np.testing.assert_allclose(h, p * (1 - p), atol=1e-6)
    assert (np.abs(g) <= 1).all() and (h >= 0).all() and (h <= 0.25).all()
    np.testing.assert_allclose(g.sum(axis=0), 0, atol=1e-5)  # a record's gradients sum to 0
    np.testing.assert_allclose(SoftmaxLoss().proba(F.T), p.T)


def test_softmax_writes_every_output_at_the_first_tree_of_a_round():
    # The boosting loop asks for output 0 first in every round: all K outputs' gradients come
    # from the same scores; asking for another output writes nothing.
    rng = np.random.default_rng(6)
    F = rng.normal(size=(3, 20))
    y = np.where(np.arange(3)[:, None] == rng.integers(0, 3, 20)[None, :], 1.0, -1.0)
    g, h = np.full((3, 20), np.nan, np.float32), np.full((3, 20), np.nan, np.float32)
    SoftmaxLoss().gradients(F, y, g, h, 1)
    assert np.isnan(g).all() and np.isnan(h).all()
    SoftmaxLoss().gradients(F, y, g, h, 0)
    expected_g, expected_h = np.empty_like(g), np.empty_like(h)
    softmax_loss_gradients(F, y, expected_g, expected_h)
    np.testing.assert_array_equal(g, expected_g)
    np.testing.assert_array_equal(h, expected_h)


def test_one_vs_rest_losses_write_only_their_output():
    F = np.array([[0.5, -0.5], [2.0, 1.0]])
    y = np.array([[1.0, -1.0], [-1.0, 1.0]])
    for loss in (SquareLoss(), LogisticLoss()):
        g, h = np.full((2, 2), np.nan, np.float32), np.full((2, 2), np.nan, np.float32)
        loss.gradients(F, y, g, h, 1)
        assert np.isnan(g[0]).all() and np.isfinite(g[1]).all()


def test_loss_objects_by_name_and_their_bounds():
    assert {name: cls().name for name, cls in LOSSES.items()} == {
        "square": "square", "logistic": "logistic", "softmax": "softmax"}
    # two classes (one output): softmax is the logistic loss
    assert type(make_loss("softmax", 1)) is LogisticLoss
    assert type(make_loss("softmax", 3)) is SoftmaxLoss
    assert type(make_loss("square", 3)) is SquareLoss
    assert (SquareLoss.hessian_bound, LogisticLoss.hessian_bound) == (1.0, 0.25)
    assert (SquareLoss.has_hessians, LogisticLoss.has_hessians) == (False, True)
    assert SquareLoss.hessian_sketch_rounds == 1  # its Hessians never change
    assert (SquareLoss.couples_outputs, LogisticLoss.couples_outputs,
            SoftmaxLoss.couples_outputs) == (False, False, True)


def test_probability_links():
    F = np.array([[-3.0], [0.0], [0.5], [3.0]])
    np.testing.assert_allclose(SquareLoss().proba(F)[:, 1], [0.0, 0.5, 0.75, 1.0])
    np.testing.assert_allclose(LogisticLoss().proba(F)[:, 1], 1 / (1 + np.exp(-F[:, 0])))
    for loss in (SquareLoss(), LogisticLoss()):
        np.testing.assert_allclose(loss.proba(F).sum(axis=1), 1.0)
    # one-vs-rest: normalised, uniform where every output is 0
    several = SquareLoss().proba(np.array([[-1.0, 1.0, 0.0], [-2.0, -1.0, -3.0]]))
    np.testing.assert_allclose(several, [[0.0, 2 / 3, 1 / 3], [1 / 3, 1 / 3, 1 / 3]])


def test_targets_scale_into_minus_one_one_and_back():
    bounds = (100.0, 150.0)
    y = np.array([100.0, 125.0, 150.0, 90.0, np.inf, -np.inf])
    scaled = scale_target(y, bounds)
    np.testing.assert_allclose(scaled, [-1.0, 0.0, 1.0, -1.0, 1.0, -1.0])
    np.testing.assert_allclose(unscale_target(scaled[:3], bounds), y[:3])
    assert unscale_target(0.5, bounds) == pytest.approx(137.5)
