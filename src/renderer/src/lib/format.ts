/** Units, colours and dates as a shop reads them (TIRES.md: the US 2/4/6 colour rule). */
import type { SettingsData, WirePosition, WireWear } from '../../../shared/api';

export const MM_PER_32ND = 0.79375;
export const POSITIONS: WirePosition[] = ['FL', 'FR', 'RL', 'RR', 'SPARE'];
export const WEARS: WireWear[] = ['new', 'good', 'medium', 'worn', 'critical'];

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

export function to32nds(mm: number): number {
  return Math.round(mm / MM_PER_32ND);
}

export function formatMm(mm: number): string {
  return `${mm.toFixed(1)} mm`;
}

export function format32nds(mm: number): string {
  return `${to32nds(mm)}/32″`;
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

export function formatDate(iso: string | Date): string {
  const date = typeof iso === 'string' ? new Date(iso) : iso;
  return date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export function formatDay(iso: string | Date): string {
  const date = typeof iso === 'string' ? new Date(iso) : iso;
  return date.toLocaleDateString(undefined, { dateStyle: 'long' });
}
