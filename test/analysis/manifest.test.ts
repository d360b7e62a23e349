import { createHash } from 'node:crypto';
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import * as ort from 'onnxruntime-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { checkImageHeader, decodeFrame } from '../../src/core/images/inspect.js';
import { createOnnxAnalyzer, loadManifest } from '../../src/core/analysis/index.js';
import { treadBox } from '../../src/core/analysis/mask.js';
import type { OnnxAnalyzer } from '../../src/core/analysis/onnx-analyzer.js';
import { cropPixels, normalise, prepareFrameInput } from '../../src/core/analysis/preprocess.js';
import { copyModels, copyModelsWith, heldoutLabels, MODELS_DIR, removeModelCopies } from './helpers.js';

/** A stand-in crop reader that takes only 224 x 224 and answers its input's mean as the depth. */
const PROBE = path.join(path.dirname(MODELS_DIR), 'test/fixtures/models/crop224-probe.onnx');

afterEach(removeModelCopies);

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

  it('refuses a model file of another size than the manifest says before reading it, and a size that is no size', async () => {
    const dir = await copyModels();
    await writeFile(path.join(dir, 'seg.onnx'), Buffer.concat([await readFile(path.join(dir, 'seg.onnx')), Buffer.from('extra')]));
    await expect(createOnnxAnalyzer({ modelsDir: dir })).rejects.toMatchObject({
      code: 'MODEL_UNAVAILABLE',
      message: expect.stringMatching(/seg\.onnx is corrupt: \d+ bytes where the manifest says \d+/),
    });
    for (const bytes of [1.5, -5, 0, 1e12, '4314408']) {
      const bad = await copyModelsWith((m) => (m.models.tread.bytes = bytes));
      await expect(loadManifest(bad)).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE', message: expect.stringMatching(/models\.tread\.bytes/) });
    }
    const folder = await copyModels();
    await rm(path.join(folder, 'crop.onnx'));
    await mkdir(path.join(folder, 'crop.onnx'));
    await expect(createOnnxAnalyzer({ modelsDir: folder })).rejects.toMatchObject({
      code: 'MODEL_UNAVAILABLE',
      message: expect.stringMatching(/crop\.onnx is missing/),
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

  it('gives the crop reader its own input side (models.crop.size), the input size when a manifest has none', async () => {
    const shipped = await loadManifest(MODELS_DIR);
    expect(shipped.models.crop?.size).toBeGreaterThanOrEqual(shipped.input.size);
    const given = await loadManifest(await copyModelsWith((m) => (m.models.crop.size = 224)));
    expect(given.models.crop?.size).toBe(224);
    const older = await loadManifest(await copyModelsWith((m) => delete m.models.crop.size));
    expect(older.models.crop?.size).toBe(older.input.size);
  });

  for (const size of [0, 31, 160.5, 513, '224', null, -224]) {
    it(`refuses a crop reader whose size is ${JSON.stringify(size)}`, async () => {
      const dir = await copyModelsWith((m) => (m.models.crop.size = size));
      await expect(loadManifest(dir)).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE', message: expect.stringContaining('models.crop.size') });
    });
  }

  it('feeds the crop reader its crop at models.crop.size, and refuses a reader that takes another size', async () => {
    const probe = await readFile(PROBE);
    const sha256 = createHash('sha256').update(probe).digest('hex');
    const withProbe = async (size: number | undefined) => {
      const dir = await copyModelsWith((m) => {
        m.models.crop = { file: 'crop.onnx', sha256, bytes: probe.length, ...(size === undefined ? {} : { size }) };
      });
      await writeFile(path.join(dir, 'crop.onnx'), probe);
      return dir;
    };
    const analyzer = (await createOnnxAnalyzer({ modelsDir: await withProbe(224), threads: 1 })) as OnnxAnalyzer;
    try {
      expect(analyzer.cropSize).toBe(224);
      const image = await readFile(heldoutLabels().find((l) => l.depthMm !== null)!.file);
      const frame = await decodeFrame(image, await checkImageHeader(image));
      const { tensor } = await prepareFrameInput(frame, analyzer.manifest.input);
      const box = treadBox((await analyzer.infer(tensor)).maps, frame.width, frame.height, analyzer.manifest.calibration.crop!)!;
      const crop = normalise(cropPixels(frame, box, 224), { ...analyzer.manifest.input, size: 224 });
      expect(crop.length).toBe(3 * 224 * 224);
      const mean = crop.reduce((a, v) => a + v, 0) / crop.length;
      expect((await analyzer.infer(tensor, () => crop)).cropMm).toBeCloseTo(mean, 4);
      // the whole path: the analyzer cuts the same crop at 224 px and the probe reads it
      const { analysis } = await analyzer.analyze({ image, verbose: false });
      expect(analysis.estimatedDepthMm).toBeGreaterThanOrEqual(0);
    } finally {
      await analyzer.close();
    }
    // no size: the input size (160), which this reader refuses: a clear error at start, not on an upload
    await expect(createOnnxAnalyzer({ modelsDir: await withProbe(undefined), threads: 1 })).rejects.toMatchObject({
      code: 'MODEL_UNAVAILABLE',
      message: expect.stringMatching(/warm-up run \(input 160 px, crop 160 px\)/),
    });
  });

  it('refuses an input size that is not a whole number of pixels', async () => {
    const dir = await copyModelsWith((m) => (m.input.size = 159.5));
    await expect(loadManifest(dir)).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE', message: expect.stringContaining('input.size') });
  });

  it('reads a shop calibration’s vote map, and refuses one that is not a rising line', async () => {
    const m = await loadManifest(await copyModelsWith((x) => (x.calibration.voteMap = { intercept: 0.15, slope: 1.14 })));
    expect(m.calibration.voteMap).toEqual({ intercept: 0.15, slope: 1.14 });
    expect((await loadManifest(await copyModelsWith(() => {}))).calibration.voteMap).toBeUndefined();
    for (const bad of [{ intercept: 0, slope: 0 }, { intercept: 0, slope: -1 }, { intercept: '0', slope: 1 }, { slope: 1 }, 7]) {
      const dir = await copyModelsWith((x) => (x.calibration.voteMap = bad));
      await expect(loadManifest(dir), JSON.stringify(bad)).rejects.toMatchObject({
        code: 'MODEL_UNAVAILABLE',
        message: expect.stringContaining('calibration.voteMap'),
      });
    }
  });

  describe('the photo-size term', () => {
    const sized =
      (size: number, more: (m: any) => void = () => {}) =>
      (m: any) => {
        m.calibration.photoSize = { reference: 400, cap: 3 };
        m.calibration.stack.size = size;
        m.calibration.stackWithoutDense.size = size;
        more(m);
      };

    it('reads it, and a manifest without it has none', async () => {
      const m = await loadManifest(await copyModelsWith(sized(0.25)));
      expect(m.calibration.photoSize).toEqual({ reference: 400, cap: 3 });
      expect(m.calibration.stack.size).toBe(0.25);
      const old = await loadManifest(
        await copyModelsWith((x) => {
          delete x.calibration.photoSize;
          delete x.calibration.stack.size;
          delete x.calibration.stackWithoutDense.size;
        }),
      );
      expect(old.calibration.photoSize).toBeUndefined();
      expect(old.calibration.stack.size).toBe(0);
    });

    for (const [what, edit] of [
      ['a size coefficient without photoSize', (m: any) => delete m.calibration.photoSize],
      ['photoSize without a size coefficient', (m: any) => delete m.calibration.stackWithoutDense.size],
      ['a cap out of range', (m: any) => (m.calibration.photoSize.cap = 99)],
      ['a negative cap', (m: any) => (m.calibration.photoSize.cap = -1)],
      ['a zero reference', (m: any) => (m.calibration.photoSize.reference = 0)],
      ['a size that is not a number', (m: any) => (m.calibration.stack.size = '0.1')],
    ] as const) {
      it(`refuses ${what}`, async () => {
        const dir = await copyModelsWith(sized(0.1, edit));
        await expect(loadManifest(dir)).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE', message: expect.stringMatching(/calibration\.(photoSize|stack)/) });
      });
    }

    it('gives the stack the upload’s own long side: none for a 400 px photo, log2(L / 400) for a larger one', async () => {
      const image = await readFile(heldoutLabels().find((l) => l.depthMm !== null && l.depthMm > 4)!.file);
      const meta = await sharp(image).metadata();
      const large = await sharp(image)
        .resize(Math.round(meta.width * 4), Math.round(meta.height * 4))
        .jpeg({ quality: 90 })
        .toBuffer();
      const long = Math.max(meta.width, meta.height); // 360 or 400 px
      expect(long).toBeLessThanOrEqual(400);
      const estimates = async (size: number) => {
        // the renders-only chain, whose estimate is the stack (the scene reader's weighs it by syntheticWeight)
        const renderOnly = (m: any) => {
          delete m.models.scene;
          delete m.calibration.scene;
        };
        const analyzer = await createOnnxAnalyzer({ modelsDir: await copyModelsWith(sized(size, renderOnly)), threads: 1 });
        try {
          const read = async (img: Buffer) => (await analyzer.analyze({ image: img, verbose: false })).analysis.estimatedDepthMm;
          return [await read(image), await read(large)];
        } finally {
          await analyzer.close();
        }
      };
      const [small0, large0] = await estimates(0);
      const [small1, large1] = await estimates(1);
      expect(small1).toBe(small0); // up to 400 px: the feature is 0
      // four times larger: log2(4 · long / 400), 2 for a 400 px photo (± the estimates' rounding)
      expect(Math.abs(large1! - large0! - Math.log2((4 * long) / 400))).toBeLessThanOrEqual(0.1 + 1e-9);
    });
  });

  it('refuses calibration numbers that load as numbers but make no sense, naming the field', async () => {
    const cases: Array<[string, (m: any) => void]> = [
      ['version', (m) => (m.version = '')],
      ['input.std[1]', (m) => (m.input.std = [0.5, 0, 0.5])],
      ['calibration.gateThreshold', (m) => (m.calibration.gateThreshold = 1.5)],
      ['calibration.minTreadShare', (m) => (m.calibration.minTreadShare = 1)],
      ['calibration.dense.percentile', (m) => (m.calibration.dense.percentile = 150)],
      ['calibration.dense.slope', (m) => (m.calibration.dense.slope = -1)],
      ['calibration.dense.minPixels', (m) => (m.calibration.dense.minPixels = 0)],
      ['calibration.bandCentres', (m) => (m.calibration.bandCentres = [1e308, 6, 4, 2.3, 1])],
      ['calibration.bandCentres', (m) => (m.calibration.bandCentres = [1, 2.3, 4, 6, 8.5])],
      ['calibration.intervalK', (m) => (m.calibration.intervalK = -2)],
      ['calibration.wearTemperature', (m) => (m.calibration.wearTemperature = 0)],
      ['calibration.confidencePlatt.a', (m) => (m.calibration.confidencePlatt.a = -1)],
    ];
    for (const [field, edit] of cases) {
      await expect(loadManifest(await copyModelsWith(edit)), field).rejects.toMatchObject({
        code: 'MODEL_UNAVAILABLE',
        message: expect.stringContaining(field),
      });
    }
  });

  it('answers MODEL_UNAVAILABLE, not a result of nulls or an impossible depth, when the stack is broken', async () => {
    const image = await readFile(heldoutLabels().find((l) => l.depthMm !== null)!.file);
    for (const intercept of [1e308, 40]) {
      const analyzer = await createOnnxAnalyzer({
        modelsDir: await copyModelsWith((m) => (m.calibration.stack.intercept = m.calibration.stackWithoutDense.intercept = intercept)),
        threads: 1,
      });
      try {
        await expect(analyzer.analyze({ image, verbose: false }), String(intercept)).rejects.toMatchObject({
          code: 'MODEL_UNAVAILABLE',
          message: expect.stringMatching(/no usable reading/),
        });
      } finally {
        await analyzer.close();
      }
    }
  });

  it('releases the sessions that loaded when another network does not load', async () => {
    const junk = Buffer.from('not an onnx model');
    const dir = await copyModelsWith(
      (m) => (m.models.crop = { ...m.models.crop, sha256: createHash('sha256').update(junk).digest('hex'), bytes: junk.length }),
    );
    await writeFile(path.join(dir, 'crop.onnx'), junk);
    const created: ort.InferenceSession[] = [];
    const original = ort.InferenceSession.create.bind(ort.InferenceSession) as (...args: unknown[]) => Promise<ort.InferenceSession>;
    vi.spyOn(ort.InferenceSession, 'create').mockImplementation(async (...args: unknown[]) => {
      const session = await original(...args);
      created.push(session);
      return session;
    });
    const release = vi.spyOn((ort.InferenceSession as unknown as { prototype: ort.InferenceSession }).prototype, 'release');
    try {
      await expect(createOnnxAnalyzer({ modelsDir: dir, threads: 1 })).rejects.toMatchObject({
        code: 'MODEL_UNAVAILABLE',
        message: expect.stringContaining('crop.onnx'),
      });
    } finally {
      vi.restoreAllMocks();
    }
    expect(created).toHaveLength(3); // tread, seg and the scene reader loaded
    expect(release.mock.contexts).toEqual(expect.arrayContaining(created));
  });

  it('refuses a treadMirror that is not true or false', async () => {
    const dir = await copyModelsWith((m) => (m.calibration.treadMirror = 'yes'));
    await expect(loadManifest(dir)).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE', message: expect.stringContaining('calibration.treadMirror') });
  });

  it('checks a crop reader listed in the manifest like the other networks, and uses it for the crop', async () => {
    // another reader in crop.onnx (the whole-frame network, listed with its own digest): the crop's
    // reading must change; the shipped files copied as they are must not
    const dir = await copyModels();
    const file = path.join(dir, 'manifest.json');
    const m = JSON.parse(await readFile(file, 'utf8'));
    expect(m.models.crop).toBeDefined();
    const other = await copyModelsWith((x) => (x.models.crop = { ...x.models.tread, file: 'crop.onnx', size: x.models.crop.size }));
    await cp(path.join(other, 'tread.onnx'), path.join(other, 'crop.onnx'));
    const image = await readFile(heldoutLabels().find((l) => l.depthMm !== null)!.file);
    const frame = await decodeFrame(image, await checkImageHeader(image));
    const [copy, swapped, shipped] = (await Promise.all(
      [dir, other, MODELS_DIR].map((d) => createOnnxAnalyzer({ modelsDir: d, threads: 1 })),
    )) as OnnxAnalyzer[];
    try {
      const readings = async (a: OnnxAnalyzer) => {
        const { tensor } = await prepareFrameInput(frame, a.manifest.input);
        const box = treadBox((await a.infer(tensor)).maps, frame.width, frame.height, a.manifest.calibration.crop!)!;
        const crop = normalise(cropPixels(frame, box, a.cropSize), { ...a.manifest.input, size: a.cropSize });
        return { cropMm: (await a.infer(tensor, () => crop)).cropMm, analysis: (await a.analyze({ image, verbose: false })).analysis };
      };
      const [c, o, s0] = [await readings(copy!), await readings(swapped!), await readings(shipped!)];
      expect(c).toEqual(s0);
      // the two networks read this crop a few thousandths of a mm apart: the reading is the listed file's
      expect(o.cropMm).not.toBe(s0.cropMm);
    } finally {
      await Promise.all([copy!.close(), swapped!.close(), shipped!.close()]);
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
