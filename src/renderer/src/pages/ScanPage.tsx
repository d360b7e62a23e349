/**
 * The counter screen: the plate once, then the vehicle's corners filled by drop, picker, paste or
 * webcam, each photo to the chosen corner and the choice moving on, ending in the customer report.
 */
import { useCallback, useEffect, useId, useRef, useState } from 'react';
import type { AccountData, WirePosition } from '../../../shared/api';
import { VEHICLE_MAX } from '../../../shared/contract/limits';
import type { RateLimitInfo } from '../api/client';
import { CameraCapture } from '../components/CameraCapture';
import { DropZone } from '../components/DropZone';
import { QueueCard } from '../components/QueueCard';
import { VehicleView, isRefused } from '../components/VehicleView';
import { useQueueAnnouncement } from '../hooks/useQueueAnnouncement';
import { useScanQueue } from '../hooks/useScanQueue';
import { refusedLocally, type QueueItem } from '../lib/queueItems';
import { useSession } from '../hooks/useSession';
import { vehicleKey } from '../../../shared/vehicle';
import { cornerPhotos, placePhotos } from '../lib/corners';
import { POSITION_LABEL, formatDate } from '../lib/format';
import type { ScanView } from '../lib/scanView';

/** The road wheels: the vehicle is done when these four are. */
const ROAD: readonly WirePosition[] = ['FL', 'FR', 'RL', 'RR'];

function cornersOf(items: QueueItem[], visit: number) {
  return cornerPhotos(
    items.map((item) => ({ ...item, refused: isRefused(item) })),
    visit,
  );
}

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
  /** The vehicle at the counter: "Next vehicle" starts another with empty corners. */
  const [visit, setVisit] = useState(1);
  /** The corner the next photo goes to; null once every corner has one. */
  const [target, setTarget] = useState<WirePosition | null>('FL');
  const [camera, setCamera] = useState(false);
  /** What the last move between corners did, for a screen reader (the corners change silently). */
  const [moved, setMoved] = useState('');
  const vehicleId = useId();
  const plateInput = useRef<HTMLInputElement>(null);
  /** A webcam photo whose result is scrolled into view when it is ready (the camera pushes it below the fold). */
  const follow = useRef<number | null>(null);
  /** Where keyboard focus goes once a hidden or removed card has left the page. */
  const focusAfterRemove = useRef<number | 'drop-zone' | null>(null);

  const { add, items } = queue;
  const announced = useQueueAnnouncement(items, prefs.units);
  const corners = cornersOf(items, visit);

  // The plate belongs to the vehicle: another plate typed while the corners hold photos is another
  // car, whose first photo starts with empty corners; or the same car's plate put right for them all.
  const visitItems = items.filter((item) => item.visit === visit && !isRefused(item));
  const visitPlate = visitItems[0]?.vehicle ?? '';
  const otherCar = visitItems.length > 0 && vehicleKey(vehicle) !== vehicleKey(visitPlate);

  /**
   * New photos onto the corners: the first to `at`, the rest to the empty corners after it; the choice
   * moves on. A new vehicle starts at the front left unless the photos were dropped on a corner (`onCorner`).
   */
  const place = useCallback(
    (files: File[], at: WirePosition | null, onCorner = false): number[] => {
      const now = otherCar ? visit + 1 : visit;
      if (now !== visit) setVisit(now);
      const start = now === visit || onCorner ? at : 'FL';
      const accepted = files.filter((file) => !refusedLocally(file));
      const occupied = new Set(now === visit ? (Object.keys(cornersOf(items, visit)) as WirePosition[]) : []);
      const { positions, next } = placePhotos(accepted.length, start, occupied);
      let k = 0;
      const photos = files.map((file) => ({ file, position: refusedLocally(file) ? ('' as const) : (positions[k++] ?? '') }));
      if (accepted.length > 0) setTarget(next);
      return add(photos, vehicle, now);
    },
    [add, items, vehicle, visit, otherCar],
  );
  const addFiles = useCallback((files: File[]) => place(files, target), [place, target]);
  const fromCamera = useCallback(
    (file: File) => {
      follow.current = addFiles([file])[0] ?? null;
    },
    [addFiles],
  );

  // A photo refused for good leaves its corner empty: the next photo goes there (a better one of that tire).
  const seenRefused = useRef(new Set<number>());
  useEffect(() => {
    for (const item of items) {
      if (seenRefused.current.has(item.id) || !isRefused(item)) continue;
      seenRefused.current.add(item.id);
      if (item.visit === visit && item.position && !cornersOf(items, visit)[item.position]) setTarget(item.position);
    }
  }, [items, visit]);

  // This vehicle's results for the report, on the corners they stand for now.
  const visitViews = items.flatMap((item) =>
    item.visit === visit && item.status === 'done' && item.view ? [{ ...item.view, position: item.position || null }] : [],
  );
  const roadDone = ROAD.every((p) => corners[p]?.status === 'done');
  const allowance = allowanceText(account, queue.rateLimit, signedIn);

  const nextVehicle = () => {
    setVisit((v) => v + 1);
    setVehicle('');
    setTarget('FL');
    plateInput.current?.focus();
  };

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
          <input
            id={vehicleId}
            ref={plateInput}
            value={vehicle}
            maxLength={VEHICLE_MAX}
            onChange={(e) => setVehicle(e.target.value)}
            placeholder="e.g. AB-123-CD"
            autoComplete="off"
            aria-describedby={otherCar ? `${vehicleId}-other` : undefined}
          />
          {otherCar && (
            <div id={`${vehicleId}-other`} className="plate-change" data-testid="plate-change">
              <p className="small">
                The corners hold photos of <strong>{visitPlate || 'a vehicle without a plate'}</strong>: the next photo starts a new vehicle
                {vehicle.trim() ? (
                  <>
                    {' '}
                    for <strong>{vehicle.trim()}</strong>
                  </>
                ) : null}
                .
              </p>
              <button type="button" className="link" onClick={() => queue.renameVisit(visit, vehicle)}>
                {vehicle.trim() ? `Same vehicle: use ${vehicle.trim()} for its photos` : 'Same vehicle: remove the plate from its photos'}
              </button>
            </div>
          )}
        </div>
        <div className="field field-actions">
          <button type="button" className="secondary" onClick={() => setCamera((c) => !c)} aria-pressed={camera}>
            {camera ? 'Hide camera' : 'Use webcam'}
          </button>
        </div>
      </div>
      {/* Unmounted while another page shows, so the camera (and its light) turns off. */}
      {camera && active && <CameraCapture onCapture={fromCamera} destination={target ? POSITION_LABEL[target] : null} />}
      <VehicleView
        items={items}
        visit={visit}
        target={target}
        onTarget={setTarget}
        onAssign={(id, position) => {
          const photo = items.find((item) => item.id === id);
          const swapped = position ? cornersOf(items, visit)[position] : undefined;
          queue.assign(id, position);
          if (!photo) return;
          const to = (p: WirePosition | '') => (p ? POSITION_LABEL[p].toLowerCase() : 'no corner');
          setMoved(`${photo.name} moved to ${to(position)}${swapped && swapped.id !== id ? `, ${swapped.name} to ${to(photo.position)}` : ''}.`);
        }}
        onFiles={(files, at) => place(files, at, true)}
        onShowCard={(id) => cardOf(id)?.focus()}
      >
        <div className="vehicle-actions">
          <p className="vehicle-progress" role="status">
            {roadDone ? `All four tires${vehicle.trim() ? ` of ${vehicle.trim()}` : ''} are done: the customer report is ready.` : ''}
          </p>
          <button type="button" className={roadDone ? undefined : 'secondary'} disabled={visitViews.length === 0} onClick={() => onReport(visitViews)}>
            Customer report
          </button>
          <button type="button" className="secondary" onClick={nextVehicle} disabled={!items.some((item) => item.visit === visit) && vehicle === ''}>
            Next vehicle
          </button>
        </div>
      </VehicleView>
      <DropZone onFiles={addFiles} listenToPaste={active} compact={items.length > 0} />
      {allowance && (
        <p className="allowance" role="status">
          {allowance}
        </p>
      )}
      <p className="sr-only" role="status" data-testid="queue-status">
        {announced}
      </p>
      <p className="sr-only" role="status" data-testid="move-status">
        {moved}
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
            onCorrected={(scan) => queue.corrected(item.id, scan)}
          />
        ))}
      </div>
    </section>
  );
}
