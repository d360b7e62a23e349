/**
 * POST /analyze/check (issue 42): the live capture check. Free (nothing stored or charged, no
 * depth), rate-limited per caller, the image checked as analyze checks it.
 */
import sharp from 'sharp';
import { AppError } from '../../src/core/errors.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BRIGHTNESS_MAX, BRIGHTNESS_MIN, CHECKS_PER_MINUTE, SHARPNESS_MIN, judge, measureFrame } from '../../src/core/services/capture-check.js';
import { makeJpeg, makePng } from '../fixtures/images/make.js';
import { createKey, expectError, form, httpTest, imageForm, signIn, type HttpTest } from './helpers.js';

let t: HttpTest;
beforeEach(async () => {
  t = await httpTest();
});
afterEach(() => t.cleanup());

const check = (upload: ReturnType<typeof form>, headers: Record<string, string> = {}, url = '/api/v1/analyze/check') =>
  t.app.inject({ method: 'POST', url, payload: upload.payload, headers: { ...upload.headers, ...headers } });

const tread = () => makeJpeg({ width: 640, height: 480 });
const blurred = async () =>
  sharp(await tread())
    .blur(6)
    .jpeg()
    .toBuffer();

describe('what it answers', () => {
  it('a sharp, lit tread: ok, with the scene reading, the measures and no depth', async () => {
    const res = await check(imageForm(await tread()));
    expect(res.statusCode, res.body).toBe(200);
    const data = res.json().data;
    expect(Object.keys(data).sort()).toEqual(['brightness', 'height', 'ok', 'probabilities', 'problems', 'scene', 'sharpness', 'width']);
    expect(data).toMatchObject({
      scene: 'tread',
      probabilities: { tread: 0.9, treadNotVisible: 0.05, noTire: 0.05 },
      sharpness: { minimum: SHARPNESS_MIN, ok: true },
      brightness: { minimum: BRIGHTNESS_MIN, maximum: BRIGHTNESS_MAX, ok: true },
      ok: true,
      problems: [],
      width: 640,
      height: 480,
    });
    expect(JSON.stringify(data)).not.toMatch(/depth|wear/i);
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    expect(t.analyzer.calls).toBe(0); // the scene reader alone, never the depth models
    expect(t.analyzer.sceneCalls).toBe(1);
  });

  it('names what is wrong: no tire, tread not visible, blurred, dark, washed out', async () => {
    t.analyzer.setScene('no_tire');
    expect((await check(imageForm(await tread()))).json().data).toMatchObject({ scene: 'no_tire', ok: false, problems: ['no_tire'] });
    t.analyzer.setScene('tread_not_visible');
    expect((await check(imageForm(await tread()))).json().data).toMatchObject({ scene: 'tread_not_visible', ok: false, problems: ['tread_not_visible'] });
    t.analyzer.setScene('tread');
    const soft = (await check(imageForm(await blurred()))).json().data;
    expect(soft).toMatchObject({ ok: false, problems: ['blurred'], sharpness: { ok: false } });
    expect(soft.sharpness.value).toBeLessThan(SHARPNESS_MIN);
    const dark = (await check(imageForm(await makeJpeg({ width: 640, height: 480, shade: 20 })))).json().data;
    expect(dark).toMatchObject({ ok: false, brightness: { ok: false } });
    expect(dark.problems).toContain('too_dark');
    const bright = (await check(imageForm(await makeJpeg({ width: 640, height: 480, shade: 250 })))).json().data;
    expect(bright.problems).toContain('too_bright');
  });

  it('models without a scene reader: scene unknown, judged by sharpness and light alone', async () => {
    t.analyzer.withoutSceneReader();
    const data = (await check(imageForm(await tread()))).json().data;
    expect(data).toMatchObject({ scene: 'unknown', probabilities: null, ok: true, problems: [] });
    expect((await check(imageForm(await blurred()))).json().data).toMatchObject({ scene: 'unknown', ok: false, problems: ['blurred'] });
  });

  it('models whose scene reader answers MODEL_UNAVAILABLE (shipped without one): scene unknown, not a 503', async () => {
    t.analyzer.scene = async () => {
      throw new AppError('MODEL_UNAVAILABLE', 'These models have no scene reader.');
    };
    const res = await check(imageForm(await tread()));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ scene: 'unknown', probabilities: null, ok: true });
    // anything else the scene reader throws is an answer of its own
    t.analyzer.scene = async () => {
      throw new AppError('SERVER_BUSY', 'busy', { headers: { 'Retry-After': '1' } });
    };
    expectError(await check(imageForm(await tread())), 503, 'SERVER_BUSY');
  });

  it('stores nothing and charges nothing, whoever asks', async () => {
    const { cookie } = await signIn(t.app);
    const key = await createKey(t.app, cookie);
    for (let i = 0; i < 12; i++) {
      expect((await check(imageForm(await tread()), i % 3 === 0 ? {} : i % 3 === 1 ? { cookie } : { 'x-api-key': key })).statusCode).toBe(200);
    }
    expect((await t.app.inject({ url: '/api/v1/scans', headers: { cookie } })).json().data.items).toEqual([]);
    expect((await t.app.inject({ url: '/api/v1/account', headers: { cookie } })).json().data.allowance).toMatchObject({ used: 0, remaining: 10 });
    // the anonymous day's 3 scans are all still there
    for (let i = 0; i < 3; i++) {
      const upload = imageForm(await tread());
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/analyze', payload: upload.payload, headers: upload.headers });
      expect(res.statusCode).toBe(200);
    }
  });
});

describe('rate limit', () => {
  it(`${CHECKS_PER_MINUTE} a minute per caller, then 429 TOO_MANY_ATTEMPTS with Retry-After; others unaffected`, async () => {
    const image = await makeJpeg({ width: 320, height: 256 });
    const { cookie } = await signIn(t.app);
    for (let i = 0; i < CHECKS_PER_MINUTE; i++) expect((await check(imageForm(image), { cookie })).statusCode).toBe(200);
    const limited = await check(imageForm(image), { cookie });
    expect(expectError(limited, 429, 'TOO_MANY_ATTEMPTS')).toMatch(/capture checks/);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // the same account through its key is the same caller; an anonymous caller is another
    const key = await createKey(t.app, cookie);
    expectError(await check(imageForm(image), { 'x-api-key': key }), 429, 'TOO_MANY_ATTEMPTS');
    expect((await check(imageForm(image))).statusCode).toBe(200);
    // a minute later the window has moved on
    t.clock.advance(60_000);
    expect((await check(imageForm(image), { cookie })).statusCode).toBe(200);
  });
});

describe('bad input', () => {
  it('is refused as analyze refuses it', async () => {
    const jpeg = await tread();
    expectError(await check(form([{ name: 'vehicle', value: 'x' }])), 400, 'VALIDATION_ERROR');
    expectError(await check(form([])), 400, 'VALIDATION_ERROR');
    expect(expectError(await check(imageForm(jpeg, { verbose: '1' })), 400, 'VALIDATION_ERROR')).toMatch(/verbose/);
    expectError(
      await check(
        form([
          { name: 'image', data: jpeg },
          { name: 'image', data: jpeg },
        ]),
      ),
      400,
      'VALIDATION_ERROR',
    );
    expectError(await check(form([{ name: 'photo', data: jpeg }])), 400, 'VALIDATION_ERROR');
    expectError(await check(form([{ name: 'image', data: Buffer.alloc(0) }])), 400, 'VALIDATION_ERROR');
    expectError(await check(imageForm(jpeg), {}, '/api/v1/analyze/check?verbose=1'), 400, 'VALIDATION_ERROR');
    expectError(
      await t.app.inject({ method: 'POST', url: '/api/v1/analyze/check', headers: { 'content-type': 'application/json' }, payload: '{}' }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(await check(form([{ name: 'image', data: Buffer.from('GIF89a not a tire'.repeat(50)) }])), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectError(await check(imageForm(await makeJpeg({ width: 200, height: 150 }))), 422, 'IMAGE_TOO_SMALL');
    expectError(await check(imageForm(jpeg.subarray(0, Math.floor(jpeg.length / 2)))), 422, 'IMAGE_UNREADABLE');
    expectError(await check(imageForm(jpeg), { 'content-length': String(20 * 1024 * 1024) }), 413, 'FILE_TOO_LARGE');
    expectError(await check(imageForm(jpeg), { 'x-api-key': 'tw_nope' }), 401, 'INVALID_API_KEY');
    expectError(await check(imageForm(jpeg), { host: 'evil.example' }), 403, 'FORBIDDEN');
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/analyze/check' }), 405, 'METHOD_NOT_ALLOWED');
    expect(t.analyzer.sceneCalls).toBe(0);
  });

  it('an image over 10 MiB streamed without a length is cut off', async () => {
    const big = Buffer.concat([await makePng({ width: 300, height: 300 }), Buffer.alloc(10 * 1024 * 1024 + 10)]);
    expectError(await check(imageForm(big)), 413, 'FILE_TOO_LARGE');
  });
});

describe('the measures', () => {
  it('sharpness falls with blur, brightness follows the light', async () => {
    const frame = async (image: Buffer) => {
      const { data, info } = await sharp(image).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      return measureFrame({ data, width: info.width, height: info.height });
    };
    const sharpOne = await frame(await tread());
    const soft = await frame(await blurred());
    expect(sharpOne.sharpness).toBeGreaterThan(SHARPNESS_MIN);
    expect(soft.sharpness).toBeLessThan(sharpOne.sharpness / 4);
    expect((await frame(await makeJpeg({ shade: 30 }))).brightness).toBeLessThan((await frame(await makeJpeg({ shade: 200 }))).brightness);
    const flat = await frame(
      await sharp({ create: { width: 400, height: 300, channels: 3, background: '#808080' } })
        .png()
        .toBuffer(),
    );
    expect(flat).toEqual({ sharpness: 0, brightness: 128 });
  });

  it('judge: problems in order, scene probabilities rounded', () => {
    const scene = { scene: 'tread_not_visible' as const, probabilities: { tread: 0.12345, treadNotVisible: 0.8, noTire: 0.07655 } };
    const verdict = judge(scene, { sharpness: 1, brightness: 10 }, { width: 10, height: 10 });
    expect(verdict.problems).toEqual(['tread_not_visible', 'too_dark', 'blurred']);
    expect(verdict.probabilities).toEqual({ tread: 0.123, treadNotVisible: 0.8, noTire: 0.077 });
    expect(judge(null, { sharpness: SHARPNESS_MIN, brightness: BRIGHTNESS_MAX }, { width: 1, height: 1 }).ok).toBe(true);
  });
});
