/** Everything a counter needs from one scan: colour, depth, range against the legal limit, health. */
import type { ReactNode } from 'react';
import type { ScanOverlays } from '../api/client';
import type { ScanChange, WirePosition, WireScan } from '../../../shared/api';
import { useSession } from '../hooks/useSession';
import { POSITION_LABEL, WEAR_ADVICE, WEAR_LABEL, formatDate, formatDepth, formatIn, formatRange, legalMinimumMm } from '../lib/format';
import { depthOfRecord } from '../lib/record';
import { preliminarySentences } from '../lib/preliminary';
import type { ScanView } from '../lib/scanView';
import { CorrectionForm } from './CorrectionForm';
import { DepthBar } from './DepthBar';
import { HealthGauge } from './HealthGauge';
import { MeasurementForm } from './MeasurementForm';
import { TreadImage } from './TreadImage';
import { WearBadge } from './WearBadge';

const FIELD: Record<ScanChange['field'], string> = { vehicle: 'plate', position: 'position', measurementMm: 'gauge reading' };

/** The scan's corrections, newest first: when, what, from what to what. */
function ChangeList({ changes }: { changes: ScanChange[] }) {
  const { prefs } = useSession();
  const value = (field: ScanChange['field'], v: string | number | null) => {
    if (v === null || v === '') return 'none';
    if (field === 'measurementMm' && typeof v === 'number') return formatIn(v, prefs.units);
    if (field === 'position' && typeof v === 'string' && v in POSITION_LABEL) return POSITION_LABEL[v as WirePosition];
    return String(v);
  };
  return (
    <details className="changes">
      <summary>Corrections ({changes.length})</summary>
      <ul>
        {[...changes].reverse().map((c, i) => (
          <li key={i}>
            {formatDate(c.at)}: {FIELD[c.field]} {value(c.field, c.from)} → {value(c.field, c.to)}
          </li>
        ))}
      </ul>
    </details>
  );
}

interface Props {
  scan: ScanView;
  onMeasured?: (measurementMm: number | null) => void;
  /** Plate or position put right (PATCH /scans/:id): the scan as the server has it now. */
  onCorrected?: (scan: WireScan) => void;
  /** Extra actions (delete, report) placed in the card's footer. */
  actions?: ReactNode;
  /** On the Scan page: the queue item, so focus can move to this card after another is hidden. */
  queueId?: number;
  /** A stored scan (History): where its overlays come from, asked for when first shown. */
  loadOverlays?: () => Promise<ScanOverlays>;
}

export function ResultCard({ scan, onMeasured, onCorrected, actions, queueId, loadOverlays }: Props) {
  const { prefs } = useSession();
  const r = scan.result;
  // the gauge wins where there is one: colour, advice, health and no "preliminary"
  const record = depthOfRecord(scan);
  const gauged = record.source === 'gauge';
  const title = [scan.vehicle, scan.position ? POSITION_LABEL[scan.position] : null].filter(Boolean).join(' · ') || 'Tire scan';
  return (
    <article
      className="result-card"
      aria-label={`Result: ${title}`}
      data-scan-id={scan.scanId}
      data-queue-id={queueId}
      tabIndex={queueId === undefined ? undefined : -1}
    >
      <TreadImage src={scan.imageSrc} alt={`Photo of ${title}`} overlays={r.overlays} points={r.points} loadOverlays={loadOverlays} />
      <div className="result-body">
        <header className="result-head">
          <WearBadge wear={record.wear} large />
          <div>
            <h3>{title}</h3>
            <div className="muted">{formatDate(scan.createdAt)}</div>
          </div>
        </header>
        {record.isPreliminary && (
          // part of the result, read with it (not an alert interrupting every preliminary result and every detail view)
          <p className="message message-warn">
            <strong>Preliminary result.</strong> {/* docs/API.md §2 preliminaryReasons (lib/preliminary.ts) */}
            {preliminarySentences(r).join(' ')} Check this tire with a tread depth gauge.
          </p>
        )}
        <p className="depth-figure">
          <span className="depth-main">{formatDepth(record.mm, prefs.units)}</span>
          <span className="muted">{gauged ? ' measured with a tread depth gauge' : ' estimated tread depth'}</span>
        </p>
        {gauged && (
          <p className="estimate-beside" data-testid="photo-estimate">
            Photo estimate {formatDepth(r.estimatedDepthMm, prefs.units)}, likely {formatRange(r.depthRangeMm.min, r.depthRangeMm.max, prefs.units)} (
            {WEAR_LABEL[r.wear]})
          </p>
        )}
        <p className="advice">{WEAR_ADVICE[record.wear]}</p>
        <DepthBar
          estimateMm={r.estimatedDepthMm}
          range={r.depthRangeMm}
          legalMinMm={legalMinimumMm(prefs.legalMinimum)}
          measuredMm={scan.measurementMm}
          units={prefs.units}
        />
        <div className="result-stats">
          <HealthGauge value={record.treadHealthIndex} />
          {/* twiConsensusCount is not shown: on held-out renders it did not follow the bars in the
              photo (correlation -0.08; models/NOTEBOOK.md, Known limits). The API still gives it. */}
          <dl>
            <dt>Confidence</dt>
            <dd>{Math.round(r.confidence * 100)}%</dd>
            <dt>Model agreement</dt>
            <dd>{r.modelAlignment}%</dd>
          </dl>
        </div>
        {onMeasured && <MeasurementForm scanId={scan.scanId} measurementMm={scan.measurementMm} units={prefs.units} onSaved={(_scan, mm) => onMeasured(mm)} />}
        {scan.changes && scan.changes.length > 0 && <ChangeList changes={scan.changes} />}
        {onCorrected && <CorrectionForm scanId={scan.scanId} vehicle={scan.vehicle} position={scan.position} onCorrected={onCorrected} />}
        <p className="disclaimer">{r.disclaimer}</p>
        <p className="muted small">
          Model {r.modelVersion} · {r.processingTimeMs} ms · scan {scan.scanId}
        </p>
        {actions && <div className="card-actions">{actions}</div>}
      </div>
    </article>
  );
}
