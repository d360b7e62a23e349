import { createHash } from 'node:crypto';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createOnnxAnalyzer, loadManifest } from '../../src/core/analysis/index.js';
import { heldoutLabels, MODELS_DIR } from './helpers.js';

const dirs: string[] = [];
async function copyModels(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'tirewear-models-'));
  dirs.push(dir);
  for (const f of await readdir(MODELS_DIR)) if (f === 'manifest.json' || f.endsWith('.onnx')) await cp(path.join(MODELS_DIR, f), path.join(dir, f));
  return dir;
}

/** A copy of the shipped models whose manifest `edit` has changed. */
async function copyModelsWith(edit: (manifest: any) => void): Promise<string> {
  const dir = await copyModels();
  const file = path.join(dir, 'manifest.json');
  const m = JSON.parse(await readFile(file, 'utf8'));
  edit(m);
  await writeFile(file, JSON.stringify(m));
  return dir;
}

afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

describe('model manifest', () => {
  it('names the shipped version, both networks with sha256 digests, and the calibration', async () => {
    const m = await loadManifest(MODELS_DIR);
    expect(m.version).toMatch(/^tread-\d{4}\.\d{1,2}\.\d+/);
    expect(m.models.tread.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(m.models.seg.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(m.calibration.intervalK).toBeGreaterThan(0);
    expect(m.input.size).toBe(160);
  });

  it('refuses a missing manifest with MODEL_UNAVAILABLE', async () => {
    const dir = await copyModels();
    await rm(path.join(dir, 'manifest.json'));
    await expect(createOnnxAnalyzer({ modelsDir: dir })).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE', status: 503 });
  });

  it('refuses a missing model file and says which', async () => {
    const dir = await copyModels();
    await rm(path.join(dir, 'seg.onnx'));
    await expect(createOnnxAnalyzer({ modelsDir: dir })).rejects.toMatchObject({
      code: 'MODEL_UNAVAILABLE',
      message: expect.stringMatching(/seg\.onnx is missing/),
    });
  });

  it('refuses a corrupt model file (one flipped byte) by its sha256', async () => {
    const dir = await copyModels();
    const file = path.join(dir, 'tread.onnx');
    const bytes = await readFile(file);
    const mid = bytes.length >> 1;
    bytes[mid] = bytes[mid]! ^ 0xff;
    await writeFile(file, bytes);
    await expect(createOnnxAnalyzer({ modelsDir: dir })).rejects.toMatchObject({
      code: 'MODEL_UNAVAILABLE',
      message: expect.stringMatching(/tread\.onnx is corrupt/),
    });
  });

  it('refuses a manifest without calibration', async () => {
    const dir = await copyModelsWith((m) => delete m.calibration);
    await expect(loadManifest(dir)).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE' });
  });

  it('reads the tread crop when the manifest has one, and loads a manifest from before it (no second look)', async () => {
    const dir = await copyModels();
    const file = path.join(dir, 'manifest.json');
    const m = JSON.parse(await readFile(file, 'utf8'));
    m.calibration.crop = { margin: 0.08, maxAspect: 16 / 9, lowPercentile: 1, highPercentile: 99, minCells: 20, minSide: 16 };
    m.calibration.stack.crop = 0.4;
    await writeFile(file, JSON.stringify(m));
    const withCrop = await loadManifest(dir);
    expect(withCrop.calibration.crop).toMatchObject({ margin: 0.08, minCells: 20 });
    expect(withCrop.calibration.stack.crop).toBe(0.4);
    delete m.calibration.crop;
    delete m.calibration.stack.crop;
    delete m.calibration.stackWithoutDense.crop;
    await writeFile(file, JSON.stringify(m));
    const before = await loadManifest(dir);
    expect(before.calibration.crop).toBeUndefined();
    expect(before.calibration.stack.crop).toBe(0);
  });

  for (const [what, crop] of [
    ['a missing field', { margin: 0.08, maxAspect: 1.7, lowPercentile: 1, highPercentile: 99, minCells: 20 }],
    ['a string', { margin: '0.08', maxAspect: 1.7, lowPercentile: 1, highPercentile: 99, minCells: 20, minSide: 16 }],
    ['percentiles the wrong way round', { margin: 0.08, maxAspect: 1.7, lowPercentile: 99, highPercentile: 1, minCells: 20, minSide: 16 }],
    ['an aspect below 1', { margin: 0.08, maxAspect: 0.5, lowPercentile: 1, highPercentile: 99, minCells: 20, minSide: 16 }],
    ['not an object', 'square'],
  ] as const) {
    it(`refuses a tread crop with ${what}`, async () => {
      const dir = await copyModelsWith((m) => (m.calibration.crop = crop));
      await expect(loadManifest(dir)).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE', message: expect.stringContaining('calibration.crop') });
    });
  }

  it('refuses a treadMirror that is not true or false', async () => {
    const dir = await copyModelsWith((m) => (m.calibration.treadMirror = 'yes'));
    await expect(loadManifest(dir)).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE', message: expect.stringContaining('calibration.treadMirror') });
  });

  it('checks a crop reader listed in the manifest like the other networks, and uses it for the crop', async () => {
    const dir = await copyModels();
    const file = path.join(dir, 'manifest.json');
    const m = JSON.parse(await readFile(file, 'utf8'));
    if (!m.models.crop) {
      // the tread network itself as the crop reader: the same readings as the shared batch
      await cp(path.join(dir, 'tread.onnx'), path.join(dir, 'crop.onnx'));
      m.models.crop = { ...m.models.tread, file: 'crop.onnx' };
      await writeFile(file, JSON.stringify(m));
    }
    const image = await readFile(heldoutLabels().find((l) => l.depthMm !== null)!.file);
    const withReader = await createOnnxAnalyzer({ modelsDir: dir, threads: 1 });
    const shipped = await createOnnxAnalyzer({ modelsDir: MODELS_DIR, threads: 1 });
    try {
      expect((await withReader.analyze({ image, verbose: false })).analysis).toEqual((await shipped.analyze({ image, verbose: false })).analysis);
    } finally {
      await Promise.all([withReader.close(), shipped.close()]);
    }
    const bytes = await readFile(path.join(dir, 'crop.onnx'));
    const middle = bytes.length >> 1;
    bytes[middle] = (bytes[middle] ?? 0) ^ 0xff;
    await writeFile(path.join(dir, 'crop.onnx'), bytes);
    expect(createHash('sha256').update(bytes).digest('hex')).not.toBe(m.models.crop.sha256);
    await expect(createOnnxAnalyzer({ modelsDir: dir })).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE', message: expect.stringContaining('crop.onnx') });
    await rm(path.join(dir, 'crop.onnx'));
    await expect(createOnnxAnalyzer({ modelsDir: dir })).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE', message: expect.stringContaining('crop.onnx') });
  });
});
