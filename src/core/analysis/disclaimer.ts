/** docs/API.md §2: the fixed disclaimer carried by every result. */
export const DISCLAIMER =
  'This is a tread depth estimate from a photo, not a full safety inspection. Confirm with a tread depth gauge before deciding on replacement.';
