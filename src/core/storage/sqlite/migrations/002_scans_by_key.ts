import type { Migration } from './index.js';

/**
 * A hub lists one shop's scans (ScanFilter.apiKeyId) newest first; without this index a
 * shop that pushes rarely would make every page walk the whole chain's history.
 */
export const scansByKey: Migration = {
  version: 2,
  name: 'scans by API key',
  sql: `CREATE INDEX scans_account_key_created ON scans(account_id, api_key_id, created_at, id);`,
};
