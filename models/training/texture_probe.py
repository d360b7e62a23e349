"""Untrained texture statistics as wear cues (models/NOTEBOOK.md, "Texture statistics"; measuring only)

    python texture_probe.py [--realdata ../../../shared/realdata]

Eight statistics of the grey photo (long side 256 px, the middle 60 % of each side): mean gradient,
Laplacian and local detail (each over the mean brightness), the share of the spectrum's energy at
high (radius > 0.15 cycles a pixel) and middle (0.04-0.15) frequencies, the share of dark pixels
(under half the median), the contrast (spread over mean) and the share of Canny edges; and three
scale-free tries on the windowed power spectrum (its slope, its dominant band once whitened, the
power above twice that band). Nothing is
fitted, so each figure is held out by construction: web-good-defective's AUC for telling usable
from defective (higher = usable), michelin-twi's Spearman with twiRemainingPct (all, planed only)
and its ends' AUC (75-100 against 0-25). Nothing is written.
"""
import argparse
import csv
import glob
import os
import sys

import cv2
import numpy as np
from scipy.stats import spearmanr

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from real_report import auc  # noqa: E402


def stats(path: str) -> dict[str, float] | None:
    g = cv2.imread(path, cv2.IMREAD_GRAYSCALE)
    if g is None:
        return None
    h, w = g.shape
    s = 256 / max(h, w)
    g = cv2.resize(g, (max(8, int(w * s)), max(8, int(h * s))), interpolation=cv2.INTER_AREA).astype(np.float32)
    h, w = g.shape
    c = g[h // 5 : h - h // 5, w // 5 : w - w // 5]
    m = c.mean() + 1
    mag = np.hypot(cv2.Sobel(c, cv2.CV_32F, 1, 0), cv2.Sobel(c, cv2.CV_32F, 0, 1))
    lap = np.abs(cv2.Laplacian(c, cv2.CV_32F))
    loc = np.abs(c - cv2.GaussianBlur(c, (0, 0), 4))
    f = np.abs(np.fft.fftshift(np.fft.fft2(c - c.mean())))
    hh, ww = f.shape
    yy, xx = np.mgrid[:hh, :ww]
    r = np.hypot((yy - hh / 2) / hh, (xx - ww / 2) / ww)
    total = f[r > 0.02].sum() + 1e-6
    # scale-free tries: the windowed power spectrum's radial profile, its log-log slope, its
    # dominant band once whitened (x f^2), and the share of power above twice that band
    win = np.outer(np.hanning(hh), np.hanning(ww))
    pw = np.abs(np.fft.fftshift(np.fft.fft2((c - c.mean()) * win))) ** 2
    edges = np.linspace(0.01, 0.5, 50)
    band = np.digitize(r.ravel(), edges)
    fr = edges[:-1]
    prof = np.array([pw.ravel()[band == i].mean() if (band == i).any() else 0.0 for i in range(1, len(edges))]) + 1e-12
    peak = int(np.argmax((prof * fr**2)[2:])) + 2
    return {
        "spectral slope": float(np.polyfit(np.log(fr), np.log(prof), 1)[0]),
        "dominant band": float(fr[peak]),
        "power above twice the dominant band": float(prof[fr > 2 * fr[peak]].sum() / prof.sum()),
        "gradient": mag.mean() / m,
        "laplacian": lap.mean() / m,
        "local detail": loc.mean() / m,
        "high frequencies": f[r > 0.15].sum() / total,
        "middle frequencies": f[(r > 0.04) & (r < 0.15)].sum() / total,
        "dark share": float((c < 0.5 * np.median(c)).mean()),
        "contrast": c.std() / m,
        "edges": float((cv2.Canny(c.astype(np.uint8), 50, 150) > 0).mean()),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--realdata", default=os.path.join(HERE, "../../../shared/realdata"))
    a = ap.parse_args()
    web = []
    for folder, usable in (("good", 1), ("defective", 0)):
        for p in sorted(glob.glob(os.path.join(a.realdata, "web-good-defective", folder, "*"))):
            s = stats(p)
            if s:
                web.append((usable, s))
    mich = []
    with open(os.path.join(a.realdata, "michelin-twi", "labels.csv")) as fh:
        for row in csv.DictReader(fh):
            s = stats(os.path.join(a.realdata, "michelin-twi", row["file"]))
            if s:
                mich.append((float(row["twiRemainingPct"]), row["wearMadeBy"] == "raboteuse", s))
    pct = np.array([p for p, _, _ in mich])
    planed = np.array([pl for _, pl, _ in mich])
    ends = (pct <= 25) | (pct >= 75)
    print(f"web-good-defective {len(web)} photos, michelin-twi {len(mich)}")
    print("| statistic | web AUC (usable higher) | michelin-twi Spearman | within the planed | michelin-twi ends AUC |")
    print("|---|---|---|---|---|")
    for k in web[0][1]:
        xw = np.array([s[k] for _, s in web])
        xm = np.array([s[k] for _, _, s in mich])
        print(f"| {k} | {auc(xw, np.array([u for u, _ in web])):.3f} | {spearmanr(xm, pct)[0]:+.3f} | "
              f"{spearmanr(xm[planed], pct[planed])[0]:+.3f} | {auc(xm[ends], pct[ends] >= 75):.3f} |")


if __name__ == "__main__":
    main()
