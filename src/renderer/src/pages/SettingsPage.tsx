/**
 * Shop settings (GET/PUT /settings); port and LAN access apply after a restart, unless the
 * environment or a command-line option sets them: the page says which value is in force and why.
 */
import { useEffect, useId, useState, type SubmitEvent } from 'react';
import type { SettingInForce, SettingsData } from '../../../shared/api';
import { SHOP_NAME_MAX } from '../../../shared/contract/limits';
import { api } from '../api/client';
import { UserError } from '../api/errors';
import { AboutPanel } from '../components/AboutPanel';
import { CalibrationPanel } from '../components/CalibrationPanel';
import { ErrorMessage } from '../components/ErrorMessage';
import { SyncPanel } from '../components/SyncPanel';
import { useSession } from '../hooks/useSession';
import { bridge, BridgeError } from '../lib/bridge';
import { BusyButton } from '../components/BusyButton';

type Editable = Omit<SettingsData, 'restartRequired' | 'server'>;
type Server = SettingsData['server'];

/** Where a value in force comes from, in the owner's words. */
function origin(setting: SettingInForce<unknown>): string {
  switch (setting.source) {
    case 'env':
      return `the environment variable ${setting.setBy ?? ''}`.trim();
    case 'flag':
      return `the command-line option ${setting.setBy ?? ''}`.trim();
    case 'file':
      return 'these settings (settings.json)';
    default:
      return 'TireWear’s default';
  }
}

/**
 * The value the running server uses, where it comes from, and what a saved value different from
 * it will do: apply at the next start, or never while the environment or an option sets it.
 */
function InForce<T>({ setting, show, id }: { setting: SettingInForce<T>; show: (value: T) => string; id: string }) {
  const where = origin(setting);
  return (
    <div id={id} className="in-force" data-testid={id}>
      <p className="muted small">
        In use now: <strong>{show(setting.inForce)}</strong>, from {where}.
      </p>
      {setting.overridden && setting.saved !== null && (
        <p className="message message-warn small">
          The value saved here ({show(setting.saved)}) does not apply, even after a restart: {where} sets {show(setting.inForce)} and wins over these settings.
          Remove {setting.setBy ?? 'it'} {setting.source === 'env' ? 'from the environment' : 'from the command that starts TireWear'} to use this setting.
        </p>
      )}
      {setting.restartRequired && setting.saved !== null && (
        <p className="muted small">
          Saved: <strong>{show(setting.saved)}</strong>, used from the next start of TireWear.
        </p>
      )}
    </div>
  );
}

export function SettingsPage() {
  const { setPrefs } = useSession();
  const [form, setForm] = useState<Editable | null>(null);
  /** As last read from the server: only changed fields are sent back. */
  const [saved, setSavedValues] = useState<Editable | null>(null);
  const [restart, setRestart] = useState(false);
  const [server, setServer] = useState<Server | null>(null);
  const [done, setDone] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  /** Why "Open data folder" failed, until the next try. */
  const [folderError, setFolderError] = useState<unknown>(null);
  /** The port as typed: an emptied field stays empty instead of turning into 0. */
  const [portText, setPortText] = useState('');
  /** The port typed cannot be saved: the field says so (aria-invalid, the message as its description) and has the focus. */
  const [portInvalid, setPortInvalid] = useState(false);
  const id = { shop: useId(), port: useId(), units: useId(), legal: useId(), lan: useId(), tray: useId(), portNow: useId(), lanNow: useId() };
  const desktop = bridge();

  useEffect(() => {
    api.getSettings().then(({ restartRequired, server: inForce, ...rest }) => {
      setServer(inForce ?? null);
      setForm(rest);
      setPortText(String(rest.port));
      setSavedValues(rest);
      setRestart(restartRequired);
    }, setError);
  }, []);

  if (!form) return <section aria-label="Settings">{error ? <ErrorMessage error={error} /> : <p>Loading…</p>}</section>;

  const set = <K extends keyof Editable>(key: K, value: Editable[K]) => {
    setForm({ ...form, [key]: value });
    setDone(false);
  };

  async function save(event: SubmitEvent) {
    event.preventDefault();
    if (!form) return;
    const patch = Object.fromEntries(Object.entries(form).filter(([key, value]) => saved?.[key as keyof Editable] !== value));
    // Checked here, not by the input's min/max: a server started on a random port (0) must still save the other fields.
    if ('port' in patch && !(Number.isInteger(form.port) && form.port >= 1 && form.port <= 65535)) {
      setError(new UserError('Enter a port number from 1 to 65535 (TireWear uses 8787 unless it was changed).'));
      setPortInvalid(true);
      document.getElementById(id.port)?.focus();
      return;
    }
    setPortInvalid(false);
    setBusy(true);
    setError(null);
    try {
      const { restartRequired, server: inForce, ...rest } = await api.putSettings(patch);
      setServer(inForce ?? null);
      setForm(rest);
      setPortText(String(rest.port));
      setSavedValues(rest);
      setRestart(restartRequired);
      setPrefs({ units: rest.units, legalMinimum: rest.legalMinimum, shopName: rest.shopName });
      setDone(true);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  async function openDataFolder() {
    if (!desktop) return;
    setFolderError(null);
    try {
      await desktop.openDataFolder();
    } catch (err) {
      setFolderError(err);
    }
  }

  return (
    <section aria-labelledby="settings-title">
      <h2 id="settings-title">Settings</h2>
      <form className="settings" onSubmit={save}>
        <div className="panel-grid">
          <fieldset className="panel">
            <legend>Reports and units</legend>
            <div className="field">
              <label htmlFor={id.shop}>Shop name (printed on customer reports)</label>
              <input id={id.shop} value={form.shopName} maxLength={SHOP_NAME_MAX} onChange={(e) => set('shopName', e.target.value)} />
            </div>
            <div className="field">
              <label htmlFor={id.units}>Show depths in</label>
              <select id={id.units} value={form.units} onChange={(e) => set('units', e.target.value as Editable['units'])}>
                <option value="mm">Millimetres (mm)</option>
                <option value="32nds">32nds of an inch</option>
              </select>
            </div>
            <div className="field">
              <label htmlFor={id.legal}>Legal minimum tread depth</label>
              <select id={id.legal} value={form.legalMinimum} onChange={(e) => set('legalMinimum', e.target.value as Editable['legalMinimum'])}>
                <option value="1.6mm">1.6 mm (EU / UK)</option>
                <option value="2/32in">2/32″ (US)</option>
              </select>
            </div>
          </fieldset>
          <fieldset className="panel">
            <legend>Local API</legend>
            <div className="field">
              <label htmlFor={id.port}>Port</label>
              <input
                id={id.port}
                aria-invalid={portInvalid || undefined}
                aria-describedby={[portInvalid ? `${id.port}-error` : '', server ? id.portNow : ''].filter(Boolean).join(' ') || undefined}
                type="number"
                inputMode="numeric"
                value={portText}
                onChange={(e) => {
                  setPortText(e.target.value);
                  set('port', e.target.value.trim() === '' ? Number.NaN : Number(e.target.value));
                }}
              />
              {server && <InForce setting={server.port} show={String} id={id.portNow} />}
            </div>
            <div className="field checkbox">
              <input
                id={id.lan}
                type="checkbox"
                checked={form.lanAccess}
                onChange={(e) => set('lanAccess', e.target.checked)}
                aria-describedby={`${id.lan}-note${server ? ` ${id.lanNow}` : ''}`}
              />
              <label htmlFor={id.lan}>Allow POS software on other computers of the shop network (LAN access)</label>
              <p id={`${id.lan}-note`} className="muted">
                Off by default. When on, calls from the network must carry an API key (create one under API keys); this computer keeps working as before.
              </p>
              {server && <InForce setting={server.lanAccess} show={(on) => (on ? 'on' : 'off')} id={id.lanNow} />}
            </div>
            {server && (
              <p className="muted small">
                Listening on <strong>{server.host.inForce}</strong>, from {origin(server.host)}.
              </p>
            )}
            <div className="field checkbox">
              <input id={id.tray} type="checkbox" checked={form.keepApiRunningInTray} onChange={(e) => set('keepApiRunningInTray', e.target.checked)} />
              <label htmlFor={id.tray}>Keep the API running in the tray when the window closes</label>
            </div>
          </fieldset>
        </div>
        {restart && (
          <p className="message message-warn" role="status">
            Restart required: close TireWear completely (also from the tray) and start it again to apply the port or LAN setting.
          </p>
        )}
        {done && (
          <p className="message message-ok" role="status">
            Settings saved.
          </p>
        )}
        <ErrorMessage error={error} id={`${id.port}-error`} />
        <div className="row">
          <BusyButton type="submit" busy={busy}>
            {busy ? 'Saving…' : 'Save settings'}
          </BusyButton>
          {desktop && (
            <button type="button" className="secondary" onClick={() => void openDataFolder()}>
              Open data folder
            </button>
          )}
        </div>
        <DataFolderProblem error={folderError} />
      </form>
      <SyncPanel />
      <CalibrationPanel />
      <AboutPanel />
    </section>
  );
}

/**
 * "Open data folder" failed (no file manager, a network data folder that is offline): say so,
 * and where the folder is. Main's NOT_FOUND message names its path; any other failure does not.
 */
function DataFolderProblem({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  const named = error instanceof BridgeError && error.code === 'NOT_FOUND';
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the bridge rejects with an Error; anything else is shown as it converts
  const detail = error instanceof Error ? error.message : String(error);
  return (
    <div className="message message-error" role="alert">
      <strong>The data folder did not open.</strong>
      {detail && <p>{detail}</p>}
      <p>
        {named
          ? 'Open that folder yourself in your file manager (File Explorer on Windows, Finder on a Mac).'
          : 'Open it yourself in your file manager: unless TIREWEAR_DATA_DIR names another, it is the folder named “data” in TireWear’s folder of your user profile (on Windows, under AppData\\Roaming).'}
      </p>
    </div>
  );
}
