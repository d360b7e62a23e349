/** The estimate and its 80 % range on a depth scale, with the legal minimum marked. */
import { formatMm } from '../lib/format';

interface Props {
  estimateMm: number;
  range: { min: number; max: number };
  legalMinMm: number;
  measuredMm?: number | null;
}

/** Track colours by the wear bands: red under 3 mm, yellow to 5 mm, green above. */
function zones(scaleMax: number): string {
  const at = (mm: number) => `${(mm / scaleMax) * 100}%`;
  return `linear-gradient(90deg, var(--zone-red) ${at(3)}, var(--zone-yellow) ${at(3)} ${at(5)}, var(--zone-green) ${at(5)})`;
}

export function DepthBar({ estimateMm, range, legalMinMm, measuredMm = null }: Props) {
  const scaleMax = Math.max(10, Math.ceil(range.max + 0.5), measuredMm ? Math.ceil(measuredMm) : 0);
  const pct = (mm: number) => `${Math.min(100, Math.max(0, (mm / scaleMax) * 100))}%`;
  const ticks = Array.from({ length: Math.floor(scaleMax / 2) + 1 }, (_, i) => i * 2);
  return (
    <figure className="depth-bar" aria-label={`Depth ${formatMm(estimateMm)}, likely between ${formatMm(range.min)} and ${formatMm(range.max)}; legal minimum ${formatMm(legalMinMm)}`}>
      <div className="depth-track" style={{ background: zones(scaleMax) }}>
        <div className="depth-danger" style={{ width: pct(legalMinMm) }} />
        <div className="depth-range" style={{ left: pct(range.min), width: `calc(${pct(range.max)} - ${pct(range.min)})` }} />
        <div className="depth-legal" style={{ left: pct(legalMinMm) }} title={`Legal minimum ${formatMm(legalMinMm)}`} />
        <div className="depth-estimate" style={{ left: pct(estimateMm) }} title={`Estimate ${formatMm(estimateMm)}`} />
        {measuredMm !== null && <div className="depth-measured" style={{ left: pct(measuredMm) }} title={`Gauge ${formatMm(measuredMm)}`} />}
      </div>
      <div className="depth-ticks" aria-hidden="true">
        {ticks.map((t) => (
          <span key={t} style={{ left: pct(t) }}>
            {t}
          </span>
        ))}
      </div>
      <figcaption>
        Likely {formatMm(range.min)} – {formatMm(range.max)} · legal minimum {formatMm(legalMinMm)}
        {measuredMm !== null && <> · gauge {formatMm(measuredMm)}</>}
      </figcaption>
    </figure>
  );
}
