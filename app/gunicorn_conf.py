"""How gunicorn serves the web app (``gunicorn -c python:app.gunicorn_conf 'app:create_app()'``).

Loopback only unless ``CASEWARD_BIND`` says otherwise (a proxy in front terminates
TLS). The access log leaves out query strings and referrers: they can carry
tokens and customer details. A stop finishes requests in progress within a few
seconds, well before a process manager's kill.
"""

from __future__ import annotations

import gc
import os
from typing import Any

bind = [os.environ.get("CASEWARD_BIND", "127.0.0.1:5000")]
workers = int(os.environ.get("CASEWARD_WEB_WORKERS", "2"))
worker_class = "gthread"
threads = 4
timeout = 30
graceful_timeout = 3
accesslog = "-"
access_log_format = '%(h)s "%(m)s %(U)s %(H)s" %(s)s %(B)s %(M)sms'


def post_worker_init(_worker: Any) -> None:
    """Once a web process has loaded the app, what it holds so far (modules, the app and
    its routes, the pools) is moved out of the garbage collector's sight: it lives as
    long as the process, and a full collection walking it (some 225,000 objects, over
    a tenth of a second here) holds up every request the process is serving until it ends."""
    gc.freeze()
