/**
 * What a process costs while a bench cell runs: resident memory sampled every 50 ms (the
 * peak is what a shop's PC must have free) and CPU time over the wall time (200 % = both
 * cores of a 2-core machine busy). Reads /proc, so figures exist on Linux only.
 */
import { readFileSync, writeFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100;

function readProc(pid: number): { rssBytes: number; hwmBytes: number; cpuMs: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
    const hwmKb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? NaN);
    // Fields after the command name: utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return { rssBytes: rssKb * 1024, hwmBytes: hwmKb * 1024, cpuMs: (ticks / TICKS_PER_SECOND) * 1000 };
  } catch {
    return null;
  }
}

/** Resident memory of `pid` in bytes now (NaN when unreadable). */
export function rssOf(pid: number): number {
  return readProc(pid)?.rssBytes ?? NaN;
}

export interface Usage {
  peakRssMb: number;
  cpuPercent: number;
}

/** Linux keeps the peak (VmHWM); writing 5 to clear_refs restarts it, so each cell gets its own. */
function resetPeak(pid: number): void {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    // Not permitted or not Linux: the 50 ms samples still bound the peak from below.
  }
}

/** Starts sampling `pid`; stop() returns the peak RSS and the CPU share since start. */
export function watchProcess(pid: number, intervalMs = 50): { stop(): Usage } {
  resetPeak(pid);
  const first = readProc(pid);
  const started = performance.now();
  let peak = first?.rssBytes ?? NaN;
  const timer = setInterval(() => {
    const now = readProc(pid);
    if (now) peak = Math.max(peak, now.rssBytes);
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      const last = readProc(pid);
      if (last) peak = Math.max(peak, last.rssBytes, last.hwmBytes);
      const wall = performance.now() - started;
      const cpu = first && last ? last.cpuMs - first.cpuMs : NaN;
      return { peakRssMb: peak / 2 ** 20, cpuPercent: (cpu / wall) * 100 };
    },
  };
}

/** Growth of the second half's peak over the first half's peak, in MB: a leak grows it, churn does not. */
export function growthMb(samples: readonly number[]): number {
  const warm = samples.slice(Math.floor(samples.length / 5));
  const half = Math.floor(warm.length / 2);
  if (half === 0) return 0;
  return (Math.max(...warm.slice(half)) - Math.max(...warm.slice(0, half))) / 2 ** 20;
}
