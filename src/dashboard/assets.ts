import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** One file the page loads. */
export interface Asset {
  type: string;
  body: Buffer;
}

const TYPES = new Map([
  ['.html', 'text/html; charset=utf-8'],
  ['.js', 'text/javascript; charset=utf-8'],
  ['.css', 'text/css; charset=utf-8'],
]);

/** The page's own files (next to this module in dist/, copied by the build), by URL path. */
const OWN = ['index.html', 'style.css', 'app.js', 'dom.js', 'api.js', 'charts.js', 'views.js', 'jobs.js'];

/**
 * Every file the page loads, read once at start: the page's own, and
 * uPlot's prebuilt script and stylesheet straight from its package (no
 * build step, no copy to keep in sync).
 */
export function loadAssets(): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const dir = new URL('./assets/', import.meta.url);
  for (const name of OWN) assets.set(`/assets/${name}`, asset(name, readFileSync(new URL(name, dir))));
  const require = createRequire(import.meta.url);
  for (const name of ['uPlot.iife.min.js', 'uPlot.min.css'])
    assets.set(`/assets/${name}`, asset(name, readFileSync(require.resolve(`uplot/dist/${name}`))));
  return assets;
}

function asset(name: string, body: Buffer): Asset {
  const ext = name.slice(name.lastIndexOf('.'));
  return { type: TYPES.get(ext) ?? 'application/octet-stream', body };
}
