import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const MODELS_DIR = path.join(root, 'models');
export const FIXTURES = path.join(root, 'test/fixtures/tires');
export const HELDOUT = path.join(FIXTURES, 'heldout');

export interface Labelled {
  file: string;
  depthMm: number | null;
  wear: string;
}

export function heldoutLabels(): Labelled[] {
  const lines = readFileSync(path.join(HELDOUT, 'labels.csv'), 'utf8').trim().split(/\r?\n/).slice(1);
  return lines.map((line) => {
    const [file, depth, wear] = line.split(',');
    return { file: path.join(HELDOUT, file!), depthMm: depth ? Number(depth) : null, wear: wear! };
  });
}

export const fixture = (...parts: string[]): Buffer => readFileSync(path.join(FIXTURES, ...parts));
