"""Stack variants on the shipped networks' outputs: is the linear stack of finalize.py leaving
error on the table that richer inputs would take?

    python finalize.py ... --dump-features runs/X/feats.npz   # the shipped recalibration command
    python stack_variants.py runs/X/feats.npz

Every variant is fitted by least absolute deviations (finalize.fit_lad) and judged by the same
2-fold cross-fit as the shipped stack (even rows fit, odd rows measure, then the other way), on
tires with a depth and a dense estimate. Prints the cross-fit MAE and within-1-mm of each.
"""
import sys

import numpy as np

from finalize import fit_lad, softmax


def crossfit(X, y):
    half = np.arange(len(y)) % 2 == 0
    err = np.empty(len(y))
    for fit_on in (half, ~half):
        c = fit_lad(X[fit_on], y[fit_on])
        err[~fit_on] = np.abs(np.clip(X[~fit_on] @ c, 0, None) - y[~fit_on])
    return err


def crossfit_hinged(F, y, knots=(1.6, 3.0, 5.0, 7.0)):
    """The linear stack, then a piecewise-linear map of its estimate, both fitted on the fit half only."""
    half = np.arange(len(y)) % 2 == 0
    err = np.empty(len(y))
    for fit_on in (half, ~half):
        est = F @ fit_lad(F[fit_on], y[fit_on])
        H = np.column_stack([np.ones(len(y)), est] + [np.maximum(0, est - k) for k in knots])
        c = fit_lad(H[fit_on], y[fit_on])
        err[~fit_on] = np.abs(np.clip(H[~fit_on] @ c, 0, None) - y[~fit_on])
    return err


def main():
    d = np.load(sys.argv[1])
    feats, y, has, ok = d["feats"], d["y"], d["has"], d["dense_ok"]
    p = softmax(d["logits"] / float(d["T0"]))
    m = has & ok
    F, Y, P, S = feats[m], y[m], p[m], d["sigma"][m]
    ones, reg, dense, e_cls, crop, size = (F[:, i] for i in range(6))
    variants = {
        "shipped: 1, regressor, dense, E[vote], crop, size": F,
        "+ the vote's five probabilities (not only its mean)": np.column_stack([F, P[:, :4]]),
        "+ squares of the three readings": np.column_stack([F, reg ** 2, dense ** 2, crop ** 2]),
        "+ pairwise products of the readings": np.column_stack([F, reg * dense, reg * crop, dense * crop]),
        "+ |regressor - dense|, |crop - regressor| (disagreement)": np.column_stack([F, np.abs(reg - dense), np.abs(crop - reg)]),
        "+ sigma and sigma x readings": np.column_stack([F, S, S * reg, S * crop]),
        "+ all of the above": np.column_stack([F, P[:, :4], reg ** 2, dense ** 2, crop ** 2, reg * dense, reg * crop, dense * crop,
                                               np.abs(reg - dense), np.abs(crop - reg), S, S * reg, S * crop]),
    }
    print(f"{m.sum()} tires with a depth and a dense estimate; 2-fold cross-fit, LAD")
    for name, X in variants.items():
        err = crossfit(X, Y)
        print(f"  {err.mean():.4f} mm  {100 * (err <= 1).mean():5.1f} % within 1 mm  {X.shape[1]:2d} inputs  {name}")
    err = crossfit_hinged(F, Y)
    print(f"  {err.mean():.4f} mm  {100 * (err <= 1).mean():5.1f} % within 1 mm      shipped, then piecewise-linear in its estimate (knots 1.6, 3, 5, 7 mm)")


if __name__ == "__main__":
    main()
