/** API keys for the shop's POS: create (secret shown once), list, revoke; a ready curl example. */
import { useCallback, useEffect, useId, useRef, useState, type SubmitEvent } from 'react';
import type { ConnectionInfo, CreatedApiKey, WireApiKey } from '../../../shared/api';
import { KEY_NAME_MAX } from '../../../shared/contract/limits';
import { api } from '../api/client';
import { CopyButton } from '../components/CopyButton';
import { ErrorMessage } from '../components/ErrorMessage';
import { formatDate } from '../lib/format';
import { BusyButton } from '../components/BusyButton';

const KIND: Record<ConnectionInfo['addresses'][number]['kind'], string> = {
  loopback: 'software on this computer',
  lan: 'other computers of the shop network',
  name: 'the shop network, by this computer’s name',
};

/** The addresses a POS can use: loopback always, and with LAN access this computer's own. */
function Addresses({ info, error }: { info: ConnectionInfo | null; error: unknown }) {
  if (error) return <ErrorMessage error={error} />;
  if (!info) return <p className="muted">Finding this computer’s addresses…</p>;
  return (
    <div className="addresses" data-testid="pos-addresses">
      <h4>Addresses for the POS</h4>
      <ul>
        {info.addresses.map((a) => (
          <li key={a.url}>
            <code>{a.url}</code> <span className="muted">for {KIND[a.kind]}</span> <CopyButton text={a.url} name={`Copy ${a.url}`} />
          </li>
        ))}
      </ul>
      {!info.lanAccess && (
        <p className="muted small">
          LAN access is off, so only software on this computer can connect. To let a POS on another computer connect, turn on LAN access on the Settings page
          (Local API) and restart TireWear; this computer’s network addresses then appear here.
        </p>
      )}
    </div>
  );
}

export function KeysPage() {
  const [keys, setKeys] = useState<WireApiKey[]>([]);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const nameId = useId();
  const nameInput = useRef<HTMLInputElement>(null);
  const table = useRef<HTMLTableElement>(null);
  /** After a revoke: the key whose Revoke button takes the focus, or the name field when none is left. */
  const focusAfterRevoke = useRef<string | 'name' | null>(null);

  useEffect(() => {
    const target = focusAfterRevoke.current;
    if (target === null) return;
    focusAfterRevoke.current = null;
    if (target === 'name') nameInput.current?.focus();
    else table.current?.querySelector<HTMLButtonElement>(`button[data-key-id="${CSS.escape(target)}"]`)?.focus();
  }, [keys]);

  const load = useCallback(() => api.listKeys().then(setKeys, setError), []);
  useEffect(() => void load(), [load]);
  const [connection, setConnection] = useState<ConnectionInfo | null>(null);
  const [connectionError, setConnectionError] = useState<unknown>(null);
  useEffect(() => {
    api.connection().then(setConnection, setConnectionError);
  }, []);

  async function create(event: SubmitEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const key = await api.createKey(name.trim() || 'POS');
      await load();
      setCreated(key);
      setName('');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  async function revoke(key: WireApiKey) {
    if (!window.confirm(`Revoke the key "${key.name}"? Software using it stops working at once.`)) return;
    try {
      await api.revokeKey(key.id);
      if (created?.id === key.id) setCreated(null);
      // The next key down, else the one above, else the field for a new key.
      const index = active.findIndex((k) => k.id === key.id);
      const neighbour = active[index + 1] ?? active[index - 1];
      focusAfterRevoke.current = neighbour ? neighbour.id : 'name';
      await load();
    } catch (err) {
      setError(err);
    }
  }

  const example = created?.key ?? 'tw_YOUR_KEY';
  const curl = `curl -X POST ${window.location.origin}/api/v1/analyze \\\n  -H "X-API-Key: ${example}" \\\n  -F "image=@tire.jpg" \\\n  -F "vehicle=AB-123-CD" -F "position=FL"`;
  const active = keys.filter((k) => !k.revokedAt);

  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      <p>Your POS or shop software sends photos to TireWear with a key. Scans made with a key count against this account.</p>
      <form className="panel" onSubmit={create}>
        <label htmlFor={nameId}>Name of the new key (e.g. the POS it is for)</label>
        <div className="row">
          <input ref={nameInput} id={nameId} value={name} maxLength={KEY_NAME_MAX} onChange={(e) => setName(e.target.value)} placeholder="Front desk POS" />
          <BusyButton type="submit" busy={busy}>
            Create key
          </BusyButton>
        </div>
      </form>
      {created && (
        <div className="message message-ok new-key" role="status">
          <strong>New key “{created.name}”. Copy it now: it is shown only once.</strong>
          <div className="row">
            <code data-testid="new-key">{created.key}</code>
            <CopyButton text={created.key} label="Copy key" />
          </div>
        </div>
      )}
      <ErrorMessage error={error} />
      <div className="table-scroll">
        <table className="keys" ref={table}>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {active.length === 0 && (
              <tr>
                <td colSpan={5}>No keys yet.</td>
              </tr>
            )}
            {active.map((k) => (
              <tr key={k.id}>
                <td>{k.name}</td>
                <td>
                  <code>{k.prefix}…</code>
                </td>
                <td>{formatDate(k.createdAt)}</td>
                <td>{k.lastUsedAt ? formatDate(k.lastUsedAt) : 'never'}</td>
                <td>
                  <button type="button" className="danger" data-key-id={k.id} onClick={() => void revoke(k)} aria-label={`Revoke key ${k.name}`}>
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div className="panel pos">
        <h3>Connect your POS</h3>
        <Addresses info={connection} error={connectionError} />
        <p>
          Send a multipart POST to <code>/api/v1/analyze</code> at one of these addresses with the photo in <code>image</code> and the key in the{' '}
          <code>X-API-Key</code> header. Add <code>verbose=1</code> for overlays, and an <code>Idempotency-Key</code> header so a retried request is charged
          once. The full description is at{' '}
          <a href="/api/v1/openapi.json" target="_blank" rel="noreferrer">
            /api/v1/openapi.json
          </a>
          .
        </p>
        <pre data-testid="curl-example">{curl}</pre>
        <CopyButton text={curl.replace(/\\\n\s*/g, '')} label="Copy example" />
      </div>
    </section>
  );
}
