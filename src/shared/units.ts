/**
 * Whole 32nds of an inch as a US shop reads them, shared by the API's `depth32nds` and the
 * counter UI, so the POS and the screen never differ (TIRES.md: the 2/4/6 colour rule).
 */
export const MM_PER_32ND = 0.79375;

export const WEAR_CLASSES = ['new', 'good', 'medium', 'worn', 'critical'] as const;
export type Wear = (typeof WEAR_CLASSES)[number];

/**
 * Wear band of a depth in mm (SPEC §2), the one rule the server and the counter UI share: the
 * reported class is always the band of the reported depth.
 */
export function wearForDepth(depthMm: number): Wear {
  if (depthMm >= 7.0) return 'new';
  if (depthMm >= 5.0) return 'good';
  if (depthMm >= 3.0) return 'medium';
  if (depthMm >= 1.6) return 'worn';
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
