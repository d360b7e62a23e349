/**
 * The tire photo with the analysis overlays (verbose=1) laid over it: one overlay at a
 * time, chosen with a labelled radio group, each with its key (the heat map's colour scale, the
 * mask's colours), plus the located grooves and TWI bars, off until asked for.
 */
import { useId, useState } from 'react';
import type { WireResult } from '../../../shared/api';
import { ApiError, type ScanOverlays } from '../api/client';
import { useSession } from '../hooks/useSession';
import { MM_PER_32ND, type Units } from '../lib/format';

const OVERLAY_LABEL: Record<string, string> = {
  depthHeatmap: 'Depth heat map',
  mask: 'Tread / groove / TWI mask',
};

/**
 * What an overlay can and cannot be read as, shown while it is on. The heat map's colours across
 * one photo did not follow the true depth pattern on calibration renders (correlation 0.07-0.09,
 * models/README.md), so it must not be shown to a customer as where the tire is worn.
 */
const OVERLAY_NOTE: Record<string, string> = {
  depthHeatmap:
    'The depth the model reads around the tread: its overall colour, not which part is more worn. Uneven wear is not resolved within a photo; check it with a gauge.',
};

/** The heat map's colours by depth in mm, as src/core/analysis/overlays.ts (depthColour) paints them. */
const HEAT_STOPS: ReadonlyArray<readonly [number, string]> = [
  [0, 'rgb(200 0 0)'],
  [1.6, 'rgb(255 80 0)'],
  [3, 'rgb(255 190 0)'],
  [5, 'rgb(170 220 40)'],
  [7, 'rgb(0 180 60)'],
];
const HEAT_SCALE_MM = 8;

/** The mask's colours, as src/core/analysis/overlays.ts (MASK_COLOURS) paints them. */
const MASK_KEY = [
  { label: 'Tread', colour: 'rgb(160 160 160)' },
  { label: 'Groove', colour: 'rgb(30 120 255)' },
  { label: 'TWI bar', colour: 'rgb(255 30 30)' },
] as const;

function label(name: string): string {
  return OVERLAY_LABEL[name] ?? name.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/^./, (c) => c.toUpperCase());
}

function heatGradient(): string {
  const at = (mm: number) => `${(mm / HEAT_SCALE_MM) * 100}%`;
  return `linear-gradient(90deg, ${HEAT_STOPS.map(([mm, colour]) => `${colour} ${at(mm)}`).join(', ')}, ${HEAT_STOPS[HEAT_STOPS.length - 1]![1]} 100%)`;
}

/** Ticks every 2 mm, or every 2/32″, to the end of the scale; the last one carries the unit. */
function heatTicks(units: Units): Array<{ at: string; text: string; end: boolean }> {
  const step = units === '32nds' ? 2 * MM_PER_32ND : 2;
  const count = Math.floor(HEAT_SCALE_MM / step + 1e-9) + 1;
  return Array.from({ length: count }, (_, i) => {
    const end = i === count - 1;
    const value = units === '32nds' ? `${i * 2}${end ? '/32″+' : ''}` : `${i * 2}${end ? '+ mm' : ''}`;
    return { at: `${((i * step) / HEAT_SCALE_MM) * 100}%`, text: value, end };
  });
}

/** The heat map's key: red shallow to green deep, in the shop's unit. */
function HeatScale({ units }: { units: Units }) {
  const words =
    units === '32nds' ? 'red at 0, orange at 2/32″, yellow at 4/32″, green from 9/32″' : 'red at 0, orange at 1.6 mm, yellow at 3 mm, green from 7 mm';
  return (
    <figure className="overlay-key heat-scale" aria-label={`Heat map colours by depth: ${words}`} data-testid="heat-scale">
      <div className="heat-bar" style={{ background: heatGradient() }} aria-hidden="true" />
      <div className="heat-ticks" aria-hidden="true">
        {heatTicks(units).map((t) => (
          <span key={t.text} style={t.end ? { right: 0 } : { left: t.at, transform: 'translateX(-50%)' }}>
            {t.text}
          </span>
        ))}
      </div>
      <figcaption className="small muted">Shallow (red) to deep (green), on the tread only.</figcaption>
    </figure>
  );
}

function MaskKey() {
  return (
    <ul className="overlay-key mask-key" aria-label="Mask colours" data-testid="mask-key">
      {MASK_KEY.map((k) => (
        <li key={k.label}>
          <span className="swatch" style={{ background: k.colour }} aria-hidden="true" />
          {k.label}
        </li>
      ))}
    </ul>
  );
}

function PointsKey() {
  return (
    <ul className="overlay-key points-key" aria-label="Marker colours" data-testid="points-key">
      <li>
        <span className="ring ring-groove" aria-hidden="true" />
        Main groove found
      </li>
      <li>
        <span className="ring ring-twi" aria-hidden="true" />
        Possible TWI bar: not reliable yet, do not act on it
      </li>
    </ul>
  );
}

/**
 * Why a stored scan's overlays could not be made (GET /scans/:id/overlays), in the shop's words;
 * picking an overlay again asks again.
 */
function overlayFailure(error: unknown): string {
  const code = error instanceof ApiError ? error.code : '';
  if (code === 'NOT_FOUND') return 'The photo of this scan is no longer kept, so its overlays cannot be made. Its result is as stored.';
  if (code === 'NO_TIRE_DETECTED' || code === 'TREAD_NOT_VISIBLE') {
    return 'The current model version cannot read this stored photo, so its overlays cannot be made. The photo and its result are as stored.';
  }
  if (code === 'TOO_MANY_ATTEMPTS' || code === 'SERVER_BUSY') return 'The overlays could not be made just now: pick the overlay again in a minute.';
  return 'The overlays could not be made for this scan. The photo and its result are as stored.';
}

/** The overlays every analysis makes (verbose=1): what a stored scan offers before they are loaded. */
const KNOWN_OVERLAYS = ['depthHeatmap', 'mask'];

interface Props {
  src: string;
  alt: string;
  overlays?: WireResult['overlays'];
  points?: WireResult['points'];
  /** A stored scan without them: where to get its overlays, the first time one is asked for. */
  loadOverlays?: () => Promise<ScanOverlays>;
}

export function TreadImage({ src, alt, overlays: given, points: givenPoints, loadOverlays }: Props) {
  const { prefs } = useSession();
  const [loaded, setLoaded] = useState<ScanOverlays | null>(null);
  const [loading, setLoading] = useState(false);
  const [loadError, setLoadError] = useState<unknown>(null);
  const lazy = !given && !!loadOverlays;
  const overlays = given ?? loaded?.overlays;
  const points = givenPoints ?? loaded?.points;
  const names = overlays ? Object.keys(overlays) : lazy ? KNOWN_OVERLAYS : [];
  const [shown, setShown] = useState<string>('none');
  // Off by default: the TWI detector does not yet follow the bars in the photo (README, models/README.md).
  const [showPoints, setShowPoints] = useState(false);
  const [size, setSize] = useState<{ w: number; h: number } | null>(null);
  const group = useId();
  const overlay = shown !== 'none' ? overlays?.[shown] : undefined;
  const hasPoints = !!points && points.length > 0;

  /** The first overlay or marker asked for on a stored scan: fetch them, once. */
  const ensureLoaded = () => {
    if (!lazy || loaded || loading || !loadOverlays) return;
    setLoading(true);
    setLoadError(null);
    loadOverlays()
      .then(
        (answer) => setLoaded(answer),
        (error: unknown) => setLoadError(error),
      )
      .finally(() => setLoading(false));
  };
  return (
    <div className="tread-image">
      <div className="tread-frame" style={size ? { aspectRatio: `${size.w} / ${size.h}` } : undefined}>
        <img src={src} alt={alt} onLoad={(e) => setSize({ w: e.currentTarget.naturalWidth, h: e.currentTarget.naturalHeight })} />
        {overlay && <img className="overlay" src={overlay} alt={`${label(shown)} overlay`} data-overlay={shown} />}
        {size && showPoints && hasPoints && (
          <svg className="overlay points" viewBox={`0 0 ${size.w} ${size.h}`} aria-hidden="true">
            {points.map((p, i) => (
              <circle key={i} cx={p.x} cy={p.y} r={Math.max(size.w, size.h) / 90} className={`point point-${p.kind}`} />
            ))}
          </svg>
        )}
      </div>
      {overlay && shown === 'depthHeatmap' && <HeatScale units={prefs.units} />}
      {overlay && shown === 'mask' && <MaskKey />}
      {overlay && OVERLAY_NOTE[shown] && <p className="muted small overlay-note">{OVERLAY_NOTE[shown]}</p>}
      {showPoints && hasPoints && <PointsKey />}
      {lazy && (
        <p className="muted small overlay-loading" role="status">
          {loading ? 'Making the overlays for this scan…' : ''}
        </p>
      )}
      {loadError !== null && (
        <div className="message message-warn small" role="alert">
          {overlayFailure(loadError)}
        </div>
      )}
      {(names.length > 0 || hasPoints || lazy) && (
        <fieldset className="overlay-toggle">
          <legend>Overlay</legend>
          {names.length > 0 &&
            ['none', ...names].map((name) => (
              <label key={name}>
                <input
                  type="radio"
                  name={group}
                  value={name}
                  checked={shown === name}
                  onChange={() => {
                    setShown(name);
                    if (name !== 'none') ensureLoaded();
                  }}
                />
                {name === 'none' ? 'Photo only' : label(name)}
              </label>
            ))}
          {(hasPoints || (lazy && !loaded)) && (
            <label>
              <input
                type="checkbox"
                checked={showPoints}
                onChange={(e) => {
                  setShowPoints(e.target.checked);
                  if (e.target.checked) ensureLoaded();
                }}
              />
              Mark grooves and TWI bars
            </label>
          )}
        </fieldset>
      )}
    </div>
  );
}
