/** The machine a bench ran on, written beside its figures. */
import os from 'node:os';
import { createRequire } from 'node:module';
import sharp from 'sharp';

export interface Machine {
  cpu: string;
  cores: number;
  memoryGb: number;
  os: string;
  node: string;
  sharp: string;
  libvips: string;
  onnxruntime: string;
  /** 1-minute load average when the bench started: above the core count, other work was competing. */
  loadAverage: number;
}

function packageVersion(name: string): string {
  try {
    return (createRequire(import.meta.url)(`${name}/package.json`) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

export function machine(): Machine {
  return {
    cpu: os.cpus()[0]?.model.trim() ?? 'unknown',
    cores: os.availableParallelism(),
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    sharp: (sharp.versions as { sharp?: string }).sharp ?? packageVersion('sharp'),
    libvips: sharp.versions.vips,
    onnxruntime: packageVersion('onnxruntime-node'),
    loadAverage: Math.round(os.loadavg()[0]! * 100) / 100,
  };
}
