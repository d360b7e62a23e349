/** The shop's own gauge reading, stored beside the estimate (PUT /scans/:id/measurement). */
import { useId, useRef, useState, type SubmitEvent } from 'react';
import type { WireScan } from '../../../shared/api';
import { api } from '../api/client';
import { UserError } from '../api/errors';
import { parseGaugeInput } from '../../../shared/gauge';
import { formatIn, to32nds } from '../lib/format';
import type { Units } from '../lib/format';
import { ErrorMessage } from './ErrorMessage';
import { BusyButton } from './BusyButton';

interface Props {
  scanId: string;
  measurementMm: number | null;
  units: Units;
  onSaved: (scan: WireScan | null, measurementMm: number | null) => void;
}

function toInput(mm: number | null, units: Units): string {
  if (mm === null) return '';
  return units === '32nds' ? String(to32nds(mm)) : mm.toFixed(1);
}

export function MeasurementForm({ scanId, measurementMm, units, onSaved }: Props) {
  const [value, setValue] = useState(toInput(measurementMm, units));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  /** The reading typed cannot be saved: the field says so (aria-invalid, the message as its description) and has the focus. */
  const [invalid, setInvalid] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const id = useId();

  async function save(event: SubmitEvent) {
    event.preventDefault();
    const parsed = value.trim() === '' ? null : parseGaugeInput(value, units);
    if (parsed && !parsed.ok) {
      setError(new UserError(parsed.reason));
      setInvalid(true);
      input.current?.focus();
      return;
    }
    setInvalid(false);
    const mm = parsed === null ? null : parsed.mm;
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
          ref={input}
          inputMode="decimal"
          value={value}
          aria-invalid={invalid || undefined}
          aria-describedby={invalid ? `${id}-error` : undefined}
          onChange={(e) => {
            setValue(e.target.value);
            setSaved(false);
          }}
          placeholder={units === '32nds' ? 'e.g. 6/32' : 'e.g. 4.5'}
        />
        <BusyButton type="submit" busy={busy}>
          {busy ? 'Saving…' : 'Save reading'}
        </BusyButton>
      </div>
      {saved && (
        <p className="message message-ok" role="status">
          {measurementMm === null ? 'Reading cleared.' : `Saved: ${formatIn(measurementMm, units)}.`}
        </p>
      )}
      <ErrorMessage error={error} id={`${id}-error`} />
    </form>
  );
}
