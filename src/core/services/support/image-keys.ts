/** The names under which a scan's photo and thumbnail are stored in the image store. */

/**
 * Where a scan's photo and thumbnail go. `variant` (hex digits) makes the names of one upload its
 * own, `<id>.v<variant>.jpg`: the hub writes a pushed photo under such names before it knows
 * whether the push is accepted, so a refused one cannot overwrite the owner's files.
 */
export function imageKeys(scanId: string, extension: string, variant?: string): { originalKey: string; thumbnailKey: string } {
  const folder = `scans/${scanId.slice(0, 2)}`;
  const base = variant === undefined ? scanId : `${scanId}.v${variant}`;
  return { originalKey: `${folder}/${base}.${extension}`, thumbnailKey: `${folder}/${base}.thumb.jpg` };
}

/** The scan id an image key was made for by imageKeys() (with or without a variant); null for any other name. */
export function scanIdOfImageKey(key: string): string | null {
  const match = /^scans\/([^/]+)\/([A-Za-z0-9_-]+)(?:\.v[a-f0-9]+)?\.(?:thumb\.)?[a-z0-9]+$/.exec(key);
  return match && match[1] === match[2]!.slice(0, 2) ? match[2]! : null;
}
