/**
 * Whole 32nds of an inch as a US shop reads them, shared by the API's `depth32nds` and the
 * counter UI, so the POS and the screen never differ (TIRES.md: the 2/4/6 colour rule).
 */
export const MM_PER_32ND = 0.79375;

export const WEAR_CLASSES = ['new', 'good', 'medium', 'worn', 'critical'] as const;
export type Wear = (typeof WEAR_CLASSES)[number];

/**
 * The shallowest depth in mm of each wear band but `critical` (below all of them), deepest first:
 * docs/API.md §2's bands, which wearForDepth applies and the stores' wear filter writes as SQL.
 */
export const WEAR_FLOORS_MM: ReadonlyArray<readonly [Exclude<Wear, 'critical'>, number]> = [
  ['new', 7.0],
  ['good', 5.0],
  ['medium', 3.0],
  ['worn', 1.6],
];

/**
 * Wear band of a depth in mm (docs/API.md §2), the one rule the server and the counter UI share: the
 * reported class is always the band of the reported depth.
 */
export function wearForDepth(depthMm: number): Wear {
  for (const [wear, floor] of WEAR_FLOORS_MM) if (depthMm >= floor) return wear;
  return 'critical';
}

/**
 * Whole 32nds each wear band can show. A whole 32nd stored as the counter stores a gauge reading
 * (mm to one decimal) falls in these bands (2/32″ → 1.6 mm, the legal line, is worn; 6/32″ →
 * 4.8 mm medium; 7/32″ → 5.6 mm good), so a reading typed in 32nds comes back as typed, and a
 * legend can name them. Plain rounding would give 2.8 mm (worn) 4/32″ and 5.0 mm (good) 6/32″.
 */
export const BAND_32NDS: Readonly<Record<Wear, readonly [number, number]>> = {
  critical: [0, 1],
  worn: [2, 3],
  medium: [4, 6],
  good: [7, Infinity],
  new: [7, Infinity],
};

/**
 * A depth in whole 32nds: the nearest 32nd inside the wear band of the depth in mm
 * (`wearForDepth`). Differs from plain rounding only for 1.2–1.5 mm (1/32″, down),
 * 2.8–2.9 mm (3/32″, down) and 5.0–5.1 mm (7/32″, up).
 */
export function whole32nds(mm: number): number {
  const [low, high] = BAND_32NDS[wearForDepth(mm)];
  return Math.min(high, Math.max(low, Math.round(mm / MM_PER_32ND)));
}
