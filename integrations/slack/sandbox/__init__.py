"""A local Slack that takes incoming-webhook posts: the demo's channel and the tests'.

Caseward posts what a shop's owner must hear to the shop's incoming webhook. What it must
survive: Slack asking it to slow down (429 with ``Retry-After``) and Slack failing (5xx),
for a while. The sandbox takes posts at any hook address, keeps each with the headers
Caseward signs it with, and answers as Slack does; a test tells it to refuse the next
posts, or every post for some seconds.

In-process::

    slack = SlackSandbox()
    handle = slack.start()                       # handle.url, handle.stop()
    webhook = SlackWebhook(api_base=handle.url)
    slack.refuse(500, count=1)                   # the next post gets a 500
    webhook.post("https://hooks.slack.com/services/T1/B1/x", "hello", secret=secret)
    slack.posts()                                # what it took, headers and body included

As a process: ``python -m integrations.slack.sandbox --port 12116``.
"""

from .sandbox import KEPT_HEADERS, Post, SlackSandbox

__all__ = ["KEPT_HEADERS", "Post", "SlackSandbox"]
