import { tempSqliteStore } from '../support/store.js';
import { runStoreConformance } from './conformance.js';

runStoreConformance('sqlite', async () => {
  const { store, cleanup } = await tempSqliteStore();
  return { store, cleanup };
});
