/**
 * A tread depth gauge reading as typed at the counter, in the shop's units. The API takes
 * readings in mm only (a JSON number, at most 2 decimals: PUT /scans/:id/measurement and
 * PATCH /scans/:id); this turns what a person types into that number, the same way on every screen.
 */
import { MAX_MEASUREMENT_MM } from './contract/limits.js';
import { MM_PER_32ND } from './units.js';

/** The server's bound (the contract's MAX_MEASUREMENT_MM): a deeper reading is a unit mistake. */
export const GAUGE_MAX_MM = MAX_MEASUREMENT_MM;

export type GaugeParse = { ok: true; mm: number } | { ok: false; reason: string };

const round2 = (value: number) => Math.round(value * 100) / 100;

/**
 * 32nds: whole 32nds as a gauge shows them: `4`, `4/32`, `4/32"`, `4/32″`, `4/32in`, `4/32 in.`,
 * `4 / 32 ″`, typographic quotes (″ ” “ '' ＂). They are sent as mm to one decimal, the way the
 * counter has always stored them, so they come back as typed (whole32nds: 2/32″ → 1.6 mm, on the
 * legal line, where 1.59 would fall under it; 4/32″ → 3.2 mm). mm: `4.2`, `4,2`, `4.2mm`,
 * `4.2 mm`, kept to 2 decimals. From 0 to 30 mm.
 */
export function parseGaugeInput(text: string, units: 'mm' | '32nds'): GaugeParse {
  const raw = text.normalize('NFKC').trim().toLowerCase();
  if (raw === '') return { ok: false, reason: 'Type the gauge reading.' };
  if (raw.length > 32) return { ok: false, reason: 'That is not a depth.' };
  const number = '(\\d{1,3}(?:[.,]\\d{1,2})?)';
  if (units === '32nds') {
    // the inch mark in any of the ways keyboards and phones write it (NFKC already made ＂ a ")
    const inch = `(?:"|″|”|“|''|′′|in\\.?|inch(?:es)?)?`;
    const match = new RegExp(`^${number}\\s*(?:/\\s*32\\s*${inch}|${inch})$`).exec(raw);
    if (!match) return { ok: false, reason: 'Type 32nds of an inch, such as 4 or 4/32″.' };
    const n = Number(match[1]!.replace(',', '.'));
    if (!Number.isInteger(n)) return { ok: false, reason: 'Type whole 32nds, such as 4 or 4/32″.' };
    const mm = Math.round(n * MM_PER_32ND * 10) / 10;
    if (mm > GAUGE_MAX_MM) return { ok: false, reason: `At most ${Math.floor(GAUGE_MAX_MM / MM_PER_32ND)}/32″.` };
    return { ok: true, mm };
  }
  const match = new RegExp(`^${number}\\s*(?:mm)?$`).exec(raw);
  if (!match) return { ok: false, reason: 'Type millimetres, such as 4.2.' };
  const mm = Number(match[1]!.replace(',', '.'));
  if (mm > GAUGE_MAX_MM) return { ok: false, reason: `At most ${GAUGE_MAX_MM} mm.` };
  return { ok: true, mm: round2(mm) };
}
