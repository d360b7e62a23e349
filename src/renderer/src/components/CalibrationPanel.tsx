/**
 * Settings → calibrate the tread models to this shop's tire gauge (GET/POST/DELETE /calibration):
 * how many scans carry a gauge reading, a button that fits a correction on them (read again
 * every second while it runs), what cross-validation measured, and the way back to the models
 * as shipped. Applied at once: no restart.
 */
import { useEffect, useRef, useState } from 'react';
import type { CalibrationFigures, CalibrationStatus } from '../../../shared/api';
import { api } from '../api/client';
import { useSession } from '../hooks/useSession';
import { formatDate, formatError, type Units } from '../lib/format';
import { ErrorMessage } from './ErrorMessage';
import { BusyButton } from './BusyButton';

export const CALIBRATION_POLL_MS = 1000;

const pct = (x: number) => `${Math.round(x * 100)} %`;

type RunningJob = Extract<NonNullable<CalibrationStatus['job']>, { state: 'running' }>;

/** What a running calibration is doing, as the status gives it (docs/API.md §6). */
export function runningText(job: RunningJob): string {
  if (job.phase === 'writing') return 'Fitted; writing and loading the calibrated models…';
  if (job.phase === 'fitting' || job.done >= job.total) return `All ${job.total} photos read; fitting…`;
  return `Reading photo ${job.done + 1} of ${job.total}…`;
}

/** `calibrated`: the second column's heading (a reader of the shop's own, or the correction). */
function FiguresTable({ before, after, units, calibrated }: { before: CalibrationFigures; after: CalibrationFigures; units: Units; calibrated: string }) {
  const rows: Array<[string, (f: CalibrationFigures) => string]> = [
    ['Mean error against the gauge', (f) => formatError(f.mae, units)],
    ['Within 1 mm of the gauge', (f) => pct(f.within1mm)],
    ['Wear class right', (f) => pct(f.wearAccuracy)],
    ['Gauge inside the 80 % range', (f) => pct(f.coverage)],
  ];
  return (
    <div className="table-scroll">
      <table className="calibration-figures">
        <caption className="muted small">On your photos, each read with a correction fitted without it (5-fold cross-validation)</caption>
        <thead>
          <tr>
            <th scope="col" />
            <th scope="col">As shipped</th>
            <th scope="col">{calibrated}</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(([label, show]) => (
            <tr key={label}>
              <th scope="row">{label}</th>
              <td>{show(before)}</td>
              <td>{show(after)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function CalibrationPanel() {
  const { units } = useSession().prefs;
  const mm = (x: number) => formatError(x, units);
  const [status, setStatus] = useState<CalibrationStatus | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState<'start' | 'revert' | null>(null);
  const running = status?.job?.state === 'running';

  /**
   * What a screen reader is told: the job starting and how it ended, once each, in one region that
   * is always there; not every photo read (the progress line changes each second) nor a job that
   * had ended before the panel opened.
   */
  const [announced, setAnnounced] = useState('');
  const lastState = useRef<string | null | undefined>(undefined);
  useEffect(() => {
    if (!status) return;
    const job = status.job;
    const state = job?.state ?? null;
    if (lastState.current !== undefined && state !== lastState.current && job) {
      setAnnounced(job.state === 'running' ? `Calibration started: reading ${job.total} photos.` : job.message);
    }
    lastState.current = state;
  }, [status]);

  /** Bumped by "Try again" after the first read failed. */
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    let stopped = false;
    api.calibration().then(
      (s) => {
        if (stopped) return;
        setStatus(s);
        setError(null);
      },
      (err) => !stopped && setError(err),
    );
    return () => {
      stopped = true;
    };
  }, [attempt]);

  /** Bumped when a read fails, so a passing network hiccup does not stop the polling. */
  const [retries, setRetries] = useState(0);

  // while a calibration runs: read the status again each second, until it has finished
  useEffect(() => {
    if (!running) return;
    const timer = window.setTimeout(() => {
      api.calibration().then(
        (next) => {
          setStatus(next);
          setError(null);
        },
        (err) => {
          setError(err);
          setRetries((n) => n + 1);
        },
      );
    }, CALIBRATION_POLL_MS);
    return () => window.clearTimeout(timer);
  }, [running, status, retries]);

  async function act(kind: 'start' | 'revert', action: () => Promise<CalibrationStatus>) {
    setBusy(kind);
    setError(null);
    try {
      setStatus(await action());
    } catch (err) {
      setError(err);
      // e.g. CONFLICT because a calibration was started elsewhere: show (and follow) what runs now
      api.calibration().then(setStatus, () => undefined);
    } finally {
      setBusy(null);
    }
  }

  if (!status) {
    return (
      <div className="panel sync-panel" role="region" aria-labelledby="calibration-title">
        <h3 id="calibration-title">Calibrate to your tire gauge</h3>
        {error ? (
          <>
            <ErrorMessage error={error} />
            <button type="button" className="secondary" onClick={() => setAttempt((n) => n + 1)}>
              Try again
            </button>
          </>
        ) : (
          <p>Loading…</p>
        )}
      </div>
    );
  }

  const { job, active } = status;
  const enough = status.measuredScans >= status.minimumScans;
  return (
    <div className="panel sync-panel" role="region" aria-labelledby="calibration-title">
      <h3 id="calibration-title">Calibrate to your tire gauge</h3>
      <p className="muted small">
        Measure tires with your depth gauge and enter the reading on the scan's page. With {status.minimumScans} or more readings (a few hundred give a steadier
        result), TireWear can correct its estimates to your photos and your gauge; with 50 or more it can also learn to read your photos itself. A correction is
        kept only when it proves better on photos it was not fitted on.
      </p>
      <dl>
        <dt>Tread model in use</dt>
        <dd data-testid="calibration-model">{status.modelVersion}</dd>
        <dt>Scans with a gauge reading</dt>
        <dd data-testid="calibration-measured">
          {status.measuredScans}
          {!enough && ` (${status.minimumScans - status.measuredScans} more needed)`}
        </dd>
        {active && (
          <>
            <dt>Calibration</dt>
            <dd>
              Made {formatDate(active.created)} on {active.tires} tires{active.reader ? ', a reader of your own' : ''}: mean error{' '}
              {mm(active.crossValidated.before.mae)} → {mm(active.crossValidated.after.mae)}
            </dd>
          </>
        )}
      </dl>
      {status.byModel.length > 0 && (
        <div className="table-scroll">
          <table className="calibration-figures" aria-label="How the models read your tires">
            <caption className="muted small">How the models read your tires: each scan's estimate against its gauge reading</caption>
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col">Tires</th>
                <th scope="col">Mean error</th>
                <th scope="col">Within 1 mm</th>
                <th scope="col">Wear class right</th>
              </tr>
            </thead>
            <tbody>
              {status.byModel.map((m) => (
                <tr key={m.modelVersion}>
                  <th scope="row">{m.modelVersion}</th>
                  <td>{m.scans}</td>
                  <td>{mm(m.mae)}</td>
                  <td>{pct(m.within1mm)}</td>
                  <td>{pct(m.wearAccuracy)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {status.blockedBy && <p className="message message-warn">{status.blockedBy}</p>}
      {status.canRevert && (!active || status.modelVersion === 'unavailable') && (
        <p className="message message-warn">
          The models in use are not the ones that came with the app{status.modelVersion === 'unavailable' ? ' and did not load' : ''}: they are named by
          modelsDir in the data folder's settings.json.
        </p>
      )}
      <p className="sr-only" aria-live="polite" data-testid="calibration-announcement">
        {announced}
      </p>
      {job?.state === 'running' && (
        <div>
          {/* every photo read: the fit runs (a reader of 1 500 readings takes about 20 s), then the models are written and loaded */}
          <p>{runningText(job)}</p>
          <progress max={job.total} value={job.done} aria-label="Calibration progress" />
        </div>
      )}
      {job && job.state !== 'running' && (
        <div>
          <p className={`message ${job.state === 'failed' ? 'message-error' : job.state === 'applied' ? 'message-ok' : 'message-warn'}`}>
            {job.message}
            {Object.keys(job.skipped).length > 0 && ` ${Object.values(job.skipped).reduce((a, b) => a + b, 0)} photo(s) could not be read and were left out.`}
          </p>
          {job.fit && (
            <>
              <FiguresTable before={job.fit.before} after={job.fit.after} units={units} calibrated={job.fit.readerApplied ? 'Your own reader' : 'Calibrated'} />
              <ul className="muted small">
                {job.fit.reasons.map((reason) => (
                  <li key={reason}>{reason}</li>
                ))}
              </ul>
            </>
          )}
        </div>
      )}
      <ErrorMessage error={error} />
      <div className="row">
        <BusyButton
          type="button"
          busy={busy !== null || running || !enough || status.blockedBy !== null}
          onClick={() => void act('start', api.startCalibration)}
        >
          {busy === 'start' || running ? 'Calibrating…' : active ? 'Calibrate again' : 'Calibrate now'}
        </BusyButton>
        {status.canRevert && (
          <BusyButton
            type="button"
            className="secondary"
            busy={busy !== null || running || status.blockedBy !== null}
            onClick={() => void act('revert', api.revertCalibration)}
          >
            {busy === 'revert' ? 'Switching back…' : 'Back to the models as shipped'}
          </BusyButton>
        )}
      </div>
    </div>
  );
}
