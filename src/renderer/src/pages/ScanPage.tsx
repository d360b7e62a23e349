/** The counter screen: vehicle and position, then photos by drop, picker, paste or webcam. */
import { useCallback, useId, useState } from 'react';
import type { WirePosition } from '../../../shared/api';
import { CameraCapture } from '../components/CameraCapture';
import { DropZone } from '../components/DropZone';
import { QueueCard } from '../components/QueueCard';
import { useScanQueue, type QueueItem } from '../hooks/useScanQueue';
import { useSession } from '../hooks/useSession';
import { POSITIONS, POSITION_LABEL, WEAR_LABEL, formatDate, formatMm } from '../lib/format';
import type { ScanView } from '../lib/scanView';

/** The server's remaining count includes pack credit, which can exceed the monthly limit. */
function allowanceText(limit: number | null, remaining: number | null, signedIn: boolean): string {
  if (remaining === null) return 'Unlimited scans (Pro).';
  if (!signedIn) return `${remaining} of ${limit ?? 3} scans left today (demo)`;
  if (limit !== null && remaining > limit) return `${remaining} scans left (this month's free scans plus pack credit)`;
  return `${remaining} of ${limit ?? '?'} scans left this month`;
}

/** One short line for screen readers instead of re-reading whole cards. */
function announcement(items: QueueItem[]): string {
  const latest = items.find((item) => item.status === 'done' || item.status === 'failed');
  if (!latest) return '';
  if (latest.status === 'failed') return `${latest.name} failed.`;
  const r = latest.view?.result;
  return r ? `${latest.name}: ${WEAR_LABEL[r.wear]}, ${formatMm(r.estimatedDepthMm)}.` : '';
}

interface Props {
  /** False while another page is shown: the page keeps its queue but ignores pastes. */
  active: boolean;
  onReport: (scans: ScanView[]) => void;
}

export function ScanPage({ active, onReport }: Props) {
  const { state, account, refresh } = useSession();
  const onAnalysed = useCallback(() => {
    if (state === 'signed-in') void refresh();
  }, [state, refresh]);
  const queue = useScanQueue(onAnalysed);
  const [vehicle, setVehicle] = useState('');
  const [position, setPosition] = useState<WirePosition | ''>('');
  const [camera, setCamera] = useState(false);
  const vehicleId = useId();
  const positionId = useId();

  const { add } = queue;
  const addFiles = useCallback((files: File[]) => add(files, vehicle, position), [add, vehicle, position]);
  // Newest first: the report is for the car scanned last.
  const done = queue.items.flatMap((item) => (item.status === 'done' && item.view ? [item.view] : []));
  const { allowance, packCredit } = account ?? { allowance: null, packCredit: 0 };
  const limit =
    queue.rateLimit ??
    (allowance && {
      limit: allowance.limit,
      remaining: allowance.remaining === null ? null : allowance.remaining + packCredit,
      resetAt: new Date(allowance.resetAt),
    });

  return (
    <section aria-labelledby="scan-title">
      <h2 id="scan-title">Scan tires</h2>
      <div className="scan-fields">
        <div className="field">
          <label htmlFor={vehicleId}>Vehicle / plate</label>
          <input id={vehicleId} value={vehicle} maxLength={64} onChange={(e) => setVehicle(e.target.value)} placeholder="e.g. AB-123-CD" autoComplete="off" />
        </div>
        <div className="field">
          <label htmlFor={positionId}>Tire position</label>
          <select id={positionId} value={position} onChange={(e) => setPosition(e.target.value as WirePosition | '')}>
            <option value="">Not set</option>
            {POSITIONS.map((p) => (
              <option key={p} value={p}>
                {POSITION_LABEL[p]} ({p})
              </option>
            ))}
          </select>
        </div>
        <div className="field field-actions">
          <button type="button" className="secondary" onClick={() => setCamera((c) => !c)} aria-pressed={camera}>
            {camera ? 'Hide camera' : 'Use webcam'}
          </button>
          <button type="button" className="secondary" disabled={done.length === 0} onClick={() => onReport(done.filter((view) => view.vehicle === done[0]?.vehicle))}>
            Customer report
          </button>
        </div>
      </div>
      {/* Unmounted while another page shows, so the camera (and its light) turns off. */}
      {camera && active && <CameraCapture onCapture={(file) => addFiles([file])} />}
      <DropZone onFiles={addFiles} listenToPaste={active} compact={queue.items.length > 0} />
      {limit && (
        <p className="allowance" role="status">
          {allowanceText(limit.limit, limit.remaining, state === 'signed-in')}
          {limit.remaining !== null && limit.resetAt && ` · renews ${formatDate(limit.resetAt)}`}
        </p>
      )}
      <p className="sr-only" role="status">
        {announcement(queue.items)}
      </p>
      <div className="results">
        {queue.items.map((item) => (
          <QueueCard
            key={item.id}
            item={item}
            onRemove={() => queue.remove(item.id)}
            onRetry={() => queue.retry(item.id)}
            onMeasured={(mm) => queue.setMeasurement(item.id, mm)}
          />
        ))}
      </div>
    </section>
  );
}
