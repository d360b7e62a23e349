/**
 * The rule for a desktop's link to its hub, one for every way a link arrives: PUT /sync/link
 * (sync/service.ts), `sync` in settings.json (file.ts) and TIREWEAR_HUB_URL + TIREWEAR_HUB_API_KEY
 * (env.ts).
 */
import { AppError } from '../errors.js';
import { API_KEY_SHAPE } from '../types.js';
import { ConfigError, type HubLink } from './schema.js';

/**
 * The link as stored: a plain http(s) hub address without trailing slash, and a key of the hub's
 * shape. A bad field is thrown as `refuse(field, rule)` makes it: VALIDATION_ERROR for the API,
 * a ConfigError naming the variable or settings key at start-up (checkedLink).
 */
export function validateLink(
  input: HubLink,
  refuse: (field: keyof HubLink, rule: string) => Error = (field, rule) => new AppError('VALIDATION_ERROR', `${field} ${rule}`),
): HubLink {
  let url: URL;
  try {
    url = new URL(input.hubUrl.trim());
  } catch {
    throw refuse('hubUrl', 'must be a full URL such as https://hub.example.com');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw refuse('hubUrl', 'must start with http:// or https://');
  }
  if (url.username || url.password || url.search || url.hash) {
    throw refuse('hubUrl', 'must not contain a user name, password, query or fragment');
  }
  if (!API_KEY_SHAPE.test(input.hubApiKey)) {
    throw refuse('hubApiKey', 'must be an API key of the hub: tw_ followed by 32 letters or digits');
  }
  return { hubUrl: url.toString().replace(/\/+$/, ''), hubApiKey: input.hubApiKey };
}

/**
 * validateLink's check, failing as a ConfigError that names where the bad value came from
 * (`name(field)`); the URL is quoted back unless it may carry a password, the key never is.
 */
export function checkedLink(link: HubLink, name: (field: keyof HubLink) => string): HubLink {
  return validateLink(link, (field, rule) => {
    const got = field === 'hubUrl' && !link.hubUrl.includes('@') ? `, got "${link.hubUrl}"` : '';
    return new ConfigError(`${name(field)} ${rule}${got}`);
  });
}
