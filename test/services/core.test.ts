import { afterEach, expect, test } from 'vitest';
import { createCore, housekeeping, modelLoadFailure } from '../../src/core/core.js';
import { AppError } from '../../src/core/errors.js';
import { createLogger } from '../../src/core/logger.js';
import { sha256Hex } from '../../src/core/services/support/ids.js';
import { testCore, type TestCore } from '../support/core.js';
import { accountCaller, anon, command } from './helpers.js';

let t: TestCore | null = null;
afterEach(async () => {
  await t?.cleanup();
  t = null;
});

test('close() closes the analyzer and the store once, however often it is called', async () => {
  t = await testCore();
  await Promise.all([t.core.close(), t.core.close()]);
  await t.core.close();
  expect(t.analyzer.closed).toBe(true);
  await expect(t.core.store.ping()).rejects.toThrow();
});

test('housekeeping drops crash-left holds, expired sessions and day-old idempotency records', async () => {
  t = await testCore();
  const { store } = t.core;
  const clock = t.clock;
  const caller = await accountCaller(t.core.services);
  const now = clock.now();
  await store.usage.reserve({
    id: 'left-by-a-crash',
    subject: 'ip:10.0.0.1',
    window: 'day:2026-11-21',
    limit: 3,
    packAccountId: null,
    unmetered: false,
    now,
  });
  await store.idempotency.begin({ callerKey: 'ip:10.0.0.1', key: 'k', requestHash: 'h', createdAt: now }, new Date(0));
  await store.sessions.create({ tokenHash: sha256Hex('old'), accountId: caller.account.id, createdAt: now, expiresAt: new Date(now.getTime() + 1000) });

  clock.advance(9 * 60_000);
  await housekeeping(t.core);
  expect((await store.usage.usage('ip:10.0.0.1', 'day:2026-11-21')).held).toBe(1);

  clock.advance(25 * 3600_000);
  await housekeeping(t.core);
  expect((await store.usage.usage('ip:10.0.0.1', 'day:2026-11-21')).held).toBe(0);
  expect(await store.sessions.find(sha256Hex('old'))).toBeNull();
  const again = await store.idempotency.begin({ callerKey: 'ip:10.0.0.1', key: 'k', requestHash: 'other', createdAt: clock.now() }, new Date(0));
  expect(again.claimed).toBe(true);
});

test('models that fail to load leave the server up, answering MODEL_UNAVAILABLE without charging', async () => {
  const base = await testCore();
  const config = { ...base.config, modelsDir: `${base.dataDir}/no-models-here` };
  await base.core.close();
  const core = await createCore(config, { clock: base.clock, logger: createLogger({ level: 'silent' }) });
  try {
    // with what to do about it (the models as installed are missing here)
    await expect(core.services.scans.analyze(await command(anon()))).rejects.toMatchObject({
      code: 'MODEL_UNAVAILABLE',
      message: expect.stringMatching(/Reinstall TireWear to restore the models that came with it\.$/),
    });
    expect(await core.store.usage.usage('ip:203.0.113.7', 'day:2026-11-21')).toEqual({ used: 0, held: 0 });
  } finally {
    await core.close();
    await base.cleanup();
  }
});

test('a model load failure tells the shop what to do, by cause', () => {
  const dlopen = Object.assign(new Error('\\\\?\\C:\\TireWear\\onnxruntime_binding.node: The specified module could not be found.'), {
    code: 'ERR_DLOPEN_FAILED',
  });
  expect(modelLoadFailure(dlopen, 'win32')).toMatch(/Visual C\+\+ 2015-2022 Redistributable \(x64\).*vc_redist\.x64\.exe.*restart TireWear/);
  expect(modelLoadFailure(dlopen, 'linux')).not.toMatch(/Visual C/);
  const linux = new Error('libonnxruntime.so.1: cannot open shared object file: No such file or directory');
  expect(modelLoadFailure(linux, 'linux')).toMatch(
    /^The analysis runtime could not be loaded \(libonnxruntime\.so\.1: cannot open shared object file.*reinstall TireWear/,
  );
  const corrupt = new AppError('MODEL_UNAVAILABLE', 'Model file tread.onnx does not match its manifest sha256.');
  expect(modelLoadFailure(corrupt, 'win32')).toBe(
    'Model file tread.onnx does not match its manifest sha256. Reinstall TireWear to restore the models that came with it.',
  );
  // a shop calibration, or a folder named in the environment: reinstalling would not help
  expect(modelLoadFailure(corrupt, 'win32', 'settings')).toMatch(/shop calibration: choose "Back to the models as shipped" in Settings/);
  expect(modelLoadFailure(corrupt, 'linux', 'env')).toMatch(/TIREWEAR_MODELS_DIR/);
  expect(modelLoadFailure(new Error('out of memory'), 'darwin')).toMatch(/server log says why/);
});
