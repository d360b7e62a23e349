import { afterEach, describe, expect, test } from 'vitest';
import { CSV_HEADER, csvCell, scansToCsv } from '../../../src/core/services/support/csv.js';
import { excelCsvFormat } from '../../../src/shared/csv-format.js';
import { makeScan } from '../../support/store.js';
import { testCore, type TestCore } from '../../support/core.js';
import { accountCaller, command } from '../helpers.js';

describe('csvCell', () => {
  test('quotes per RFC 4180', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell(null)).toBe('');
    expect(csvCell(4.5)).toBe('4.5');
  });

  test('neutralises spreadsheet formulas', () => {
    expect(csvCell('=HYPERLINK("http://evil","x")')).toBe(`"'=HYPERLINK(""http://evil"",""x"")"`);
    expect(csvCell('+1+1')).toBe("'+1+1");
    expect(csvCell('-2')).toBe("'-2");
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvCell('\tcmd')).toBe("'\tcmd");
    expect(csvCell('\rcmd')).toBe(`"'\rcmd"`);
  });
});

describe('export', () => {
  let t: TestCore;
  afterEach(() => t.cleanup());

  test('one row per live scan with the gauge reading, oldest first, only the caller’s', async () => {
    t = await testCore();
    const owner = await accountCaller(t.core.services);
    const other = await accountCaller(t.core.services);
    const first = (await t.core.services.scans.analyze(await command(owner, { vehicle: '=cmd|"/c calc"!A1', position: 'FL' }))).body.data.scanId;
    t.clock.advance(60_000);
    const second = (await t.core.services.scans.analyze(await command(owner, { vehicle: 'Golf, blue' }))).body.data.scanId;
    await t.core.services.scans.analyze(await command(other, { vehicle: 'not mine' }));
    await t.core.services.scans.setMeasurement(owner, second, 3.4);

    const csv = await t.core.services.scans.exportCsv(owner, {});
    const lines = csv.split('\r\n');
    expect(lines[0]).toBe(CSV_HEADER.join(','));
    expect(lines[0]).toBe(
      'scanId,createdAt,vehicle,position,wear,estimatedDepthMm,depthMinMm,depthMaxMm,confidence,modelVersion,measurementMm,depthOfRecordMm,isPreliminary,measuredAt,preliminaryReasons',
    );
    expect(lines).toHaveLength(4);
    expect(lines[3]).toBe('');
    expect(lines[1]).toMatch(new RegExp(`^${first},2026-11-21T12:00:00.000Z,"'=cmd\\|""/c calc""!A1",FL,`));
    expect(lines[2]).toMatch(new RegExp(`^${second},2026-11-21T12:01:00.000Z,"Golf, blue",,`));
    // the gauge reading is the depth of record, and a measured scan is not preliminary
    expect(lines[2]).toMatch(/,3\.4,3\.4,false,2026-11-21T12:01:00\.000Z,$/);
    // without one: the estimate, preliminary as analysed
    const estimate = (await t.core.store.scans.get(first))!.result;
    expect(lines[1]).toMatch(
      new RegExp(`,${estimate.modelVersion},,${estimate.estimatedDepthMm},${estimate.isPreliminary},,${(estimate.preliminaryReasons ?? []).join(' ')}$`),
    );
    expect(csv).not.toContain('not mine');

    const filtered = await t.core.services.scans.exportCsv(owner, { vehicle: 'golf' });
    expect(filtered.split('\r\n')).toHaveLength(3);
  });
});

describe('formats for Excel', () => {
  const scan = { ...makeScan(), vehicle: 'Müller; Golf', measurementMm: 4.25 };
  scan.result = { ...scan.result, estimatedDepthMm: 4.2, confidence: 0.83 };

  test('csv: RFC 4180 as before, no byte-order mark; excel: the same behind one', () => {
    const plain = scansToCsv([scan]);
    expect(plain.startsWith('scanId,createdAt,')).toBe(true);
    expect(plain).toContain(',Müller; Golf,');
    expect(plain).toContain(',4.2,');
    expect(scansToCsv([scan], 'excel')).toBe(`\uFEFF${plain}`);
  });

  test('excel-semicolon: semicolons, decimal commas, a cell holding a semicolon quoted, formulas still text', () => {
    const text = scansToCsv([{ ...scan, vehicle: '=1+1;x' }, scan], 'excel-semicolon');
    expect(text.startsWith('\uFEFFscanId;createdAt;vehicle;')).toBe(true);
    const [, first, second] = text.slice(1).split('\r\n');
    expect(first).toContain(`;"'=1+1;x";`);
    expect(second).toContain(';"Müller; Golf";');
    expect(second).toContain(';4,2;');
    expect(second).toContain(';0,83;');
    expect(second).toContain(';4,25;');
    expect(second).not.toMatch(/;\d+\.\d+;/);
    const plainRow = scansToCsv([{ ...scan, vehicle: 'Golf' }], 'excel-semicolon').split('\r\n')[1]!;
    expect(plainRow.split(';')).toHaveLength(CSV_HEADER.length);
  });

  test('says why an estimate is preliminary, and nothing once the tire is measured', () => {
    const base = makeScan({});
    const preliminary = {
      ...base,
      measurementMm: null,
      result: { ...base.result, isPreliminary: true, preliminaryReasons: ['models_disagree' as const, 'unlike_training_photos' as const] },
    };
    const [, row] = scansToCsv([preliminary]).split('\r\n');
    expect(row).toMatch(/,true,,models_disagree unlike_training_photos$/);
    const [, measured] = scansToCsv([{ ...preliminary, measurementMm: 4.1, measuredAt: new Date('2026-11-21T12:00:00Z') }]).split('\r\n');
    expect(measured).toMatch(/,4\.1,false,2026-11-21T12:00:00\.000Z,$/);
    // a scan stored before the reasons were written: an empty cell
    const { preliminaryReasons: _none, ...older } = preliminary.result;
    expect(scansToCsv([{ ...preliminary, result: older }]).split('\r\n')[1]).toMatch(/,true,,$/);
  });

  test('the counter picks the dialect of the computer’s number format', () => {
    expect(excelCsvFormat('en-US')).toBe('excel');
    expect(excelCsvFormat('en-GB')).toBe('excel');
    expect(excelCsvFormat('de-DE')).toBe('excel-semicolon');
    expect(excelCsvFormat('fr-FR')).toBe('excel-semicolon');
  });
});
