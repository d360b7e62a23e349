/** Versions a support call asks for: the app, the model, the storage in use. */
import { useEffect, useState } from 'react';
import type { HealthData } from '../../../shared/api';
import { api } from '../api/client';
import { bridge } from '../lib/bridge';

export function AboutPanel() {
  const [health, setHealth] = useState<HealthData | null>(null);
  useEffect(() => {
    api.health().then(setHealth, () => setHealth(null));
  }, []);
  const desktop = bridge();
  if (!health) return null;
  return (
    <div className="panel" role="region" aria-labelledby="about-title">
      <h3 id="about-title">About this installation</h3>
      <dl>
        <dt>TireWear</dt>
        <dd>{desktop?.appVersion ?? health.version}</dd>
        <dt>Tread model</dt>
        <dd>{health.modelVersion ?? 'not loaded'}</dd>
        <dt>Storage</dt>
        <dd>{health.storage === 'sqlite' ? 'This computer (SQLite)' : 'Shared database (PostgreSQL)'}</dd>
        <dt>Status</dt>
        <dd>{health.status === 'ok' ? 'Running normally' : `Degraded: ${health.problem ?? 'see the server log'}`}</dd>
      </dl>
    </div>
  );
}
