# B10's Celery side: a chord of `members` no-op tasks with a callback, timed
# from the chord's apply to the callback's result in the caller (knob `wait`:
# through AsyncResult.get(), or by polling the result's key), and Redis
# commands per member (INFO commandstats over that window). Starts its own
# worker (prefork pool, `processes` children); `warmupChords` warm-up chords
# of `warmup` members run first.
# Prints `RESULT {json}` as the Node scenarios do.
import json
import os
import subprocess
import sys
import time

import redis

params = json.loads(os.environ.get('BENCH_PARAMS', '{}'))
url = params['url']
members = int(params.get('members', 10000))
processes = int(params.get('processes', 2))
warmup = int(params.get('warmup', 500))
# Warm-up chords of `warmup` members run before the clock (the Node side's knob of the same name).
warmup_chords = int(params.get('warmupChords', 1))
# How the caller waits for the callback's result: 'get' (AsyncResult.get(), as an application
# does) or 'poll' (GET of the result's key every 5 ms: the chord's own time, without the caller's
# result consumer).
wait = params.get('wait', 'get')
here = os.path.dirname(os.path.abspath(__file__))
os.environ['BENCH_REDIS_URL'] = url
sys.path.insert(0, here)

from celery import chord  # noqa: E402
from celery_chord_tasks import app, noop, total  # noqa: E402

worker = subprocess.Popen(
    [sys.executable, '-m', 'celery', '-A', 'celery_chord_tasks', 'worker', '-c', str(processes), '-P', 'prefork',
     '--loglevel=WARNING', '--without-gossip', '--without-mingle', '--without-heartbeat'],
    cwd=here, env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
try:
    deadline = time.time() + 120
    while not app.control.ping(timeout=1.0):
        if worker.poll() is not None or time.time() > deadline:
            raise SystemExit('celery worker did not start: ' + worker.stderr.read().decode()[-500:])
    r = redis.Redis.from_url(url)

    def counts():
        return {k: v['calls'] for k, v in r.info('commandstats').items()}

    polls = [0]  # the poll's own GETs, left out of the command counts

    def run(n):
        result = chord(noop.s(i) for i in range(n))(total.s())
        if wait == 'get':
            return result.get(timeout=600)
        # 'poll': read the callback's stored result (the backend's own key) every 5 ms, without the
        # caller's result consumer, which hears every member's result over pub/sub on the way.
        key = 'celery-task-meta-' + result.id
        deadline = time.time() + 600
        while time.time() < deadline:
            polls[0] += 1
            raw = r.get(key)
            if raw is not None:
                meta = json.loads(raw)
                if meta.get('status') == 'SUCCESS':
                    return meta.get('result')
            time.sleep(0.005)
        raise SystemExit('chord callback result not stored within 600 s')

    for _ in range(warmup_chords):
        warm = run(warmup)
    c0 = counts()
    polls[0] = 0
    t0 = time.perf_counter()
    value = run(members)
    wall_ms = (time.perf_counter() - t0) * 1000
    c1 = counts()
    by = {}
    for name, calls in c1.items():
        d = calls - c0.get(name, 0) - (1 if name == 'cmdstat_info' else 0) - (polls[0] if name == 'cmdstat_get' else 0)
        if d > 0:
            by[name.replace('cmdstat_', '')] = d
    want = [members, members * (members - 1) // 2]
    ok = value == want and warm == [warmup, warmup * (warmup - 1) // 2]
    print('RESULT ' + json.dumps({
        'wallMs': wall_ms,
        'membersPerSec': members / wall_ms * 1000,
        'cmdsPerMember': sum(by.values()) / members,
        'commands': by,
        'ok': ok,
        'check': f'callback got {value} (want {want}); celery {__import__("celery").__version__}',
    }), flush=True)
finally:
    worker.terminate()
    try:
        worker.wait(timeout=30)
    except subprocess.TimeoutExpired:
        worker.kill()
