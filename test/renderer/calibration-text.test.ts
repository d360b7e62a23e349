/** What the Settings panel says of a running calibration, phase by phase (CalibrationPanel's runningText). */
import { expect, it } from 'vitest';
import { runningText } from '../../src/renderer/src/components/CalibrationPanel';

it('follows the job from the photos to the fit to the models', () => {
  const job = { state: 'running' as const, startedAt: '2026-11-29T09:00:00Z', total: 52 };
  expect(runningText({ ...job, phase: 'reading', done: 0 })).toBe('Reading photo 1 of 52…');
  expect(runningText({ ...job, phase: 'reading', done: 51 })).toBe('Reading photo 52 of 52…');
  expect(runningText({ ...job, phase: 'fitting', done: 52 })).toBe('All 52 photos read; fitting…');
  expect(runningText({ ...job, phase: 'writing', done: 52 })).toBe('Fitted; writing and loading the calibrated models…');
  // a phase of a later server this panel does not know: by the count, as before
  expect(runningText({ ...job, phase: 'checking' as never, done: 52 })).toBe('All 52 photos read; fitting…');
});
