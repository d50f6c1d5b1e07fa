"""How gunicorn serves the web app (``gunicorn -c python:app.gunicorn_conf 'app:create_app()'``).

Loopback only unless ``CASEWARD_BIND`` says otherwise (a proxy in front terminates
TLS). The access log leaves out query strings and referrers: they can carry
tokens and customer details. A stop finishes requests in progress within a few
seconds, well before a process manager's kill.
"""

from __future__ import annotations

import os

bind = [os.environ.get("CASEWARD_BIND", "127.0.0.1:5000")]
workers = int(os.environ.get("CASEWARD_WEB_WORKERS", "2"))
worker_class = "gthread"
threads = 4
timeout = 30
graceful_timeout = 3
accesslog = "-"
access_log_format = '%(h)s "%(m)s %(U)s %(H)s" %(s)s %(B)s %(M)sms'
