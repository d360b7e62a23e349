/** src/shared/gauge.ts and src/shared/vehicle.ts: what the counter types, read one way everywhere. */
import { describe, expect, it } from 'vitest';
import { parseGaugeInput } from '../../src/shared/gauge.js';
import { whole32nds, wearForDepth } from '../../src/shared/units.js';
import { vehicleKey } from '../../src/shared/vehicle.js';

describe('parseGaugeInput, 32nds', () => {
  it('takes 4, 4/32, 4/32", 4/32″ and the other ways an inch mark is typed', () => {
    for (const text of [
      '4',
      '4/32',
      '4/32"',
      '4/32″',
      '4/32”',
      '4/32“',
      "4/32''",
      '4/32in',
      '4/32 in.',
      '4 / 32 ″',
      ' 4/32"  ',
      '4"',
      '４/３２＂',
      '4/32 inches',
    ]) {
      expect(parseGaugeInput(text, '32nds'), text).toEqual({ ok: true, mm: 3.2 });
    }
  });

  it('comes back as typed: the mm sent gives the same whole 32nds and its band', () => {
    for (let n = 0; n <= 20; n++) {
      const parsed = parseGaugeInput(`${n}/32"`, '32nds');
      expect(parsed.ok).toBe(true);
      if (parsed.ok) expect(whole32nds(parsed.mm), `${n}/32`).toBe(n);
    }
    const two = parseGaugeInput('2/32', '32nds');
    expect(two.ok && wearForDepth(two.mm)).toBe('worn');
  });

  it('2/32″ is on the legal line (1.6 mm), not under it; refuses the rest with a reason', () => {
    expect(parseGaugeInput('2/32', '32nds')).toEqual({ ok: true, mm: 1.6 });
    expect(parseGaugeInput('0', '32nds')).toEqual({ ok: true, mm: 0 });
    for (const text of [
      '',
      '  ',
      '4.5/32',
      '4,5',
      '4.3/32',
      '4/16',
      '4 mm',
      'four',
      '-4',
      '4/32/32',
      '1e1',
      '39/32"'.replace('39', '99'),
      '4'.repeat(40),
      '<script>',
    ]) {
      const parsed = parseGaugeInput(text, '32nds');
      expect(parsed.ok, text).toBe(false);
      if (!parsed.ok) expect(parsed.reason).toEqual(expect.any(String));
    }
  });
});

describe('parseGaugeInput, mm', () => {
  it('takes 4.2, 4,2, 4.2mm, 4.2 mm; rounds to 2 decimals; refuses 32nds and nonsense', () => {
    for (const text of ['4.2', '4,2', '4.2mm', '4.2 MM', ' 4.20 ']) expect(parseGaugeInput(text, 'mm'), text).toEqual({ ok: true, mm: 4.2 });
    expect(parseGaugeInput('0', 'mm')).toEqual({ ok: true, mm: 0 });
    expect(parseGaugeInput('30', 'mm')).toEqual({ ok: true, mm: 30 });
    for (const text of ['31', '4/32', '4.123', 'NaN', 'Infinity', '4.2.1', '-1']) expect(parseGaugeInput(text, 'mm').ok, text).toBe(false);
  });
});

describe('vehicleKey', () => {
  it('one key for a plate however it is typed', () => {
    for (const text of ['KA TW 204', 'ka-tw-204', 'KA.TW.204', ' Ka/Tw_204 ', 'ＫＡ－ＴＷ－２０４', 'KA\u00A0TW\u2013204'])
      expect(vehicleKey(text), text).toBe('KATW204');
  });

  it('keeps letters of any script and their marks; null for nothing to key', () => {
    expect(vehicleKey('München M-ÄB 12')).toBe('MÜNCHENMÄB12');
    expect(vehicleKey('Straße 1')).toBe('STRASSE1');
    expect(vehicleKey('दिल्ली 12')).toBe('दिल्ली12');
    expect(vehicleKey(null)).toBeNull();
    expect(vehicleKey('')).toBeNull();
    expect(vehicleKey('--- / ...')).toBeNull();
    expect(vehicleKey('🚗')).toBeNull();
  });
});
