/**
 * The bench's table (Markdown, so it pastes into docs/PERFORMANCE.md as printed) and the
 * issue's targets checked against it.
 */
import type { CellStats } from './load.js';
import type { Machine } from './machine.js';
import type { Usage } from './proc.js';

export interface Cell {
  image: string;
  concurrency: number;
  http: CellStats;
  server: Usage;
  inProcess: CellStats;
  /** CPU milliseconds per successful scan: the server process over HTTP, the bench process in-process. */
  cpuMsPerScan: { http: number; inProcess: number };
}

export interface Report {
  date: string;
  machine: Machine;
  analyzer: 'onnx' | 'decode-only';
  modelVersion: string;
  fallbackReason?: string;
  /** Environment added to the server process (empty: as shipped). */
  serverEnv: Record<string, string>;
  images: Array<{ name: string; width: number; height: number; bytes: number; inspectMs: number; analyzerMs: number }>;
  idleRssMb: number;
  cells: Cell[];
}

const ms = (v: number) => v.toFixed(1);
const pct = (v: number) => `${v >= 0 ? '+' : ''}${(v * 100).toFixed(1)} %`;

/**
 * HTTP cost relative to the same work in-process: latency at p50, lost throughput, and CPU per
 * scan (the steadiest of the three on a shared machine: waiting for a core costs no CPU).
 */
export function overhead(cell: Cell): { latency: number; throughput: number; cpu: number } {
  return {
    latency: cell.http.p50 / cell.inProcess.p50 - 1,
    throughput: cell.inProcess.scansPerSecond / cell.http.scansPerSecond - 1,
    cpu: cell.cpuMsPerScan.http / cell.cpuMsPerScan.inProcess - 1,
  };
}

export interface Target {
  name: string;
  value: string;
  met: boolean;
}

export function targets(report: Report): Target[] {
  const jpeg = (c: number) => report.cells.find((cell) => cell.image === '12MP JPEG' && cell.concurrency === c)!;
  const worstOverhead = Math.max(...report.cells.filter((c) => c.concurrency <= 4).map((c) => overhead(c).latency));
  const peak = Math.max(...report.cells.filter((c) => c.concurrency === 16).map((c) => c.server.peakRssMb));
  return [
    { name: '12 MP JPEG p50 at concurrency 1 ≤ 60 ms', value: `${ms(jpeg(1).http.p50)} ms`, met: jpeg(1).http.p50 <= 60 },
    { name: '12 MP JPEG ≥ 20 scans/s at concurrency 4', value: `${jpeg(4).http.scansPerSecond.toFixed(1)} /s`, met: jpeg(4).http.scansPerSecond >= 20 },
    { name: 'HTTP overhead ≤ 10 % (worst p50, concurrency 1 and 4)', value: pct(worstOverhead), met: worstOverhead <= 0.1 },
    { name: 'server peak RSS ≤ 400 MB at concurrency 16', value: `${peak.toFixed(0)} MB`, met: peak <= 400 },
  ];
}

export function renderReport(report: Report): string {
  const m = report.machine;
  const lines = [
    `- Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGb} GB RAM, ${m.os}; Node ${m.node}, sharp ${m.sharp} (libvips ${m.libvips}), onnxruntime-node ${m.onnxruntime}; load average ${m.loadAverage} at start`,
    `- Analyzer: ${report.analyzer} (model ${report.modelVersion})${report.fallbackReason ? ` — fell back: ${report.fallbackReason}` : ''}; ${report.date}`,
    `- Server idle RSS after start-up: ${report.idleRssMb.toFixed(0)} MB; server environment: ${
      Object.entries(report.serverEnv)
        .map(([k, v]) => (v === '' ? `${k} unset` : `${k}=${v}`))
        .join(' ') || 'nothing added'
    }`,
    '',
    '| image | conc. | HTTP p50 ms | p95 ms | p99 ms | scans/s | server peak RSS MB | server CPU | server CPU ms/scan | in-process p50 ms | in-process scans/s | in-process CPU ms/scan | HTTP overhead p50 | HTTP overhead CPU | not 200 |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const c of report.cells) {
    const o = overhead(c);
    const refused =
      Object.entries(c.http.refused)
        .map(([s, n]) => `${n}× ${s}`)
        .join(', ') || '–';
    lines.push(
      `| ${c.image} | ${c.concurrency} | ${ms(c.http.p50)} | ${ms(c.http.p95)} | ${ms(c.http.p99)} | ${c.http.scansPerSecond.toFixed(1)} | ` +
        `${c.server.peakRssMb.toFixed(0)} | ${c.server.cpuPercent.toFixed(0)} % | ${c.cpuMsPerScan.http.toFixed(0)} | ` +
        `${ms(c.inProcess.p50)} | ${c.inProcess.scansPerSecond.toFixed(1)} | ${c.cpuMsPerScan.inProcess.toFixed(0)} | ` +
        `${pct(o.latency)} | ${pct(o.cpu)} | ${refused} |`,
    );
  }
  lines.push('', '| image | size | bytes | validate + thumbnail p50 ms | analyzer (decode + inference) p50 ms |', '|---|---|---:|---:|---:|');
  for (const i of report.images) {
    lines.push(`| ${i.name} | ${i.width}×${i.height} | ${i.bytes.toLocaleString('en')} | ${ms(i.inspectMs)} | ${ms(i.analyzerMs)} |`);
  }
  lines.push('', '| target | measured | met |', '|---|---:|---|');
  for (const t of targets(report)) lines.push(`| ${t.name} | ${t.value} | ${t.met ? 'yes' : '**no**'} |`);
  return lines.join('\n');
}

export function printReport(report: Report): void {
  process.stdout.write(`${renderReport(report)}\n`);
}
