import { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import { makeBombPng, makeJpeg, makePng, makeWebp, truncate } from '../fixtures/images/make.js';
import { createKey, expectError, form, httpTest, imageForm, signIn, type HttpTest } from './helpers.js';

let t: HttpTest;
let jpeg: Buffer;

beforeAll(async () => {
  jpeg = await makeJpeg({ width: 320, height: 256 });
});

const analyze = (extra: { payload: Buffer | Readable; headers: Record<string, string> }, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url: '/api/v1/analyze', payload: extra.payload, headers: { ...extra.headers, ...headers } });

describe('POST /api/v1/analyze succeeds', () => {
  afterEach(() => t.cleanup());

  it('answers the seed envelope with the rate-limit headers', async () => {
    t = await httpTest();
    const res = await analyze(imageForm(jpeg));
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.success).toBe(true);
    expect(body.data.scanId).toMatch(/^[A-Za-z0-9_-]{16,}$/);
    expect(Object.keys(body.data.result)).toEqual(
      expect.arrayContaining([
        'wear',
        'confidence',
        'estimatedDepthMm',
        'depthRangeMm',
        'treadHealthIndex',
        'isPreliminary',
        'preliminaryReasons',
        'modelAlignment',
        'twiConsensusCount',
        'processingTimeMs',
        'modelVersion',
        'disclaimer',
      ]),
    );
    expect(body.data.result.overlays).toBeUndefined();
    expect(res.headers['x-ratelimit-limit']).toBe('3');
    expect(res.headers['x-ratelimit-remaining']).toBe('2');
    expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThan(0);
  });

  it('adds overlays and points with verbose=1, and keeps vehicle and position', async () => {
    t = await httpTest();
    const { cookie } = await signIn(t.app);
    const res = await analyze(imageForm(await makePng({ width: 300, height: 260 }), { verbose: '1', vehicle: ' AB-123 ', position: 'fl' }), {
      cookie,
    });
    expect(res.statusCode).toBe(200);
    const { scanId, result } = res.json().data;
    expect(result.overlays.depthHeatmap).toMatch(/^data:image\/png;base64,/);
    expect(result.points).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'twi' })]));
    expect(result.points[0]).toHaveProperty('index'); // a point's extra fields survive the response schema
    const scan = (await t.app.inject({ url: `/api/v1/scans/${scanId}`, headers: { cookie } })).json().data;
    expect(scan).toMatchObject({ vehicle: 'AB-123', position: 'FL' });
  });

  it('takes WebP, and an image part sent without a filename', async () => {
    t = await httpTest();
    const res = await analyze(form([{ name: 'image', data: await makeWebp({ width: 300, height: 300 }), filename: null, contentType: 'image/webp' }]));
    expect(res.statusCode).toBe(200);
  });

  it('reads a text field labelled application/octet-stream (as some HTTP libraries send it) as text, before or after the image', async () => {
    t = await httpTest();
    const { cookie } = await signIn(t.app);
    const octet = (name: string, value: string) => ({ name, data: Buffer.from(value), filename: null, contentType: 'application/octet-stream' });
    for (const parts of [
      [{ name: 'image', data: jpeg }, octet('position', 'rr'), octet('vehicle', 'AB-123')],
      [octet('position', 'rr'), octet('vehicle', 'AB-123'), { name: 'image', data: jpeg }],
    ]) {
      const res = await analyze(form(parts), { cookie });
      expect(res.statusCode).toBe(200);
      const scan = (await t.app.inject({ url: `/api/v1/scans/${res.json().data.scanId}`, headers: { cookie } })).json().data;
      expect(scan).toMatchObject({ vehicle: 'AB-123', position: 'RR' });
    }
  });

  it('replays an Idempotency-Key retry with the same scan, charged once', async () => {
    t = await httpTest();
    const first = await analyze(imageForm(jpeg), { 'idempotency-key': 'pos-order-42' });
    const again = await analyze(imageForm(jpeg), { 'idempotency-key': 'pos-order-42' });
    expect(again.statusCode).toBe(200);
    expect(again.json().data.scanId).toBe(first.json().data.scanId);
    expect(again.headers['x-ratelimit-remaining']).toBe('2');
  });
});

describe('POST /api/v1/analyze refuses hostile or wrong uploads', () => {
  // Refusals charge nothing, so one core serves them all.
  beforeAll(async () => {
    t = await httpTest();
  });
  afterEach(() => t.analyzer.succeed());
  afterAll(() => t.cleanup());

  it('a text file named tire.jpg and declared image/jpeg: 415 by content', async () => {
    const res = await analyze(form([{ name: 'image', data: Buffer.from('hello, not a photo'.repeat(50)), filename: 'tire.jpg' }]));
    expectError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    expect(res.headers['x-ratelimit-remaining']).toBe('3');
  });

  it('a truncated JPEG: 422 IMAGE_UNREADABLE', async () => {
    expectError(await analyze(imageForm(truncate(jpeg, 0.5))), 422, 'IMAGE_UNREADABLE');
  });

  it('a decompression-bomb PNG: 422 IMAGE_TOO_LARGE without decoding it', async () => {
    expectError(await analyze(imageForm(makeBombPng(), {})), 422, 'IMAGE_TOO_LARGE');
  });

  it('an image under 256 px: 422 IMAGE_TOO_SMALL', async () => {
    expectError(await analyze(imageForm(await makeJpeg({ width: 200, height: 150 }))), 422, 'IMAGE_TOO_SMALL');
  });

  it('no tire in the picture: 422 NO_TIRE_DETECTED, not charged', async () => {
    t.analyzer.fail();
    const res = await analyze(imageForm(jpeg));
    expectError(res, 422, 'NO_TIRE_DETECTED');
    expect(res.headers['x-ratelimit-remaining']).toBe('3');
  });

  it('a tire whose tread cannot be read: 422 TREAD_NOT_VISIBLE, not charged, nothing stored', async () => {
    // its own core: this test ends with a scan that is charged
    const shared = t;
    t = await httpTest();
    t.analyzer.setScene('tread_not_visible');
    try {
      const res = await analyze(imageForm(jpeg));
      expect(expectError(res, 422, 'TREAD_NOT_VISIBLE')).toMatch(/tread/);
      expect(res.headers['x-ratelimit-remaining']).toBe('3');
      // a retry with the same Idempotency-Key once the photo is good runs afresh (the claim was forgotten)
      const keyed = await analyze(imageForm(jpeg), { 'idempotency-key': 'tnv-1' });
      expectError(keyed, 422, 'TREAD_NOT_VISIBLE');
      t.analyzer.setScene('tread');
      const retry = await analyze(imageForm(jpeg), { 'idempotency-key': 'tnv-1' });
      expect(retry.statusCode).toBe(200);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect(retry.headers['x-ratelimit-remaining']).toBe('2');
    } finally {
      await t.cleanup();
      t = shared;
    }
  });

  it('models that failed to load: 503 MODEL_UNAVAILABLE', async () => {
    t.analyzer.fail(() => new AppError('MODEL_UNAVAILABLE', 'The tread models could not be loaded.'));
    expectError(await analyze(imageForm(jpeg)), 503, 'MODEL_UNAVAILABLE');
  });

  it('11 MiB streamed without a Content-Length: 413 FILE_TOO_LARGE', async () => {
    const head = form([{ name: 'image', data: Buffer.alloc(0) }]).payload;
    const boundaryEnd = head.indexOf('\r\n--', 10);
    const preamble = head.subarray(0, boundaryEnd);
    let sent = 0;
    const body = Readable.from(
      (function* () {
        yield preamble;
        for (let i = 0; i < 11 * 16; i++) {
          sent += 65536;
          yield Buffer.alloc(65536, 0xff);
        }
        yield Buffer.from(head.subarray(boundaryEnd));
      })(),
    );
    const res = await analyze({ payload: body, headers: form([]).headers });
    expectError(res, 413, 'FILE_TOO_LARGE');
    expect(res.headers.connection).toBe('close');
    expect(sent).toBeGreaterThan(10 * 1024 * 1024);
  });

  it('exactly 10 MiB is still accepted by the upload limit (then judged by content)', async () => {
    const res = await analyze(form([{ name: 'image', data: Buffer.alloc(10 * 1024 * 1024, 0x20) }]));
    expectError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('a Content-Length announcing more than the limit is refused before reading', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/analyze',
      headers: { ...form([]).headers, 'content-length': String(20 * 1024 * 1024) },
      payload: 'x',
    });
    expectError(res, 413, 'FILE_TOO_LARGE');
  });

  it('zero bytes', async () => {
    expect(expectError(await analyze(imageForm(Buffer.alloc(0))), 400, 'VALIDATION_ERROR')).toMatch(/empty/);
  });

  it('two images', async () => {
    const res = await analyze(
      form([
        { name: 'image', data: jpeg },
        { name: 'image', data: jpeg },
      ]),
    );
    expect(expectError(res, 400, 'VALIDATION_ERROR')).toMatch(/exactly one file, the image/i);
  });

  it('no image field', async () => {
    expect(expectError(await analyze(form([{ name: 'verbose', value: '1' }])), 400, 'VALIDATION_ERROR')).toMatch(/"image" is required/);
  });

  it('a file in another field', async () => {
    expect(expectError(await analyze(form([{ name: 'photo', data: jpeg }])), 400, 'VALIDATION_ERROR')).toMatch(/photo/);
  });

  it('a text field sent as a file, or a file part without a name, is said to be that', async () => {
    const position = { name: 'position', data: Buffer.from('FL'), filename: 'position.txt', contentType: 'text/plain' };
    const asFile = form([position, { name: 'image', data: jpeg }]);
    expect(expectError(await analyze(asFile), 400, 'VALIDATION_ERROR')).toBe(
      'Field "position" was sent as a file (it has a filename); send it as a plain text field',
    );
    // after the image it is a second file: the limit's message says where text fields go
    expect(expectError(await analyze(form([{ name: 'image', data: jpeg }, position])), 400, 'VALIDATION_ERROR')).toMatch(/plain text fields/);
    const body = Buffer.concat([
      Buffer.from('--b\r\nContent-Disposition: form-data; filename="tire.jpg"\r\nContent-Type: image/jpeg\r\n\r\n'),
      jpeg,
      Buffer.from('\r\n--b--\r\n'),
    ]);
    const unnamed = await analyze({ payload: body, headers: { 'content-type': 'multipart/form-data; boundary=b' } });
    expect(expectError(unnamed, 400, 'VALIDATION_ERROR')).toMatch(/without a name; send the image in the field "image"/);
  });

  it('not multipart: JSON, raw bytes, nothing', async () => {
    const json = await t.app.inject({ method: 'POST', url: '/api/v1/analyze', payload: { image: 'x' } });
    expect(expectError(json, 400, 'VALIDATION_ERROR')).toMatch(/multipart\/form-data/);
    expect(json.headers['x-ratelimit-limit']).toBe('3');
    const raw = await t.app.inject({ method: 'POST', url: '/api/v1/analyze', headers: { 'content-type': 'image/jpeg' }, payload: jpeg });
    expectError(raw, 400, 'VALIDATION_ERROR');
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/analyze' }), 400, 'VALIDATION_ERROR');
  });

  it('a multipart body without a boundary (a body cut off mid-way is tested over a socket, server.test.ts)', async () => {
    const noBoundary = await analyze({ payload: jpeg, headers: { 'content-type': 'multipart/form-data' } });
    expect(expectError(noBoundary, 400, 'VALIDATION_ERROR')).toMatch(/malformed|incomplete/);
  });

  it.each([
    [{ verbose: '2' }, /verbose/],
    [{ verbose: 'true' }, /verbose/],
    [{ vehicle: 'x'.repeat(65) }, /vehicle/],
    [{ position: 'FRONT' }, /position/],
    [{ colour: 'red' }, /Unknown field "colour"/],
  ])('bad field %j', async (fields, message) => {
    const res = await analyze(imageForm(jpeg, fields));
    expect(expectError(res, 400, 'VALIDATION_ERROR')).toMatch(message);
    expect(res.headers['x-ratelimit-limit']).toBe('3');
  });

  it('a field over the multipart field size, too many fields, a repeated field', async () => {
    expect(expectError(await analyze(imageForm(jpeg, { vehicle: 'v'.repeat(5000) })), 400, 'VALIDATION_ERROR')).toMatch(/too long/);
    const many = form([...Array.from({ length: 11 }, () => ({ name: 'verbose', value: '1' })), { name: 'image', data: jpeg }]);
    expectError(await analyze(many), 400, 'VALIDATION_ERROR');
    const twice = form([
      { name: 'verbose', value: '1' },
      { name: 'verbose', value: '0' },
      { name: 'image', data: jpeg },
    ]);
    expect(expectError(await analyze(twice), 400, 'VALIDATION_ERROR')).toMatch(/more than once/);
  });

  it('an Idempotency-Key over 255 characters, empty, with a space or not ASCII: one rule, one message', async () => {
    for (const key of ['k'.repeat(256), '', 'RO 4711', 'RO-4711-Ü']) {
      const headers = { 'idempotency-key': key === 'RO-4711-Ü' ? Buffer.from(key).toString('latin1') : key };
      expect(expectError(await analyze(imageForm(jpeg), headers), 400, 'VALIDATION_ERROR')).toBe(
        'Idempotency-Key must be 1 to 255 visible ASCII characters (letters, digits, punctuation; no spaces), e.g. RO-4711-FL',
      );
    }
  });

  it('an Idempotency-Key header sent twice says so', async () => {
    const res = await analyze(imageForm(jpeg), { 'idempotency-key': ['RO-1', 'RO-2'] as unknown as string });
    expect(expectError(res, 400, 'VALIDATION_ERROR')).toBe('Send the Idempotency-Key header once (it was sent more than once)');
  });
});

describe('POST /api/v1/analyze metering and load on the wire', () => {
  afterEach(() => t.cleanup());

  it('the fourth anonymous scan of the day: 429 naming the limit, with Retry-After and headers', async () => {
    t = await httpTest();
    for (let i = 0; i < 3; i++) {
      expect((await analyze(imageForm(await makeJpeg({ width: 300, height: 256, shade: 60 + i * 20 })))).statusCode).toBe(200);
    }
    const res = await analyze(imageForm(await makeJpeg({ width: 300, height: 256, shade: 200 })));
    expect(expectError(res, 429, 'RATE_LIMIT_EXCEEDED')).toMatch(/3/);
    expect(res.headers['x-ratelimit-remaining']).toBe('0');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('the eleventh scan of a free account: 429 naming the monthly limit, web and key together', async () => {
    t = await httpTest();
    const { cookie } = await signIn(t.app);
    const key = await createKey(t.app, cookie);
    for (let i = 0; i < 10; i++) {
      const headers: Record<string, string> = i % 2 ? { cookie } : { 'x-api-key': key };
      const res = await analyze(imageForm(await makeJpeg({ width: 256, height: 256, shade: 40 + i * 15 })), headers);
      expect(res.statusCode).toBe(200);
    }
    const res = await analyze(imageForm(await makeJpeg({ width: 256, height: 256, shade: 250 })), { 'x-api-key': key });
    expect(expectError(res, 429, 'RATE_LIMIT_EXCEEDED')).toMatch(/Monthly scan limit of 10 reached for the free plan/);
    expect(res.headers).toMatchObject({ 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '0' });
  });

  it('beyond the analysis queue: 503 SERVER_BUSY with Retry-After', async () => {
    t = await httpTest({ config: { analysisConcurrency: 1, analysisQueueLimit: 0 } });
    const release = t.analyzer.hold();
    const running = analyze(imageForm(jpeg));
    await t.analyzer.started(1);
    const busy = await analyze(imageForm(await makeJpeg({ width: 300, height: 256, shade: 30 })));
    expectError(busy, 503, 'SERVER_BUSY');
    expect(Number(busy.headers['retry-after'])).toBeGreaterThan(0);
    release();
    expect((await running).statusCode).toBe(200);
  });

  it('a crash inside the analysis: 500 INTERNAL_ERROR that leaks nothing', async () => {
    t = await httpTest();
    t.analyzer.fail(() => new Error('ENOENT /home/shop/secret/models/tread.onnx'));
    const res = await analyze(imageForm(jpeg));
    expect(expectError(res, 500, 'INTERNAL_ERROR')).toBe('Internal server error');
    expect(res.body).not.toMatch(/secret|onnx|ENOENT|stack/);
  });
});
