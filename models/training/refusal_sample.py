"""What the held-out refusals are: a hand-labelled sample of each tread set's refused and answered
photos, scaled up to the whole set.

The real-photo table counts every refusal of a tread set as a tire refused, but tyre-defect-ccby
holds sidewall close-ups and web-good-defective holds side views of wheels on cars, which the
product is right to refuse (as tread not visible). labels/heldout_refusals_sample.csv records,
for 60 + 60 ccby photos and 40 + 40 web photos drawn at random (seed 7) from the refused and the
answered of the held-out evaluation, what each shows:

  T  the tread face in view (face-on, three-quarter catalogue shot, a stack showing its tread)
  S  a sidewall close-up, no tread in view
  V  a side view of a wheel or a vehicle, the tread not in view
  O  unclear (a shoulder only, a diagram, a Roboflow mosaic)
  N  no tire

It prints, per set, the share of tread-in-view photos refused (O counted either way) and of the
others refused, with 95 % intervals from a bootstrap within each stratum.

    python refusal_sample.py [runs/real_photos.csv]
    python refusal_sample.py sheets OUT [--n 60] [--seed 43]   # a random part of the sample, shuffled, to label again
    python refusal_sample.py agree labels/heldout_refusals_second.csv  # that second look against the first

The csv is a held-out evaluation's per-photo file (`train_real.sh` writes runs/real_photos.csv; alone:
`npx tsx src/core/cli/eval.ts --real ../shared/realdata --loso models/training/runs/loso-models
--per-photo FILE`). The sample was drawn from tread-2026.11.29.1's; each photo is counted where the
given evaluation puts it, and how many moved is printed (a model far from that one would need a new
sample).
"""

import csv
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from second_look import agreement, contact_sheets  # noqa: E402


VIEWS = ('T', 'S', 'V', 'O', 'N')
SAMPLE = os.path.join(HERE, 'labels', 'heldout_refusals_sample.csv')


def first_look() -> dict[tuple[str, str], str]:
    return {(row['set'], row['file']): row['view'] for row in csv.DictReader(open(SAMPLE))}


def sheets(argv: list[str]) -> None:
    """Contact sheets (30 a sheet, 200 px) of a random part of the sample, in random order and numbered
    afresh, neither the first label nor the outcome shown; index.txt maps each number to set and file."""
    import argparse

    ap = argparse.ArgumentParser(prog='refusal_sample.py sheets')
    ap.add_argument('out')
    ap.add_argument('--n', type=int, default=60)
    ap.add_argument('--seed', type=int, default=43)
    ap.add_argument('--realdata', default=os.path.join(HERE, '../../../shared/realdata'))
    a = ap.parse_args(argv)
    keys = sorted(first_look())
    random.Random(a.seed).shuffle(keys)
    keys = keys[: a.n]
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, 'index.txt'), 'w') as fh:
        for i, (name, file) in enumerate(keys):
            fh.write(f'{i}\t{name}\t{file}\n')
    contact_sheets([os.path.join(a.realdata, file) for _, file in keys], a.out, 's')
    print(f'{len(keys)} photos; {os.path.join(a.out, "index.txt")} maps the numbers to files')


def agree(path: str) -> None:
    """A second labelling (set,file,view rows for part of the sample) against the first."""
    second = {(row['set'], row['file']): row['view'] for row in csv.DictReader(open(path))}
    agreement(first_look(), second, VIEWS)


def main() -> None:
    if sys.argv[1:2] == ['sheets']:
        return sheets(sys.argv[2:])
    if sys.argv[1:2] == ['agree']:
        if len(sys.argv) != 3:
            sys.exit('usage: python refusal_sample.py agree SECOND.csv')
        return agree(sys.argv[2])
    photos = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, 'runs', 'real_photos.csv')
    outcome: dict[tuple[str, str], str] = {}
    totals: dict[str, dict[str, int]] = {}
    for row in csv.DictReader(open(photos)):
        if row['box']:
            continue
        key = (row['set'], row['file'].split('realdata/')[-1])
        outcome[key] = 'refused' if row['error'] else 'answered'
        totals.setdefault(row['set'], {'refused': 0, 'answered': 0})[outcome[key]] += 1
    sample: dict[str, dict[str, list[str]]] = {}
    moved = 0
    for row in csv.DictReader(open(SAMPLE)):
        now = outcome.get((row['set'], row['file']))
        if now is None:
            sys.exit(f'{row["file"]} is not in {photos}: not the evaluation the sample was drawn from')
        if now != row['heldOutOutcome']:
            moved += 1
        # each photo counts where this evaluation put it (the sample was drawn by tread-2026.11.29.1's)
        sample.setdefault(row['set'], {'refused': [], 'answered': []})[now].append(row['view'])
    if moved:
        print(f'note: {moved} sample photos have another outcome in {photos} than when they were drawn (counted as they are now)')

    def refused_share(labels: dict[str, list[str]], counts: dict[str, int], views: set[str]) -> float:
        kept = {k: sum(v in views for v in labels[k]) / len(labels[k]) * counts[k] for k in labels}
        whole = kept['refused'] + kept['answered']
        return kept['refused'] / whole if whole else float('nan')

    rng = random.Random(0)
    for name, labels in sample.items():
        counts = totals[name]
        print(f'{name}: {counts["refused"]} refused of {counts["refused"] + counts["answered"]} '
              f'({counts["refused"] / (counts["refused"] + counts["answered"]):.1%}); sample {len(labels["refused"])} refused, '
              f'{len(labels["answered"])} answered')
        for title, views in (('tread in view (T)', {'T'}), ('tread in view or unclear (T, O)', {'T', 'O'}),
                             ('no tread in view (S, V)', {'S', 'V'})):
            point = refused_share(labels, counts, views)
            draws = sorted(
                refused_share({k: rng.choices(v, k=len(v)) for k, v in labels.items()}, counts, views) for _ in range(2000)
            )
            draws = [d for d in draws if d == d]
            low, high = draws[int(0.025 * len(draws))], draws[int(0.975 * len(draws)) - 1]
            print(f'  {title}: refused {point:.1%} (95 % {low:.1%}–{high:.1%})')


if __name__ == '__main__':
    main()
