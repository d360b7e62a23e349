import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createOnnxAnalyzer, loadManifest } from '../../src/core/analysis/index.js';
import type { OnnxAnalyzer } from '../../src/core/analysis/onnx-analyzer.js';
import { copyModelsWith, heldoutLabels, MODELS_DIR, removeModelCopies } from './helpers.js';

afterEach(removeModelCopies);

let shipped: OnnxAnalyzer;
beforeAll(async () => {
  shipped = (await createOnnxAnalyzer({ modelsDir: MODELS_DIR, threads: 1 })) as OnnxAnalyzer;
});
afterAll(async () => {
  await shipped.close();
});

describe('the scene reader in the manifest', () => {
  it('is shipped: its file with a sha256, its constants, and the data sets the weights learned from', async () => {
    const m = await loadManifest(MODELS_DIR);
    expect(m.models.scene?.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(m.calibration.scene).toBeDefined();
    expect(m.trainedOn).toEqual(expect.arrayContaining(['web-good-defective', 'tyre-defect-ccby', 'renders']));
    // measured only: its licence allows no shipped weights trained on it (realdata/README.md)
    expect(m.trainedOn).not.toContain('michelin-twi');
    // the support and its rule (since tread-2026.11.29.3): the graph gives it, the manifest lists it
    expect(JSON.parse(await readFile(path.join(MODELS_DIR, 'manifest.json'), 'utf8')).models.scene.outputs).toHaveProperty('support');
    expect(m.calibration.scene?.supportBelow).toBe(0.5);
  });

  it('refuses a scene model without its constants, and constants without the model', async () => {
    for (const edit of [(m: any) => delete m.calibration.scene, (m: any) => delete m.models.scene]) {
      await expect(loadManifest(await copyModelsWith(edit))).rejects.toMatchObject({
        code: 'MODEL_UNAVAILABLE',
        message: expect.stringContaining('models.scene and calibration.scene'),
      });
    }
  });

  it('refuses scene constants that load as numbers but make no sense, naming the field', async () => {
    const cases: Array<[string, (m: any) => void]> = [
      ['calibration.scene.noTire', (m) => (m.calibration.scene.noTire = 1.5)],
      ['calibration.scene.notVisible', (m) => (m.calibration.scene.notVisible = -0.1)],
      ['calibration.scene.wornPlatt.a', (m) => (m.calibration.scene.wornPlatt.a = 0)],
      ['calibration.scene.syntheticWeight', (m) => (m.calibration.scene.syntheticWeight = 2)],
      ['calibration.scene.depthScale', (m) => (m.calibration.scene.depthScale = { usableMm: 2, evenMm: 3, wornMm: 0.8 })],
      ['calibration.scene.depthScale.wornMm', (m) => (m.calibration.scene.depthScale.wornMm = -1)],
      ['calibration.scene.realSigmaMm', (m) => (m.calibration.scene.realSigmaMm = 100)],
      ['calibration.scene.preliminaryBelow', (m) => (m.calibration.scene.preliminaryBelow = 'high')],
      ['calibration.scene.supportBelow', (m) => (m.calibration.scene.supportBelow = 1.2)],
      ['calibration.scene.shopLine.slope', (m) => (m.calibration.scene.shopLine = { intercept: 0, slope: -1, intervalScale: 1 })],
      ['trainedOn', (m) => (m.trainedOn = ['web', 42])],
    ];
    for (const [field, edit] of cases) {
      await expect(loadManifest(await copyModelsWith(edit)), field).rejects.toMatchObject({
        code: 'MODEL_UNAVAILABLE',
        message: expect.stringContaining(field),
      });
    }
  });

  it('refuses a corrupt scene.onnx by its sha256, naming the file', async () => {
    const dir = await copyModelsWith(() => undefined);
    const file = path.join(dir, 'scene.onnx');
    const bytes = await readFile(file);
    bytes[bytes.length >> 1] = bytes[bytes.length >> 1]! ^ 0xff;
    await writeFile(file, bytes);
    await expect(createOnnxAnalyzer({ modelsDir: dir, threads: 1 })).rejects.toMatchObject({
      code: 'MODEL_UNAVAILABLE',
      message: expect.stringContaining('scene.onnx'),
    });
  });

  it('loads a manifest from before the scene reader: the renders-only gate and stack decide', async () => {
    const dir = await copyModelsWith((m) => {
      delete m.models.scene;
      delete m.calibration.scene;
    });
    const old = (await createOnnxAnalyzer({ modelsDir: dir, threads: 1 })) as OnnxAnalyzer;
    try {
      expect(old.sceneReader).toBeNull();
      const image = await readFile(heldoutLabels().find((l) => l.depthMm !== null)!.file);
      const { analysis } = await old.analyze({ image, verbose: false });
      expect(analysis.estimatedDepthMm).toBeGreaterThanOrEqual(0);
      await expect(old.scene({ image, verbose: false })).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE' });
    } finally {
      await old.close();
    }
  });

  it("gives the scene network's features when asked, and serves a shop's reader on them; refuses a reader of another length at load", async () => {
    const image = await readFile(heldoutLabels().find((l) => l.depthMm !== null)!.file);
    expect(JSON.parse(await readFile(path.join(MODELS_DIR, 'manifest.json'), 'utf8')).models.scene.outputs.features).toEqual([null, 3296]);
    const plain = await shipped.analyze({ image, verbose: false });
    expect(plain).not.toHaveProperty('features');
    const { analysis, features } = await shipped.analyze({ image, verbose: false, features: true });
    expect(analysis).toEqual(plain.analysis);
    expect(features).toBeInstanceOf(Float32Array);
    expect(features).toHaveLength(3296);
    expect(features!.every(Number.isFinite)).toBe(true);
    // a reader that reads 5 mm plus one feature's standardised value (held within ±clip)
    const reader = (n: number) => ({
      mean: new Array(n).fill(0),
      scale: new Array(n).fill(1),
      clip: 3,
      weights: [0.5, ...new Array(n - 1).fill(0)],
      intercept: 5,
      halfWidthMm: 0.8,
      lambda: 1000,
      centre: new Array(n).fill(0),
      basis: [],
      typicalBelow: 9,
    });
    const dir = await copyModelsWith((m) => (m.calibration.scene.shopReader = reader(3296)));
    const shop = (await createOnnxAnalyzer({ modelsDir: dir, threads: 1 })) as OnnxAnalyzer;
    try {
      const read = (await shop.analyze({ image, verbose: false })).analysis;
      const want = 5 + 0.5 * Math.min(3, Math.max(-3, features![0]!));
      expect(read.estimatedDepthMm).toBeCloseTo(Math.round(want * 10) / 10, 5);
      // ± 0.8 mm, each end rounded outward to 0.1 mm
      expect(read.depthRangeMm.max - read.depthRangeMm.min).toBeGreaterThanOrEqual(1.6 - 1e-9);
      expect(read.depthRangeMm.max - read.depthRangeMm.min).toBeLessThanOrEqual(1.8 + 1e-9);
    } finally {
      await shop.close();
    }
    await expect(
      createOnnxAnalyzer({ modelsDir: await copyModelsWith((m) => (m.calibration.scene.shopReader = reader(10))), threads: 1 }),
    ).rejects.toMatchObject({
      code: 'MODEL_UNAVAILABLE',
      message: expect.stringContaining('the shop reader takes 10 features and the scene model gives 3296'),
    });
  });

  it('is deterministic, and the scene check answers what analyze acts on without reading a depth', async () => {
    const image = await readFile(heldoutLabels().find((l) => l.depthMm !== null)!.file);
    const a = await shipped.scene({ image, verbose: false });
    const b = await shipped.scene({ image, verbose: false });
    expect(b).toEqual(a);
    const sum = a.probabilities.tread + a.probabilities.treadNotVisible + a.probabilities.noTire;
    expect(sum).toBeCloseTo(1, 5);
    expect(a).not.toHaveProperty('estimatedDepthMm');
  });
});
