export function parentGone(parent: number, probe?: { ppid?: () => number; kill?: (pid: number, signal: number) => void }): boolean;
