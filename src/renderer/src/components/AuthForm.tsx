/** Create the shop account (register, then sign in) or sign in to an existing one. */
import { useId, useRef, useState, type SubmitEvent } from 'react';
import { api } from '../api/client';
import { UserError } from '../api/errors';
import { useSession } from '../hooks/useSession';
import { ErrorMessage } from './ErrorMessage';
import { BusyButton } from './BusyButton';

interface Props {
  initialMode?: 'register' | 'login';
  /** After a successful sign-in or registration, e.g. go to the Scan page. */
  onSignedIn?: () => void;
}

export function AuthForm({ initialMode = 'register', onSignedIn }: Props) {
  const { refresh } = useSession();
  const [mode, setMode] = useState(initialMode);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const emailId = useId();
  const passwordId = useId();
  const errorId = useId();
  /** The password is too short: the field says so (aria-invalid, the message as its description) and has the focus. */
  const [shortPassword, setShortPassword] = useState(false);
  const passwordInput = useRef<HTMLInputElement>(null);

  async function submit(event: SubmitEvent) {
    event.preventDefault();
    if (mode === 'register' && password.length < 8) {
      setError(new UserError('The password needs at least 8 characters.'));
      setShortPassword(true);
      passwordInput.current?.focus();
      return;
    }
    setShortPassword(false);
    setBusy(true);
    setError(null);
    try {
      if (mode === 'register') await api.register(email.trim(), password);
      await api.login(email.trim(), password);
      await refresh();
      onSignedIn?.();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const registering = mode === 'register';
  return (
    <form className="auth-form" onSubmit={submit} aria-label={registering ? 'Create shop account' : 'Sign in'}>
      <h3>{registering ? 'Create your shop account' : 'Sign in'}</h3>
      {registering && <p className="muted">Free: 10 scans a month, history, customer reports and API keys for your POS.</p>}
      <div className="field">
        <label htmlFor={emailId}>Email</label>
        <input id={emailId} type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
      </div>
      <div className="field">
        <label htmlFor={passwordId}>Password{registering && ' (at least 8 characters)'}</label>
        <input
          id={passwordId}
          ref={passwordInput}
          aria-invalid={shortPassword || undefined}
          aria-describedby={shortPassword ? errorId : undefined}
          type="password"
          autoComplete={registering ? 'new-password' : 'current-password'}
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
      </div>
      <ErrorMessage error={error} id={errorId} />
      <div className="row">
        <BusyButton type="submit" busy={busy}>
          {busy ? 'Please wait…' : registering ? 'Create account' : 'Sign in'}
        </BusyButton>
        <button type="button" className="link" onClick={() => setMode(registering ? 'login' : 'register')}>
          {registering ? 'I already have an account' : 'Create a new account instead'}
        </button>
      </div>
    </form>
  );
}
