/** An error in plain words, the server's message beside it, and what to do at the scan limit. */
import { ApiError, rateLimitFrom } from '../api/client';
import { describeError } from '../api/errors';
import { useSession } from '../hooks/useSession';
import { formatDate } from '../lib/format';

/** `id`: for a field's `aria-describedby`, when the error is about that field. */
export function ErrorMessage({ error, id }: { error: unknown; id?: string }) {
  if (error === null || error === undefined) return null;
  if (error instanceof ApiError && error.code === 'RATE_LIMIT_EXCEEDED') return <LimitMessage error={error} id={id} />;
  const { title, detail, code } = describeError(error);
  return (
    <div className="message message-error" role="alert" id={id}>
      <strong>{title}</strong>
      {detail && detail !== title && <p>{detail}</p>}
      {code === 'INVALID_SESSION' && <SignInAgain />}
      {code && <small className="code">{code}</small>}
    </div>
  );
}

/** The session ended under us (expired, or signed out elsewhere): re-check it and offer the way back. */
function SignInAgain() {
  const { refresh } = useSession();
  return (
    <p>
      <button type="button" className="link" onClick={() => void refresh()}>
        Sign in again
      </button>
    </p>
  );
}

function resetDate(error: ApiError): Date | null {
  const fromHeaders = rateLimitFrom(error.headers)?.resetAt ?? null;
  if (fromHeaders) return fromHeaders;
  const retryAfter = Number(error.headers?.get('retry-after'));
  return Number.isFinite(retryAfter) && retryAfter > 0 ? new Date(Date.now() + retryAfter * 1000) : null;
}

/** 429: what happened, and the ways out for this kind of caller. */
export function LimitMessage({ error, id }: { error: ApiError; id?: string }) {
  const { state, account } = useSession();
  const reset = resetDate(error) ?? (account ? new Date(account.allowance.resetAt) : null);
  return (
    <div className="message message-limit" role="alert" id={id}>
      <strong>Scan limit reached.</strong>
      <p>{error.message}</p>
      <ul>
        {state !== 'signed-in' && (
          <li>
            <a href="#/account">Create a free shop account</a> for 10 scans a month.
          </li>
        )}
        {state === 'signed-in' && account?.plan !== 'pro' && (
          <li>
            For more scans now, ask your TireWear supplier (whoever supplied TireWear to your shop) for a license code: a scan pack (100 scans that never
            expire) or Pro (unlimited scans until its end date). Enter the code on the <a href="#/account">Account page</a> under “Redeem a license code”.
          </li>
        )}
        {reset && <li>Or wait: the allowance renews on {formatDate(reset)}.</li>}
      </ul>
      <small className="code">{error.code}</small>
    </div>
  );
}
