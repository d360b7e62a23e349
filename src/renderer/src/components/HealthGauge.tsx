/** Tread health 0–100 as a half-circle gauge, coloured like the wear badge. */
export function HealthGauge({ value }: { value: number }) {
  const clamped = Math.max(0, Math.min(100, value));
  const angle = Math.PI * (1 - clamped / 100);
  const x = 50 + 40 * Math.cos(angle);
  const y = 50 - 40 * Math.sin(angle);
  const colour = clamped >= 53 ? 'green' : clamped >= 22 ? 'yellow' : 'red';
  return (
    <div className="gauge" role="meter" aria-valuemin={0} aria-valuemax={100} aria-valuenow={clamped} aria-label="Tread health">
      <svg viewBox="0 0 100 58" aria-hidden="true">
        <path d="M10 50 A40 40 0 0 1 90 50" className="gauge-track" />
        {clamped > 0 && <path d={`M10 50 A40 40 0 0 1 ${x.toFixed(2)} ${y.toFixed(2)}`} className={`gauge-fill gauge-${colour}`} />}
      </svg>
      <div className="gauge-value">{clamped}%</div>
      <div className="gauge-label">tread health</div>
    </div>
  );
}
