/** Units, colours and dates as a shop reads them (TIRES.md: the US 2/4/6 colour rule). */
import type { SettingsData, WirePosition, WireWear } from '../../../shared/api';
import { BAND_32NDS, MM_PER_32ND, WEAR_CLASSES, whole32nds } from '../../../shared/units';

export { BAND_32NDS, MM_PER_32ND };
export const POSITIONS: WirePosition[] = ['FL', 'FR', 'RL', 'RR', 'SPARE'];
/** The wear classes, best first (the server's list). */
export const WEARS: readonly WireWear[] = WEAR_CLASSES;

export const POSITION_LABEL: Record<WirePosition, string> = {
  FL: 'Front left',
  FR: 'Front right',
  RL: 'Rear left',
  RR: 'Rear right',
  SPARE: 'Spare',
};

export type ShopColour = 'green' | 'yellow' | 'red';

export function wearColour(wear: WireWear): ShopColour {
  if (wear === 'new' || wear === 'good') return 'green';
  if (wear === 'medium') return 'yellow';
  return 'red';
}

export const WEAR_LABEL: Record<WireWear, string> = {
  new: 'New',
  good: 'Good',
  medium: 'Medium',
  worn: 'Worn',
  critical: 'Critical',
};

export const WEAR_ADVICE: Record<WireWear, string> = {
  new: 'Plenty of tread left.',
  good: 'Good tread depth.',
  medium: 'Plan replacement; wet-road grip is reduced.',
  worn: 'Replace soon: close to the legal minimum.',
  critical: 'Below the legal minimum: replace now.',
};

export type Units = SettingsData['units'];

/** A depth in whole 32nds, as the API's depth32nds gives it (src/shared/units.ts). */
export function to32nds(mm: number): number {
  return whole32nds(mm);
}

export function formatMm(mm: number): string {
  return `${mm.toFixed(1)} mm`;
}

export function format32nds(mm: number): string {
  return `${to32nds(mm)}/32″`;
}

/** A depth in the shop's unit only (captions, ranges, gauge readings). */
export function formatIn(mm: number, units: Units): string {
  return units === '32nds' ? format32nds(mm) : formatMm(mm);
}

/** A range in the shop's unit: "0.8–4.8 mm" or "1/32″–6/32″". */
export function formatRange(min: number, max: number, units: Units): string {
  return units === '32nds' ? `${format32nds(min)}–${format32nds(max)}` : `${min.toFixed(1)}–${formatMm(max)}`;
}

/** Primary unit first, the other in brackets: a gauge in either unit can be compared. */
export function formatDepth(mm: number, units: Units): string {
  return units === '32nds' ? `${format32nds(mm)} (${formatMm(mm)})` : `${formatMm(mm)} (${format32nds(mm)})`;
}

/** A depth error (a difference, not a depth): two decimals in mm, or tenths of a 32nd. */
export function formatError(mm: number, units: Units): string {
  return units === '32nds' ? `${(mm / MM_PER_32ND).toFixed(1)}/32″ (${mm.toFixed(2)} mm)` : `${mm.toFixed(2)} mm`;
}

export function legalMinimumMm(setting: SettingsData['legalMinimum']): number {
  return setting === '2/32in' ? 2 * MM_PER_32ND : 1.6;
}

/** The legal line is a limit, not a tire's depth: plain rounding (2/32″ = 1.59 mm is shown as 2/32″). */
export function formatLegalMinimum(mm: number, units: Units): string {
  return units === '32nds' ? `${Math.round(mm / MM_PER_32ND)}/32″` : formatMm(mm);
}

/** What the report's colours mean, in the shop's unit first; built from the same bands as the badges and the 32nds. */
export function colourLegend(units: Units, legalMm: number): string {
  const [, red] = BAND_32NDS.worn;
  const [yellowLow, yellowHigh] = BAND_32NDS.medium;
  const [green] = BAND_32NDS.good;
  const both = (mm: string, in32: string) => (units === '32nds' ? `${in32} (${mm})` : `${mm} (${in32})`);
  const other = units === '32nds' ? formatLegalMinimum(legalMm, 'mm') : formatLegalMinimum(legalMm, '32nds');
  return (
    `Green: ${both('5.0 mm or more', `${green}/32″ or more`)} · ` +
    `yellow: ${both('3.0–4.9 mm', `${yellowLow}/32″–${yellowHigh}/32″`)} · ` +
    `red: ${both('under 3.0 mm', `${red}/32″ or less`)}, replace. ` +
    `Legal minimum ${formatLegalMinimum(legalMm, units)} (${other}).`
  );
}

export function formatDate(iso: string | Date): string {
  const date = typeof iso === 'string' ? new Date(iso) : iso;
  return date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export function formatDay(iso: string | Date): string {
  const date = typeof iso === 'string' ? new Date(iso) : iso;
  return date.toLocaleDateString(undefined, { dateStyle: 'long' });
}
