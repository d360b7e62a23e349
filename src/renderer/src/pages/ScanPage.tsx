/** The counter screen: vehicle and position, then photos by drop, picker, paste or webcam. */
import { useCallback, useEffect, useId, useRef, useState } from 'react';
import type { AccountData, WirePosition } from '../../../shared/api';
import type { RateLimitInfo } from '../api/client';
import { CameraCapture } from '../components/CameraCapture';
import { DropZone } from '../components/DropZone';
import { QueueCard } from '../components/QueueCard';
import { useScanQueue, type QueueItem } from '../hooks/useScanQueue';
import { useSession } from '../hooks/useSession';
import { POSITIONS, POSITION_LABEL, WEAR_LABEL, formatDate, formatIn, type Units } from '../lib/format';
import type { ScanView } from '../lib/scanView';

/**
 * The allowance line. Signed in: the account as the Account page shows it (read again after
 * each scan and each redeemed code), the month's free scans with their renewal and the pack
 * scans, which never renew or expire. Demo: the last analyze answer's headers, if any yet.
 */
function allowanceText(account: AccountData | null, demo: RateLimitInfo | null, signedIn: boolean): string | null {
  if (signedIn) {
    if (!account) return null;
    const { allowance, packCredit } = account;
    if (allowance.limit === null || allowance.remaining === null) return 'Unlimited scans (Pro).';
    const free = `${allowance.remaining} of ${allowance.limit} free scans left this month (renews ${formatDate(allowance.resetAt)})`;
    return packCredit > 0 ? `${free} · ${packCredit} pack scans left (they never expire)` : free;
  }
  if (!demo || demo.remaining === null) return 'Demo without an account: 3 scans a day.';
  return `${demo.remaining} of ${demo.limit ?? 3} scans left today (demo)${demo.resetAt ? ` · renews ${formatDate(demo.resetAt)}` : ''}`;
}

/** One short line for screen readers about a photo that has just finished, instead of re-reading whole cards. */
function finishedLine(item: QueueItem, units: Units): string {
  if (item.status === 'failed') return `${item.name} failed.`;
  const r = item.view?.result;
  return r ? `${item.name}: ${WEAR_LABEL[r.wear]}, ${formatIn(r.estimatedDepthMm, units)}.` : '';
}

/**
 * What the status line says: photos added (so a drop is not silent until the first result) and each
 * photo as it finishes, once. Only news: hiding a card never announces an older result again.
 */
function useQueueAnnouncement(items: QueueItem[], units: Units): string {
  const [line, setLine] = useState('');
  const seen = useRef(new Set<number>());
  const finished = useRef(new Set<number>());
  useEffect(() => {
    const added = items.filter((item) => !seen.current.has(item.id));
    added.forEach((item) => seen.current.add(item.id));
    const done = items.filter((item) => (item.status === 'done' || item.status === 'failed') && !finished.current.has(item.id));
    done.forEach((item) => finished.current.add(item.id));
    const news = [
      ...(added.length > 0 && done.length < added.length ? [added.length === 1 ? `${added[0]!.name} added, analyzing.` : `${added.length} photos added, analyzing.`] : []),
      ...done.map((item) => finishedLine(item, units)).filter(Boolean),
    ];
    if (news.length > 0) setLine(news.join(' '));
  }, [items, units]);
  return line;
}

function cardOf(id: number): HTMLElement | null {
  return document.querySelector<HTMLElement>(`.results [data-queue-id="${id}"]`);
}

interface Props {
  /** False while another page is shown: the page keeps its queue but ignores pastes. */
  active: boolean;
  onReport: (scans: ScanView[]) => void;
}

export function ScanPage({ active, onReport }: Props) {
  const { state, account, prefs, refresh, confirmSession, sessionEnded } = useSession();
  const signedIn = state === 'signed-in';
  const onAnalysed = useCallback(() => {
    if (signedIn) void refresh();
  }, [signedIn, refresh]);
  const queue = useScanQueue({ onAnalysed, signedIn, confirmSession, onSessionEnded: sessionEnded });
  const [vehicle, setVehicle] = useState('');
  const [position, setPosition] = useState<WirePosition | ''>('');
  const [camera, setCamera] = useState(false);
  const vehicleId = useId();
  const positionId = useId();
  /** A webcam photo whose result is scrolled into view when it is ready (the camera pushes it below the fold). */
  const follow = useRef<number | null>(null);
  /** Where keyboard focus goes once a hidden or removed card has left the page. */
  const focusAfterRemove = useRef<number | 'drop-zone' | null>(null);

  const { add, items } = queue;
  const announced = useQueueAnnouncement(items, prefs.units);
  const addFiles = useCallback((files: File[]) => add(files, vehicle, position), [add, vehicle, position]);
  const fromCamera = useCallback((file: File) => {
    follow.current = addFiles([file])[0] ?? null;
  }, [addFiles]);
  // Newest first: the report is for the car scanned last.
  const done = items.flatMap((item) => (item.status === 'done' && item.view ? [item.view] : []));
  const allowance = allowanceText(account, queue.rateLimit, signedIn);

  useEffect(() => {
    const id = follow.current;
    const item = id === null ? undefined : items.find((i) => i.id === id);
    if (!item || (item.status !== 'done' && item.status !== 'failed')) return;
    follow.current = null;
    cardOf(item.id)?.scrollIntoView({ block: 'start' });
  }, [items]);

  useEffect(() => {
    const target = focusAfterRemove.current;
    if (target === null) return;
    focusAfterRemove.current = null;
    if (target === 'drop-zone') document.querySelector<HTMLElement>('[data-testid="drop-zone"]')?.focus();
    else cardOf(target)?.focus();
  }, [items]);

  const removeCard = (index: number) => {
    const gone = items[index];
    if (!gone) return;
    // The next card down, else the one above, else the drop zone.
    const neighbour = items[index + 1] ?? items[index - 1];
    focusAfterRemove.current = neighbour ? neighbour.id : 'drop-zone';
    queue.remove(gone.id);
  };

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
      {camera && active && <CameraCapture onCapture={fromCamera} />}
      <DropZone onFiles={addFiles} listenToPaste={active} compact={items.length > 0} />
      {allowance && (
        <p className="allowance" role="status">
          {allowance}
        </p>
      )}
      <p className="sr-only" role="status" data-testid="queue-status">
        {announced}
      </p>
      <div className="results">
        {items.map((item, index) => (
          <QueueCard
            key={item.id}
            item={item}
            signedIn={signedIn}
            onRemove={() => removeCard(index)}
            onRetry={() => queue.retry(item.id)}
            onMeasured={(mm) => queue.setMeasurement(item.id, mm)}
          />
        ))}
      </div>
    </section>
  );
}
