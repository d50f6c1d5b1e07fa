"""Adapters and sandboxes for the providers Caseward talks to (never imports ``app``)."""
