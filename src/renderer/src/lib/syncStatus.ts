/**
 * The sync status line in a shop's words. The server's lastError is written for a
 * support call ("Hub answered 401 INVALID_API_KEY: …"); the counter needs what it means
 * and what to do, so the raw text is shown only beside the plain words.
 */

/** The server stops counting here (PENDING_COUNT_CAP in src/core/sync/service.ts). */
const PENDING_CAP = 10_000;

export function formatPending(pending: number): string {
  if (pending >= PENDING_CAP) return `${PENDING_CAP.toLocaleString()} scans or more`;
  return pending === 1 ? '1 scan' : `${pending.toLocaleString()} scans`;
}

const HUB_KEY_SHAPE = /^tw_[0-9A-Za-z]{32}$/;

/**
 * Checks the form before asking the server, so a typo is explained in words rather than field
 * names; null when fine. A link always takes the key with the address (the saved key is never
 * shown back), so changing the hub of a linked computer needs the key typed again too.
 */
/** What is wrong with the link form, and which field it is about; null when it can be sent. */
export function linkFormProblem(hubUrl: string, hubApiKey: string, linked = false): { field: 'url' | 'key'; message: string } | null {
  let url: URL | null = null;
  try {
    url = new URL(hubUrl.trim());
  } catch {
    url = null;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    return { field: 'url', message: "Enter the hub's full address, starting with https:// or http://, for example https://hub.example.com." };
  }
  if (linked && hubApiKey.trim() === '') {
    return {
      field: 'key',
      message: 'Enter the hub API key as well: a change of hub address is saved together with its key, and the saved key is not shown here.',
    };
  }
  if (!HUB_KEY_SHAPE.test(hubApiKey.trim())) {
    return { field: 'key', message: 'A hub API key starts with tw_ followed by 32 letters or digits. Copy it again from the hub.' };
  }
  return null;
}

export function describeSyncError(raw: string): string {
  if (/^Hub unreachable/.test(raw)) {
    const waiting = ' Scans wait on this computer and upload when the hub answers again.';
    if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS/.test(raw)) {
      return (
        'The hub’s HTTPS certificate is not trusted by this computer (self-signed, expired, or issued for another name). ' +
        'The hub needs a certificate from a public authority for its name (TireWear does not use the certificates installed in Windows or macOS); ' +
        'an antivirus that inspects HTTPS must leave the hub’s address alone.' +
        waiting
      );
    }
    if (/ENOTFOUND|EAI_AGAIN/.test(raw))
      return `This computer cannot find the hub’s name: check the hub address for typos, and the internet connection.${waiting}`;
    if (/ECONNREFUSED/.test(raw)) return `Nothing answers at the hub address: the hub may be down, or the port in the address is wrong.${waiting}`;
    if (/UND_ERR_SOCKET|ECONNRESET|EPROTO|ERR_SSL/.test(raw)) {
      return `The connection to the hub broke off: if the address starts with http://, try https:// (or the other way round); otherwise check the network.${waiting}`;
    }
    return `The hub could not be reached. Check the network and the hub address.${waiting}`;
  }
  if (/^Scan \S+ was not synced: .*belongs to another account/.test(raw)) {
    return 'Scans this computer sent to another hub account before stay with that account, so this hub account does not take them; they are safe there and here. Scans made from now on go to this account.';
  }
  if (/^Scan \S+ was not synced/.test(raw)) return 'The hub refused one scan for good (the details say why); the others carry on.';
  if (/TIREWEAR_ALLOWED_HOSTS/.test(raw)) {
    return 'The hub does not accept the address this computer uses for it: the hub’s TIREWEAR_ALLOWED_HOSTS must include that name. Scans wait here until it does.';
  }
  if (/not with TireWear's reply|client_max_body_size/.test(raw)) {
    return 'Something other than the hub answered (a proxy, a firewall, or another site at that address). Check the hub address and the network; scans wait here.';
  }
  const answered = /^Hub answered (\d{3})/.exec(raw);
  const status = answered ? Number(answered[1]) : null;
  if (status === 401) return 'The hub did not accept the API key: it is mistyped or was revoked. Ask for a new key and link again.';
  if (status === 403) return 'The hub refused the uploads of this computer. Check that the key belongs to the chain’s hub account.';
  if (status === 404) return 'No TireWear hub answers at that address. Check the hub address.';
  if (status !== null && status >= 500) return 'The hub has a problem right now. TireWear keeps trying on its own.';
  return 'The last sync did not go through. TireWear keeps trying on its own.';
}
