/** The estimate and its 80 % range on a depth scale, with the legal minimum marked, in the shop's unit. */
import { MM_PER_32ND, formatIn, formatLegalMinimum, formatRange, type Units } from '../lib/format';

interface Props {
  estimateMm: number;
  range: { min: number; max: number };
  legalMinMm: number;
  measuredMm?: number | null;
  units: Units;
}

/** Track colours by the wear bands: red under 3 mm, yellow to 5 mm, green above. */
function zones(scaleMax: number): string {
  const at = (mm: number) => `${(mm / scaleMax) * 100}%`;
  return `linear-gradient(90deg, var(--zone-red) ${at(3)}, var(--zone-yellow) ${at(3)} ${at(5)}, var(--zone-green) ${at(5)})`;
}

/** Tick marks every 2 mm, or every 2/32″; the last one carries the unit. */
function ticksOf(scaleMax: number, units: Units): Array<{ mm: number; label: string }> {
  const step = units === '32nds' ? 2 * MM_PER_32ND : 2;
  const count = Math.floor(scaleMax / step + 1e-9) + 1;
  return Array.from({ length: count }, (_, i) => {
    const last = i === count - 1;
    const label = units === '32nds' ? `${i * 2}${last ? '/32″' : ''}` : `${i * 2}${last ? ' mm' : ''}`;
    return { mm: i * step, label };
  });
}

export function DepthBar({ estimateMm, range, legalMinMm, measuredMm = null, units }: Props) {
  const scaleMax = Math.max(10, Math.ceil(range.max + 0.5), measuredMm ? Math.ceil(measuredMm) : 0);
  const pct = (mm: number) => `${Math.min(100, Math.max(0, (mm / scaleMax) * 100))}%`;
  const show = (mm: number) => formatIn(mm, units);
  const legal = formatLegalMinimum(legalMinMm, units);
  const likely = formatRange(range.min, range.max, units);
  return (
    <figure
      className="depth-bar"
      aria-label={`Depth ${show(estimateMm)}, likely ${likely}; legal minimum ${legal}${measuredMm !== null ? `; gauge ${show(measuredMm)}` : ''}`}
    >
      <div className="depth-track" style={{ background: zones(scaleMax) }}>
        <div className="depth-danger" style={{ width: pct(legalMinMm) }} />
        <div className="depth-range" style={{ left: pct(range.min), width: `calc(${pct(range.max)} - ${pct(range.min)})` }} />
        <div className="depth-legal" style={{ left: pct(legalMinMm) }} title={`Legal minimum ${legal}`} />
        <div className="depth-estimate" style={{ left: pct(estimateMm) }} title={`Estimate ${show(estimateMm)}`} />
        {measuredMm !== null && <div className="depth-measured" style={{ left: pct(measuredMm) }} title={`Gauge ${show(measuredMm)}`} />}
      </div>
      <div className="depth-ticks" aria-hidden="true">
        {ticksOf(scaleMax, units).map((t) => (
          // A label at the very end is right-aligned so that its unit stays inside the card (anchored
          // on the right: a box placed at 100 % and moved back would still widen a narrow page).
          <span key={t.label} style={t.mm / scaleMax > 0.97 ? { right: 0, transform: 'none' } : { left: pct(t.mm) }}>
            {t.label}
          </span>
        ))}
      </div>
      <figcaption>
        Likely {likely} · legal minimum {legal}
        {measuredMm !== null && <> · gauge {show(measuredMm)}</>}
      </figcaption>
    </figure>
  );
}
