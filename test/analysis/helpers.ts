import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SceneCalibration } from '../../src/core/analysis/scene.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const MODELS_DIR = path.join(root, 'models');
export const FIXTURES = path.join(root, 'test/fixtures/tires');
export const HELDOUT = path.join(FIXTURES, 'heldout');

/** Round scene constants for tests of scene.ts's arithmetic (not the shipped ones). */
export const SCENE_CAL: SceneCalibration = {
  noTire: 0.5,
  notVisible: 0.6,
  wornPlatt: { a: 1, b: 0 },
  depthScale: { usableMm: 8, evenMm: 3, wornMm: 0.8 },
  syntheticWeight: 0,
  realSigmaMm: 1.5,
  twiMinTread: 0.9,
  preliminaryBelow: 0.6,
};

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

let synthetic: string | null = null;
/**
 * The shipped models without the scene reader (a manifest as before tread-2026.11.28, the same
 * network files linked): the renders-only chain, whose gate and stack decide. Tests of that chain's
 * arithmetic (the stack, the crop, the photo-size term, a shop's line folded into the stack) and of
 * its accuracy on the synthetic set use it; the shipped result on a photo comes from the scene
 * reader (scene.ts), whose own tests are scene*.test.ts. One folder per test process, removed at exit.
 */
export function syntheticModelsDir(): string {
  if (synthetic) return synthetic;
  const dir = mkdtempSync(path.join(tmpdir(), 'tirewear-synthetic-models-'));
  const m = JSON.parse(readFileSync(path.join(MODELS_DIR, 'manifest.json'), 'utf8'));
  for (const key of ['tread', 'seg', 'crop']) if (m.models[key]) symlinkSync(path.join(MODELS_DIR, m.models[key].file), path.join(dir, m.models[key].file));
  delete m.models.scene;
  delete m.calibration.scene;
  m.trainedOn = ['renders'];
  writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(m, null, 2));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  synthetic = dir;
  return dir;
}

const copies: string[] = [];
/** A copy of the shipped models (manifest and networks) in a fresh folder, removed by removeModelCopies. */
export async function copyModels(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'tirewear-models-'));
  copies.push(dir);
  for (const f of await readdir(MODELS_DIR)) if (f === 'manifest.json' || f.endsWith('.onnx')) await cp(path.join(MODELS_DIR, f), path.join(dir, f));
  return dir;
}

/** A copy of the shipped models whose manifest `edit` has changed. */
export async function copyModelsWith(edit: (manifest: any) => void): Promise<string> {
  const dir = await copyModels();
  const file = path.join(dir, 'manifest.json');
  const m = JSON.parse(await readFile(file, 'utf8'));
  edit(m);
  await writeFile(file, JSON.stringify(m));
  return dir;
}

/** Removes every copy made so far (afterEach). */
export async function removeModelCopies(): Promise<void> {
  await Promise.all(copies.splice(0).map((d) => rm(d, { recursive: true, force: true })));
}
