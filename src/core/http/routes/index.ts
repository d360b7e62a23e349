/**
 * Every /api/v1 route plugin, listed explicitly (no autoload: it breaks once the main
 * process is bundled). Adding a route area is one line here.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { registerAuth } from '../auth.js';
import { accountRoutes } from './account.js';
import { analyzeRoutes } from './analyze.js';
import { authRoutes } from './auth.js';
import { calibrationRoutes } from './calibration.js';
import { captureCheckRoutes } from './capture-check.js';
import { connectionRoutes } from './connection.js';
import { healthRoutes } from './health.js';
import { keyRoutes } from './keys.js';
import { licenseRoutes } from './licenses.js';
import { openapiRoutes } from './openapi.js';
import { scanEditRoutes } from './scan-edits.js';
import { scanRoutes } from './scans.js';
import { settingsRoutes } from './settings.js';
import { syncRoutes } from './sync.js';

export interface ApiOptions {
  version: string;
}

export const apiRoutes: FastifyPluginAsyncTypebox<ApiOptions> = async (app, { version }) => {
  registerAuth(app);
  await app.register(healthRoutes, { version });
  await app.register(openapiRoutes);
  await app.register(authRoutes);
  await app.register(accountRoutes);
  await app.register(keyRoutes);
  await app.register(licenseRoutes);
  await app.register(analyzeRoutes);
  await app.register(captureCheckRoutes);
  await app.register(scanRoutes);
  await app.register(scanEditRoutes);
  await app.register(settingsRoutes);
  await app.register(connectionRoutes);
  await app.register(calibrationRoutes);
  await app.register(syncRoutes);
};
