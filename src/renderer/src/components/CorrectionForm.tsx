/**
 * Put a scan's plate or tire position right (PATCH /scans/:id): a typo no longer costs a rescan
 * and a scan of the allowance. Folded away behind one button; the server records the change.
 */
import { useEffect, useId, useRef, useState, type SubmitEvent } from 'react';
import type { WirePosition, WireScan } from '../../../shared/api';
import { VEHICLE_MAX } from '../../../shared/contract/limits';
import { api, type ScanCorrection } from '../api/client';
import { POSITIONS, POSITION_LABEL } from '../lib/format';
import { BusyButton } from './BusyButton';
import { ErrorMessage } from './ErrorMessage';

interface Props {
  scanId: string;
  vehicle: string | null;
  position: WirePosition | null;
  onCorrected: (scan: WireScan) => void;
}

export function CorrectionForm({ scanId, vehicle, position, onCorrected }: Props) {
  const [open, setOpen] = useState(false);
  const [plate, setPlate] = useState(vehicle ?? '');
  const [corner, setCorner] = useState<WirePosition | ''>(position ?? '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const toggle = useRef<HTMLButtonElement>(null);
  /** The form closed from within (saved, cancelled): the button that opened it takes the focus back once it is there. */
  const refocus = useRef(false);
  useEffect(() => {
    if (open || !refocus.current) return;
    refocus.current = false;
    toggle.current?.focus();
  }, [open]);
  const ids = { plate: useId(), position: useId() };

  function start() {
    setPlate(vehicle ?? '');
    setCorner(position ?? '');
    setError(null);
    setSaved(null);
    setOpen(true);
  }

  function close() {
    refocus.current = true;
    setOpen(false);
  }

  async function save(event: SubmitEvent) {
    event.preventDefault();
    const patch: ScanCorrection = {};
    const typed = plate.trim();
    if (typed !== (vehicle ?? '')) patch.vehicle = typed === '' ? null : typed;
    if ((corner || null) !== position) patch.position = corner || null;
    if (Object.keys(patch).length === 0) return close();
    setBusy(true);
    setError(null);
    try {
      const scan = await api.correctScan(scanId, patch);
      onCorrected(scan);
      setSaved('Corrected. The change is kept in the scan’s history; nothing was charged.');
      close();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="correction">
      {!open && (
        // the form takes its place, and the focus (its first field)
        <button ref={toggle} type="button" className="secondary" onClick={start}>
          Correct plate or position
        </button>
      )}
      {saved && !open && (
        <p className="message message-ok" role="status">
          {saved}
        </p>
      )}
      {open && (
        <form
          className="correction-form"
          aria-label="Correct plate or position"
          onSubmit={save}
          onKeyDown={(event) => {
            if (event.key !== 'Escape') return;
            event.preventDefault();
            close();
          }}
        >
          <div className="field">
            <label htmlFor={ids.plate}>Plate of this scan</label>
            {/* the field to correct takes the focus: the form opened for it */}
            <input id={ids.plate} value={plate} maxLength={VEHICLE_MAX} autoComplete="off" autoFocus onChange={(e) => setPlate(e.target.value)} />
          </div>
          <div className="field">
            <label htmlFor={ids.position}>Position of this tire</label>
            <select id={ids.position} value={corner} onChange={(e) => setCorner(e.target.value as WirePosition | '')}>
              <option value="">Not set</option>
              {POSITIONS.map((p) => (
                <option key={p} value={p}>
                  {POSITION_LABEL[p]} ({p})
                </option>
              ))}
            </select>
          </div>
          <ErrorMessage error={error} />
          <div className="row">
            <BusyButton type="submit" busy={busy}>
              {busy ? 'Saving…' : 'Save correction'}
            </BusyButton>
            <button type="button" className="secondary" onClick={close}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </div>
  );
}
