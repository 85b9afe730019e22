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

/** Follows the snapshots; `onState` hears 'live' and 'reconnecting' (EventSource reconnects by itself). */
export function follow(onSnapshot, onState) {
  const events = new EventSource('/api/stream');
  events.addEventListener('snapshot', (e) => onSnapshot(JSON.parse(e.data)));
  events.addEventListener('open', () => onState('live'));
  events.addEventListener('error', () => onState('reconnecting'));
  return events;
}
