/** SwappableAnalyzer passes the scene reader of the models in use on (the live capture check, issue 42). */
import { describe, expect, it } from 'vitest';
import { SwappableAnalyzer } from '../../src/core/analysis/swappable.js';
import { FakeAnalyzer } from '../support/fake-analyzer.js';

describe('SwappableAnalyzer.scene', () => {
  it('is the current models’ scene reader, or undefined when they have none', async () => {
    const first = new FakeAnalyzer();
    first.setScene('no_tire');
    const swappable = new SwappableAnalyzer(first);
    expect((await swappable.scene!({ image: Buffer.alloc(1), verbose: false })).scene).toBe('no_tire');
    const without = new FakeAnalyzer();
    without.withoutSceneReader();
    swappable.swap(without);
    expect(swappable.scene).toBeUndefined();
    await swappable.close();
  });

  it('holds the models while a scene reading runs: a swap closes them only after it', async () => {
    const first = new FakeAnalyzer();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const inner = first.scene!;
    first.scene = async (request) => {
      await gate;
      return inner(request);
    };
    const swappable = new SwappableAnalyzer(first);
    const reading = swappable.scene!({ image: Buffer.alloc(1), verbose: false });
    swappable.swap(new FakeAnalyzer());
    await Promise.resolve();
    expect(first.closed).toBe(false);
    release();
    expect((await reading).scene).toBe('tread');
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(first.closed).toBe(true);
    await swappable.close();
  });
});
