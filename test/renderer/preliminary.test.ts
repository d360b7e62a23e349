/** Why a result is preliminary, in the counter's words (src/renderer/src/lib/preliminary.ts, docs/API.md §2). */
import { expect, it } from 'vitest';
import type { WireResult } from '../../src/shared/api';
import { preliminarySentences } from '../../src/renderer/src/lib/preliminary';

const base: WireResult = {
  wear: 'good',
  confidence: 0.5,
  estimatedDepthMm: 5,
  depthRangeMm: { min: 4, max: 6 },
  treadHealthIndex: 53,
  isPreliminary: true,
  modelAlignment: 64,
  twiConsensusCount: 0,
  processingTimeMs: 50,
  modelVersion: 'test',
  disclaimer: '',
  depth32nds: 6,
};

it('gives one sentence per reason, in the order the server gave them', () => {
  expect(preliminarySentences({ ...base, preliminaryReasons: ['models_disagree', 'tread_barely_visible'] })).toEqual([
    'The models disagree (alignment 64%).',
    'Little of the photo shows tread the models can read.',
  ]);
  expect(preliminarySentences({ ...base, modelAlignment: 90, preliminaryReasons: ['unlike_training_photos'] })).toEqual([
    'It is a kind of photo the models did not learn wear from, such as a close-up of the tread.',
  ]);
  // a shop's reader: the photo is unlike the shop's, whatever the alignment says
  const shop = preliminarySentences({ ...base, modelAlignment: 40, preliminaryReasons: ['unlike_shop_photos'] });
  expect(shop).toEqual(["It is unlike the photos your shop's own reader learned from (your gauge readings)."]);
  expect(shop.join(' ')).not.toContain('disagree');
});

it('infers the sentence from the alignment for a scan stored before the reasons, or with none it knows', () => {
  expect(preliminarySentences(base)).toEqual(['The models disagree (alignment 64%).']);
  expect(preliminarySentences({ ...base, modelAlignment: 80 })[0]).toMatch(/^The models cannot read this photo well/);
  // a reason of a later version this one does not know: as if none were given
  expect(preliminarySentences({ ...base, modelAlignment: 80, preliminaryReasons: ['a_later_reason' as never] })[0]).toMatch(
    /^The models cannot read this photo well/,
  );
  expect(preliminarySentences({ ...base, preliminaryReasons: [] })).toEqual(['The models disagree (alignment 64%).']);
  // nor is a name every object has (a stored value is data, not a key into the code)
  for (const odd of ['constructor', 'toString', '__proto__']) {
    expect(preliminarySentences({ ...base, modelAlignment: 80, preliminaryReasons: [odd as never] })[0]).toMatch(/^The models cannot read this photo well/);
  }
});
