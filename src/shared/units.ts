/**
 * Whole 32nds of an inch as a US shop reads them, shared by the API's `depth32nds` and the
 * counter UI, so the POS and the screen never differ (TIRES.md: the 2/4/6 colour rule).
 */
export const MM_PER_32ND = 0.79375;

type Band = 'new' | 'good' | 'medium' | 'worn' | 'critical';

/**
 * Whole 32nds each wear band can show. An exact 32nd falls in these bands when converted to mm
 * (2/32″ = 1.59 mm is under the 1.6 mm legal line, 6/32″ = 4.76 mm is medium, 7/32″ = 5.56 mm
 * good), so a gauge reading typed in 32nds comes back as typed, and a legend can name them.
 * Plain rounding would give 2.8 mm (worn) 4/32″ and 5.0 mm (good) 6/32″.
 */
export const BAND_32NDS: Readonly<Record<Band, readonly [number, number]>> = {
  critical: [0, 1],
  worn: [2, 3],
  medium: [4, 6],
  good: [7, Infinity],
  new: [7, Infinity],
};

/**
 * A depth in whole 32nds: the nearest 32nd inside the wear band of the depth in mm (`band`, from
 * the mm bands of SPEC §2). Differs from plain rounding only for 1.2–1.5 mm (1/32″, down),
 * 2.8–2.9 mm (3/32″, down) and 5.0–5.1 mm (7/32″, up).
 */
export function whole32nds(mm: number, band: Band): number {
  const [low, high] = BAND_32NDS[band];
  return Math.min(high, Math.max(low, Math.round(mm / MM_PER_32ND)));
}
