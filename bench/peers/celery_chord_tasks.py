# B10's Celery side: the task module of Celery's worker (Debian's
# python3-celery), with Redis as broker and result backend (a chord needs one).
import os

from celery import Celery

app = Celery('celery_chord_tasks', broker=os.environ['BENCH_REDIS_URL'], backend=os.environ['BENCH_REDIS_URL'])
app.conf.update(result_expires=3600, worker_hijack_root_logger=False, broker_connection_retry_on_startup=True)


@app.task
def noop(x):
    return x


@app.task
def total(values):
    return [len(values), sum(values)]
