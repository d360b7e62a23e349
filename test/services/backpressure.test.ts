import { afterEach, expect, test } from 'vitest';
import { AnalysisQueue } from '../../src/core/services/support/analysis-queue.js';
import { testCore, type TestCore } from '../support/core.js';
import { accountCaller, command, expectAppError } from './helpers.js';

let t: TestCore | null = null;
afterEach(async () => {
  await t?.cleanup();
  t = null;
});

async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 2000 && !(await check()); i++) await new Promise((r) => setTimeout(r, 5));
}

test('beyond the running and waiting slots, analyze answers SERVER_BUSY and charges nothing', async () => {
  t = await testCore({ config: { analysisConcurrency: 1, analysisQueueLimit: 1 } });
  const caller = await accountCaller(t.core.services);
  const usage = () => t!.core.store.usage.usage(`acct:${caller.account.id}`, 'month:2026-11');
  const release = t.analyzer.hold();
  const running = t.core.services.scans.analyze(await command(caller));
  const waiting = t.core.services.scans.analyze(await command(caller));
  await until(async () => (await usage()).held === 2);

  const busy = await expectAppError(t.core.services.scans.analyze(await command(caller)), 'SERVER_BUSY');
  expect(Number(busy.headers['Retry-After'])).toBeGreaterThanOrEqual(1);
  expect(busy.headers['X-RateLimit-Remaining']).toBe('8');
  expect((await usage()).held).toBe(2);

  release();
  await Promise.all([running, waiting]);
  expect(await usage()).toEqual({ used: 2, held: 0 });
});

test('the queue runs at most `concurrency` tasks and hands slots to waiters in order', async () => {
  const queue = new AnalysisQueue(2, 10);
  let active = 0;
  let peak = 0;
  const order: number[] = [];
  await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      queue.run(async () => {
        active++;
        peak = Math.max(peak, active);
        await new Promise((r) => setTimeout(r, 2));
        order.push(i);
        active--;
      }),
    ),
  );
  expect(peak).toBe(2);
  expect(order).toHaveLength(8);
  expect(queue.stats).toEqual({ running: 0, waiting: 0, background: 0 });
});

test('a failing task frees its slot', async () => {
  const queue = new AnalysisQueue(1, 0);
  await expect(queue.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
  await expect(queue.run(async () => 42)).resolves.toBe(42);
});

test('background work waits for a slot however full the queue is, after every request waiting', async () => {
  const queue = new AnalysisQueue(1, 1);
  const order: string[] = [];
  let release!: () => void;
  const first = queue.run(() => new Promise<void>((resolve) => (release = resolve)));
  const background = [queue.runBackground(async () => void order.push('background 1')), queue.runBackground(async () => void order.push('background 2'))];
  const waiting = queue.run(async () => void order.push('request'));
  // the waiting room (1) is full: a request is refused, background work is not
  await expect(queue.run(async () => undefined)).rejects.toMatchObject({ code: 'SERVER_BUSY' });
  expect(queue.stats).toEqual({ running: 1, waiting: 1, background: 2 });
  release();
  await Promise.all([first, waiting, ...background]);
  expect(order).toEqual(['request', 'background 1', 'background 2']);
  expect(queue.stats).toEqual({ running: 0, waiting: 0, background: 0 });
  // with a free slot, background work starts at once
  await expect(queue.runBackground(async () => 7)).resolves.toBe(7);
});
