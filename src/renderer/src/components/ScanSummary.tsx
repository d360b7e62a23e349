/**
 * One line of a scan list: thumbnail, vehicle and position, date, depth, wear (and what a list adds,
 * as children). Its text is the row's accessible name too: vehicle, position, date, depth, gauge, wear.
 */
import type { ReactNode } from 'react';
import type { WireScan } from '../../../shared/api';
import { useSession } from '../hooks/useSession';
import { POSITION_LABEL, formatDate, formatDepth, formatIn } from '../lib/format';
import { WearBadge } from './WearBadge';

export function ScanSummary({ scan, thumbnailUrl, children }: { scan: WireScan; thumbnailUrl: string; children?: ReactNode }) {
  const { prefs } = useSession();
  return (
    <>
      <img src={thumbnailUrl} alt="" loading="lazy" />
      <div className="history-text">
        <div className="history-title">
          {scan.vehicle ?? 'No vehicle'}
          {scan.position && <span className="muted"> · {POSITION_LABEL[scan.position]}</span>}
        </div>
        <div className="muted">{formatDate(scan.createdAt)}</div>
        <div>
          {formatDepth(scan.result.estimatedDepthMm, prefs.units)}
          {scan.measurementMm !== null && <span className="muted"> · gauge {formatIn(scan.measurementMm, prefs.units)}</span>}
        </div>
        {children}
      </div>
      <WearBadge wear={scan.result.wear} />
    </>
  );
}
