/**
 * A dashboard in this process, on a broker of its own (closed after the
 * test), and fetch helpers that speak to it.
 */
import { createBroker } from '../../dist/broker/index.js';
import { startDashboard, type Dashboard } from '../../dist/dashboard/dashboard.js';
import type { DashboardOptions } from '../../dist/dashboard/options.js';
import { makeClient, silent } from './worker.js';

const open: (() => Promise<void>)[] = [];

/** Starts a dashboard on `url` (any free port, a sample every 100 ms unless told otherwise). */
export async function makeDashboard(url: string, options: DashboardOptions = {}): Promise<Dashboard> {
  const broker = createBroker(url, { logger: silent });
  const client = makeClient(url);
  const dashboard = await startDashboard(broker, client, {
    port: 0,
    sampleInterval: 100,
    controlTimeout: 5_000,
    logger: silent,
    ...options,
  });
  open.push(async () => {
    await dashboard.close();
    await broker.close();
  });
  return dashboard;
}

/** afterEach: close every dashboard (before the helpers' cleanup closes the clients). */
export async function closeDashboards(): Promise<void> {
  for (const close of open.splice(0).reverse()) await close();
}

/** POSTs an action's JSON body; resolves the status and the parsed reply. */
export async function postAction(
  base: string,
  name: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}/api/actions/${name}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** GETs a JSON route. */
export async function getJson(
  base: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`, { headers });
  const text = await res.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { text };
  }
  return { status: res.status, body };
}
