/**
 * The tire photo with the analysis overlays (verbose=1) laid over it: one overlay at a
 * time, chosen with a labelled radio group, plus the located TWI bars and grooves.
 */
import { useId, useState } from 'react';
import type { WireResult } from '../../../shared/api';

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

function label(name: string): string {
  return OVERLAY_LABEL[name] ?? name.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/^./, (c) => c.toUpperCase());
}

interface Props {
  src: string;
  alt: string;
  overlays?: WireResult['overlays'];
  points?: WireResult['points'];
}

export function TreadImage({ src, alt, overlays, points }: Props) {
  const names = Object.keys(overlays ?? {});
  const [shown, setShown] = useState<string>('none');
  const [showPoints, setShowPoints] = useState(true);
  const [size, setSize] = useState<{ w: number; h: number } | null>(null);
  const group = useId();
  const overlay = shown !== 'none' ? overlays?.[shown] : undefined;
  return (
    <div className="tread-image">
      <div className="tread-frame" style={size ? { aspectRatio: `${size.w} / ${size.h}` } : undefined}>
        <img src={src} alt={alt} onLoad={(e) => setSize({ w: e.currentTarget.naturalWidth, h: e.currentTarget.naturalHeight })} />
        {overlay && <img className="overlay" src={overlay} alt={`${label(shown)} overlay`} data-overlay={shown} />}
        {size && showPoints && points && points.length > 0 && (
          <svg className="overlay points" viewBox={`0 0 ${size.w} ${size.h}`} aria-hidden="true">
            {points.map((p, i) => (
              <circle key={i} cx={p.x} cy={p.y} r={Math.max(size.w, size.h) / 90} className={`point point-${p.kind}`} />
            ))}
          </svg>
        )}
      </div>
      {overlay && OVERLAY_NOTE[shown] && <p className="muted small overlay-note">{OVERLAY_NOTE[shown]}</p>}
      {names.length > 0 && (
        <fieldset className="overlay-toggle">
          <legend>Overlay</legend>
          {['none', ...names].map((name) => (
            <label key={name}>
              <input type="radio" name={group} value={name} checked={shown === name} onChange={() => setShown(name)} />
              {name === 'none' ? 'Photo only' : label(name)}
            </label>
          ))}
          {points && points.length > 0 && (
            <label>
              <input type="checkbox" checked={showPoints} onChange={(e) => setShowPoints(e.target.checked)} />
              Mark TWI bars and grooves
            </label>
          )}
        </fieldset>
      )}
    </div>
  );
}
