import { afterEach, expect, it, vi } from 'vitest';
import { sleepSync } from '../../src/core/sleep-sync.js';

afterEach(() => vi.restoreAllMocks());

it('blocks for about the time asked, with Atomics.wait or, where a thread refuses it, a spin', () => {
  let started = performance.now();
  sleepSync(30);
  expect(performance.now() - started).toBeGreaterThanOrEqual(25);

  const wait = vi.spyOn(Atomics, 'wait').mockImplementation(() => {
    throw new TypeError('Atomics.wait cannot be called in this context');
  });
  started = performance.now();
  sleepSync(30);
  expect(wait).toHaveBeenCalled();
  expect(performance.now() - started).toBeGreaterThanOrEqual(25);
});
