// A CPU profile of this process over one window only (node:inspector), so a
// scenario can profile its clock window without the start-up and warm-up
// that `node --cpu-prof` would include.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const post = (session, method, params) =>
  new Promise((resolve, reject) => session.post(method, params, (err, res) => (err ? reject(err) : resolve(res))));

/** Starts profiling; the returned function stops and writes the .cpuprofile to `file`. */
export async function startProfile(file) {
  const session = new Session();
  session.connect();
  await post(session, 'Profiler.enable');
  await post(session, 'Profiler.setSamplingInterval', { interval: 100 });
  await post(session, 'Profiler.start');
  return async () => {
    const { profile } = await post(session, 'Profiler.stop');
    session.disconnect();
    writeFileSync(file, JSON.stringify(profile));
  };
}
