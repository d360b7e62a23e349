/**
 * The vehicle at the counter: its four corners and the spare, each taking a photo by drop, paste,
 * the file picker or the webcam. The chosen corner ("next photo goes to") moves on to the next empty
 * one by itself; a photo is moved to another corner by dragging it there or with its "Move to" list
 * (the two swap when that corner has one), before or after its analysis.
 */
import { useId, type DragEvent, type ReactNode } from 'react';
import type { WirePosition } from '../../../shared/api';
import { canRetry, type QueueItem } from '../lib/queueItems';
import { useSession } from '../hooks/useSession';
import { cornerPhotos, refusedAt } from '../lib/corners';
import { POSITIONS, POSITION_LABEL, formatIn } from '../lib/format';
import { depthOfRecord } from '../lib/record';
import { ErrorMessage } from './ErrorMessage';
import { WearBadge } from './WearBadge';

/** A photo dragged within the layout (files dragged in from outside carry "Files" instead). */
const DRAG_TYPE = 'application/x-tirewear-photo';

const STATUS: Record<QueueItem['status'], string> = {
  queued: 'Waiting…',
  held: 'Waiting for sign-in',
  uploading: 'Uploading…',
  analyzing: 'Analyzing…',
  done: 'Done',
  failed: 'Failed',
};

export function isRefused(item: QueueItem): boolean {
  return item.status === 'failed' && !canRetry(item);
}

interface Props {
  items: QueueItem[];
  visit: number;
  target: WirePosition | null;
  onTarget: (position: WirePosition) => void;
  onAssign: (id: number, position: WirePosition | '') => void;
  /** Photos dropped or chosen for one corner (the first goes there, the rest fill the empty ones). */
  onFiles: (files: File[], at: WirePosition) => void;
  /** Moves the focus to a photo's card below. */
  onShowCard: (id: number) => void;
  /** Under the layout: the report and next-vehicle buttons. */
  children?: ReactNode;
}

function draggedPhoto(event: DragEvent): number | null {
  const raw = event.dataTransfer.getData(DRAG_TYPE);
  return raw ? Number(raw) : null;
}

function MoveTo({ item, here, onAssign }: { item: QueueItem; here: string; onAssign: Props['onAssign'] }) {
  const id = useId();
  return (
    <div className="move-to">
      <label htmlFor={id}>Move to</label>
      <select
        id={id}
        aria-label={`Move the ${here} photo ${item.name} to`}
        value={item.position}
        disabled={item.moving}
        onChange={(e) => onAssign(item.id, e.target.value as WirePosition | '')}
      >
        {POSITIONS.map((p) => (
          <option key={p} value={p}>
            {POSITION_LABEL[p]}
          </option>
        ))}
        <option value="">No corner</option>
      </select>
    </div>
  );
}

/** A photo on a corner (or waiting for one): thumbnail, where its analysis is, its result, and the move. */
function PhotoChip({ item, here, onAssign, onShowCard }: { item: QueueItem; here: string; onAssign: Props['onAssign']; onShowCard: Props['onShowCard'] }) {
  const { prefs } = useSession();
  const record = item.view ? depthOfRecord(item.view) : null;
  return (
    <div
      className="corner-photo"
      draggable={!item.moving}
      data-photo-id={item.id}
      onDragStart={(event) => {
        event.dataTransfer.setData(DRAG_TYPE, String(item.id));
        event.dataTransfer.effectAllowed = 'move';
      }}
    >
      {item.localUrl ? <img src={item.localUrl} alt="" /> : <span className="corner-thumb-empty" aria-hidden="true" />}
      <div className="corner-photo-body">
        <button type="button" className="link corner-name" onClick={() => onShowCard(item.id)} aria-label={`Show the card of ${item.name}`}>
          {item.name}
        </button>
        <div className="corner-status">
          {record ? (
            <>
              <WearBadge wear={record.wear} /> <span className="corner-depth">{formatIn(record.mm, prefs.units)}</span>
              {record.source === 'gauge' && <span className="muted small"> gauge</span>}
            </>
          ) : (
            <span className={item.status === 'failed' ? 'warn-text' : 'muted'}>{STATUS[item.status]}</span>
          )}
          {item.moving && <span className="muted small"> · moving…</span>}
        </div>
        <MoveTo item={item} here={here} onAssign={onAssign} />
        {item.moveError !== null && <ErrorMessage error={item.moveError} />}
      </div>
    </div>
  );
}

/** A car from above, front up: where the corners are. */
function CarOutline() {
  return (
    <svg className="car-outline" viewBox="0 0 100 200" aria-hidden="true">
      <rect x={18} y={8} width={64} height={184} rx={26} fill="#dfe5ee" stroke="#767f8c" strokeWidth={3} />
      <path d="M26 62 Q50 48 74 62 L70 84 Q50 78 30 84 Z" fill="#9fb3cc" />
      <path d="M30 142 Q50 148 70 142 L74 160 Q50 170 26 160 Z" fill="#9fb3cc" />
      {[
        [8, 36],
        [82, 36],
        [8, 134],
        [82, 134],
      ].map(([x, y]) => (
        <rect key={`${x}-${y}`} x={x} y={y} width={10} height={30} rx={3} fill="#2b2f36" />
      ))}
      <text x={50} y={30} textAnchor="middle" fontSize={12} fill="#5b6270">
        front
      </text>
    </svg>
  );
}

export function VehicleView({ items, visit, target, onTarget, onAssign, onFiles, onShowCard, children }: Props) {
  const group = useId();
  const heading = useId();
  const withRefused = items.map((item) => ({ ...item, refused: isRefused(item) }));
  const corners = cornerPhotos(withRefused, visit);
  const loose = items.filter((item) => item.visit === visit && item.position === '' && !isRefused(item));

  const allowDrop = (event: DragEvent) => {
    const types = [...event.dataTransfer.types];
    if (!types.includes(DRAG_TYPE) && !types.includes('Files')) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = types.includes(DRAG_TYPE) ? 'move' : 'copy';
  };
  const dropOn = (position: WirePosition | '') => (event: DragEvent) => {
    event.preventDefault();
    event.stopPropagation();
    const moved = draggedPhoto(event);
    if (moved !== null) return onAssign(moved, position);
    const files = Array.from(event.dataTransfer.files ?? []);
    if (files.length && position) onFiles(files, position);
  };

  return (
    <section className="vehicle-view" aria-labelledby={heading}>
      <h3 id={heading}>Tires of this vehicle</h3>
      <fieldset className="corners">
        <legend>Next photo goes to</legend>
        <div className="corner-grid">
          <CarOutline />
          {POSITIONS.map((p) => {
            const photo = corners[p];
            const refused = refusedAt(withRefused, visit, p);
            const next = target === p;
            return (
              <div
                key={p}
                className={`corner corner-${p.toLowerCase()}${next ? ' corner-next' : ''}${photo ? ' corner-full' : ''}`}
                data-corner={p}
                data-testid={`corner-${p}`}
                onDragOver={allowDrop}
                onDrop={dropOn(p)}
              >
                <label className="corner-pick">
                  <input type="radio" name={group} value={p} checked={next} onChange={() => onTarget(p)} />
                  <span className="corner-label">{POSITION_LABEL[p]}</span>
                  <span className="corner-code muted" aria-hidden="true">
                    {p}
                  </span>
                </label>
                {photo ? (
                  <PhotoChip item={photo} here={POSITION_LABEL[p].toLowerCase()} onAssign={onAssign} onShowCard={onShowCard} />
                ) : refused ? (
                  <p className="corner-empty warn-text">Photo refused: take another (see its card below).</p>
                ) : (
                  <p className="corner-empty muted">{next ? 'Next photo goes here: drop, paste or use the webcam.' : 'No photo yet.'}</p>
                )}
              </div>
            );
          })}
        </div>
      </fieldset>
      {loose.length > 0 && (
        <div className="corner-tray" onDragOver={allowDrop} onDrop={dropOn('')} data-testid="corner-tray">
          <p className="small">
            <strong>Not on a corner:</strong> drag {loose.length === 1 ? 'it' : 'them'} onto a corner, or choose one with “Move to”.
          </p>
          {loose.map((item) => (
            <PhotoChip key={item.id} item={item} here="unplaced" onAssign={onAssign} onShowCard={onShowCard} />
          ))}
        </div>
      )}
      {children}
    </section>
  );
}
