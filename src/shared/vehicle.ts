/**
 * The plate key: one vehicle however its plate was typed. "KA TW 204", "ka-tw-204" and
 * "KA.TW.204" are the same car at the counter, so history search and the vehicle view match on
 * this key, stored beside the plate as typed (which is what is shown). Shared by the server
 * (stored in the scans table, searched) and the counter UI (grouping a page it already holds).
 */

/** The longest key a stored vehicle (64 characters) can give after NFKC; longer search text is refused before this. */
export const VEHICLE_KEY_MAX = 1024;

/**
 * NFKC (full-width letters and digits become plain ones, ligatures split), then every character
 * that is not a letter, a combining mark or a digit is dropped (spaces, dashes, dots, slashes…),
 * then upper case. null for no vehicle, or one with no letter or digit at all ("---").
 */
export function vehicleKey(vehicle: string | null | undefined): string | null {
  if (vehicle === null || vehicle === undefined) return null;
  const key = vehicle
    .normalize('NFKC')
    .replace(/[^\p{L}\p{M}\p{N}]/gu, '')
    .toUpperCase();
  return key === '' ? null : key;
}
