/**
 * Why a task module did not load, told so a person can fix it: the file,
 * line and column of the fault, and what to do about a TypeScript module
 * with no loader. Runs only in a child whose task module failed to import.
 */
import { spawnSync } from 'node:child_process';
import { extname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const PREFORK_ROOT = fileURLToPath(new URL('../', import.meta.url));
const TS_EXTENSIONS = new Set(['.ts', '.mts', '.cts']);
/** How long the syntax check of a module that did not parse may take. */
const CHECK_TIMEOUT_MS = 10_000;

/** The error, with `location` ("/path/tasks.mjs:2:11") and `hint` set where they can be found. */
export function explainLoadError(err: unknown, app: string): unknown {
  if (!(err instanceof Error)) return err;
  const props = err as Error & { location?: string; hint?: string; code?: unknown };
  const location = locationIn(err.stack) ?? (err.name === 'SyntaxError' ? syntaxLocation(app) : undefined);
  if (location !== undefined) props.location = location;
  if (props.code === 'ERR_UNKNOWN_FILE_EXTENSION' && TS_EXTENSIONS.has(extname(app)))
    props.hint =
      'a TypeScript task module needs a loader in the children: prefork worker --node-arg=--import=tsx (npm install --save-dev tsx), or the Pool/Worker option execArgv: ["--import", "tsx"]; Node >= 22.18 strips types by itself';
  return err;
}

/**
 * Where the stack says the fault is: the "file:line" header Node puts on a
 * link error (a missing named export), else the first frame in user code.
 */
function locationIn(stack: string | undefined): string | undefined {
  if (stack === undefined) return undefined;
  const header = /^(file:\/\/\S+|\/\S+):(\d+)\n(.*)\n( *)\^/.exec(stack);
  if (header !== null) return `${toPath(header[1] ?? '')}:${header[2] ?? ''}:${(header[4] ?? '').length + 1}`;
  for (const line of stack.split('\n')) {
    const frame = /^\s+at (?:.* \()?(file:\/\/[^\s)]+|\/[^\s)]+):(\d+):(\d+)\)?$/.exec(line);
    if (frame === null) continue;
    const file = toPath(frame[1] ?? '');
    if (file.startsWith(PREFORK_ROOT)) continue;
    return `${file}:${frame[2] ?? ''}:${frame[3] ?? ''}`;
  }
  return undefined;
}

/**
 * Node's import() gives a SyntaxError no location, but prints one for an
 * uncaught error: import the module again in a throwaway process (nothing
 * runs: a module that does not parse is never evaluated) and read it there.
 */
function syntaxLocation(app: string): string | undefined {
  const url = pathToFileURL(app).href;
  const r = spawnSync(
    process.execPath,
    [...process.execArgv, '--input-type=module', '--eval', `await import(${JSON.stringify(url)})`],
    { encoding: 'utf8', timeout: CHECK_TIMEOUT_MS, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const printed = /^(file:\/\/\S+|\/\S+):(\d+)\n(.*)\n( *)\^/m.exec(r.stderr ?? '');
  if (printed === null) return undefined;
  return `${toPath(printed[1] ?? '')}:${printed[2] ?? ''}:${(printed[4] ?? '').length + 1}`;
}

function toPath(fileOrUrl: string): string {
  return fileOrUrl.startsWith('file://') ? fileURLToPath(fileOrUrl) : fileOrUrl;
}
