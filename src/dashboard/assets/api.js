// The page's calls to its server: JSON reads, actions (POST with a JSON body),
// and the server-sent events that bring a snapshot per sample.

export async function getJson(path) {
  const res = await fetch(path, { credentials: 'same-origin' });
  const body = await res.json().catch(() => ({ error: `${res.status} ${res.statusText}` }));
  return { status: res.status, body };
}

/** Runs an action; resolves to { ok, lines } (an error says why in `lines`). */
export async function act(name, body) {
  const res = await fetch(`/api/actions/${name}`, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const reply = await res.json().catch(() => ({ ok: false, error: `${res.status} ${res.statusText}` }));
  if (!res.ok) return { ok: false, lines: [reply.error ?? `${res.status}`] };
  return reply;
}

/** A stream the server refused (it serves so many at once) is asked again after this long. */
const REFUSED_RETRY_MS = 10_000;

/**
 * Follows the snapshots; `onState` hears 'live' and 'reconnecting'.
 * EventSource reconnects by itself after a dropped stream, but not after a
 * refused one (503: the dashboard follows as many pages as it may): that
 * one is opened again here, later.
 */
export function follow(onSnapshot, onState) {
  const events = new EventSource('/api/stream');
  events.addEventListener('snapshot', (e) => onSnapshot(JSON.parse(e.data)));
  events.addEventListener('open', () => onState('live'));
  events.addEventListener('error', () => {
    onState('reconnecting');
    if (events.readyState === EventSource.CLOSED)
      window.setTimeout(() => follow(onSnapshot, onState), REFUSED_RETRY_MS);
  });
}
