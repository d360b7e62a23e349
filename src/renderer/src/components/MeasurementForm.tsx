/** The shop's own gauge reading, stored beside the estimate (PUT /scans/:id/measurement). */
import { useId, useState, type FormEvent } from 'react';
import type { WireScan } from '../../../shared/api';
import { api } from '../api/client';
import { MM_PER_32ND, formatMm } from '../lib/format';
import type { Units } from '../lib/format';
import { ErrorMessage } from './ErrorMessage';

interface Props {
  scanId: string;
  measurementMm: number | null;
  units: Units;
  onSaved: (scan: WireScan | null, measurementMm: number | null) => void;
}

function toInput(mm: number | null, units: Units): string {
  if (mm === null) return '';
  return units === '32nds' ? String(Math.round(mm / MM_PER_32ND)) : mm.toFixed(1);
}

export function MeasurementForm({ scanId, measurementMm, units, onSaved }: Props) {
  const [value, setValue] = useState(toInput(measurementMm, units));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const id = useId();

  async function save(event: FormEvent) {
    event.preventDefault();
    const raw = value.trim().replace(',', '.');
    const number = raw === '' ? null : Number(raw);
    if (number !== null && (!Number.isFinite(number) || number < 0 || number > (units === '32nds' ? 40 : 30))) {
      setError(new Error(units === '32nds' ? 'Enter the gauge reading in 32nds, e.g. 6.' : 'Enter the gauge reading in mm, e.g. 4.5.'));
      return;
    }
    const mm = number === null ? null : Math.round((units === '32nds' ? number * MM_PER_32ND : number) * 10) / 10;
    setBusy(true);
    setError(null);
    try {
      const scan = await api.setMeasurement(scanId, mm);
      setSaved(true);
      onSaved(scan, mm);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="measurement" onSubmit={save}>
      <label htmlFor={id}>Gauge reading ({units === '32nds' ? '32nds of an inch' : 'mm'})</label>
      <div className="row">
        <input
          id={id}
          inputMode="decimal"
          value={value}
          onChange={(e) => {
            setValue(e.target.value);
            setSaved(false);
          }}
          placeholder={units === '32nds' ? 'e.g. 6' : 'e.g. 4.5'}
        />
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : 'Save reading'}
        </button>
      </div>
      {saved && (
        <p className="message message-ok" role="status">
          {measurementMm === null ? 'Reading cleared.' : `Saved: ${formatMm(measurementMm)}.`}
        </p>
      )}
      <ErrorMessage error={error} />
    </form>
  );
}
