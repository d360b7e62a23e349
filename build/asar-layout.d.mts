// Types for build/asar-layout.mjs (plain JS so check-package.mjs runs under node without a loader).
export declare const NATIVE_FILE: RegExp;
export declare const REQUIRED_PACKED: readonly string[];
export interface AsarEntry {
  file: string;
  unpacked: boolean;
  size?: number;
  link?: string;
}
export declare function listAsarEntries(asarPath: string): AsarEntry[];
export declare function checkAsarLayout(asarPath: string): { problems: string[]; natives: AsarEntry[] };
